"""Where a reviewer's approval goes, and what surrounds a suggestion: the links to the article, its talk
page and the section's edit page on the wiki, and what else is posted or queued for the same article or
from the same source (so a line the article or the queue already holds can be seen as such)."""
from __future__ import annotations

import dataclasses
from urllib.parse import urlencode

from winellbot.review.present import Shown
from winellbot.review.wiki import index_url

RELATED = 12  # other suggestions listed at most
_LIVE = ("proposed", "approved", "posted", "withdrawing", "accepted")


def where_it_goes(shown: Shown, state, settings) -> Shown:
    """``shown`` with its destination (the talk page where the article opted in, else the bot's queue
    page), the wiki links, and the related suggestions."""
    title = shown.page
    row = state.db.execute("select opted_in from pages where title = ?", [title]).fetchone()
    opted_in = bool(row and row[0])
    w = settings.wiki
    queue = f"{w.queue}/{title}" if w.queue_mode == "per-article" else w.queue
    destination = _talk(title) if opted_in else queue
    base = index_url(w.api_url)

    def url(page: str, **params) -> str:
        return f"{base}?{urlencode({'title': page, **params})}"

    links = {"article": url(title), "talk": url(_talk(title)), "destination": url(destination),
             "edit": url(title, action="edit", **({"section": shown.section_number}
                                                  if shown.section_number is not None else {}))}
    return dataclasses.replace(shown, opted_in=opted_in, destination=destination, links=links,
                               related=related(state, shown.id, title, shown.source_url))


def related(state, suggestion_id: str, page: str, url: str | None) -> list[dict]:
    """Other suggestions for ``page`` or from the source ``url`` that are open, approved, posted or adopted."""
    marks = ",".join("?" * len(_LIVE))
    where, args = "s.page = ?", [page]
    if url:
        where, args = "(s.page = ? or s.url = ?)", [page, url]
    sql = (f"select s.id, s.page, s.section, s.status, s.update_text, s.url from suggestions s where {where} "
           f"and s.id != ? and s.status in ({marks}) order by s.status, s.updated desc limit ?")
    return [dict(r) for r in state.db.query(sql, [*args, suggestion_id, *_LIVE, RELATED])]


def _talk(title: str) -> str:
    return f"Talk:{title}"
