"""Stage 1 (section criteria) and the Navigator of stage 2, on a :class:`ModelClient`."""
from __future__ import annotations

import datetime as dt
import re
from typing import Literal

import pydantic
from pydantic import BaseModel, Field

from winellbot import clock
from winellbot.errors import SearchError
from winellbot.interface import CriteriaInducer, Memory, Navigator, SearchBackend
from winellbot.llm.client import ModelClient, attempt
from winellbot.llm.prompts import load_prompt
from winellbot.models import Article, NavigationStep, SearchResult, SectionCriteria, SectionPath
from winellbot.pipeline.agent_common import (
    Journal,
    at_most,
    bullet_list,
    clip,
    fence,
    fit,
    outline_within,
    reply_tokens,
    resolve_section,
    schema_tokens,
    section_name,
)


# Lengths bound every string and list: a server that constrains decoding by the schema (llama.cpp)
# then cannot let a small model run on inside one string until the token limit cuts the reply.
class SectionCriterion(BaseModel):
    section: str = Field(max_length=80, description="the section path exactly as marked, e.g. 'Career > 2024'")
    criteria: str = Field(max_length=100, description="the kinds of new facts that belong in this section")


class CriteriaReply(BaseModel):
    sections: list[SectionCriterion]  # bounded per article: see criteria_schema


# Criteria for at most this many sections per request; the others fall back to their names (as a
# section the model forgot does). 16 items' bound (reply_tokens) still fits a 4,096-token context.
MAX_CRITERIA = 16


def criteria_schema(sections: int) -> type[CriteriaReply]:
    """The criteria reply with room for one item per section (up to :data:`MAX_CRITERIA`)."""
    items = at_most(SectionCriterion, max(1, min(sections, MAX_CRITERIA)))
    return pydantic.create_model("CriteriaReply", __base__=CriteriaReply, sections=(items, ...))


class QueryReply(BaseModel):
    query: str = Field(min_length=2, max_length=100, description="a short web search query")
    reason: str = Field("", max_length=100)


class LLMCriteria(CriteriaInducer):
    """Per-section inclusion criteria from the whole article with its headings marked.

    The request holds the article text, so the client's cache makes a re-run on the same revision
    free; within a run the answer is also kept per (title, revid). The article is trimmed to the
    prompt's token budget (:func:`outline_within`: headings and opening sentences before whole
    sections). A section the model forgot, or a failed call, falls back to the section's own name
    (the paper's "section names only" ablation); a spent token budget ends the run instead.
    """

    def __init__(self, client: ModelClient, *, model: str = "", journal: Journal | None = None,
                 max_tokens: int | None = None) -> None:
        self.client = client
        self.model = model
        self.journal = journal or Journal()
        self.max_tokens = max_tokens
        self._memo: dict[tuple[str, int | None], SectionCriteria] = {}

    def induce(self, article: Article) -> SectionCriteria:
        """The criteria for every section of ``article`` (never raises on model failure)."""
        memo_key = (article.title, article.revid)
        if article.revid is not None and memo_key in self._memo:
            return self._memo[memo_key]
        criteria: dict[SectionPath, str] = {}
        prompt = load_prompt("criteria")
        schema = criteria_schema(len(article.sections))
        room = prompt.room(schema_tokens(schema), title=article.title)
        messages = prompt.render(title=article.title, article=outline_within(article, room))
        # the list holds one item per section, so the longest reply grows with the article
        limit = self.max_tokens or min(prompt.output_tokens, reply_tokens(schema))
        reply, failed = attempt(lambda: self.client.ask("criteria", messages, schema, model=self.model,
                                                        max_tokens=limit, version=prompt.version))
        if failed:
            self.journal.note("criteria", f"using section names as criteria: {failed}")
        for item in reply.sections if reply is not None else ():
            path, _ = resolve_section(article, item.section)
            if path is not None and item.criteria.strip():
                criteria.setdefault(path, item.criteria.strip())
        for sec in article.sections:
            criteria.setdefault(sec.path, f"Facts about {article.title} that belong under "
                                          f"'{section_name(sec.path)}'.")
        result = SectionCriteria(criteria=criteria, revid=article.revid)
        self._memo[memo_key] = result
        return result

    def known(self, article: Article) -> SectionCriteria | None:
        """The criteria already induced for this revision of ``article`` in this run, if any."""
        return self._memo.get((article.title, article.revid))


