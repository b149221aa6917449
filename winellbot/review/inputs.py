"""What a request to the review page may ask for, checked before the state or the wiki is touched.

* **One wiki**: the page lists and decides only suggestions recorded for the wiki it reads reviewers
  on (``suggestions.wiki`` equal to :func:`wiki_name` of ``[wiki] api_url``: its host, and port if
  any, as the bot records the site it writes); another wiki's suggestion, or one recorded for no
  wiki, is not found (404), whatever its id.
* **Filters** come from the query string only, never from a form's fields, and each is cut to
  :data:`MAX_FILTER_CHARS` (no redirect carries more); the queue's ``offset`` is clamped to its pages.
* **Another section** for an approval (moved or revised) must be one the article has now, read from
  the wiki for the decision (a forged name is refused; a wiki that cannot be read refuses the move,
  recording nothing): :func:`section_problem`.
"""
from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import urlsplit

from flask import abort

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


def section_problem(outline: list[str], asked: str) -> str | None:
    """Why ``asked`` ("History > Early years"; "" the lead) cannot be the section of an approval, or None:
    it must be one of ``outline``, the article's sections as the page read them from the wiki just now
    (empty: the wiki did not answer, or the article is gone, and nothing can be checked)."""
    if len(asked) > MAX_SECTION_CHARS:
        return "the section named is too long"
    if not outline:
        return "the article's sections could not be read from the wiki to check that section: try again in a moment"
    if asked not in outline:
        return f"the article has no section {asked[:200]!r} now: choose one of its sections"
    return None


def target_section(outline: list[str], asked: str) -> tuple[str, ...]:
    """The section path of an approval into another section (:func:`section_problem` checked; else 400)."""
    why = section_problem(outline, asked)
    if why:
        abort(400, f"not recorded: {why}")
    return tuple(p for p in asked.split(" > ") if p)
