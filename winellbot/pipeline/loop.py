"""The WINELL agentic update aggregation loop, shared by every backend.

Navigator -> (fetch) -> Extractor -> Aggregator, repeated. The aggregator's
verdicts go into :class:`Memory`, which the navigator reads when it writes its
next query: an ignored update steers the search elsewhere. The loop is bounded
by a number of iterations and by a number of consecutive iterations that kept
nothing (both from :class:`winellbot.config.PipelineSettings`, the one table of defaults).
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, replace

from winellbot.errors import FetchError, SearchError
from winellbot.models import Article, Decision, Document, NavigationStep, SectionCriteria, Update
from winellbot.interface import Aggregator, Extractor, Fetcher, Memory, Navigator, SearchBackend
from winellbot.text import not_text

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class LoopResult:
    kept: tuple[Update, ...]
    memory: Memory
    steps: tuple[NavigationStep, ...]
    errors: tuple[str, ...]
    stopped_because: str


class UpdateAggregationLoop:
    def __init__(
        self,
        navigator: Navigator,
        extractor: Extractor,
        aggregator: Aggregator,
        *,
        max_iterations: int,
        max_empty: int,
    ) -> None:
        self.navigator = navigator
        self.extractor = extractor
        self.aggregator = aggregator
        self.max_iterations = max_iterations
        self.max_empty = max_empty

    def run(
        self, article: Article, criteria: SectionCriteria, search: SearchBackend, fetcher: Fetcher | None
    ) -> LoopResult:
        memory = Memory()
        steps: list[NavigationStep] = []
        errors: list[str] = []
        empty = 0
        stopped = "iteration bound"
        for _ in range(self.max_iterations):
            gained = False
            try:
                step = self.navigator.navigate(article, criteria, memory, search)
            except SearchError as exc:  # a dead search server is recorded, never fatal
                errors.append(f"search failed: {exc}")
                step = None
            if step is not None:
                steps.append(step)
                memory = replace(memory, queries=memory.queries + (step.query,))
                if step.chosen is None and step.final:
                    stopped = "navigator found nothing new"
                    break
            if step is not None and step.chosen is not None:
                memory = replace(memory, read_urls=memory.read_urls + (step.chosen.url,))
                document = self._read(step, fetcher, steps, errors)
                if document is not None:
                    memory, gained = self._aggregate(article, criteria, document, memory)
            empty = 0 if gained else empty + 1
            if empty >= self.max_empty:
                stopped = "too many empty iterations"
                break
        return LoopResult(memory.kept, memory, tuple(steps), tuple(errors), stopped)

    @staticmethod
    def _read(step: NavigationStep, fetcher: Fetcher | None, steps: list[NavigationStep],
              errors: list[str]) -> Document | None:
        """The chosen result's document, or None with the reason recorded: a failed fetch in ``errors``; a
        text not read (a file's bytes served as text, which hold nothing to quote, or a text over the cap)
        in the step's reason and, as a skip the cycle counts, in ``errors``."""
        document = step.chosen.document
        if document is None:
            if fetcher is None:
                errors.append(f"no fetcher for {step.chosen.url}")
                return None
            try:
                document = fetcher.fetch(step.chosen)
            except FetchError as exc:
                errors.append(f"fetch failed: {step.chosen.url}: {exc}")
                return None
        problem = not_text(document.text)
        if problem:
            steps[-1] = replace(step, reason=f"{step.reason}; not read: {problem}".lstrip("; "))
            errors.append(f"source not read: {document.url}: {problem}")
            return None
        return document

    def _aggregate(self, article, criteria, document, memory: Memory) -> tuple[Memory, bool]:
        gained = False
        for update in self.extractor.extract(article, criteria, document):
            decision = self.aggregator.aggregate(article, update, memory.kept)
            memory = replace(memory, decisions=memory.decisions + (decision,))
            kept = apply_decision(memory.kept, decision)
            gained = gained or kept != memory.kept
            memory = replace(memory, kept=kept)
        return memory, gained


def apply_decision(kept: tuple[Update, ...], decision: Decision) -> tuple[Update, ...]:
    """The kept updates after one verdict: add appends, replace swaps one out, ignore keeps all."""
    if decision.action == "ignore":
        return kept
    if decision.action == "replace" and decision.replaces:
        kept = tuple(u for u in kept if u.key != decision.replaces)
    if any(u.key == decision.update.key for u in kept):
        return kept
    return kept + (decision.update,)
