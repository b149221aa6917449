"""Run the production pipeline on backtest tasks and write its suggestions.

For each task the article is the task's wikitext and the only search corpus is
the task's documents; everything from search to the finished suggestion is the
production code, only posting is left out. The pipeline is given a
:class:`~winellbot.bench.tasks.BotTask` (title, wikitext, documents) and nothing
else. The one place that reads ``held_out`` is :func:`oracle_view`, used only in
oracle mode, where the documents are replaced by the held-out sentences.
"""
from __future__ import annotations

import json
import logging
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from winellbot import meaning
from winellbot.bench.tasks import BotTask, Task, article_from_task, load_tasks
from winellbot.config import PipelineSettings
from winellbot.errors import BudgetExceeded, WinellbotError
from winellbot.gates.acceptability import features
from winellbot.gates.registry import default_gates
from winellbot.models import Document, Suggestion
from winellbot.pipeline.pipeline import Pipeline, propose_checked
from winellbot.search.corpus import LocalCorpus

log = logging.getLogger(__name__)

# The most suggestions a task may post: the bot's own cap, from the settings table.
MAX_PER_TASK = PipelineSettings().max_suggestions


def oracle_view(task: Task) -> BotTask:
    """ORACLE MODE ONLY: the task with its documents replaced by the held-out sentences, one each.

    Only the sentence text travels; its section and the origin labels do not.
    """
    by_id = {d.id: d for d in task.documents}
    docs = []
    for i, held in enumerate(task.held_out, 1):
        source = by_id.get(held.supporting_document)
        docs.append(Document(
            id=f"oracle{i}",
            # A fragment keeps the URLs distinct: several sentences may share one source.
            url=f"{source.url if source else 'https://oracle.invalid/' + task.id}#oracle{i}",
            title=source.title if source else f"held-out sentence {i}",
            text=held.text,
        ))
    return BotTask(title=task.title, wikitext=task.wikitext, documents=tuple(docs))


def run_task(task_id: str, bot_task: BotTask, pipeline: Pipeline, gates=None,
             gate_stats: Counter | None = None, held: list[dict] | None = None,
             limit: int | None = MAX_PER_TASK) -> list[dict]:
    """The suggestions lines of one task (at most ``limit`` that no gate stopped, best first).

    ``gate_stats``, when given, counts per gate the suggestions it stopped (held or blocked);
    ``held`` receives their lines, each with the findings that stopped it (``held``).
    """
    corpus = LocalCorpus()
    corpus.add(bot_task.documents)
    article = article_from_task(bot_task)
    result = propose_checked(pipeline, gates, article, corpus, limit=limit)
    if gate_stats is not None:
        for s in result.suggestions:
            gate_stats["checked"] += 1
            for gate in sorted({f.gate for f in s.findings if f.severity in ("hold", "block")}):
                gate_stats[gate] += 1
    if held is not None:
        held.extend({**suggestion_line(task_id, s, article),
                     "held": [f"{f.gate}: {f.message}" for f in s.findings if f.severity in ("hold", "block")]}
                    for s in result.suggestions if s.blocked)
    return [suggestion_line(task_id, s, article) for s in result.suggestions if not s.blocked]


def suggestion_line(task_id: str, s: Suggestion, article=None) -> dict:
    """One line of the bench README's suggestions format, plus what a reviewer would be shown (the
    fact, its source and quote), the paragraphs for token change, the acceptability estimate and,
    with ``article``, the measurements it rests on (what ``winellbot fit acceptability`` reads)."""
    return {
        "task": task_id,
        "section_path": list(s.section_path),
        "text": s.edit.added_text,
        "fact": s.update.text,
        "documents": [s.update.document.id],
        "source": {"url": s.update.document.url, "title": s.update.document.title},
        "quote": s.update.quote,
        "reason": s.update.reason,
        "old_paragraph": s.edit.old_paragraph,
        "new_paragraph": s.edit.new_paragraph,
        "estimate": s.estimate,
        **({"features": features(article, s)} if article is not None else {}),
    }


def run_backtest(
    tasks_dir: str | Path,
    output: str | Path | None,
    *,
    pipeline_factory: Callable[[], Pipeline],
    oracle: bool = False,
    progress: bool = True,
    limit: int | None = None,
    gates="default",
) -> list[dict]:
    """Run every task of ``tasks_dir``; write the suggestions as JSONL to ``output`` and return them
    (``gates`` as for :func:`run_tasks`)."""
    tasks = load_tasks(tasks_dir, limit=limit)
    return run_tasks(tasks, output, pipeline_factory=pipeline_factory, oracle=oracle, progress=progress,
                     gates=gates)


