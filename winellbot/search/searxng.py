"""A SearXNG instance's JSON API: self-hosted metasearch, typically over news engines.

Shapes from SearXNG's "Search API" documentation (docs.searxng.org, dev/search_api):
GET /search with ``q``, ``format=json`` (the instance must enable the json format,
or it answers 403), ``categories``, ``language``, ``pageno`` and ``time_range``
(``day``, ``month``, ``year``; recent versions also ``week``). The answer holds
``results``: objects with ``url``, ``title``, ``content``, ``engine`` and, for news
engines, ``publishedDate`` (ISO, or null).
"""
from __future__ import annotations

import datetime as dt
from collections.abc import Callable

import requests

from winellbot import clock
from winellbot.errors import ConfigError
from winellbot.models import SearchResult
from winellbot.interface import SearchBackend
from winellbot.deadline import mount
from winellbot.search._web import DEFAULT_USER_AGENT, get_json, parse_results
from winellbot.search.filters import iso_date, parse_date

# Smallest SearXNG time range that still covers a window of so many days.
_TIME_RANGES = ((1, "day"), (7, "week"), (31, "month"), (366, "year"))


def _now() -> dt.datetime:
    return clock.now()  # the time the search window was reckoned from (winellbot/clock.py)


class SearxngSearch(SearchBackend):
    """Results from a SearXNG instance at ``base_url`` (for example ``http://127.0.0.1:8888``).

    SearXNG can only narrow by day/week/month/year, so the exact cut at
    ``since`` is left to :class:`winellbot.search.filters.SourceFilter`.
    """

    name = "searxng"

    def __init__(self, *, base_url: str, categories: str = "news", language: str | None = None,
                 use_week: bool = True, timeout: float = 15, deadline: float = 30, session: requests.Session | None = None,
                 user_agent: str = DEFAULT_USER_AGENT, now: Callable[[], dt.datetime] = _now) -> None:
        if not base_url:
            raise ConfigError("the SearXNG backend needs the instance's base URL")
        self.base_url = base_url.rstrip("/")
        self.categories = categories
        self.language = language
        self.use_week = use_week
        self.timeout = timeout
        self.deadline = deadline  # the whole request's limit (timeout: each wait for the server's next bytes)
        self.session = mount(session or requests.Session())
        self.session.headers["User-Agent"] = user_agent
        self.now = now

    def time_range(self, since: str | None) -> str | None:
        """The narrowest SearXNG ``time_range`` covering ``since`` until now; None for older or no cut."""
        start = parse_date(since) if since else None
        if start is None:
            return None
        days = (self.now() - start[0]).total_seconds() / 86400
        for bound, name in _TIME_RANGES:
            if name == "week" and not self.use_week:
                continue
            if days <= bound:
                return name
        return None

    def build_params(self, query: str, *, since: str | None) -> dict[str, str]:
        """The query-string parameters for one search."""
        params = {"q": query.strip(), "format": "json", "categories": self.categories, "pageno": "1"}
        if self.language:
            params["language"] = self.language
        window = self.time_range(since)
        if window:
            params["time_range"] = window
        return params

    def search(self, query: str, *, since: str | None = None, limit: int = 10) -> list[SearchResult]:
        """Results for ``query`` in SearXNG's order; SearXNG has no count parameter, so cut here."""
        data = get_json(self.session, f"{self.base_url}/search", params=self.build_params(query, since=since),
                        headers={"Accept": "application/json"}, backend=self.name, timeout=self.timeout,
                        deadline=self.deadline)
        return parse_results(data, backend=self.name, limit=limit, snippet="content", published="publishedDate",
                             date=iso_date)
