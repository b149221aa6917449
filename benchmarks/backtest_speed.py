"""Time the offline backtest on a task folder (target: the 100 dev tasks in <= 60 s on 2 cores).

    .venv/bin/python benchmarks/backtest_speed.py ../shared/bench/wikigenbench-dev [--oracle]

Prints the wall time, tasks per second and the lexical-judge figures.
"""
from __future__ import annotations

import argparse
import json
import time

from winellbot.bench.backtest import run_tasks
from winellbot.bench.score import score
from winellbot.bench.tasks import load_tasks
from winellbot.bench.cli import pipeline_factory
from winellbot.config import Settings


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tasks_dir")
    parser.add_argument("--oracle", action="store_true")
    parser.add_argument("--limit", type=int)
    args = parser.parse_args()
    tasks = load_tasks(args.tasks_dir, limit=args.limit)
    start = time.perf_counter()
    # The pipeline exactly as `winellbot backtest` and the bot build it (the embedded defaults).
    lines = run_tasks(tasks, None, pipeline_factory=pipeline_factory(Settings()), oracle=args.oracle, progress=False)
    seconds = time.perf_counter() - start
    figures = score(tasks, lines)
    keys = ("c_soft", "c_hard", "c_hard_top", "s_acc", "cover_precision")
    print(f"{len(tasks)} tasks in {seconds:.1f} s ({len(tasks) / seconds:.1f} tasks/s)")
    print(json.dumps({k: round(figures[k], 3) for k in keys}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
