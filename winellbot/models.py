"""Typed objects that pass between the stages of the pipeline.

The pipeline reads an :class:`Article`, finds :class:`Document` objects through a
search backend, extracts :class:`Update` objects from them, lets an aggregator
decide on each (:class:`Decision`), and turns the kept ones into
:class:`Suggestion` objects that are checked by gates and posted for review.

Everything here is a frozen dataclass: a stage never mutates what it was given,
and every decision carries its reason so an operator can see why.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Literal

SectionPath = tuple[str, ...]
"""Heading names from the top-level section down; ``()`` is the lead."""


@dataclass(frozen=True)
class Paragraph:
    """One paragraph (or list block) of a section.

    ``start``/``end`` are character offsets into the article's wikitext, so a
    paragraph can be replaced without touching anything else.
    """

    wikitext: str
    text: str
    start: int
    end: int
    ref_urls: tuple[str, ...] = ()


@dataclass(frozen=True)
class Section:
    """A section of an article; the lead is the section with ``level == 0``."""

    title: str
    level: int
    path: SectionPath
    paragraphs: tuple[Paragraph, ...]

    @property
    def text(self) -> str:
        return "\n\n".join(p.text for p in self.paragraphs)

    @property
    def ref_urls(self) -> tuple[str, ...]:
        return tuple(u for p in self.paragraphs for u in p.ref_urls)


@dataclass(frozen=True)
class Article:
    """A parsed article: its sections in document order, the lead first."""

    title: str
    wikitext: str
    sections: tuple[Section, ...]
    revid: int | None = None
    timestamp: str | None = None

    def section(self, path: SectionPath | list[str]) -> Section | None:
        """The section with this exact path, or the deepest section with that name."""
        path = tuple(path)
        for sec in self.sections:
            if sec.path == path:
                return sec
        if path:
            wanted = path[-1].strip().lower()
            for sec in self.sections:
                if sec.path and sec.path[-1].strip().lower() == wanted:
                    return sec
        return None

    @property
    def plain_text(self) -> str:
        return "\n\n".join(s.text for s in self.sections if s.paragraphs)


@dataclass(frozen=True)
class Document:
    """A source: a news page, a corpus entry, or a fetched web page."""

    id: str
    url: str
    title: str
    text: str
    published: str | None = None  # ISO 8601 date or datetime
    publisher: str | None = None


@dataclass(frozen=True)
class SearchResult:
    """One hit of a search backend.

    Web backends return a snippet and leave ``document`` empty (the page is
    fetched later); the local corpus already holds the text and fills it in.
    """

    url: str
    title: str
    snippet: str = ""
    published: str | None = None
    backend: str = ""
    rank: int = 0
    document: Document | None = None


@dataclass(frozen=True)
class SectionCriteria:
    """Stage 1 output: for each section, what kind of fact belongs there."""

    criteria: dict[SectionPath, str]
    revid: int | None = None

    def for_section(self, path: SectionPath) -> str:
        return self.criteria.get(tuple(path), "")


@dataclass(frozen=True)
class Update:
    """A candidate new fact, mapped to a section, with the passage that supports it."""

    text: str
    section_path: SectionPath
    quote: str
    document: Document
    event_date: str | None = None
    score: float = 0.0
    reason: str = ""

    @property
    def key(self) -> str:
        return stable_id(self.document.url, self.text)


Action = Literal["ignore", "add", "replace"]


@dataclass(frozen=True)
class Decision:
    """The aggregator's verdict on one update, with its reason.

    ``replaces`` names the kept update (by key) that this one supersedes when
    the action is ``replace``.
    """

    action: Action
    update: Update
    reason: str
    replaces: str | None = None


@dataclass(frozen=True)
class NavigationStep:
    """The navigator's move: the query it searched and the result it chose to read."""

    query: str
    chosen: SearchResult | None
    reason: str = ""
    # with no result chosen: False when another query may still find one (this one found nothing
    # unread), so the loop counts an empty iteration and asks again instead of stopping
    final: bool = True


@dataclass(frozen=True)
class Citation:
    url: str
    title: str
    work: str = ""
    date: str = ""
    access_date: str = ""


@dataclass(frozen=True)
class Edit:
    """Stage 3 output: a paragraph rewritten to carry one update."""

    old_paragraph: str
    new_paragraph: str
    added_text: str
    citation: Citation
    reason: str = ""
    quoted: bool = False
    """True when ``added_text`` keeps the source's own wording (an extractive
    suggestion): the copying gate then flags it for the editor to paraphrase
    instead of blocking it as copied prose."""


Severity = Literal["info", "flag", "hold", "block"]


@dataclass(frozen=True)
class GateFinding:
    """What one quality gate found about a suggestion; ``block`` and ``hold`` stop posting."""

    gate: str
    severity: Severity
    message: str
    value: float | None = None  # a measurement the finding reports (the acceptability estimate)


@dataclass(frozen=True)
class Suggestion:
    """A proposed change to one paragraph of one article, ready for review."""

    article_title: str
    revid: int | None
    section_path: SectionPath
    paragraph_index: int | None  # None: a new paragraph at the end of the section
    edit: Edit
    update: Update
    findings: tuple[GateFinding, ...] = field(default=())

    @property
    def id(self) -> str:
        """Stable across runs: the same fact from the same source for the same article."""
        return stable_id(self.article_title, self.update.document.url, self.update.text)

    @property
    def blocked(self) -> bool:
        return any(f.severity in ("block", "hold") for f in self.findings)

    @property
    def estimate(self) -> float | None:
        """The acceptability gate's estimate that an editor uses it, when that gate ran."""
        return next((f.value for f in self.findings if f.gate == "acceptability" and f.value is not None), None)


@dataclass(frozen=True)
class PipelineResult:
    """Everything one pipeline run produced for one article, decisions included."""

    suggestions: tuple[Suggestion, ...]
    decisions: tuple[Decision, ...] = ()
    steps: tuple[NavigationStep, ...] = ()
    criteria: SectionCriteria | None = None
    errors: tuple[str, ...] = ()


def stable_id(*parts: str) -> str:
    """A short hash that is the same on every run and every machine."""
    h = hashlib.sha256("\x1f".join(p.strip() for p in parts).encode("utf-8"))
    return h.hexdigest()[:16]
