"""Each web search backend against a local server answering in the service's documented JSON shape."""
from __future__ import annotations

import datetime as dt

import pytest
from search_http import LocalServer, Reply, json_reply

from winellbot.errors import ConfigError, SearchError
from winellbot.search.brave import BraveNewsSearch
from winellbot.search.gdelt import GdeltSearch
from winellbot.search.searxng import SearxngSearch


@pytest.fixture
def server():
    with LocalServer() as srv:
        yield srv


def one(params: dict[str, list[str]]) -> dict[str, str]:
    assert all(len(v) == 1 for v in params.values()), params
    return {k: v[0] for k, v in params.items()}


# -- GDELT DOC 2.0 ---------------------------------------------------------------
GDELT_ANSWER = {"articles": [
    {"url": "https://news.example.com/2026/01/02/bridge-opens", "url_mobile": "",
     "title": "Harbour bridge opens to traffic", "seendate": "20260102T081500Z",
     "socialimage": "", "domain": "news.example.com", "language": "English", "sourcecountry": "United Kingdom"},
    {"url": "https://other.example.org/a", "url_mobile": "", "title": "Second story",
     "seendate": "20260103T000000Z", "socialimage": "", "domain": "other.example.org",
     "language": "English", "sourcecountry": "Ireland"},
]}


def test_gdelt_builds_documented_request_and_parses_articles(server):
    server.routes["/api/v2/doc/doc"] = json_reply(GDELT_ANSWER)
    backend = GdeltSearch(base_url=server.url + "/api/v2/doc/doc")
    results = backend.search("harbour bridge", since="2025-12-31T10:20:30Z", limit=5)

    (seen,) = server.requests
    assert seen.path == "/api/v2/doc/doc"
    assert one(seen.params) == {"query": "harbour bridge sourcelang:english", "mode": "ArtList",
                                "format": "json", "maxrecords": "5", "sort": "HybridRel",
                                "startdatetime": "20251231102030"}
    assert [r.url for r in results] == [a["url"] for a in GDELT_ANSWER["articles"]]
    first = results[0]
    assert first.title == "Harbour bridge opens to traffic"
    assert first.published == "2026-01-02T08:15:00Z"
    assert first.backend == "gdelt" and first.rank == 0 and results[1].rank == 1
    assert "news.example.com" in first.snippet and first.document is None


def test_gdelt_uses_timespan_without_since_and_caps_maxrecords(server):
    server.routes["/doc"] = json_reply({})  # GDELT's answer when nothing matched
    backend = GdeltSearch(base_url=server.url + "/doc", timespan="2weeks", language=None, sort="DateDesc")
    assert backend.search("x y z", limit=1000) == []
    params = one(server.requests[0].params)
    assert params["timespan"] == "2weeks" and "startdatetime" not in params
    assert params["maxrecords"] == "250" and params["sort"] == "DateDesc" and params["query"] == "x y z"


def test_gdelt_plain_text_error_is_a_search_error(server):
    server.routes["/doc"] = Reply(200, "The specified phrase is too short.", content_type="text/html")
    with pytest.raises(SearchError, match="phrase is too short"):
        GdeltSearch(base_url=server.url + "/doc").search("a")


def test_gdelt_limit_cuts_results(server):
    server.routes["/doc"] = json_reply(GDELT_ANSWER)
    assert len(GdeltSearch(base_url=server.url + "/doc").search("bridge", limit=1)) == 1


# -- Brave News Search ---------------------------------------------------------------
BRAVE_ANSWER = {
    "type": "news",
    "query": {"original": "harbour bridge", "spellcheck_off": False},
    "results": [
        {"type": "news_result", "url": "https://paper.example.com/bridge", "title": "The <strong>bridge</strong> opens",
         "description": "Traffic crossed the <strong>harbour bridge</strong> &amp; more.", "age": "2 days ago",
         "page_age": "2026-01-02T08:00:00", "page_fetched": "2026-01-02T09:00:00Z",
         "meta_url": {"scheme": "https", "netloc": "paper.example.com", "hostname": "paper.example.com"}},
        {"type": "news_result", "url": "https://undated.example.net/x", "title": "Undated"},
    ],
}


def test_brave_builds_documented_request_and_parses_results(server):
    server.routes["/res/v1/news/search"] = json_reply(BRAVE_ANSWER)
    backend = BraveNewsSearch(api_key="secret-token", base_url=server.url + "/res/v1/news/search",
                              country="GB", today=lambda: dt.date(2026, 1, 5))
    results = backend.search("harbour bridge", since="2025-12-20T06:00:00Z", limit=7)

    (seen,) = server.requests
    assert seen.path == "/res/v1/news/search"
    assert one(seen.params) == {"q": "harbour bridge", "count": "7", "country": "GB", "search_lang": "en",
                                "freshness": "2025-12-20to2026-01-05"}
    assert seen.headers["x-subscription-token"] == "secret-token"
    assert seen.headers["accept"] == "application/json"
    assert [r.url for r in results] == ["https://paper.example.com/bridge", "https://undated.example.net/x"]
    assert results[0].title == "The bridge opens"
    assert results[0].snippet == "Traffic crossed the harbour bridge & more."
    assert results[0].published == "2026-01-02T08:00:00Z"
    assert results[1].published is None and results[1].backend == "brave"


def test_brave_without_since_sends_no_freshness_and_caps_count(server):
    server.routes["/news"] = json_reply({"type": "news", "query": {"original": "q"}, "results": []})
    BraveNewsSearch(api_key="k", base_url=server.url + "/news").search("q", limit=500)
    params = one(server.requests[0].params)
    assert "freshness" not in params and params["count"] == "50"


