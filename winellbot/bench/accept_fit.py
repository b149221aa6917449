"""``winellbot fit acceptability``: fit the score that decides what is posted, on editors' verdicts.

The production path (pipeline, then every gate but the score itself) runs on the back-test tasks
and gives every candidate that no gate stops, with its measurements
(:func:`winellbot.gates.acceptability.features`). Each candidate that the verdict store
(:mod:`winellbot.bench.verdicts`) has judged becomes an example: positive when the reviewer found a
new fact worth adding in it (``accept`` or ``revise``), negative on ``reject``. A logistic model
(scikit-learn, L2) is fitted on them: it ranks lines that editors accept as they stand better than
one fitted on ``accept`` alone, which has too few positives (docs/results.md). 5-fold
cross-validation by task gives every candidate an out-of-fold estimate, and the bar is the one
whose out-of-fold selection (the candidates at or above it, at most ``max_suggestions`` per task,
best first) has the highest share of lines accepted as they stand (smoothed, :func:`merit`) while
still posting ``--min-posts`` lines per task on average. The out-of-fold figure reported
(:func:`nested`) chooses the bar without the task as well: for each fold, on the other folds'
own out-of-fold estimates, pooled over :data:`DRAWS` draws of the folds. It is printed with the judge's calibration (its verdicts on the human
editors' own sentences), and ``--write`` stores the model in ``winellbot/data/acceptability.json``.
A model refitted over an existing one replaces it only when its out-of-fold share of accepted lines
is no lower and its share of rejected lines no higher, and it says so. Also reported: the review
queue's view (:func:`top_third`: the share useful and rejected of the out-of-fold estimates' top
third). :func:`refit_from` fits the same model on review decisions (measurements, verdicts, articles)
for a caller that holds them (the state); ``benchmarks/review_learning.py`` measures such refits.
"""
from __future__ import annotations

import argparse
import hashlib
import json
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

from winellbot import factory
from winellbot.bench.backtest import MAX_PER_TASK, run_tasks
from winellbot.bench.cli import pipeline_factory
from winellbot.bench.tasks import load_tasks
from winellbot.bench.verdicts import VERDICTS as VERDICT_NAMES
from winellbot.bench.verdicts import Verdict, by_line, figures, load_store, text_hash
from winellbot.commands import open_state
from winellbot.config import Settings, load_settings
from winellbot.errors import WinellbotError
from winellbot.gates.acceptability import FEATURES, MODEL, Acceptability
from winellbot.gates.base import GateChain
from winellbot.outcomes.learning import decision_examples, score_examples
from winellbot.state.outcomes import OutcomeStore
from winellbot.state.reviews import ReviewStore

FOLDS = 5
# The L2 strength (scikit-learn's C on standardised features): about 350 judged lines, 13 of them
# accepted as they stand; averaged over fold draws 0.1 did as well as 1.0 out of fold and is steadier.
STRENGTH = 0.1
# Fold draws the reported out-of-fold figure is pooled over (one draw swings by a few points).
DRAWS = 6
TARGET = "a reviewer finds a new fact worth adding (accept or revise)"
BAR = "the highest out-of-fold share accepted as it stands, smoothed: (accepted + 0.5) / (posted + 4)"


def candidates(tasks, settings, *, held: list[dict] | None = None, oracle: bool = False) -> list[dict]:
    """Every candidate that passes the gates (the score left out), as back-test lines with features;
    ``held`` receives the lines a gate stopped, and ``oracle`` runs on the held-out sentences as the
    only sources (:func:`winellbot.bench.backtest.oracle_view`: for a benchmark, never the bot)."""

    chain = factory.build_gates(settings, None)
    gates = GateChain([g for g in chain.gates if g.name != "acceptability"])
    return run_tasks(tasks, None, pipeline_factory=pipeline_factory(settings), progress=False, gates=gates,
                     jobs=2, limit=None, held=held, oracle=oracle)


