"""Learning from review decisions: refitted as reviewers decide, does the estimate put the useful
suggestions at the top of the review queue of articles it has not seen?

    nice -n 10 .venv/bin/python benchmarks/review_learning.py ../shared/bench/wikigenbench-dev \\
        [--cache /tmp/review-lines.jsonl] [--verdicts F] [--folds 20] [--draws 10] [--step 100] [--seed 44] \\
        [--model NAME] [--compare] [--decide queue,held,human] [--embedding-cache F]

**Lines.** The production path (:func:`winellbot.bench.accept_fit.candidates`: the pipeline, then
every gate but the acceptability score) runs on every dev task twice: on its documents, giving the
candidates the gates pass (``queue``: what the review queue receives) and those a gate holds
(``held``); and on its held-out sentences as the only sources (the back-test's oracle view), whose
lines that are a held-out sentence word for word are the human editors' own (``human``). Each line
keeps its measurements (:func:`winellbot.gates.acceptability.features`). ``--cache`` keeps them in
a file (build once: some minutes on 2 cores; never put it in the repository: it holds the sources'
text); a line is replayable when the verdict store (:mod:`winellbot.bench.verdicts`, latest verdict
per task and line hash) judged it. The counts of judged lines found, by kind, and of those not
found (lines of earlier versions of the bot that the pipeline no longer writes) are printed.

**Replay.** For each of ``--draws`` draws (seeded from ``--seed``), the tasks fall into ``--folds``
folds (by task: a task's lines are all in one fold). For each fold, the judged lines of the other
folds' tasks (of the kinds ``--decide``, default all three) are the reviewers' decisions, in a
seeded random order: accept and revise are "useful" (positive), reject is negative. After every
``--step`` decisions the estimate is refitted on the decisions so far and the fold's queue is
ordered by it. A fold never trains on its own tasks (:func:`decisions_and_queue`).

**The top third of the queue** at a step: the queue is every ``queue`` line of every task (the judged
candidates the gates pass), each with the estimate of its fold's refit after that many decisions (a
model that never saw its task). Ranked by estimate, highest first, its first ceil(n / 3) lines are
the top third. ``top_third_useful`` is the share of them judged accept or revise,
``top_third_reject`` the share judged reject, pooled over the draws; ``base_useful`` is the share of
the whole queue judged useful (the queue in any order). A step is reported when every fold of every
draw had that many decisions; the last row (``"all": true``) gives each fold all its decisions, and
its ``decisions`` is the fewest any fold had.

**Models** (``--model``, ``--compare`` for all): ``logistic`` (the shipped score: L2 logistic over the
standardised measurements, :func:`winellbot.bench.accept_fit.fit`), ``logistic-c1`` (weaker L2),
``boosted`` (scikit-learn's histogram gradient boosting, shallow trees), and ``meaning`` (the
logistic with cosines by the bundled MiniLM: the line to the article's lead, to its target
section's sentences and centroid, its margin over the other sections, its nearest article
sentence). Prints one JSON object: the lines found, the settings, ``model`` and ``steps`` (rows
with ``decisions``, ``base_useful``, ``top_third_useful``, ``top_third_reject``, ``queue``,
``top_third``), and with ``--compare`` the other models' rows under ``compared``.

Reads ``held_out`` and the verdicts: an analysis tool, never the bot.
"""
from __future__ import annotations

import argparse
import json
import random
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

KINDS = ("queue", "held", "human")
MODELS = ("logistic", "logistic-c1", "boosted", "meaning")


@dataclass(frozen=True)
class Row:
    """One judged line: its task, kind, measurements and verdict."""

    task: str
    kind: str
    values: dict
    verdict: str
    text: str = ""
    section_path: tuple[str, ...] = ()

    @property
    def useful(self) -> int:
        return int(self.verdict != "reject")


def build_lines(tasks, settings) -> list[dict]:
    """Every line of the production path on the tasks (see the module's docstring), compact."""
    from winellbot.bench.accept_fit import candidates
    from winellbot.bench.verdicts import text_hash

    def compact(x: dict, kind: str) -> dict:
        text = x.get("fact") or x["text"]
        return {"task": x["task"], "hash": text_hash(text), "kind": kind, "text": text,
                "section_path": x["section_path"], "features": x["features"]}

    held: list[dict] = []
    passed = candidates(tasks, settings, held=held)
    lines = [compact(x, "queue") for x in passed] + [compact(x, "held") for x in held]
    human = {(t.id, text_hash(h.text)) for t in tasks for h in t.held_out}
    oracle_held: list[dict] = []
    for x in candidates(tasks, settings, held=oracle_held, oracle=True) + oracle_held:
        line = compact(x, "human")
        if (line["task"], line["hash"]) in human:
            lines.append(line)
    return lines