def test_brave_needs_a_key_and_reports_http_errors(server):
    with pytest.raises(ConfigError):
        BraveNewsSearch(api_key="")
    server.routes["/news"] = json_reply({"type": "ErrorResponse", "error": {"code": "RATE_LIMITED"}}, status=429)
    with pytest.raises(SearchError, match="HTTP 429"):
        BraveNewsSearch(api_key="k", base_url=server.url + "/news").search("q")


# -- SearXNG ------------------------------------------------------------------------
SEARX_ANSWER = {
    "query": "harbour bridge", "number_of_results": 0,
    "results": [
        {"url": "https://wire.example.com/story", "title": "Bridge opens", "content": "It opened on Friday.",
         "engine": "bing news", "engines": ["bing news"], "category": "news",
         "publishedDate": "2026-01-02T08:00:00"},
        {"url": "https://wire.example.com/older", "title": "Older", "content": "",
         "engine": "yahoo news", "publishedDate": None},
    ],
    "answers": [], "corrections": [], "infoboxes": [], "suggestions": [], "unresponsive_engines": [],
}


def test_searxng_builds_documented_request_and_parses_results(server):
    server.routes["/search"] = json_reply(SEARX_ANSWER)
    now = dt.datetime(2026, 1, 5, tzinfo=dt.timezone.utc)
    backend = SearxngSearch(base_url=server.url + "/", language="en", now=lambda: now)
    results = backend.search("harbour bridge", since="2025-12-30", limit=10)

    (seen,) = server.requests
    assert seen.path == "/search"
    assert one(seen.params) == {"q": "harbour bridge", "format": "json", "categories": "news", "pageno": "1",
                                "language": "en", "time_range": "week"}
    assert [r.title for r in results] == ["Bridge opens", "Older"]
    assert results[0].snippet == "It opened on Friday." and results[0].published == "2026-01-02T08:00:00Z"
    assert results[1].published is None


@pytest.mark.parametrize("since, expected", [
    ("2026-01-04T12:00:00Z", "day"), ("2026-01-01", "week"), ("2025-12-10", "month"),
    ("2025-03-01", "year"), ("2020-01-01", None), (None, None),
])
def test_searxng_time_range_covers_since(since, expected):
    now = dt.datetime(2026, 1, 5, tzinfo=dt.timezone.utc)
    assert SearxngSearch(base_url="http://127.0.0.1:1", now=lambda: now).time_range(since) == expected


def test_searxng_without_json_format_enabled_is_a_search_error(server):
    server.routes["/search"] = Reply(403, "Forbidden", content_type="text/html")
    with pytest.raises(SearchError, match="HTTP 403"):
        SearxngSearch(base_url=server.url).search("q")


# -- the factory -------------------------------------------------------------------
def test_factory_builds_each_backend_wrapped_in_the_source_filter(server):
    from winellbot.search.backends import get_search_backend
    from winellbot.search.filters import FilteredSearch

    server.routes["/doc"] = json_reply({"articles": [
        {"url": "https://en.wikipedia.org/wiki/Bridge", "title": "Bridge - Wikipedia", "seendate": "20260102T000000Z"},
        {"url": "https://news.example.com/old", "title": "old", "seendate": "20250102T000000Z"},
        {"url": "https://news.example.com/new", "title": "new", "seendate": "20260102T000000Z"},
    ]})
    gdelt = get_search_backend("gdelt", base_url=server.url + "/doc", api_key="ignored")
    assert isinstance(gdelt, FilteredSearch) and gdelt.name == "gdelt"
    assert [r.title for r in gdelt.search("bridge", since="2026-01-01")] == ["new"]

    assert get_search_backend("brave", api_key="k", filter_sources=False).name == "brave"
    assert get_search_backend("searxng", base_url="http://127.0.0.1:1", api_key="x").name == "searxng"
    with pytest.raises(ConfigError, match="unknown search backend"):
        get_search_backend("altavista")
    with pytest.raises(ConfigError, match="API key"):
        get_search_backend("brave")  # no key
    with pytest.raises(ConfigError, match="bad settings"):
        get_search_backend("gdelt", colour="blue")


def test_gdelt_result_fetched_into_a_document(server):
    """Search and fetch together: a GDELT hit on the local server becomes a cached document."""
    from winellbot.search.fetch import WebFetcher
    from winellbot.state.db import State

    page = ("<html><head><title>Ferry returns | Coast Post</title>"
            "<meta property='og:site_name' content='Coast Post'>"
            "<meta property='article:published_time' content='2026-01-03'></head><body><article>"
            "<p>The island ferry returned to its winter timetable on Saturday after the storm repairs "
            "to the northern jetty were finished two weeks ahead of schedule.</p>"
            "<p>Operators said sailings would run every ninety minutes until the end of March.</p>"
            "</article></body></html>")
    server.routes["/story"] = Reply(body=page)
    server.routes["/doc"] = json_reply({"articles": [
        {"url": server.url + "/story?utm_source=gdelt", "title": "Ferry returns", "seendate": "20260103T100000Z",
         "domain": "127.0.0.1", "language": "English", "sourcecountry": "United Kingdom"}]})
    (hit,) = GdeltSearch(base_url=server.url + "/doc").search("island ferry", since="2026-01-01")
    state = State()
    doc = WebFetcher(state=state, allowed_networks=("127.0.0.1/32",), resolver=lambda h, p: [h]).fetch(hit)
    assert doc.url == server.url + "/story" and doc.publisher == "Coast Post" and doc.published == "2026-01-03"
    assert "winter timetable" in doc.text
    assert state.source(server.url + "/story")["status"] == "ok"