def examples(lines: list[dict], store) -> tuple[list[dict], list[int]]:
    """The judged lines and their labels (1: usable, 0: rejected)."""
    rows, labels = [], []
    for line in lines:
        v = store.get((line["task"], text_hash(line.get("fact") or line["text"])))
        if v is not None:
            rows.append(line)
            labels.append(int(v.verdict != "reject"))
    return rows, labels


def fit(X, y, C: float = STRENGTH, weights=None) -> dict:
    """A fitted model's parameters, in the shipped file's fields (``weights``: one per example)."""
    from sklearn.linear_model import LogisticRegression

    mean, scale = X.mean(axis=0), X.std(axis=0)
    scale[scale == 0] = 1.0
    m = LogisticRegression(C=C, max_iter=2000).fit((X - mean) / scale, y, sample_weight=weights)
    return {"mean": mean.round(6).tolist(), "scale": scale.round(6).tolist(),
            "coef": m.coef_[0].round(6).tolist(), "intercept": round(float(m.intercept_[0]), 6)}


def out_of_fold(X, y, tasks: list[str], weights=None, draw: int = 0):
    """Every example's estimate from a model that never saw its task (``draw`` 0: folds by the
    tasks' sorted order; another: by a hash of the draw and the task)."""
    import numpy as np

    fold = _folds(tasks, draw)
    oof = np.zeros(len(y))
    for k in range(FOLDS):
        train, test = fold != k, fold == k
        if train.any() and test.any() and len(set(y[train])) > 1:
            p = fit(X[train], y[train], weights=None if weights is None else weights[train])
            z = ((X[test] - p["mean"]) / p["scale"]) @ np.array(p["coef"]) + p["intercept"]
            oof[test] = 1 / (1 + np.exp(-z))
    return oof


def _folds(tasks: list[str], draw: int = 0):
    """Each example's fold, by task (draw 0: the sorted order of the tasks; else a hashed one)."""
    import numpy as np

    key = (lambda t: t) if not draw else (lambda t: hashlib.sha256(f"{draw}:{t}".encode()).hexdigest())
    order = sorted(set(tasks), key=key)
    at = {t: i % FOLDS for i, t in enumerate(order)}
    return np.array([at[t] for t in tasks])


def selection_of(rows: list[dict], estimates, threshold: float, per_task: int, verdicts) -> list:
    """The verdicts of what would be posted at ``threshold``: best first, ``per_task`` at most."""
    by_task = defaultdict(list)
    for row, p, v in zip(rows, estimates, verdicts):
        if p >= threshold:
            by_task[row["task"]].append((p, v))
    return [v for picks in by_task.values() for _, v in sorted(picks, key=lambda x: -x[0])[:per_task]]


def selection(rows: list[dict], estimates, threshold: float, per_task: int, verdicts) -> dict:
    """What would be posted at ``threshold`` (:func:`selection_of`) and its verdicts' shares."""
    chosen = selection_of(rows, estimates, threshold, per_task, verdicts)
    counts = Counter(v.verdict for v in chosen)
    n = len(chosen)
    return {"threshold": round(threshold, 3), "posted": n,
            **{k: round(counts[k] / n, 3) if n else None for k in VERDICT_NAMES},
            "accepted": counts["accept"]}


def merit(selected: dict) -> float:
    """What the bar is chosen for: the share of posted lines accepted as they stand, smoothed
    ((accepted + 0.5) / (posted + 4)) so that a handful of lines does not win by chance."""
    return (selected["accepted"] + 0.5) / (selected["posted"] + 4)


def choose(rows, estimates, verdicts, n_tasks: int, per_task: int, min_posts: float) -> dict:
    """The threshold with the best :func:`merit` among those posting ``min_posts`` lines a task
    (the lowest such threshold on a tie)."""
    best = None
    for threshold in sorted({round(float(p), 3) for p in estimates}):
        s = selection(rows, estimates, threshold, per_task, verdicts)
        if s["posted"] < min_posts * n_tasks:
            break
        if best is None or merit(s) > merit(best):
            best = s
    return best or selection(rows, estimates, 0.0, per_task, verdicts)


