"""``winellbot backtest``: run the pipeline on backtest tasks, score it, and report."""
from __future__ import annotations

import argparse
import datetime as dt
import json
import sys

from winellbot.errors import ConfigError


def register(subparsers) -> argparse.ArgumentParser:
    """Add the ``backtest`` subcommand."""
    p = subparsers.add_parser("backtest", help="replay backtest tasks and score the suggestions")
    p.add_argument("tasks_dir", metavar="TASKS_DIR", help="folder of winell-backtest/1 task files")
    p.add_argument("--output", required=True, metavar="FILE", help="suggestions JSONL to write")
    p.add_argument("--oracle", action="store_true",
                   help="replace each task's documents by its held-out sentences (perfect discovery)")
    p.add_argument("--report", metavar="DIR", help="write report.md, figures.json and figures.png here")
    p.add_argument("--backend", default="offline", choices=["offline"], help="pipeline backend")
    p.add_argument("--limit", type=int, metavar="N", help="only the first N tasks")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    return p


def pipeline_factory(backend: str):
    """The function that builds the production pipeline for ``backend``."""
    if backend == "offline":
        from winellbot.pipeline.offline import build_offline_pipeline

        return lambda: build_offline_pipeline(today=dt.date.today())
    raise ConfigError(f"backtest backend {backend!r} is not available")


def run(args: argparse.Namespace) -> int:
    """Run, score with the lexical judge, print the figures, optionally write the report."""
    from winellbot.bench.backtest import run_tasks
    from winellbot.bench.report import table, write_report
    from winellbot.bench.score import score
    from winellbot.bench.tasks import load_tasks

    tasks = load_tasks(args.tasks_dir, limit=args.limit)
    lines = run_tasks(tasks, args.output, pipeline_factory=pipeline_factory(args.backend),
                      oracle=args.oracle, progress=not args.no_progress and sys.stderr.isatty())
    figures = score(tasks, lines)
    name = f"{args.backend}{' oracle' if args.oracle else ''}"
    print(table({name: figures}))
    print(json.dumps(figures, indent=2))
    if args.report:
        for path in write_report({name: figures}, args.report):
            print(f"wrote {path}")
    return 0
