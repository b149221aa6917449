"""What a request to the review page may ask for, checked before the state or the wiki is touched.

* **One wiki**: the page lists and decides only suggestions recorded for the wiki it reads reviewers
  on (``suggestions.wiki`` equal to :func:`wiki_name` of ``[wiki] api_url``: its host, and port if
  any, as the bot records the site it writes); another wiki's suggestion, or one recorded for no
  wiki, is not found (404), whatever its id.
* **Filters** come from the query string only, never from a form's fields, and each is cut to
  :data:`MAX_FILTER_CHARS` (no redirect carries more); the queue's ``offset`` is clamped to its pages.
* **Another section** for an approval must be one the article has now, read from the wiki at the
  decision (a forged name is refused; a wiki that cannot be read refuses the move, recording nothing).
"""
from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import urlsplit

from flask import abort

from winellbot.article import parse_article
from winellbot.errors import WinellbotError
from winellbot.review.present import outline
from winellbot.state.reviews import STATUS_FILTERS, QueueFilter

MAX_FILTER_CHARS = 300  # a title is at most 255 bytes; a section's path a few headings
MAX_SECTION_CHARS = 1000


def wiki_name(api_url: str) -> str:
    """The wiki as the bot names it in the state (Pywikibot's ``site.hostname()``: host[:port])."""
    return urlsplit(api_url).netloc.rsplit("@", 1)[-1].lower()


def queue_filter(args: Mapping[str, str], wiki: str) -> QueueFilter:
    """The queue's filters from the query string ``args``, always of ``wiki``."""
    page, section, status = ((args.get(k) or "").strip()[:MAX_FILTER_CHARS] for k in ("page", "section", "status"))
    return QueueFilter(wiki=wiki, page=page, section=section, status=status if status in STATUS_FILTERS else "open")


def offset(asked: int | None, total: int, page_size: int) -> int:
    """The first row of the queue's page: ``asked``, within the pages that ``total`` rows make."""
    last = max(0, (total - 1) // page_size * page_size)
    return min(max(0, asked or 0), last)


def of_this_wiki(row: dict | None, wiki: str, suggestion_id: str) -> dict:
    """``row`` when it is a suggestion of ``wiki``; else 404."""
    if row is None or (row.get("wiki") or "") != wiki:
        abort(404, f"no suggestion {suggestion_id[:80]} of this wiki ({wiki})")
    return row


def target_section(account, page: str, asked: str) -> tuple[str, ...]:
    """The section path ``asked`` ("History > Early years"; "" the lead) when ``page`` has it on the wiki now."""
    if len(asked) > MAX_SECTION_CHARS:
        abort(400, "the section named is too long")
    try:
        current = account.article_text(page)
    except WinellbotError as exc:
        raise WinellbotError(f"not recorded: the article's sections could not be read to check the move ({exc})")
    if current is None:
        abort(400, f"not recorded: {page} no longer exists on the wiki")
    if asked not in outline(parse_article(page, current[0], revid=current[1])):
        abort(400, f"not recorded: {page} has no section {asked[:200]!r} now")
    return tuple(p for p in asked.split(" > ") if p)
