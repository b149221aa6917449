"""Brave News Search API: a key-based news index.

Shapes from Brave's "News Search API" documentation (api-dashboard.search.brave.com,
news-search reference and "Response Objects"): GET /res/v1/news/search with header
``X-Subscription-Token``; parameters ``q``, ``count`` (1-50), ``offset``, ``country``,
``search_lang``, ``safesearch`` and ``freshness`` (``pd``/``pw``/``pm``/``py`` or a
range ``YYYY-MM-DDtoYYYY-MM-DD``). The answer is ``{"type": "news", "query": {...},
"results": [{"url", "title", "description", "age", "page_age", "meta_url", ...}]}``;
``age`` is human readable ("2 days ago"), ``page_age`` the page's own date.
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

MAX_COUNT = 50


def _today() -> dt.date:
    return clock.today()  # the day the search window was reckoned from (winellbot/clock.py)


class BraveNewsSearch(SearchBackend):
    """News from the Brave Search API; ``api_key`` is the subscription token."""

    name = "brave"

    def __init__(self, *, api_key: str = "", base_url: str = "https://api.search.brave.com/res/v1/news/search",
                 country: str | None = None, search_lang: str | None = "en", safesearch: str | None = None,
                 timeout: float = 15, deadline: float = 30, session: requests.Session | None = None,
                 user_agent: str = DEFAULT_USER_AGENT, today: Callable[[], dt.date] = _today) -> None:
        if not api_key:
            raise ConfigError("the Brave backend needs an API key (X-Subscription-Token)")
        self.api_key = api_key
        self.base_url = base_url
        self.country = country
        self.search_lang = search_lang
        self.safesearch = safesearch
        self.timeout = timeout
        self.deadline = deadline  # the whole request's limit (timeout: each wait for the server's next bytes)
        self.session = mount(session or requests.Session())
        self.session.headers["User-Agent"] = user_agent
        self.today = today

    def build_params(self, query: str, *, since: str | None, limit: int) -> dict[str, str]:
        """The query-string parameters for one search."""
        params = {"q": query.strip(), "count": str(max(1, min(limit, MAX_COUNT)))}
        for key, value in (("country", self.country), ("search_lang", self.search_lang),
                           ("safesearch", self.safesearch)):
            if value:
                params[key] = value
        start = parse_date(since) if since else None
        if start is not None:
            # A date range, not pd/pw/pm: the last check can be any number of days ago.
            params["freshness"] = f"{start[0].date().isoformat()}to{self.today().isoformat()}"
        return params

    def search(self, query: str, *, since: str | None = None, limit: int = 10) -> list[SearchResult]:
        """News results for ``query`` published since ``since``, best first."""
        headers = {"Accept": "application/json", "X-Subscription-Token": self.api_key}
        data = get_json(self.session, self.base_url, params=self.build_params(query, since=since, limit=limit),
                        headers=headers, backend=self.name, timeout=self.timeout,
                        deadline=self.deadline)
        return parse_results(data, backend=self.name, limit=limit, snippet="description", published="page_age",
                             date=iso_date)
