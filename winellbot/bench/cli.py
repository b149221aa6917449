"""``winellbot backtest``: run the pipeline on backtest tasks, score it, and report."""
from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import tomllib
from collections import Counter

from winellbot.errors import ConfigError

# lazy imports: the CLI builds its parser (this module's register) on every call, `winellbot health`
# included, so the back-test's machinery is imported when it runs.


def register(subparsers) -> argparse.ArgumentParser:
    """Add the ``backtest`` subcommand."""
    p = subparsers.add_parser("backtest", help="replay backtest tasks and score the suggestions")
    p.add_argument("tasks_dir", metavar="TASKS_DIR", help="folder of winell-backtest/1 task files")
    p.add_argument("--output", required=True, metavar="FILE", help="suggestions JSONL to write")
    p.add_argument("--oracle", action="store_true",
                   help="replace each task's documents by its held-out sentences (perfect discovery)")
    p.add_argument("--report", metavar="DIR", help="write report.md, figures.json and figures.png here")
    p.add_argument("--backend", choices=["offline", "openai", "local"],
                   help="pipeline backend (default: the config's, offline); openai: the agent through the "
                        "model client of --config; local: the agent on llama.cpp's server started here with "
                        "[llm] local_model (default: the bundled SmolLM2), no key. Same as --set "
                        "pipeline.backend=... (local: also llm.backend=local)")
    p.add_argument("--hybrid", action="store_true",
                   help="with a model: the offline pipeline's passages lead the navigator and feed the extractor "
                        "(pipeline.backend=hybrid)")
    p.add_argument("--judge", default="lexical", choices=["lexical", "model"],
                   help="coverage judge: the bench README's lexical one, or the paper's model judge "
                        "(needs a model server in --config)")
    p.add_argument("--config", help="TOML config for the model backend ([llm], [pipeline], [state]); "
                                    "default: $WINELLBOT_CONFIG or ./winellbot.toml")
    p.add_argument("--set", action="append", default=[], metavar="SECTION.KEY=VALUE",
                   help="a backtest-only setting over the config (TOML value), e.g. "
                        "pipeline.offline_max_iterations=8; the report prints every one")
    p.add_argument("--reviewed", action="store_true",
                   help="the gate chain of the reviewed mode: the estimate holds nothing, and a line held only "
                        "for its wording is kept, marked for a reviewer to reword (what reaches the review queue)")
    p.add_argument("--held", metavar="FILE",
                   help="also write the candidates a gate stopped (JSONL, each with the findings that stopped it)")
    p.add_argument("--limit", type=int, metavar="N", help="only the first N tasks")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--jobs", type=int, default=1, metavar="N",
                   help="run the tasks in N processes (offline backend only; the suggestions are the same, "
                        "only faster on N cores)")
    return p


def pipeline_factory(settings, *, client=None):
    """The function that builds the pipeline for the backtest: the bot's own builder on the same settings.

    :func:`winellbot.factory.build_pipeline` is what ``winellbot once`` and ``run`` call; a model
    backend runs on ``client`` (a :class:`~winellbot.llm.client.ModelClient`).
    """
    from winellbot import factory

    if settings.pipeline.backend != "offline" and client is None:
        raise ConfigError(f"the {settings.pipeline.backend} backtest backend needs a model client")
    state = client.state if client is not None else None
    run_id = client.run_id if client is not None else None
    return lambda: factory.build_pipeline(settings, state=state, run_id=run_id, client=client)


def overrides(args: argparse.Namespace) -> dict:
    """The backtest-only settings of ``--set`` and ``--backend`` as ``{"section": {"key": value}}``."""
    out: dict = {}
    for item in args.set:
        name, sep, raw = item.partition("=")
        section, dot, key = name.strip().partition(".")
        if not sep or not dot or not key:
            raise ConfigError(f"--set wants SECTION.KEY=VALUE, got {item!r}")
        try:
            value = tomllib.loads(f"v = {raw}")["v"]
        except tomllib.TOMLDecodeError:
            value = raw  # a bare word is a string
        out.setdefault(section, {})[key] = value
    if args.backend == "local":
        out.setdefault("pipeline", {})["backend"] = "openai"
        out.setdefault("llm", {})["backend"] = "local"
    elif args.backend:
        out.setdefault("pipeline", {})["backend"] = args.backend
    if getattr(args, "hybrid", False):
        out.setdefault("pipeline", {})["backend"] = "hybrid"
    return out


def configuration_lines(settings, extra: dict, config_path: str | None) -> list[str]:
    """What the report says about the configuration: where it came from and how it differs from
    the deployed defaults; the backtest-only settings by name."""
    from winellbot.config import Settings

    lines = [f"configuration: {config_path or 'the embedded defaults'}"]
    defaults = Settings()
    changed = [f"{section}.{f.name} = {getattr(getattr(settings, section), f.name)!r} "
               f"(default {getattr(getattr(defaults, section), f.name)!r})"
               for section in ("pipeline", "llm")
               for f in dataclasses.fields(getattr(settings, section))
               if getattr(getattr(settings, section), f.name) != getattr(getattr(defaults, section), f.name)]
    lines.append("differs from the defaults in: " + ("; ".join(changed) if changed else "nothing"))
    flags = [f"{section}.{key} = {value!r}" for section, values in extra.items() for key, value in values.items()]
    lines.append("backtest-only settings: " + ("; ".join(flags) if flags else "none (as deployed)"))
    return lines


