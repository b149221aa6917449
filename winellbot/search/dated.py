"""A page's search window: only sources newer than the page's last check count (:func:`since_for`),
passed to every query of the page's search (:class:`DatedSearch`)."""
from __future__ import annotations

import datetime as dt

from winellbot import clock
from winellbot.config import Settings
from winellbot.interface import SearchBackend
from winellbot.models import SearchResult


class DatedSearch(SearchBackend):
    """Passes a fixed ``since`` to every query: only sources newer than the page's last check count."""

    def __init__(self, inner: SearchBackend, since: str | None) -> None:
        self.inner = inner
        self.since = since
        self.name = inner.name

    def search(self, query: str, *, since: str | None = None, limit: int = 10) -> list[SearchResult]:
        return self.inner.search(query, since=since or self.since, limit=limit)


def since_for(settings: Settings, last_checked: str | None) -> str:
    """The oldest date a page's search may return: its last check, or the search window's start. A last
    check dated after now was recorded by a clock that ran fast, and when it really happened is not
    known: the search goes back the whole window (what was found before is not proposed twice)."""
    window = clock.today() - dt.timedelta(days=settings.search.window_days)
    if last_checked and not clock.is_ahead(last_checked):
        return max(last_checked[:10], window.isoformat())
    return window.isoformat()