def nested(X, y, rows: list[dict], verdicts, *, per_task: int, min_posts: float, draws: int = DRAWS) -> dict:
    """The out-of-fold figures of what would be posted, the bar chosen without the task too: for
    each of :data:`FOLDS` folds by task, a model fitted on the other folds and the bar
    :func:`choose` finds on their own out-of-fold estimates select among the fold's candidates.
    Pooled over ``draws`` draws of the folds; ``posted`` and ``accepted`` are per draw."""
    import numpy as np

    tasks = [r["task"] for r in rows]
    chosen: list = []
    for draw in range(draws):
        fold = _folds(tasks, draw)
        for k in range(FOLDS):
            train, test = np.flatnonzero(fold != k), np.flatnonzero(fold == k)
            if not len(test) or len(set(y[train])) < 2:
                continue
            inner = out_of_fold(X[train], y[train], [tasks[i] for i in train], draw=draw)
            bar = choose([rows[i] for i in train], inner, [verdicts[i] for i in train],
                         len({tasks[i] for i in train}), per_task, min_posts)["threshold"]
            p = fit(X[train], y[train])
            z = ((X[test] - p["mean"]) / p["scale"]) @ np.array(p["coef"]) + p["intercept"]
            estimate = 1 / (1 + np.exp(-z))
            picked = selection_of([rows[i] for i in test], estimate, bar, per_task, [verdicts[i] for i in test])
            chosen += picked
    counts = Counter(v.verdict for v in chosen)
    n = len(chosen)
    return {"posted": round(n / draws, 1), **{k: round(counts[k] / n, 3) if n else None for k in VERDICT_NAMES},
            "accepted": round(counts["accept"] / draws, 1), "draws": draws, "bars": "chosen per fold"}


def calibration(store_rows) -> dict:
    """The judge's verdicts on the human editors' own sentences (how strict it is)."""
    return figures([v for v in store_rows if v.kind == "human"])


def run(args: argparse.Namespace) -> int:
    import numpy as np


    tasks = load_tasks(args.tasks_dir, limit=args.limit)
    settings = Settings()
    stored = load_store(args.verdicts)
    store = by_line(stored)
    lines = candidates(tasks, settings)
    rows, labels = examples(lines, store)
    if len(set(labels)) < 2:
        print(f"{len(rows)} judged candidate(s) of {len(lines)}: too few verdicts of both kinds to fit")
        return 1
    X = np.array([[r["features"][f] for f in FEATURES] for r in rows], dtype=float)
    y = np.array(labels)
    verdicts = [store[(r["task"], text_hash(r.get("fact") or r["text"]))] for r in rows]
    per_task = settings.pipeline.max_suggestions
    about = {"target": TARGET, "backend": settings.pipeline.backend, "examples": len(rows), "positives": int(y.sum()),
             "candidates": len(lines), "tasks": len(tasks), "folds": FOLDS, "l2_C": STRENGTH}
    if getattr(args, "from_state", False):
        params, chosen = _with_outcomes(args, X, y, rows, verdicts, per_task, len(tasks), about)
    else:
        params, chosen, measured = _fitted(X, y, rows, verdicts, len(tasks), per_task, args.min_posts)
        about.update(measured)
    everything = selection(rows, np.ones(len(rows)), 0.0, per_task, verdicts)
    about.update({"bar": BAR, "min_posts": args.min_posts, "out_of_fold": chosen, "without_the_score": everything,
                  "judge_on_human_sentences": calibration(stored)})
    model = {"features": list(FEATURES), **params, "threshold": chosen["threshold"], "about": about}
    print(json.dumps(model["about"], indent=2))
    return _guarded_write(model, chosen, write=args.write, always_say=getattr(args, "from_state", False))