def load_lines(tasks_dir: str, cache: str | None, limit: int | None) -> list[dict]:
    """The lines from ``cache`` when it exists, else built (and written to ``cache`` when given)."""
    from winellbot.bench.tasks import load_tasks
    from winellbot.config import Settings

    if cache and Path(cache).exists():
        return [json.loads(line) for line in Path(cache).read_text("utf-8").splitlines() if line.strip()]
    print("building the lines: the production path on every task, twice (minutes)", file=sys.stderr)
    lines = build_lines(load_tasks(tasks_dir, limit=limit), Settings())
    if cache:
        Path(cache).write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines), "utf-8")
    return lines


def judged_rows(lines: list[dict], store: dict) -> tuple[list[Row], dict]:
    """The lines the store judged (one per task and hash, the first kind in :data:`KINDS` order), in
    the order of task and hash (a replay does not depend on the order the lines were built in), and
    the counts: found by kind, and the store's lines not found by their kind."""
    rows: dict[tuple[str, str], Row] = {}
    for kind in KINDS:
        for x in lines:
            key = (x["task"], x["hash"])
            if x["kind"] == kind and key in store and key not in rows:
                rows[key] = Row(x["task"], kind, x["features"], store[key].verdict, x["text"],
                                tuple(x["section_path"]))
    found = Counter(r.kind for r in rows.values())
    missing = Counter(v.kind for k, v in store.items() if k not in rows)
    counts = {"judged_in_store": len(store), "found": {k: found[k] for k in KINDS},
              "not_found": dict(missing)}
    return [rows[k] for k in sorted(rows)], counts


def fold_of(tasks: list[str], folds: int, rng: random.Random) -> dict[str, int]:
    """Each task's fold: the tasks shuffled by ``rng``, dealt in turn."""
    order = sorted(set(tasks))
    rng.shuffle(order)
    return {t: i % folds for i, t in enumerate(order)}


def decisions_and_queue(rows: list[Row], fold: dict[str, int], k: int, rng: random.Random,
                        decide: tuple[str, ...] = KINDS) -> tuple[list[Row], list[Row]]:
    """Fold ``k``'s decisions (the other folds' rows of the kinds ``decide``, shuffled by ``rng``)
    and its queue (its own ``queue`` rows)."""
    decisions = [r for r in rows if fold[r.task] != k and r.kind in decide]
    rng.shuffle(decisions)
    return decisions, [r for r in rows if fold[r.task] == k and r.kind == "queue"]


