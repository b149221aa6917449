"""``winellbot editor data | train | apply | evaluate``: the local editor's life cycle."""
from __future__ import annotations

import argparse
import shlex
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path

# lazy imports: the CLI builds its parser (this module's register) on every call, `winellbot health`
# included, so each subcommand imports what it runs when it runs.


def register(subparsers) -> argparse.ArgumentParser:
    """Add the ``editor`` command and its subcommands."""
    p = subparsers.add_parser("editor", help="the local editor model: build data, train, apply, evaluate")
    sub = p.add_subparsers(dest="editor_command", required=True)
    d = sub.add_parser("data", help="build winell-editor/1 examples from revision history or cited sentences")
    d.add_argument("--output", required=True, metavar="FILE", help="examples JSONL to write")
    d.add_argument("--dump", action="append", default=[], metavar="XML", help="a MediaWiki XML dump (full history)")
    d.add_argument("--wiki", metavar="API_URL", help="read page revisions through this wiki's API (Pywikibot)")
    d.add_argument("--title", action="append", default=[], help="a page to read from --wiki (repeatable)")
    d.add_argument("--cited", action="store_true",
                   help="with --wiki: examples from each page's own cited sentences instead of its history")
    d.add_argument("--tasks", metavar="DIR", help="cited-sentence examples from winell-backtest/1 tasks")
    d.add_argument("--allow-private-urls", action="store_true",
                   help="let the fetcher read loopback and private addresses (local tests only)")
    d.add_argument("--config", help="TOML config ([state] caches fetched pages)")
    d.add_argument("--from-state", action="store_true",
                   help="examples from the facts editors adopted from the bot's posts (the state of --config)")
    d.add_argument("--revisions", action="append", default=[], metavar="FILE",
                   help="examples from reviewers' revisions (the JSONL of `winellbot review export`), "
                        "each keeping its attribution (repeatable)")
    t = sub.add_parser("train", help="LoRA fine-tuning on examples (loss on the answer only)")
    t.add_argument("data", nargs="+", metavar="DATA", help="winell-editor/1 JSONL files")
    t.add_argument("--base", default="smollm2", help="base model: 'smollm2' (bundled), a .gguf file or a model folder")
    t.add_argument("--output", required=True, metavar="DIR", help="where the adapter and its model card go")
    t.add_argument("--holdout-fold", type=int, metavar="K", help="leave out the articles of fold K (validation)")
    t.add_argument("--folds", type=int, default=5, help="number of article folds (default 5)")
    t.add_argument("--validation", metavar="FILE", help="examples to score the trained editor on for its card")
    t.add_argument("--epochs", type=float, default=3.0)
    t.add_argument("--max-steps", type=int, default=-1)
    t.add_argument("--learning-rate", type=float, default=3e-4)
    t.add_argument("--rank", type=int, default=16)
    t.add_argument("--layers", type=int, default=8,
                   help="LoRA on the top N layers only (0: all); fewer layers train faster on a CPU")
    t.add_argument("--grad-accum", type=int, default=8)
    t.add_argument("--batch-size", type=int, default=1)
    t.add_argument("--save-steps", type=int, default=50)
    t.add_argument("--note", default="", help="a line on the data's provenance and licence for the model card")
    t.add_argument("--no-filter", action="store_true", help="keep examples whose source does not truly support them")
    t.add_argument("--resume", action="store_true", help="continue from the last checkpoint in DIR")
    t.add_argument("--answers", choices=["copied", "written"], default="copied",
                   help="copied (default): the source's run of words closest to the human sentence, and "
                        "decoding held to the source; written: the human sentence, free decoding")
    t.add_argument("--no-progress", action="store_true")
    f = sub.add_parser("fit-spans", help="fit the ranking of source runs a copying editor chooses from")
    f.add_argument("data", nargs="+", metavar="DATA", help="winell-editor/1 JSONL files")
    f.add_argument("--output", required=True, metavar="FILE", help="the ranker (spans.json beside the adapter)")
    f.add_argument("--holdout-fold", type=int, metavar="K", help="leave out the articles of fold K and score them")
    f.add_argument("--folds", type=int, default=5)
    a = sub.add_parser("apply", help="edit every example's paragraph; writes {id, edited} lines")
    a.add_argument("examples", metavar="EXAMPLES")
    a.add_argument("--output", required=True, metavar="PREDICTIONS")
    a.add_argument("--model", help="an adapter or model (default: the shipped editor)")
    a.add_argument("--editor", default="model", choices=["model", "zero-shot", "zero-shot-server", "offline", "none"],
                   help="model: a fine-tuned editor's short edit; zero-shot: the base model rewrites the "
                        "paragraph with the editing instruction (zero-shot-server: the same through the local llama.cpp "
                        "server, a GGUF file); offline: append a passage; none: no change")
    a.add_argument("--limit", type=int, metavar="N")
    a.add_argument("--no-progress", action="store_true")
    e = sub.add_parser("evaluate", help="the five figures of the bench README, and the reference rows")
    e.add_argument("examples", metavar="EXAMPLES")
    e.add_argument("predictions", nargs="+", metavar="PREDICTIONS", help="one or more prediction files (one row each)")
    e.add_argument("--model-annotation", action="store_true",
                   help="also the paper's annotation by the model of --config ([llm])")
    e.add_argument("--config")
    e.add_argument("--json", action="store_true")
    return p