def _fitted(X, y, rows: list[dict], verdicts: list, n_tasks: int, per_task: int, min_posts: float):
    """The model's parameters on every example, its out-of-fold selection at the bar (:func:`nested`,
    what :func:`replaces` compares, with the bar chosen on all examples' out-of-fold estimates), and
    what else was measured: the bar's selection in sample, and the review queue's top third out of
    fold (:func:`top_third`)."""
    oof = out_of_fold(X, y, [r["task"] for r in rows])
    at_bar = choose(rows, oof, verdicts, n_tasks, per_task, min_posts)
    chosen = {**nested(X, y, rows, verdicts, per_task=per_task, min_posts=min_posts), "threshold": at_bar["threshold"]}
    queue = top_third([v.verdict for v in verdicts], oof)
    return fit(X, y), chosen, {"at_the_bar_in_sample": at_bar, "queue_out_of_fold": shares(queue)}


def refit_from(values: list[dict], verdicts: list[str], groups: list[str], *, per_group: int = MAX_PER_TASK,
               min_posts: float = 1.0, about: dict | None = None) -> tuple[dict, dict]:
    """A model file's contents fitted on decisions, and its out-of-fold selection (what
    :func:`replaces` compares; ``_guarded_write`` writes the file where it allows).

    ``values``: each decided suggestion's measurements as :func:`winellbot.gates.acceptability.features`
    gave them (one a dict lacks, from an older version, counts 0); ``verdicts``: ``accept``,
    ``revise`` or ``reject`` each; ``groups``: each one's article (the folds are by group). ``about``
    is kept in the file's ``about``. Raises :class:`WinellbotError` without decisions of both kinds,
    or on an unknown verdict."""
    import numpy as np

    if not (len(values) == len(verdicts) == len(groups)):
        raise WinellbotError(f"{len(values)} measurements, {len(verdicts)} verdicts, {len(groups)} groups")
    judged = [Verdict(g, "", v, v != "reject") for g, v in zip(groups, verdicts)]
    y = np.array([int(v.verdict != "reject") for v in judged])
    if len(set(y.tolist())) < 2:
        raise WinellbotError(f"{len(y)} decision(s): a refit needs both useful and rejected ones")
    X = np.array([[float(v.get(f, 0.0)) for f in FEATURES] for v in values], dtype=float)
    rows = [{"task": g} for g in groups]
    params, chosen, measured = _fitted(X, y, rows, judged, len(set(groups)), per_group, min_posts)
    model_about = {**(about or {}), "target": TARGET, "examples": len(y), "positives": int(y.sum()),
                   "groups": len(set(groups)), "folds": FOLDS, "l2_C": STRENGTH, "bar": BAR, "min_posts": min_posts,
                   **measured, "out_of_fold": chosen}
    return {"features": list(FEATURES), **params, "threshold": chosen["threshold"], "about": model_about}, chosen


