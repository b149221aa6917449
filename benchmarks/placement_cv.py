"""The backtest with out-of-fold placement weights: what the fitted weights do on tasks they never saw.

    .venv/bin/python benchmarks/placement_cv.py ../shared/bench/wikigenbench-dev [--oracle] [--embedding-cache FILE]

The placer's weights in ``winellbot/data/placement.json`` were fitted on every dev task
(``winellbot fit placement``), so a dev backtest with them is an in-sample figure. Here the
tasks are split into the fit command's 5 folds by task; each fold is backtested with weights
fitted on the other four (the same rows, the same rule for keeping fitted or hand-set weights),
and the figures of all folds together are printed next to the in-sample run.
"""
from __future__ import annotations

import argparse
import json
from unittest import mock

KEYS = ("c_soft", "c_hard", "c_hard_top", "s_acc", "cover_precision", "readable")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tasks_dir")
    parser.add_argument("--oracle", action="store_true")
    parser.add_argument("--embedding-cache", default="", help="embedding cache file (default: beside the state)")
    args = parser.parse_args()

    from winellbot import factory
    from winellbot.bench import fit
    from winellbot.bench.backtest import run_tasks
    from winellbot.bench.cli import pipeline_factory
    from winellbot.bench.score import score
    from winellbot.bench.tasks import load_tasks
    from winellbot.config import Settings
    from winellbot.meaning import Embedder, EmbeddingCache
    from winellbot.pipeline import placement

    tasks = load_tasks(args.tasks_dir)
    settings = Settings()
    settings.pipeline.embedding_cache = args.embedding_cache
    embedder = Embedder(EmbeddingCache(settings.pipeline.embedding_cache_path(settings.state.path)),
                        model=placement.fitted_model())
    rows = fit.placement_rows(tasks, embedder)
    # The fit command's folds: task ids in order, dealt round (every dev task has held-out rows).
    fold = {task_id: i % fit.FOLDS for i, task_id in enumerate(sorted(t.id for t in tasks))}

    def backtest(subset):
        build = pipeline_factory(settings)
        return run_tasks(subset, None, pipeline_factory=build, oracle=args.oracle, progress=False,
                         gates=factory.build_gates(settings, None))

    in_sample = score(tasks, backtest(tasks))
    lines, record = [], placement._fitted()
    fitted = record["weights"]
    for k in range(fit.FOLDS):
        weights = {}
        for kind, name in fit.KINDS.items():
            train = fit.only([r for r in rows if r[1] == kind and fold[r[0]] != k], fit.FITTED_TERMS[name])
            w = fit.fit_softmax(train)
            w = w / w[0] if w[0] > 0 else w
            # Where the full fit kept the hand-set weights, so does each fold.
            weights[name] = dict(zip(placement.TERMS, map(float, w))) if fitted[name] != placement.HAND_SET \
                else dict(placement.HAND_SET)
        # placers() reads the whole record (model and weights): the fold's weights replace the weights.
        with mock.patch.object(placement, "_fitted", return_value={**record, "weights": weights}):
            lines += backtest([t for t in tasks if fold[t.id] == k])
        print(f"fold {k}: alone weights {json.dumps({t: round(v, 2) for t, v in weights['alone'].items()})}")
    out_of_fold = score(tasks, lines)
    for name, figures in (("in-sample", in_sample), ("out-of-fold", out_of_fold)):
        print(f"{'oracle ' if args.oracle else ''}{name}: " + json.dumps({k: round(float(figures[k]), 3) for k in KEYS}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