def replay(rows: list[Row], fitter, *, folds: int, draws: int, step: int, seed: int,
           decide: tuple[str, ...] = KINDS) -> list[dict]:
    """The steps' rows (see the module's docstring), pooled over draws; ``fitter(decisions, queue)``
    gives the queue's estimates from a model fitted on the decisions (:func:`estimator`)."""
    from winellbot.bench.accept_fit import top_third

    pooled: dict = {}
    least = None
    for draw in range(draws):
        rng = random.Random(f"{seed}:{draw}")
        fold = fold_of([r.task for r in rows], folds, rng)
        split = [decisions_and_queue(rows, fold, k, rng, decide) for k in range(folds)]
        least = min([len(d) for d, _ in split] + ([least] if least is not None else []))
        for n in [*range(step, least + 1, step), None]:
            queue, estimates = [], []
            for decisions, own in split:
                seen = decisions[:n] if n else decisions
                if own and len({r.useful for r in seen}) > 1:
                    queue += own
                    estimates += list(fitter(seen, own))
            at = pooled.setdefault(n or "all", Counter())
            at.update(top_third([r.verdict for r in queue], estimates)
                      + Counter(draws=1, useful_all=sum(r.useful for r in queue)))
    return [{"decisions": least if n == "all" else n, **({"all": True} if n == "all" else {}),
             "base_useful": round(c["useful_all"] / c["queue"], 3),
             "top_third_useful": round(c["useful"] / c["top"], 3),
             "top_third_reject": round(c["rejected"] / c["top"], 3),
             "queue": c["queue"] // c["draws"], "top_third": c["top"] // c["draws"]}
            for n, c in pooled.items() if c["draws"] == draws]


def estimator(model: str):
    """``fit(decisions, queue) -> estimates`` for ``model`` (``meaning``: rows from :func:`with_meaning`)."""
    import numpy as np

    from winellbot.bench.accept_fit import STRENGTH, fit
    from winellbot.gates.acceptability import FEATURES

    names = list(FEATURES) + (list(MEANING) if model == "meaning" else [])

    def matrix(rs):
        return np.array([[r.values[f] for f in names] for r in rs], dtype=float)

    def logistic(C):
        def run(seen, queue):
            p = fit(matrix(seen), np.array([r.useful for r in seen]), C=C)
            return ((matrix(queue) - p["mean"]) / p["scale"]) @ np.array(p["coef"]) + p["intercept"]
        return run

    def boosted(seen, queue):
        from sklearn.ensemble import HistGradientBoostingClassifier

        m = HistGradientBoostingClassifier(max_depth=2, learning_rate=0.05, max_iter=100, min_samples_leaf=20,
                                           random_state=0)
        return m.fit(matrix(seen), [r.useful for r in seen]).predict_proba(matrix(queue))[:, 1]

    return {"logistic": logistic(STRENGTH), "logistic-c1": logistic(1.0), "boosted": boosted,
            "meaning": logistic(STRENGTH)}[model]


MEANING = ("lead", "section", "section_sentence", "margin", "nearest")


def with_meaning(rows: list[Row], tasks_dir: str, cache: str | None) -> list[Row]:
    """The rows with the cosines of :data:`MEANING` by the bundled MiniLM: the line to the article's
    title and lead, to its target section's centroid and nearest sentence, the centroid's margin over
    the other sections' best, and the nearest sentence of the whole article."""
    import numpy as np

    from winellbot.bench.tasks import article_from_task, load_tasks
    from winellbot.meaning import Embedder, EmbeddingCache
    from winellbot.text import content_tokens, split_sentences

    tasks = {t.id: t for t in load_tasks(tasks_dir)}
    embedder = Embedder(EmbeddingCache(cache) if cache else None)
    out = []
    for task in sorted({r.task for r in rows}):
        article = article_from_task(tasks[task].bot_view())
        sections = [s for s in article.sections if s.paragraphs]
        said = [[s for p in sec.paragraphs for s in split_sentences(p.text) if content_tokens(s)] or [sec.text]
                for sec in sections]
        vectors = [embedder.embed(s) for s in said]
        centroids = np.array([v.mean(axis=0) / (np.linalg.norm(v.mean(axis=0)) or 1.0) for v in vectors])
        lead = embedder.embed([f"{article.title}. " + " ".join(s.text for s in sections if not s.path)[:600]])[0]
        mine = [r for r in rows if r.task == task]
        for r, v in zip(mine, embedder.embed([r.text for r in mine])):
            path = r.section_path
            target = [i for i, s in enumerate(sections) if (s.path[:len(path)] == path if path else not s.path)] or [0]
            to_sections = centroids @ v
            others = [to_sections[i] for i in range(len(sections)) if i not in target]
            cosines = (float(lead @ v), float(to_sections[target].max()),
                       float(max((vectors[i] @ v).max() for i in target)),
                       float(to_sections[target].max() - max(others, default=0.0)),
                       float(max((m @ v).max() for m in vectors)))
            out.append(Row(r.task, r.kind, {**r.values, **dict(zip(MEANING, cosines))}, r.verdict, r.text,
                           r.section_path))
    return out


def main() -> int:
    from winellbot.bench.verdicts import by_line, load_store

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tasks_dir")
    parser.add_argument("--cache", help="a file for the lines (read when it exists, else written); not in the repo")
    parser.add_argument("--verdicts", help="the verdict store (default: winellbot/data/verdicts/dev.jsonl)")
    parser.add_argument("--limit", type=int, help="only the first N tasks (building the lines)")
    parser.add_argument("--folds", type=int, default=20)
    parser.add_argument("--draws", type=int, default=10)
    parser.add_argument("--step", type=int, default=100)
    parser.add_argument("--seed", type=int, default=44)
    parser.add_argument("--model", default="logistic", choices=MODELS)
    parser.add_argument("--compare", action="store_true", help="also every other model")
    parser.add_argument("--decide", default=",".join(KINDS),
                        help="the kinds of line replayed as decisions (default: queue,held,human)")
    parser.add_argument("--embedding-cache", help="the MiniLM vectors' SQLite cache (model meaning)")
    args = parser.parse_args()
    rows, counts = judged_rows(load_lines(args.tasks_dir, args.cache, args.limit), by_line(load_store(args.verdicts)))
    models = [args.model] + ([m for m in MODELS if m != args.model] if args.compare else [])
    if "meaning" in models:
        rows = with_meaning(rows, args.tasks_dir, args.embedding_cache)
    decide = tuple(k for k in args.decide.split(",") if k)
    if not decide or set(decide) - set(KINDS):
        parser.error(f"--decide takes kinds of {', '.join(KINDS)}")
    settings = {"folds": args.folds, "draws": args.draws, "step": args.step, "seed": args.seed, "decide": decide}
    steps = {m: replay(rows, estimator(m), **settings) for m in models}
    out = {"lines": counts, **settings, "model": args.model, "steps": steps.pop(args.model)}
    if steps:
        out["compared"] = steps
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
