"""The Extractor and the Aggregator of stage 2, on a :class:`ModelClient`.

The fetched document is untrusted: it enters the prompt only between ``<document>`` tags that it
cannot close, and nothing the model says about it is believed without a check in code. Each
extracted update must name a real section, carry a quote found in the document, state its fact in
plain text (no markup, links or URLs), and not read like an instruction; otherwise it is dropped
with the reason written to the journal.
"""
from __future__ import annotations

import re
from dataclasses import replace
from typing import Literal, Optional

from pydantic import BaseModel, Field, model_validator

from winellbot.gates import hostile
from winellbot.interface import Aggregator, Extractor
from winellbot.llm.client import ModelClient, attempt
from winellbot.llm.prompts import load_prompt
from winellbot.models import Article, Decision, Document, SectionCriteria, Update
from winellbot.pipeline.agent_common import (
    Journal,
    at_most,
    bullet_list,
    clip,
    fence,
    fit,
    pack,
    resolve_section,
    schema_tokens,
    section_name,
)
from winellbot.text import content_tokens, fold

_DATE = re.compile(r"^\d{4}(-\d{2}(-\d{2})?)?$")
_MARKUP = re.compile(r"\[\[|\]\]|\{\{|\}\}|<[a-z/!]|https?:|www\.|\b[a-z0-9][\w-]*\.[a-z]{2,}\b|~~~|''",
                     re.IGNORECASE)
_INSTRUCTION = re.compile(
    r"\b(ignore|disregard|forget|override)\b.{0,40}\b(instruction|prompt|rule|previous|above)s?\b"
    r"|\b(system prompt|you are (now )?an? (ai|assistant|language model))\b"
    r"|\b(post|insert|add|write)\b.{0,30}\b(to|on|into) (the |this )?(wikipedia|article|talk page)\b",
    re.IGNORECASE | re.DOTALL)


class ExtractedUpdate(BaseModel):  # every string bounded: see reply_tokens
    fact: str = Field(min_length=3, max_length=200, description="one neutral sentence stating the new fact, plain text")
    section: str = Field(max_length=80, description="the section path exactly as listed")
    quote: str = Field(max_length=200, description="the sentence or clause of the document that states the fact, "
                                                   "copied word for word")
    event_date: str | None = Field(None, max_length=10, description="YYYY-MM-DD, YYYY-MM or YYYY; null if unknown")
    reason: str = Field("", max_length=80)


# Three facts per request: a document rarely holds more new ones, and a small model that repeats one
# item fills whatever the list allows (eight items of a looping SmolLM2 ran to 600-725 tokens).
MAX_UPDATES = 3


class ExtractReply(BaseModel):
    updates: at_most(ExtractedUpdate, MAX_UPDATES)  # type: ignore[valid-type]


def extract_schema(sections: list[str]) -> type[ExtractReply]:
    """The extractor's reply schema for one article: ``section`` is one of ``sections``.

    On SmolLM2, 64 of the 76 updates dropped in code named a section the article does not have
    (often the field's own description). The names go into the schema as an enum, which
    llama.cpp's grammar, vLLM and OpenAI enforce while decoding; the client still parses the field
    as a string, so a near name from a server that does not enforce enums is matched in code
    (``resolve_section``) instead of failing the whole reply.
    """
    names = list(dict.fromkeys(sections))
    if not names:
        return ExtractReply

    class SectionUpdate(ExtractedUpdate):
        # bounded by the enum (reply_tokens reads it), not by a length a real heading may exceed
        section: str = Field(description="one of the listed sections, exactly", json_schema_extra={"enum": names})

    class SectionReply(ExtractReply):
        updates: at_most(SectionUpdate, MAX_UPDATES)  # type: ignore[valid-type]

    return SectionReply


