"""``winellbot backtest``: run the pipeline on backtest tasks, score it, and report."""
from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import json
import sys
from collections import Counter

from winellbot.errors import ConfigError


def register(subparsers) -> argparse.ArgumentParser:
    """Add the ``backtest`` subcommand."""
    p = subparsers.add_parser("backtest", help="replay backtest tasks and score the suggestions")
    p.add_argument("tasks_dir", metavar="TASKS_DIR", help="folder of winell-backtest/1 task files")
    p.add_argument("--output", required=True, metavar="FILE", help="suggestions JSONL to write")
    p.add_argument("--oracle", action="store_true",
                   help="replace each task's documents by its held-out sentences (perfect discovery)")
    p.add_argument("--report", metavar="DIR", help="write report.md, figures.json and figures.png here")
    p.add_argument("--backend", default="offline", choices=["offline", "openai"],
                   help="pipeline backend; openai: the agent through the model client of --config")
    p.add_argument("--judge", default="lexical", choices=["lexical", "model"],
                   help="coverage judge: the bench README's lexical one, or the paper's model judge "
                        "(needs a model server in --config)")
    p.add_argument("--config", help="TOML config for the model backend ([llm], [pipeline], [state]); "
                                    "default: $WINELLBOT_CONFIG or ./winellbot.toml")
    p.add_argument("--limit", type=int, metavar="N", help="only the first N tasks")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    return p


def pipeline_factory(backend: str, *, settings=None, client=None):
    """The function that builds the production pipeline for ``backend``.

    ``openai`` builds the agent as :func:`winellbot.factory.build_pipeline` does for the bot, on
    ``client`` (a :class:`~winellbot.llm.client.ModelClient`) and the pipeline limits of ``settings``.
    """
    if backend == "offline":
        from winellbot.pipeline.offline import build_offline_pipeline

        from winellbot.bench.backtest import MAX_PER_TASK
        from winellbot.factory import CANDIDATES

        return lambda: build_offline_pipeline(max_suggestions=CANDIDATES * MAX_PER_TASK, today=dt.date.today())
    if backend == "openai":
        if settings is None or client is None:
            raise ConfigError("the openai backtest backend needs settings and a model client")
        from winellbot import factory

        def build():
            pipeline = factory.build_pipeline(_with_backend(settings, "openai"), state=client.state,
                                              run_id=client.run_id, client=client)
            pipeline.today = dt.date.today()
            return pipeline

        return build
    raise ConfigError(f"backtest backend {backend!r} is not available")


def _with_backend(settings, backend: str):
    return dataclasses.replace(settings, pipeline=dataclasses.replace(settings.pipeline, backend=backend))


def model_judge(settings, state, run_id: int | None):
    """The paper's judge on its own client (so judging does not spend the pipeline's token budget)."""
    from winellbot import factory
    from winellbot.bench.judge import ModelJudge

    client = factory.build_client(settings, state, run_id)
    return ModelJudge(client, model=settings.llm.stage_models.get("judge", ""))


def run(args: argparse.Namespace) -> int:
    """Run, score with the chosen judge, print the figures, optionally write the report."""
    from winellbot.bench.backtest import run_tasks
    from winellbot.bench.report import table, write_report
    from winellbot.bench.score import score
    from winellbot.bench.tasks import load_tasks

    tasks = load_tasks(args.tasks_dir, limit=args.limit)
    uses_model = args.backend != "offline" or args.judge == "model"
    state = run_id = None
    settings = None
    if uses_model:
        from winellbot.config import load_settings
        from winellbot.state.db import State

        settings = load_settings(getattr(args, "config", None))
        state = State(settings.state.path)  # the cache makes a re-run on the same tasks free
        run_id = state.start_run(f"backtest:{args.backend}:{args.judge}")
    client = None
    if args.backend != "offline":
        from winellbot import factory

        client = factory.build_client(settings, state, run_id)
    judge = model_judge(settings, state, run_id) if args.judge == "model" else None
    status = "failed"
    gate_stats: Counter = Counter()
    try:
        lines = run_tasks(tasks, args.output,
                          pipeline_factory=pipeline_factory(args.backend, settings=settings, client=client),
                          oracle=args.oracle, progress=not args.no_progress and sys.stderr.isatty(),
                          gate_stats=gate_stats)
        figures = score(tasks, lines, judge=judge)
        status = "done"
    finally:
        if state is not None:
            state.finish_run(run_id, status, pages=len(tasks))
    name = f"{args.backend}{' oracle' if args.oracle else ''}{' (model judge)' if judge else ''}"
    print(table({name: figures}))
    checked = gate_stats.pop("checked", 0)
    print(f"gates: {checked} suggestion(s) checked; stopped: "
          + (", ".join(f"{gate} {n}" for gate, n in gate_stats.most_common()) or "none"))
    print(json.dumps(figures, indent=2))
    if args.report:
        for path in write_report({name: figures}, args.report):
            print(f"wrote {path}")
    return 0
