"""Time the offline backtest on a task folder, with a cold and then a warm embedding cache.

    .venv/bin/python benchmarks/backtest_speed.py ../shared/bench/wikigenbench-dev [--oracle] [--limit N] [--jobs N]

Goals on 2 cores for the 100 dev tasks: at most 150 s with a cold embedding cache (a new,
empty cache file: every sentence embedding is computed, the model is loaded) and at most 60 s
with a warm one (the same file again). ``--jobs`` (default 2: the cores) runs the tasks in that
many processes, as ``winellbot backtest --jobs`` does. Each run is a fresh process, so nothing but the cache
file carries over. Prints, per run, the wall time, the embeddings computed and served from
the cache (total and per task), the time spent computing them, and the lexical-judge figures.
"""
from __future__ import annotations

import argparse
from collections import Counter
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

KEYS = ("c_soft", "c_hard", "c_hard_top", "s_acc", "cover_precision", "readable")


def one_run(tasks_dir: str, cache: str, oracle: bool, limit: int | None, jobs: int) -> dict:
    """The backtest exactly as `winellbot backtest` and the bot build it, on the given cache file."""
    from winellbot.bench.backtest import run_tasks
    from winellbot.bench.cli import embedding_figures, pipeline_factory
    from winellbot.bench.score import score
    from winellbot.bench.tasks import load_tasks
    from winellbot.config import Settings

    tasks = load_tasks(tasks_dir, limit=limit)
    settings = Settings()  # the embedded defaults: what the bot runs with no config file
    settings.pipeline.embedding_cache = cache
    start = time.perf_counter()
    embedded: Counter = Counter()
    lines = run_tasks(tasks, None, pipeline_factory=pipeline_factory(settings), oracle=oracle, progress=False,
                      jobs=jobs, embeddings=embedded)
    seconds = time.perf_counter() - start
    figures = score(tasks, lines)
    return {"tasks": len(tasks), "seconds": round(seconds, 1), "embeddings": embedding_figures(embedded, len(tasks)),
            **{k: round(figures[k], 3) for k in KEYS}}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tasks_dir")
    parser.add_argument("--oracle", action="store_true")
    parser.add_argument("--limit", type=int)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--cache", help=argparse.SUPPRESS)  # one run in this process, on this cache file
    args = parser.parse_args()
    if args.cache:
        print(json.dumps(one_run(args.tasks_dir, args.cache, args.oracle, args.limit, args.jobs)))
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        cache = str(Path(tmp) / "embeddings.sqlite")
        for name in ("cold", "warm"):
            command = [sys.executable, __file__, args.tasks_dir, "--cache", cache]
            command += ["--oracle"] if args.oracle else []
            command += ["--limit", str(args.limit)] if args.limit else []
            command += ["--jobs", str(args.jobs)]
            start = time.perf_counter()
            out = subprocess.run(command, capture_output=True, text=True, check=True)
            wall = time.perf_counter() - start
            run = json.loads(out.stdout.strip().splitlines()[-1])
            e = run.pop("embeddings")
            print(f"{name}: {run['tasks']} tasks in {run['seconds']:.1f} s in {args.jobs} process(es) ({wall:.1f} s with the process start); "
                  f"embeddings computed {e['computed']} ({e['computed_per_task']:.1f} per task) in {e['seconds']:.1f} s "
                  f"({e['seconds_per_task']:.2f} s per task), model load {e['load_seconds']:.1f} s, "
                  f"from the cache {e['cached']}")
            print(f"{name}: " + json.dumps({k: run[k] for k in KEYS}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
