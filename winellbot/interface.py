"""The stage interfaces of the WINELL pipeline.

Each stage is a small class with one public method, typed objects in and out.
The offline backend (no model) and the LLM agent implement the same stages, so
the loop that drives them (:mod:`winellbot.pipeline.loop`) and everything after
it (gates, posting, the backtest) is shared.

    Article --CriteriaInducer--> SectionCriteria
    (criteria, memory) --Navigator--> NavigationStep(query, chosen result)
    Document --Extractor--> [Update]
    (Update, kept) --Aggregator--> Decision(ignore | add | replace, reason)
    (Paragraph, Update, Citation) --Editor--> Edit
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass

from winellbot.models import (
    Article,
    Citation,
    Decision,
    Document,
    Edit,
    NavigationStep,
    Paragraph,
    SearchResult,
    SectionCriteria,
    Update,
)


class SearchBackend(ABC):
    """Finds sources for a query. Implementations convert results at the boundary."""

    name: str = "search"

    @abstractmethod
    def search(self, query: str, *, since: str | None = None, limit: int = 10) -> list[SearchResult]:
        """Results best first; ``since`` (ISO date) drops older sources where the backend can."""


class Fetcher(ABC):
    """Turns a search result into a full document (the local corpus already has it)."""

    @abstractmethod
    def fetch(self, result: SearchResult) -> Document:
        """The document, or raise :class:`winellbot.errors.FetchError`."""


@dataclass(frozen=True)
class Memory:
    """What the aggregation loop knows so far; the navigator plans its next query from it."""

    queries: tuple[str, ...] = ()
    read_urls: tuple[str, ...] = ()
    decisions: tuple[Decision, ...] = ()
    kept: tuple[Update, ...] = ()


class CriteriaInducer(ABC):
    @abstractmethod
    def induce(self, article: Article) -> SectionCriteria:
        """Per section, the kind of fact that belongs there."""


class Navigator(ABC):
    @abstractmethod
    def navigate(
        self, article: Article, criteria: SectionCriteria, memory: Memory, search: SearchBackend
    ) -> NavigationStep:
        """Write the next query, search, and pick one unread result (``chosen=None``: nothing left)."""


class Extractor(ABC):
    @abstractmethod
    def extract(self, article: Article, criteria: SectionCriteria, document: Document) -> list[Update]:
        """The new facts in ``document``, each mapped to a section, with a supporting quote."""


class Aggregator(ABC):
    @abstractmethod
    def aggregate(self, article: Article, update: Update, kept: tuple[Update, ...]) -> Decision:
        """Ignore, add or replace, against the section's text and the updates already kept."""


class Editor(ABC):
    @abstractmethod
    def edit(self, paragraph: Paragraph | None, update: Update, citation: Citation) -> Edit:
        """Rewrite ``paragraph`` (None: start a new one) with a minimal, cited change."""
