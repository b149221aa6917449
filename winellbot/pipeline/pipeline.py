"""The whole WINELL pipeline for one article: criteria, aggregation loop, editing.

Backends differ only in the stage objects they supply (see
:mod:`winellbot.pipeline.factory`); this class and everything downstream of it
are the same for the offline backend, the LLM agent and the backtest.
"""
from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, replace
from urllib.parse import urlsplit

from winellbot import clock
from winellbot.models import (
    Article,
    Citation,
    Document,
    Paragraph,
    PipelineResult,
    Section,
    Suggestion,
    Update,
)
from winellbot.interface import CriteriaInducer, Editor, Fetcher, SearchBackend
from winellbot.pipeline.loop import UpdateAggregationLoop

_WORD = re.compile(r"\w+", re.UNICODE)


@dataclass
class Pipeline:
    inducer: CriteriaInducer
    loop: UpdateAggregationLoop
    editor: Editor
    max_suggestions: int = 5
    today: dt.date | None = None
    # Last looks at the chosen updates before editing, in order: ``refine(article, updates) -> updates``
    # (the offline backend places them again by meaning and cuts them at sentence ends there:
    # work worth doing for the few it keeps, not for every passage it reads).
    refiners: tuple = ()
    # The sentence embedders the stages use (each once), for the figures of what they computed.
    embedders: tuple = ()
    # Last looks at an update whose suggestion the gates let through, before it is posted:
    # ``settle(article, update) -> update`` (work worth doing for the few lines posted only).
    settlers: tuple = ()

    def propose(self, article: Article, search: SearchBackend, fetcher: Fetcher | None = None, *,
                since: str | None = None) -> PipelineResult:
        """Criteria, the aggregation loop, then the editor; ``since`` is for stages that date facts."""
        criteria = self.inducer.induce(article)
        result = self.loop.run(article, criteria, search, fetcher)
        ranked = sorted(result.kept, key=lambda u: -u.score)[: self.max_suggestions]
        for refiner in self.refiners if ranked else ():
            ranked = refiner.refine(article, ranked)
        suggestions = tuple(self._suggest(article, u) for u in ranked)
        return PipelineResult(
            suggestions=suggestions,
            decisions=result.memory.decisions,
            steps=result.steps,
            criteria=criteria,
            errors=result.errors,
        )

    def settle(self, article: Article, suggestion: Suggestion) -> Suggestion:
        """``suggestion`` after the settlers' last look at its update: the same object when none
        changed it, else a new suggestion (no findings: the gates check it again)."""
        update = suggestion.update
        for settler in self.settlers:
            update = settler.settle(article, update)
        return suggestion if update == suggestion.update else self._suggest(article, update)

    def _suggest(self, article: Article, update: Update) -> Suggestion:
        section = article.section(update.section_path)
        index, paragraph = choose_paragraph(section, update)
        citation = citation_for(update.document, self.today or clock.today())
        edit = self.editor.edit(paragraph, update, citation)
        path = section.path if section is not None else tuple(update.section_path)
        return Suggestion(
            article_title=article.title,
            revid=article.revid,
            section_path=path,
            paragraph_index=index,
            edit=edit,
            update=update,
        )


def propose_checked(pipeline: Pipeline, gates, article: Article, search: SearchBackend,
                    fetcher: Fetcher | None = None, *, limit: int | None = None,
                    since: str | None = None) -> PipelineResult:
    """The production path from search to finished suggestions: the pipeline, then the gates.

    The bot and the backtest both call this. ``gates`` (a :class:`winellbot.gates.GateChain`,
    or None) attach findings; with ``limit``, the first ``limit`` suggestions that no gate
    stopped are kept, followed by every stopped one (recorded for audit, never posted); with the
    acceptability gate in the chain, the suggestions are ordered by its estimate, highest first. The
    pipeline may be built to propose more candidates than ``limit`` so that stopped ones
    leave room for the next best. The kept ones then get the pipeline's settlers' last look
    (:meth:`Pipeline.settle`), checked by the gates again. ``since`` (the page's last check) goes to
    the pipeline.
    """
    result = pipeline.propose(article, search, fetcher, since=since)
    checked = tuple(gates.check(article, result.suggestions)) if gates is not None else result.suggestions
    # The acceptability gate's estimate, where it gave one, puts the likeliest to be used first.
    checked = tuple(sorted(checked, key=lambda s: -(s.estimate if s.estimate is not None else 0.0)))
    passed = [s for s in checked if not s.blocked][:limit]
    if limit is not None:
        checked = tuple(passed + [s for s in checked if s.blocked])
    if getattr(pipeline, "settlers", ()):
        settled = {id(s): _settled(pipeline, gates, article, s) for s in passed}
        checked = tuple(settled.get(id(s), s) for s in checked)
    return replace(result, suggestions=checked)


def _settled(pipeline: Pipeline, gates, article: Article, suggestion: Suggestion) -> Suggestion:
    """The pipeline's last look at a suggestion the gates passed, checked by the gates again; the
    suggestion as it was when they stop the new one."""
    new = pipeline.settle(article, suggestion)
    if new is suggestion:
        return suggestion
    if gates is not None:
        new = gates.check_one(article, new)
    return suggestion if new.blocked else new


def per_article(build):
    """``build(article)`` cached per article revision (title and wikitext), for the 64 latest articles.

    The offline stages and the placer precompute per article; a cycle or backtest calls them
    many times for the same article, and the cache must not grow with the watchlist.
    """
    cache: dict[tuple[str, int], object] = {}

    def cached(article: Article):
        key = (article.title, hash(article.wikitext))
        if key not in cache:
            if len(cache) >= 64:
                cache.clear()
            cache[key] = build(article)
        return cache[key]

    cached.__doc__ = build.__doc__
    return cached


def choose_paragraph(section: Section | None, update: Update) -> tuple[int | None, Paragraph | None]:
    """The paragraph of the section that shares most words with the update (None: a new one)."""
    if section is None or not section.paragraphs:
        return None, None
    words = {w.lower() for w in _WORD.findall(update.text) if len(w) > 3}
    best, best_overlap = len(section.paragraphs) - 1, 0
    for i, para in enumerate(section.paragraphs):
        overlap = len(words & {w.lower() for w in _WORD.findall(para.text)})
        if overlap > best_overlap:
            best, best_overlap = i, overlap
    return best, section.paragraphs[best]


def citation_for(document: Document, today: dt.date) -> Citation:
    host = urlsplit(document.url).hostname or ""
    work = document.publisher or (host[4:] if host.startswith("www.") else host)
    return Citation(
        url=document.url,
        title=document.title or document.url,
        work=work,
        date=(document.published or "")[:10],
        access_date=today.isoformat(),
    )