class LLMNavigator(Navigator):
    """Writes a targeted query from the criteria and the loop's memory, searches, picks a result.

    Ignored updates and their reasons are in the query prompt, so the aggregator's verdict steers
    the next query. A failed query falls back to the title plus a section name not yet tried; a
    failed pick falls back to the top unread result. The token budget running out raises
    :class:`BudgetExceeded`, which ends the run (the page is not counted as checked).
    """

    def __init__(self, client: ModelClient, *, model: str = "", journal: Journal | None = None,
                 since: str | None = None, results_per_query: int = 8, today: dt.date | None = None,
                 max_tokens: int | None = None, fallback: bool = True) -> None:
        self.client = client
        self.model = model
        self.journal = journal or Journal()
        self.since = since
        self.results_per_query = results_per_query
        self.today = today
        self.max_tokens = max_tokens
        self.fallback = fallback

    def navigate(self, article: Article, criteria: SectionCriteria, memory: Memory,
                 search: SearchBackend) -> NavigationStep:
        """The next query and the unread result chosen for reading (``chosen=None``: stop)."""
        asked, failed = attempt(lambda: self._query(article, criteria, memory))
        if failed:  # only without fallback
            return NavigationStep(query="", chosen=None, reason=f"no query: {failed}")
        query, why = asked
        try:
            results = search.search(query, since=self.since, limit=self.results_per_query)
        except SearchError as exc:
            self.journal.note("navigator", f"search failed for {query!r}: {exc}")
            return NavigationStep(query=query, chosen=None, reason=f"search failed: {exc}")
        unread = _unread(results, memory)
        if not unread:
            # a small model's query often matches nothing: the next one may (the loop bounds the tries)
            return NavigationStep(query=query, chosen=None, reason=f"{why} | no unread results", final=False)
        chosen, pick_why = self._pick(article, criteria, query, unread)
        return NavigationStep(query=query, chosen=chosen, reason=f"{why} | {pick_why}")

    # -- the query -------------------------------------------------------------
    def _query(self, article: Article, criteria: SectionCriteria, memory: Memory) -> tuple[str, str]:
        prompt = load_prompt("navigator_query")
        values = dict(title=article.title, year=(self.today or clock.today()).year,
                      tried=bullet_list(list(memory.queries)),
                      kept=bullet_list(_kept_lines(memory)), ignored=bullet_list(_ignored_lines(memory)))
        room = prompt.room(schema_tokens(QueryReply), **values)
        messages = prompt.render(criteria=fit(_criteria_list(criteria), room), **values)
        reply, failed = attempt(lambda: self.client.ask(
            "navigator", messages, QueryReply, model=self.model, max_tokens=self.max_tokens or prompt.output_tokens,
            version=prompt.version))
        if failed:
            if not self.fallback:
                self.journal.note("navigator", f"query failed: {failed}")
                raise failed
            self.journal.note("navigator", f"query failed, using a fallback query: {failed}")
            return fallback_query(article, criteria, memory), "fallback query (model failed)"
        query = re.sub(r"\s+", " ", reply.query).strip().strip("\"'")
        if query.casefold() in {q.casefold() for q in memory.queries}:
            return fallback_query(article, criteria, memory), f"model repeated {query!r}; fallback query"
        return query, reply.reason.strip() or "model query"

    # -- the pick ---------------------------------------------------------------
    def _pick(self, article: Article, criteria: SectionCriteria, query: str,
              unread: list[SearchResult]) -> tuple[SearchResult | None, str]:
        # an enum, not ge/le: llama.cpp's grammar enforces enums and ignores numeric bounds
        numbers = Literal[tuple(range(1, len(unread) + 1))]  # type: ignore[valid-type]
        schema = pydantic.create_model(
            "Pick", choice=(numbers | None, Field(..., description="the number of the result to read, or null")),
            reason=(str, Field("", max_length=100)))
        prompt = load_prompt("navigator_pick")
        room = prompt.room(schema_tokens(schema), title=article.title, query=query)
        criteria_text = fit(_criteria_list(criteria), room // 3)
        results = fit(_results_list(unread), prompt.room(schema_tokens(schema), title=article.title, query=query,
                                                         criteria=criteria_text))
        messages = prompt.render(title=article.title, query=query, criteria=criteria_text,
                                 results=fence(results, "results"))
        reply, failed = attempt(lambda: self.client.ask(
            "navigator", messages, schema, model=self.model, max_tokens=self.max_tokens or prompt.output_tokens,
            version=prompt.version))
        if failed:
            if not self.fallback:
                self.journal.note("navigator", f"pick failed: {failed}")
                return None, f"pick failed: {failed}"
            self.journal.note("navigator", f"pick failed, reading the top result: {failed}")
            return unread[0], "top result (model failed to pick)"
        if reply.choice is None:
            return None, f"no result worth reading: {reply.reason}".strip()
        return unread[reply.choice - 1], reply.reason.strip() or f"result {reply.choice}"


def fallback_query(article: Article, criteria: SectionCriteria, memory: Memory) -> str:
    """The title with the first section name not yet in a query (the title alone first)."""
    tried = {q.casefold() for q in memory.queries}
    candidates = [article.title] + [f"{article.title} {p[-1]}" for p in criteria.criteria if p]
    for candidate in candidates:
        if candidate.casefold() not in tried:
            return candidate
    return f"{article.title} latest news {len(memory.queries) + 1}"


def _unread(results: list[SearchResult], memory: Memory) -> list[SearchResult]:
    read, out, seen = set(memory.read_urls), [], set()
    for r in results:
        if r.url and r.url not in read and r.url not in seen:
            seen.add(r.url)
            out.append(r)
    return out


def _criteria_list(criteria: SectionCriteria) -> str:
    return bullet_list([f"{section_name(p)}: {clip(c, 300)}" for p, c in criteria.criteria.items()])


def _kept_lines(memory: Memory) -> list[str]:
    return [f"[{section_name(u.section_path)}] {clip(u.text, 200)}" for u in memory.kept]


def _ignored_lines(memory: Memory, limit: int = 12) -> list[str]:
    ignored = [d for d in memory.decisions if d.action == "ignore"][-limit:]
    return [f"[{section_name(d.update.section_path)}] {clip(d.update.text, 160)} -- ignored because: "
            f"{clip(d.reason, 200)}" for d in ignored]


def _results_list(results: list[SearchResult]) -> str:
    lines = []
    for i, r in enumerate(results, 1):
        meta = ", ".join(x for x in (r.published or "", r.url) if x)
        lines.append(f"[{i}] {clip(r.title, 200)} ({meta})\n    {clip(r.snippet, 300)}")
    return "\n".join(lines)