class LLMExtractor(Extractor):
    """New facts in one document, each validated against the article and the document.

    The document is cut to what is left of the prompt's token budget; ``since`` (the page's last
    check) drops facts whose event is older.
    """

    def __init__(self, client: ModelClient, *, model: str = "", journal: Journal | None = None,
                 since: str | None = None, max_updates: int = MAX_UPDATES, max_tokens: int | None = None) -> None:
        self.client = client
        self.model = model
        self.journal = journal or Journal()
        self.since = since
        self.max_updates = max_updates
        self.max_tokens = max_tokens

    def extract(self, article: Article, criteria: SectionCriteria, document: Document) -> list[Update]:
        """The document's validated updates; [] when the model fails (noted in the journal)."""
        return self.extract_from(article, criteria, document, f"{document.title}\n\n{document.text}")

    def extract_from(self, article: Article, criteria: SectionCriteria, document: Document,
                     text: str | list[str], sources: tuple[Document, ...] = ()) -> list[Update]:
        """As :meth:`extract`, showing the model ``text`` (the page, cut to the budget) as the document,
        or, for a list, as many of its passages as fit whole, in order.

        With ``sources`` (passages of several documents in ``text``), each update is credited to
        the source whose text holds its quote.
        """
        prompt = load_prompt("extractor")
        values = dict(title=article.title, url=document.url,
                      published=document.published or "unknown")
        schema = extract_schema([section_name(p) for p in criteria.criteria]
                                + [section_name(s.path) for s in article.sections])
        room = prompt.room(schema_tokens(schema), **values)
        sections = fit(bullet_list([f"{section_name(p)}: {clip(c, 300)}" for p, c in criteria.criteria.items()]),
                       room // 3)
        room = prompt.room(schema_tokens(schema), sections=sections, **values)
        shown = fit(text, room) if isinstance(text, str) else pack(text, room)
        messages = prompt.render(sections=sections, document=fence(shown, "document"), **values)
        reply, failed = attempt(lambda: self.client.ask(
            "extractor", messages, schema, model=self.model, max_tokens=self.max_tokens or prompt.output_tokens,
            version=prompt.version))
        if failed:
            self.journal.note("extractor", f"skipped {document.url}: {failed}")
            return []
        updates = []
        for item in reply.updates[: self.max_updates]:
            source = next((d for d in sources if quote_in_document(item.quote, f"{d.title}\n{d.text}")), document)
            update, problem = self._validate(article, source, item)
            if update is None:
                self.journal.note("extractor", f"dropped an update from {document.url}: {problem}")
            else:
                updates.append(update)
        return updates

    def _validate(self, article: Article, document: Document, item: ExtractedUpdate) -> tuple[Update | None, str]:
        fact = re.sub(r"\s+", " ", item.fact).strip()
        path, how = resolve_section(article, item.section)
        if path is None:
            return None, how
        if _MARKUP.search(fact):
            return None, f"the fact carries markup or a link: {clip(fact, 120)!r}"
        if any(_INSTRUCTION.search(hostile.fold(text)) for text in (fact, item.quote)):
            return None, "the fact or its quote reads like an instruction, not news"
        if not quote_in_document(item.quote, f"{document.title}\n{document.text}"):
            return None, f"the quote is not in the document: {clip(item.quote, 120)!r}"
        # a year or day in the fact may come from the dateline rather than the quote
        dates = " ".join(x.replace("-", " ") for x in (item.event_date or "", document.published or ""))
        unsupported = unsupported_words(fact, f"{item.quote} {dates}", article.title)
        if unsupported:
            return None, f"the quote does not support the fact ({', '.join(sorted(unsupported)[:5])})"
        event_date = (item.event_date or "").strip() or None
        if event_date is not None and not _DATE.match(event_date):
            event_date = None
        if event_date and self.since and event_date < self.since[: len(event_date)]:
            return None, f"the event ({event_date}) is older than {self.since}"
        reason = item.reason.strip() or "extracted"
        if how != "exact":
            reason += f" (section matched by {how})"
        return Update(text=fact, section_path=path, quote=item.quote.strip(), document=document,
                      event_date=event_date, reason=reason), ""


def quote_in_document(quote: str, text: str, *, min_words: int = 4, min_share: float = 0.8) -> bool:
    """Whether ``quote`` is in ``text`` nearly word for word.

    Case, accents, punctuation and spacing are ignored; small slips (an elided word, a changed
    quotation mark) pass when ``min_share`` of the quote's word trigrams occur in the text.
    """
    q, t = _words(quote), _words(text)
    if len(q) < min_words:
        return False
    if f" {' '.join(q)} " in f" {' '.join(t)} ":
        return True
    grams = {tuple(t[i:i + 3]) for i in range(len(t) - 2)}
    q_grams = [tuple(q[i:i + 3]) for i in range(len(q) - 2)]
    return sum(g in grams for g in q_grams) >= min_share * len(q_grams)


def unsupported_words(fact: str, quote: str, title: str, *, min_share: float = 0.5) -> set[str]:
    """The fact's words missing from its quote, when too many are missing (else an empty set).

    Every number of the fact must be in the quote, and at least ``min_share`` of its other content
    words (the subject's name aside): a fact made up around a real quote is dropped.
    """
    quote_tokens = set(content_tokens(quote))
    fact_tokens = set(content_tokens(fact)) - set(content_tokens(title))
    missing = fact_tokens - quote_tokens
    numbers = {t for t in missing if t[0].isdigit()}
    if numbers or len(missing) > (1 - min_share) * len(fact_tokens):
        return missing
    return set()


def _words(text: str) -> list[str]:
    return re.findall(r"\w+", fold(text))


class LLMAggregator(Aggregator):
    """Ignore, add or replace one update, against the section's text and the kept updates.

    The reply schema is built per call: ``replaces`` must be the label of a kept update. A verbatim
    repeat of a kept update is ignored without asking. A failed call ignores the update, with the
    error as the reason.
    """

    def __init__(self, client: ModelClient, *, model: str = "", journal: Journal | None = None,
                 criteria_for=None, max_tokens: int | None = None) -> None:
        self.client = client
        self.model = model
        self.journal = journal or Journal()
        # stage 1's answer for an article (the aggregator interface does not pass it)
        self.criteria_for = criteria_for
        self.max_tokens = max_tokens

    def aggregate(self, article: Article, update: Update, kept: tuple[Update, ...]) -> Decision:
        """The verdict on ``update``, with its reason; ``replaces`` is a kept update's key."""
        for other in kept:
            if _words(other.text) == _words(update.text):
                return Decision("ignore", update, "the same fact is already kept")
        labels = tuple(f"K{i}" for i in range(1, len(kept) + 1))
        section = article.section(update.section_path)
        criteria = self.criteria_for(article) if self.criteria_for else None
        prompt = load_prompt("aggregator")
        schema = verdict_schema(labels)
        values = dict(
            title=article.title, section=section_name(update.section_path),
            criteria=clip((criteria.for_section(update.section_path) if criteria else "") or "(not given)", 300),
            kept=bullet_list([f"{label}: [{section_name(u.section_path)}] {clip(u.text, 200)}"
                              for label, u in zip(labels, kept)]),
            fact=update.text, quote=clip(update.quote, 600), event_date=update.event_date or "unknown",
            source=f"{update.document.title} ({update.document.url})")
        room = prompt.room(schema_tokens(schema), **values)
        messages = prompt.render(section_text=fence(fit(section.text if section else "", room), "section"),
                                 **values)
        verdict, failed = attempt(lambda: self.client.ask(
            "aggregator", messages, schema, model=self.model, max_tokens=self.max_tokens or prompt.output_tokens,
            version=prompt.version))
        if failed:
            self.journal.note("aggregator", f"ignored an update after a model failure: {failed}")
            return Decision("ignore", update, f"aggregator failed: {failed}")
        scored = replace(update, score=verdict.importance / 5)
        reason = verdict.reason.strip() or verdict.action
        if verdict.action == "replace":
            return Decision("replace", scored, reason, replaces=kept[labels.index(verdict.replaces)].key)
        return Decision(verdict.action, scored, reason)


def verdict_schema(labels: tuple[str, ...]) -> type[BaseModel]:
    """The aggregator's reply schema, with ``replaces`` limited to ``labels``."""

    # enums, not ge/le or free strings: llama.cpp's grammar enforces enums and ignores numeric bounds
    label = Optional[Literal[labels]] if labels else type(None)  # type: ignore[valid-type]

    class Verdict(BaseModel):
        action: Literal["ignore", "add", "replace"]
        replaces: label = Field(None, description="with replace: the kept update's label, e.g. K1")
        reason: str = Field(max_length=100)
        importance: Literal[1, 2, 3, 4, 5] = Field(3, description="1 minor .. 5 major")

        @model_validator(mode="after")
        def _replaces_a_kept_update(self) -> "Verdict":
            if self.action == "replace" and self.replaces not in labels:
                allowed = ", ".join(labels) or "none: nothing is kept yet, so use add or ignore"
                raise ValueError(f"replace must name a kept update label ({allowed})")
            return self

    return Verdict
