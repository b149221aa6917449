"""One suggestion as the review page shows it: what the talk post would hold, beside the article's
section as it stands now and the source's passage.

:func:`present` builds a :class:`Shown` from the state's row and, when the wiki answers, the
article's current text. The post's wikitext is made by the bot's own rendering
(:func:`winellbot.wiki.render.render_suggestion`, with the notes the posting policy would add), so
the reviewer reads exactly what would be posted; the readable parts beside it are the same fields.
Every field is plain text: the page's templates escape all of it, and a URL is offered as a link
only when it is a safe http(s) URL (:func:`winellbot.wiki.render.safe_url`).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from winellbot.article import named_ref_definitions, parse_article
from winellbot.facts import key_sentence, stale_sentence
from winellbot.models import Article, Suggestion
from winellbot.posting import resolve_style
from winellbot.sentences import sentences_of as split_sentences
from winellbot.wiki import render

PASSAGE_CHARS = 700  # of the source around the quoted words


@dataclass(frozen=True)
class Shown:
    """What the item page shows of one suggestion (all plain text; the template escapes it)."""

    id: str
    page: str
    status: str
    status_reason: str
    estimate: float | None
    section: str
    fact: str
    may_replace: str
    why: str
    source_title: str
    source_url: str | None
    source_work: str
    source_date: str
    quote: str
    passage: str
    checks: list[str]
    post_wikitext: str
    section_now: str
    section_now_source: str  # "the wiki, revision N" or why the stored paragraph is shown instead
    outline: list[str] = field(default_factory=list)
    reviews: list[dict] = field(default_factory=list)
    section_path: str = ""  # the suggested section as the outline writes it ("History > Early years")
    sentences: list[str] = field(default_factory=list)  # the passage's sentences, to start a wording from
    cite: str = ""  # the fact with its citation, as wikitext to paste into the article
    article_text: str = ""  # the whole article now (shown folded)
    section_number: int | None = None  # for the wiki's section edit link (0: the lead)
    # where an approval goes and what surrounds it (winellbot/review/context.py)
    style: str = "fact"
    opted_in: bool = False
    destination: str = ""  # the page an approval is posted on
    links: dict = field(default_factory=dict)  # article, talk, edit (the section's), destination: URLs
    related: list[dict] = field(default_factory=list)  # other suggestions for the article or from the source


def present(row: dict, suggestion: Suggestion, *, bot_user: str, style: str, hostname: str,
            current: tuple[str, int | None] | None, source_text: str | None, reviews: list[dict]) -> Shown:
    """The page's view of ``suggestion`` (its state ``row``); ``current``: the article's wikitext and
    revision now (None: not read, the paragraph kept with the suggestion stands in)."""
    article = _parsed(suggestion.article_title, current)
    notes = render.Notes(fact=key_sentence(suggestion.update.text, article) if article else "",
                         may_replace=(stale_sentence(article, suggestion.update.text) or "") if article else "",
                         references=named_ref_definitions(article.wikitext) if article else {})
    style = resolve_style(style, hostname)
    wikitext = render.render_suggestion(suggestion, bot_user=bot_user, style=style,
                                        notes=notes)
    c = suggestion.edit.citation
    section_now, where = _section_now(suggestion, article, current)
    return Shown(
        id=suggestion.id, page=suggestion.article_title, status=row["status"], status_reason=row.get("status_reason") or "",
        estimate=row.get("estimate"), section=" › ".join(suggestion.section_path) or "lead (introduction)",
        fact=notes.fact or suggestion.update.text, may_replace=notes.may_replace,
        why=render.in_words(suggestion.update.reason) if suggestion.update.reason else "",
        source_title=c.title or c.url, source_url=render.safe_url(c.url), source_work=c.work or "",
        source_date=c.date or "", quote=suggestion.update.quote, passage=passage(source_text, suggestion.update.quote),
        checks=[f"{f.gate} ({f.severity}): {f.message}" for f in suggestion.findings],
        post_wikitext=wikitext, section_now=section_now, section_now_source=where,
        outline=outline(article) if article else [], reviews=reviews,
        section_path=" > ".join(suggestion.section_path), sentences=sentences_of(passage(source_text,
                                                                                        suggestion.update.quote)),
        cite=(notes.fact or suggestion.update.text).strip() + render.cite_news(c),
        article_text=current[0] if current else "", section_number=_section_number(article, suggestion),
        style=style)


def sentences_of(text: str) -> list[str]:
    """The passage's sentences (its ellipses dropped), for the reviewer to start a wording from."""
    return [x.strip(" …") for x in split_sentences(text.strip("…")) if len(x.strip(" …")) > 3][:12]


def _section_number(article: Article | None, s: Suggestion) -> int | None:
    """The section's number as the wiki's ``action=edit&section=N`` counts it: its headings in order,
    the lead 0 (None: no such heading now)."""
    if article is None:
        return None
    if not s.section_path:
        return 0
    import mwparserfromhell

    headings = mwparserfromhell.parse(article.wikitext).filter_headings(recursive=False)
    want = s.section_path[-1].strip()
    return next((i + 1 for i, h in enumerate(headings) if str(h.title).strip() == want), None)


def _parsed(title: str, current: tuple[str, int | None] | None) -> Article | None:
    if current is None:
        return None
    try:
        return parse_article(title, current[0], revid=current[1])
    except Exception:  # a page the parser cannot read is shown from what the state kept
        return None


def _section_now(s: Suggestion, article: Article | None, current) -> tuple[str, str]:
    if article is not None:
        section = article.section(s.section_path)
        if section is not None:
            return section.text, f"the article now (revision {current[1]})"
        return "", f"the article now (revision {current[1]}) has no section {' › '.join(s.section_path) or 'lead'}"
    return s.edit.old_paragraph, "the paragraph as the bot read it (the wiki did not answer)"


def passage(text: str | None, quote: str, width: int = PASSAGE_CHARS) -> str:
    """The source's text around ``quote`` (about ``width`` characters), or the quote alone."""
    if not text or not quote:
        return quote
    at = text.find(quote[:80])
    if at < 0:
        return quote
    start = max(0, at - (width - len(quote)) // 2)
    end = min(len(text), start + max(width, len(quote)))
    return ("…" if start else "") + text[start:end].strip() + ("…" if end < len(text) else "")


def outline(article: Article) -> list[str]:
    """The article's sections as paths ("History > Early years"), the lead first as ""."""
    return [" > ".join(sec.path) for sec in article.sections]