def run_tasks(
    tasks: list[Task],
    output: str | Path | None,
    *,
    pipeline_factory: Callable[[], Pipeline],
    oracle: bool = False,
    progress: bool = True,
    gates="default",
    gate_stats: Counter | None = None,
    skips: dict[str, str] | None = None,
    jobs: int = 1,
    embeddings: Counter | None = None,
    held: list[dict] | None = None,
    limit: int | None = MAX_PER_TASK,
) -> list[dict]:
    """As :func:`run_backtest`, on tasks already loaded.

    ``gates``: the quality gates every suggestion passes, as in production ("default": the
    standard chain without state or model; None: no gates). ``gate_stats`` is filled with
    how many suggestions were checked and how many each gate stopped. ``skips`` receives the
    tasks that gave no result, with the reason; a spent token budget skips the rest.
    ``jobs`` > 1 runs the tasks in that many worker processes, each with its own pipeline
    built by ``pipeline_factory`` (tasks are independent: the lines are those of one process,
    in the same order). ``embeddings`` receives the sentence embedder's counts and seconds
    (:class:`winellbot.meaning.EmbeddingStats`), summed over the workers. ``held`` receives the lines
    of the candidates a gate stopped, with the findings that stopped each. ``limit``: the most lines
    of a task (None: every candidate that passed).
    """
    skips = {} if skips is None else skips
    embeddings = Counter() if embeddings is None else embeddings
    if jobs > 1:
        results = _parallel(tasks, pipeline_factory, gates, oracle, jobs, embeddings, limit)
    else:
        results = _sequential(tasks, pipeline_factory, gates, oracle, embeddings, limit)
    lines: list[dict] = []
    for task_id, (task_lines, task_gates, skip) in _progress(results, progress, len(tasks)):
        lines.extend(x for x in task_lines if "held" not in x)
        if held is not None:
            held.extend(x for x in task_lines if "held" in x)
        if gate_stats is not None:
            gate_stats.update(task_gates)
        if skip:
            skips[task_id] = skip
    if output is not None:
        Path(output).parent.mkdir(parents=True, exist_ok=True)
        with open(output, "w", encoding="utf-8") as fh:
            for line in lines:
                fh.write(json.dumps(line, ensure_ascii=False) + "\n")
    return lines


# The pipeline and gates of this process (a worker builds its own once).
_WORKER: dict = {}


def _build(pipeline_factory: Callable[[], Pipeline], gates, limit: int | None = MAX_PER_TASK) -> None:
    _WORKER["pipeline"] = pipeline_factory()
    _WORKER["limit"] = limit
    if gates == "default":
        gates = default_gates()
    _WORKER["gates"] = gates


def _one(task: Task, oracle: bool, spent: str = "") -> tuple[list[dict], Counter, str]:
    """One task's lines, gate counts and skip reason ("" when it gave a result)."""
    if spent:
        return [], Counter(), spent
    stats: Counter = Counter()
    view = oracle_view(task) if oracle else task.bot_view()
    try:
        held: list[dict] = []
        lines = run_task(task.id, view, _WORKER["pipeline"], _WORKER["gates"], stats, held, _WORKER["limit"])
        return lines + held, stats, ""
    except BudgetExceeded as exc:
        return [], stats, f"token budget spent: {exc}"
    except WinellbotError as exc:
        log.warning("task %s failed: %s", task.id, exc)
        return [], stats, f"{type(exc).__name__}: {exc}"


Results = Iterator[tuple[str, tuple[list[dict], Counter, str]]]


def _sequential(tasks, pipeline_factory, gates, oracle, embeddings: Counter, limit) -> Results:
    _build(pipeline_factory, gates, limit)
    try:
        spent = ""
        for task in tasks:
            result = _one(task, oracle, spent)
            spent = result[2] if result[2].startswith("token budget spent") else spent
            yield task.id, result
        embeddings.update(_embedder_stats(_WORKER["pipeline"]))
    finally:
        _WORKER.clear()  # the pipeline (its models, its open cache) is not kept, nor handed to a later fork


def _parallel(tasks, pipeline_factory, gates, oracle, jobs, embeddings: Counter, limit) -> Results:
    """The tasks in ``jobs`` forked workers (fork: the factory may be a closure); torch's threads
    are shared out between them, so cold embedding does not run more threads than cores. Where this
    process has imported torch already, a worker runs torch on one thread: OpenMP's threads do not
    survive a fork, and a forked child that starts parallel work after its parent did hangs."""
    import multiprocessing
    import os
    import sys
    from concurrent.futures import ProcessPoolExecutor

    jobs = min(jobs, len(tasks)) or 1
    threads = 1 if "torch" in sys.modules else max(1, (os.cpu_count() or 1) // jobs)
    totals: dict[int, Counter] = {}
    with ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("fork"), initializer=_start_worker,
                             initargs=(pipeline_factory, gates, threads, limit)) as pool:
        for task, (result, pid, stats) in zip(tasks, pool.map(_worker_task, tasks, [oracle] * len(tasks))):
            totals[pid] = stats  # each worker's running totals: the last one counts
            yield task.id, result
    for stats in totals.values():
        embeddings.update(stats)


def _start_worker(pipeline_factory, gates, threads: int, limit) -> None:
    meaning.share_threads(threads)
    _build(pipeline_factory, gates, limit)


def _worker_task(task: Task, oracle: bool) -> tuple[tuple[list[dict], Counter, str], int, Counter]:
    import os

    return _one(task, oracle), os.getpid(), _embedder_stats(_WORKER["pipeline"])


def _embedder_stats(pipeline) -> Counter:
    """The pipeline's sentence embedders' figures so far, summed (empty without one)."""
    import dataclasses

    total: Counter = Counter()
    for embedder in getattr(pipeline, "embedders", ()):
        total.update(dataclasses.asdict(embedder.stats))
    return total


def _progress(results: Iterable, enabled: bool, total: int) -> Iterable:
    if not enabled:
        return results
    from tqdm import tqdm

    return tqdm(results, desc="backtest", unit="task", total=total)


def read_suggestions(path: str | Path) -> list[dict]:
    """Read a suggestions JSONL file."""
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]
