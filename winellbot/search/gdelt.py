"""GDELT DOC 2.0 API: a free, key-less index of world news, searched in article-list mode.

Request and response shapes follow GDELT's "GDELT DOC 2.0 API Debuts!" documentation
(blog.gdeltproject.org): GET api/v2/doc/doc with ``query`` (which carries operators
such as ``sourcelang:``), ``mode=ArtList``, ``format=json``, ``maxrecords`` (at most
250), ``sort`` and either ``timespan`` or ``startdatetime``/``enddatetime`` as
YYYYMMDDHHMMSS. The JSON answer is ``{"articles": [{"url", "url_mobile", "title",
"seendate": "20260101T120000Z", "socialimage", "domain", "language",
"sourcecountry"}]}``, or ``{}`` when nothing matched; errors come back as plain text.
"""
from __future__ import annotations

import requests

from winellbot.models import SearchResult
from winellbot.interface import SearchBackend
from winellbot.deadline import mount
from winellbot.search._web import DEFAULT_USER_AGENT, get_json
from winellbot.search.filters import iso_date, parse_date

MAX_RECORDS = 250


class GdeltSearch(SearchBackend):
    """News articles from the GDELT DOC 2.0 API; needs no key.

    ``language`` becomes a ``sourcelang:`` operator (GDELT language names such
    as ``english``); ``timespan`` bounds the search when no ``since`` is given.
    ``sort`` is one of GDELT's orders (``HybridRel`` mixes relevance and recency).
    """

    name = "gdelt"

    def __init__(self, *, base_url: str = "https://api.gdeltproject.org/api/v2/doc/doc",
                 timespan: str = "3months", language: str | None = "english", sort: str = "HybridRel",
                 timeout: float = 20, deadline: float = 30, session: requests.Session | None = None,
                 user_agent: str = DEFAULT_USER_AGENT) -> None:
        self.base_url = base_url
        self.timespan = timespan
        self.language = language
        self.sort = sort
        self.timeout = timeout
        self.deadline = deadline  # the whole request's limit (timeout: each wait for the server's next bytes)
        self.session = mount(session or requests.Session())
        self.session.headers["User-Agent"] = user_agent

    def build_params(self, query: str, *, since: str | None, limit: int) -> dict[str, str]:
        """The query-string parameters for one search (public so tests and operators can see them)."""
        q = query.strip()
        if self.language:
            q = f"{q} sourcelang:{self.language}"
        params = {"query": q, "mode": "ArtList", "format": "json",
                  "maxrecords": str(max(1, min(limit, MAX_RECORDS))), "sort": self.sort}
        start = parse_date(since) if since else None
        if start is not None:
            params["startdatetime"] = start[0].strftime("%Y%m%d%H%M%S")
        elif self.timespan:
            params["timespan"] = self.timespan
        return params

    def search(self, query: str, *, since: str | None = None, limit: int = 10) -> list[SearchResult]:
        """Articles matching ``query`` seen since ``since``, in GDELT's order."""
        data = get_json(self.session, self.base_url, params=self.build_params(query, since=since, limit=limit),
                        backend=self.name, timeout=self.timeout,
                        deadline=self.deadline)
        articles = data.get("articles", []) if isinstance(data, dict) else []
        results = []
        for art in articles:
            if not isinstance(art, dict) or not art.get("url"):
                continue
            about = " · ".join(str(art[k]) for k in ("domain", "sourcecountry", "language") if art.get(k))
            results.append(SearchResult(url=art["url"], title=str(art.get("title") or "").strip(),
                                        snippet=about, published=iso_date(art.get("seendate")),
                                        backend=self.name, rank=len(results)))
            if len(results) >= limit:
                break
        return results