def run(args: argparse.Namespace) -> int:
    return {"data": _data, "train": _train, "fit-spans": _fit_spans, "apply": _apply,
            "evaluate": _evaluate}[args.editor_command](args)


def _progress(items, enabled: bool, desc: str):
    if not enabled or not sys.stderr.isatty():
        return items
    try:
        from tqdm import tqdm
    except ImportError:
        return items
    return tqdm(items, desc=desc)


def _data(args) -> int:
    from winellbot.editor.examples import write_jsonl

    skipped: Counter = Counter()
    examples = []
    if args.from_state:
        examples += _from_state(args.config, skipped)
    if args.revisions:
        from winellbot.editor.reviewed import examples_from_revisions

        for path in args.revisions:
            examples += examples_from_revisions(path, skipped)
    if args.tasks:
        from winellbot.bench.tasks import load_tasks
        from winellbot.editor.cited import examples_from_task

        for task in _progress(load_tasks(args.tasks), True, "tasks"):
            examples += examples_from_task(task, skipped=skipped)
    if args.dump or args.wiki:
        from winellbot.editor import history

        fetch = _fetch(args)
        if args.dump:
            for path in args.dump:
                examples += history.examples_from_dump(path, fetch, skipped=skipped)
        if args.wiki:
            examples += history.examples_from_wiki(args.wiki, args.title, fetch, cited=args.cited,
                                                   skipped=skipped)
    n = write_jsonl((e.to_json() for e in examples), args.output)
    print(f"wrote {n} example(s) to {args.output}")
    for why, count in skipped.most_common():
        print(f"  skipped {count}: {why}")
    return 0


def _from_state(config: str | None, skipped: Counter) -> list:
    """The adopted facts of the state as examples (:func:`winellbot.outcomes.learning.editor_examples`)."""
    from winellbot.commands import open_state
    from winellbot.config import load_settings
    from winellbot.outcomes.learning import editor_examples
    from winellbot.state.outcomes import OutcomeStore

    state = open_state(load_settings(config), readonly=True)
    if "outcomes" not in state.db.table_names():
        skipped["the state predates outcome tracking"] += 1
        return []
    return editor_examples(OutcomeStore(state).history(), state, skipped)


def _fetch(args):
    from winellbot.config import load_settings
    from winellbot.editor.cited import fetch_with
    from winellbot.search.fetch import WebFetcher
    from winellbot.commands import open_state

    settings = load_settings(args.config) if args.config else None
    state = open_state(settings) if settings else None
    allow = args.allow_private_urls or bool(settings and settings.search.allow_private_urls)
    return fetch_with(WebFetcher(state=state, allow_private=allow))