def llm_figures(client, tasks: int) -> dict:
    """The ``llm`` figures of a run: per stage and in total, and model tokens per task."""
    from winellbot.llm.usage import summarise

    figures = summarise(client.calls)
    figures["tokens_per_task"] = round((figures["prompt_tokens"] + figures["completion_tokens"]) / max(1, tasks), 1)
    return figures


def quotes_found(tasks, lines: list[dict], *, oracle: bool = False) -> float | None:
    """The share of suggestions whose quote is found, nearly word for word, in the document cited."""
    from winellbot.bench.backtest import oracle_view
    from winellbot.pipeline.agent_extract import quote_in_document

    if not lines:
        return None
    docs = {}
    for task in tasks:
        view = oracle_view(task) if oracle else task.bot_view()
        docs.update({(task.id, d.id): f"{d.title}\n{d.text}" for d in view.documents})
    found = sum(1 for x in lines if any(quote_in_document(x["quote"], docs.get((x["task"], d), ""), min_words=1)
                                        for d in x["documents"]))
    return round(found / len(lines), 4)


def embedding_figures(stats: Counter, tasks: int) -> dict:
    """What the sentence embedder did (``run_tasks``' ``embeddings``; empty for a pipeline without one)."""
    if not stats:
        return {}
    stats = {k: stats.get(k, 0) for k in ("computed", "cached", "seconds", "load_seconds")}
    return {**stats, "computed_per_task": stats["computed"] / max(1, tasks),
            "seconds_per_task": stats["seconds"] / max(1, tasks)}


def model_judge(settings, state, run_id: int | None):
    """The paper's judge on its own client (so judging does not spend the pipeline's token budget)."""
    from winellbot import factory
    from winellbot.bench.judge import ModelJudge

    client = factory.build_client(settings, state, run_id)
    return ModelJudge(client, model=settings.llm.stage_models.get("judge", ""))


def check_jobs(jobs: int, backend: str) -> None:
    if jobs < 1:
        raise ConfigError(f"--jobs wants 1 or more processes, got {jobs}")
    if jobs > 1 and backend != "offline":
        raise ConfigError("--jobs runs the offline backend only (the model backends share one model server)")


def run(args: argparse.Namespace) -> int:
    """Run, score with the chosen judge, print the figures, optionally write the report."""
    from winellbot.bench.backtest import run_tasks
    from winellbot.bench.report import write_report
    from winellbot.bench.tasks import load_tasks
    from winellbot.config import load_settings

    tasks = load_tasks(args.tasks_dir, limit=args.limit)
    extra = overrides(args)
    config_path = getattr(args, "config", None) or os.environ.get("WINELLBOT_CONFIG") \
        or ("winellbot.toml" if os.path.exists("winellbot.toml") else None)
    settings = load_settings(config_path, overrides=extra)
    backend = settings.pipeline.backend
    uses_model = backend != "offline" or args.judge == "model"
    check_jobs(args.jobs, backend)
    reviewed = getattr(args, "reviewed", False)
    state = run_id = None
    if uses_model:
        from winellbot.commands import open_state

        state = open_state(settings)  # the cache makes a re-run on the same tasks free
        run_id = state.start_run(f"backtest:{backend}{':local' if settings.llm.backend == 'local' else ''}:"
                                 f"{args.judge}")
    from winellbot import factory

    client = factory.build_client(settings, state, run_id) if backend != "offline" else None
    judge = model_judge(settings, state, run_id) if args.judge == "model" else None
    status = "failed"
    gate_stats: Counter = Counter()
    skips: dict[str, str] = {}
    embedded: Counter = Counter()
    held: list[dict] = []
    try:
        lines = run_tasks(tasks, args.output, pipeline_factory=pipeline_factory(settings, client=client),
                          oracle=args.oracle, progress=not args.no_progress and sys.stderr.isatty(),
                          gates=factory.build_gates(settings, None, for_review=reviewed), gate_stats=gate_stats,
                          skips=skips,
                          jobs=args.jobs, embeddings=embedded, held=held, limit=settings.pipeline.max_suggestions)
        if args.held:
            write_lines(args.held, held)
        figures = all_figures(tasks, lines, judge=judge, skips=skips, gate_stats=gate_stats, oracle=args.oracle,
                              client=client, embedded=embedded)
        status = "done"
    finally:
        if state is not None:
            state.finish_run(run_id, status, pages=len(tasks))
        for c in (client, getattr(judge, "client", None)):
            if c is not None:
                c.close()
    local = " local" if backend != "offline" and settings.llm.backend == "local" else ""
    name = f"{backend}{local}{' oracle' if args.oracle else ''}{' reviewed' if reviewed else ''}" \
           f"{' (model judge)' if judge else ''}"
    notes = configuration_lines(settings, extra, config_path)
    notes.append(f"processes: {args.jobs}")
    print_figures(name, figures, notes, gate_stats, len(tasks))
    if args.report:
        for path in write_report({name: figures}, args.report, notes=notes):
            print(f"wrote {path}")
    return 0