def top_third(verdicts: list[str], estimates) -> Counter:
    """The review queue's view of a score: the lines ordered by ``estimates``, highest first (ties
    in the given order); of the first ceil(n / 3), how many were judged useful (accept or revise) and
    how many rejected. Counts (``queue``, ``top``, ``useful``, ``rejected``), so that runs can be pooled."""
    top = sorted(range(len(verdicts)), key=lambda i: -estimates[i])[: -(-len(verdicts) // 3)]
    return Counter(queue=len(verdicts), top=len(top), useful=sum(verdicts[i] != "reject" for i in top),
                   rejected=sum(verdicts[i] == "reject" for i in top))


def shares(counts: Counter) -> dict:
    """:func:`top_third`'s counts as the shares of the top third useful and rejected."""
    n = counts["top"]
    return {"queue": counts["queue"], "top_third": n, "useful": round(counts["useful"] / n, 3) if n else None,
            "reject": round(counts["rejected"] / n, 3) if n else None}


def _with_outcomes(args, X, y, rows, verdicts, per_task: int, n_tasks: int, about: dict):
    """``--from-state``: the dev verdicts plus the wiki's own outcomes (:mod:`winellbot.outcomes.learning`)."""

    state = open_state(load_settings(args.config), readonly=True)
    skipped: Counter = Counter()
    history = OutcomeStore(state).history() if "outcomes" in state.db.table_names() else []
    wiki = score_examples(history, skipped)
    if "reviews" in state.db.table_names():  # the review page's decisions (reviewed mode)
        wiki += decision_examples(ReviewStore(state).labelled(), skipped)
    found = refit(X, y, [r["task"] for r in rows], rows, verdicts, wiki, FEATURES, per_task=per_task,
                  n_tasks=n_tasks, min_posts=args.min_posts)
    about["wiki_outcomes"] = {"examples": len(wiki), "by_outcome": dict(Counter(w.outcome for w in wiki)),
                              "left_out": dict(skipped), "measured_on": "the dev verdicts only, out of fold"}
    print(f"the wiki's outcomes: {len(wiki)} example(s) beside {len(rows)} dev verdicts"
          + (f"; left out: {dict(skipped)}" if skipped else ""))
    return found.params, found.chosen


@dataclass(frozen=True)
class Refit:
    """A refit on dev verdicts plus the wiki's outcomes, with its out-of-fold figures on the dev rows."""

    params: dict
    chosen: dict
    examples: int
    wiki_examples: int


def refit(X_dev, y_dev, dev_tasks: list[str], dev_rows: list[dict], dev_verdicts: list, wiki: list,
          features: tuple[str, ...], *, per_task: int, n_tasks: int, min_posts: float) -> Refit:
    """Fit on the dev verdicts and the wiki's outcomes (:class:`winellbot.outcomes.learning.WikiExample`,
    folded by article, weighted), then choose the bar and measure out of fold on the dev rows only:
    the figure the shipped model was chosen on, so that :func:`replaces` compares like with like."""
    import numpy as np

    X_wiki = np.array([[w.features.get(f, 0.0) for f in features] for w in wiki], dtype=float).reshape(-1, len(features))
    X = np.vstack([X_dev, X_wiki])
    y = np.concatenate([y_dev, np.array([w.label for w in wiki], dtype=int)])
    weights = np.concatenate([np.ones(len(y_dev)), np.array([w.weight for w in wiki], dtype=float)])
    tasks = list(dev_tasks) + [f"wiki:{w.page}" for w in wiki]
    oof = out_of_fold(X, y, tasks, weights=weights)
    chosen = choose(dev_rows, oof[: len(y_dev)], dev_verdicts, n_tasks, per_task, min_posts)
    return Refit(fit(X, y, weights=weights), chosen, len(y), len(wiki))


def _guarded_write(model: dict, chosen: dict, *, write: bool, always_say: bool) -> int:
    """Write the model over the shipped one only when :func:`replaces` allows it, and say why."""
    if not write and not always_say:
        return 0
    path = Path(__file__).resolve().parents[1] / MODEL
    old = Acceptability.load(path) if path.exists() else None
    ok, why = replaces(old.about if old else None, chosen)
    print(why if write else f"(not written: --write not given) {why}")
    if not write:
        return 0
    if not ok:
        return 1
    path.write_text(json.dumps(model, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {path}")
    return 0


def replaces(old_about: dict | None, chosen: dict) -> tuple[bool, str]:
    """Whether a refit whose out-of-fold selection is ``chosen`` may replace a model fitted with
    ``old_about``: only when it accepts no smaller share of what it posts as it stands, and rejects
    no larger share; and why."""
    was = (old_about or {}).get("out_of_fold", {})
    if was.get("accept") is None:
        return True, "no fitted model before: the refit is written"
    accept, reject = chosen.get("accept"), chosen.get("reject")
    if accept is None or accept < was["accept"] or reject is None or reject > was.get("reject", 1.0):
        return False, (f"not written: out of fold the refit's posts are accepted {_pct(accept)} and rejected "
                       f"{_pct(reject)}, the shipped model's {_pct(was['accept'])} and {_pct(was.get('reject'))}")
    return True, (f"the refit replaces the shipped model: out of fold accepted {_pct(accept)} against "
                  f"{_pct(was['accept'])}, rejected {_pct(reject)} against {_pct(was.get('reject'))}")


def _pct(x) -> str:
    return "(nothing posted)" if x is None else f"{x:.1%}"