def _train(args) -> int:
    from winellbot.editor.card import write_card
    from winellbot.editor.examples import load_examples, split_by_article
    from winellbot.editor.train import TrainConfig, train
    from winellbot.editor.windows import example_problem

    examples = [e for path in args.data for e in load_examples(path)]
    held: list = []
    if args.holdout_fold is not None:
        examples, held = split_by_article(examples, args.holdout_fold, args.folds)
    dropped: Counter = Counter()
    if not args.no_filter:
        kept = []
        for e in examples:
            why = example_problem(e)
            (dropped.update([why]) if why else kept.append(e))
        examples = kept
    config = TrainConfig(base=args.base, output=args.output, epochs=args.epochs, max_steps=args.max_steps,
                         learning_rate=args.learning_rate, rank=args.rank, layers=args.layers, grad_accum=args.grad_accum,
                         batch_size=args.batch_size, save_steps=args.save_steps, resume=args.resume,
                         progress=not args.no_progress, copied=args.answers == "copied")
    print(f"training on {len(examples)} example(s) from {len({e.article for e in examples})} article(s)"
          + (f"; {len(held)} held out" if held else "") + (f"; filtered out: {dict(dropped)}" if dropped else ""))
    result = train(examples, config)
    print(f"loss on a sample of training pairs: {result.loss_before:.3f} -> {result.loss_after:.3f} "
          f"({result.steps} steps)")
    if not result.main:
        return 0
    validation = held
    if args.validation:
        validation = load_examples(args.validation)
    path = write_card(result, config, data=args.data, command="winellbot editor " + shlex.join(sys.argv[2:]),
                      examples=examples, dropped=dropped, validation=validation, note=args.note)
    print(f"wrote {path}")
    return 0


def _fit_spans(args) -> int:
    import json

    from winellbot.editor.examples import load_examples, split_by_article
    from winellbot.editor.shortedit import shown_source
    from winellbot.editor.spans import SpanRanker, fit, labelled_runs

    examples = [e for path in args.data for e in load_examples(path)]
    held: list = []
    if args.holdout_fold is not None:
        examples, held = split_by_article(examples, args.holdout_fold, args.folds)
    fitted = fit(examples, lambda e: shown_source(e).split())
    fitted["command"] = "winellbot editor " + shlex.join(sys.argv[2:])
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    Path(args.output).write_text(json.dumps(fitted), encoding="utf-8")
    print(f"fitted on {fitted['runs']} run(s) of {fitted['examples']} example(s); wrote {args.output}")
    if held:  # the best run's label on the held-out articles (key facts minus weighted commentary)
        ranker, labels = SpanRanker(fitted), []
        for e in held:
            rows = labelled_runs(e, shown_source(e).split())
            if rows:
                labels.append(max(rows, key=lambda r: ranker.score(r[0]))[1])
        print(f"held-out fold {args.holdout_fold}: {len(labels)} example(s), best run's key facts minus "
              f"weighted commentary {sum(labels) / max(1, len(labels)):.3f}")
    return 0


def _apply(args) -> int:
    from winellbot.editor.examples import load_tasks, write_jsonl
    from winellbot.editor.predict import build_predictor

    tasks = load_tasks(args.examples)[: args.limit]
    predictor = build_predictor(args.editor, args.model)
    edited = _progress(tasks, not args.no_progress, "editing")
    rows = ({"id": t.id, "edited": predictor.predict(t)} for t in edited)
    n = write_jsonl(rows, args.output)
    print(f"wrote {n} prediction(s) to {args.output}" + (f" ({predictor.summary()})" if predictor.summary() else ""))
    return 0


def _evaluate(args) -> int:
    import json

    from winellbot.editor.evaluate import evaluate_files, table

    annotator = None
    if args.model_annotation:
        annotator = model_annotator(args.config)
    rows = evaluate_files(args.examples, args.predictions, annotator=annotator)
    print(json.dumps(rows, indent=2) if args.json else table(rows))
    return 0


def model_annotator(config_path: str | None) -> Callable:
    """The paper's annotation on the model of ``config_path`` (see :mod:`winellbot.editor.annotate`)."""
    from winellbot import factory
    from winellbot.config import load_settings
    from winellbot.editor.annotate import ModelAnnotator
    from winellbot.commands import open_state

    settings = load_settings(config_path)
    state = open_state(settings)
    run_id = state.start_run("editor-evaluate")
    client = factory.build_client(settings, state, run_id)
    return ModelAnnotator(client, model=settings.llm.stage_models.get("judge", ""))