def all_figures(tasks, lines: list[dict], *, judge, skips: dict, gate_stats: Counter, oracle: bool, client,
                embedded: Counter) -> dict:
    """The back-test's figures: the judge's scores, the tasks run, what would be posted, the quotes
    found, and the model's and the embedder's work."""
    from winellbot.bench.score import score

    figures = score(tasks, lines, judge=judge)
    figures["tasks"] = {"run": len(tasks), "with_result": len(tasks) - len(skips), "skipped": skips}
    figures["posted"] = posted_figures(lines, gate_stats, len(tasks))
    figures["quotes_found"] = quotes_found(tasks, lines, oracle=oracle)
    if client is not None:
        figures["llm"] = llm_figures(client, len(tasks))
    embeddings = embedding_figures(embedded, len(tasks))
    if embeddings:
        figures["embeddings"] = embeddings
    return figures


def posted_figures(lines: list[dict], gate_stats: Counter, tasks: int) -> dict:
    """What would be posted: lines per task, the mean acceptability estimate, the candidates held by
    each gate, and the editor verdicts the store has on the posted lines: the latest of each line, and
    the mean over all of each line's (with the judge's verdicts on the human editors' own sentences,
    its calibration)."""
    from winellbot.bench.verdicts import by_line, figures, judged, load_store, over_every_verdict

    estimates = [x["estimate"] for x in lines if x.get("estimate") is not None]
    stored = load_store()
    found, missing = judged(lines, by_line(stored))
    return {
        "per_task": round(len(lines) / max(1, tasks), 3),
        "mean_estimate": round(sum(estimates) / len(estimates), 3) if estimates else None,
        "held_by_gate": {g: n for g, n in gate_stats.most_common() if g != "checked"},
        "candidates": gate_stats.get("checked", 0),
        "verdicts": {**figures(found, tasks), "unjudged": missing,
                     "over_every_verdict": over_every_verdict(lines, stored),
                     "judge_on_human_sentences": figures([v for v in stored if v.kind == "human"])},
    }


def verdict_line(posted: dict) -> str:
    """The posted lines and their editor verdicts, in one line of the printout."""
    v, h = posted["verdicts"], posted["verdicts"]["judge_on_human_sentences"]
    share = lambda f: "-" if f.get("accept") is None else \
        f"accept {f['accept']:.0%}, revise {f['revise']:.0%}, reject {f['reject']:.0%}"  # noqa: E731
    return (f"posted: {posted['per_task']} per task, mean acceptability estimate {posted['mean_estimate']}; "
            f"editor verdicts on {v['judged']} of them ({v['unjudged']} unjudged): {share(v)}, "
            f"{v.get('accepted_per_task', 0)} accepted per task (over every verdict of each line: "
            f"{share(v['over_every_verdict'])}); the judge on {h['judged']} human sentences: {share(h)}")


def write_lines(path: str, lines: list[dict]) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        fh.writelines(json.dumps(line, ensure_ascii=False) + "\n" for line in lines)


def print_figures(name: str, figures: dict, notes: list[str], gate_stats: Counter, tasks: int) -> None:
    """The back-test's printout: its configuration, the figures table, model and embedding use, skips
    and gate counts, then the figures as JSON (what scripts read)."""
    from winellbot.bench.report import table

    print("\n".join(notes))
    print(table({name: figures}))
    if "llm" in figures:
        from winellbot.llm.usage import table as llm_table

        print(llm_table(figures["llm"]))
        print(f"model tokens per task: {figures['llm']['tokens_per_task']}")
    skips = figures["tasks"]["skipped"]
    if skips:
        print(f"tasks skipped: {len(skips)} of {tasks}: "
              + "; ".join(f"{k}: {v[:120]}" for k, v in list(skips.items())[:5]))
    if "embeddings" in figures:
        e = figures["embeddings"]
        print(f"embeddings: {e['computed']} computed in {e['seconds']:.1f} s (model load {e['load_seconds']:.1f} s), "
              f"{e['cached']} served from the cache; {e['computed_per_task']:.1f} computed per task")
    checked = gate_stats.pop("checked", 0)
    print(f"gates: {checked} suggestion(s) checked; stopped: "
          + (", ".join(f"{gate} {n}" for gate, n in gate_stats.most_common()) or "none"))
    if "posted" in figures:
        print(verdict_line(figures["posted"]))
    print(json.dumps(figures, indent=2))
