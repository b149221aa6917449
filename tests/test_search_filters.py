"""Source filter: Wikipedia and mirrors by registered domain, and the publication-date cut."""
from __future__ import annotations

import pytest

from winellbot.models import SearchResult
from winellbot.interface import SearchBackend
from winellbot.search.filters import (
    FilteredSearch,
    SourceFilter,
    is_wikipedia_or_mirror,
    iso_date,
    published_since,
    registered_domain,
)


@pytest.mark.parametrize("url, domain", [
    ("https://en.m.wikipedia.org/wiki/Bridge", "wikipedia.org"),
    ("https://www.bbc.co.uk/news/x", "bbc.co.uk"),
    ("HTTPS://News.Example.COM.:443/a", "example.com"),
    ("https://wikipedia.org.evil.example.net/", "example.net"),
    ("http://127.0.0.1:8000/x", "127.0.0.1"),
    ("http://localhost/x", "localhost"),
    ("not a url", ""),
])
def test_registered_domain(url, domain):
    assert registered_domain(url) == domain


@pytest.mark.parametrize("url, excluded", [
    ("https://de.wikipedia.org/wiki/Br%C3%BCcke", True),
    ("https://en.m.wikipedia.org/wiki/X", True),
    ("https://commons.wikimedia.org/wiki/File:X.jpg", True),
    ("https://www.wikiwand.com/en/X", True),
    ("https://dbpedia.org/page/X", True),
    ("https://alchetron.com/X", True),
    ("https://wikimili.com/en/X", True),
    ("https://everybodywiki.com/X", True),
    # substrings of a mirror's name are not the mirror
    ("https://notwikipedia.org/x", False),
    ("https://wikipedia.org.evil.example.net/x", False),
    ("https://www.example.com/wikipedia.org/copy", False),
    ("https://mywikiwand.com/x", False),
])
def test_wikipedia_and_mirrors_matched_on_registered_domain(url, excluded):
    assert is_wikipedia_or_mirror(url) is excluded
    assert SourceFilter().judge(url).keep is (not excluded)


@pytest.mark.parametrize("published, since, expected", [
    ("2026-01-02", "2026-01-01", True),
    ("2025-12-31", "2026-01-01", False),
    ("2026-01-01T09:00:00Z", "2026-01-01T10:00:00Z", False),
    ("2026-01-01T11:00:00+01:00", "2026-01-01T10:00:00Z", True),
    ("2026-01-01T11:00:00+02:00", "2026-01-01T10:00:00Z", False),
    ("2026-01-01", "2026-01-01T23:00:00Z", True),  # date only: compared by day
    ("20260101T120000Z", "2026-01-01T11:59:59Z", True),
    (None, "2026-01-01", None),
    ("two days ago", "2026-01-01", None),
])
def test_published_since(published, since, expected):
    assert published_since(published, since) is expected


def test_iso_date_normalises_backend_formats():
    assert iso_date("20260102T081500Z") == "2026-01-02T08:15:00Z"
    assert iso_date("2026-01-02") == "2026-01-02"
    assert iso_date("2026-01-02 08:15:00") == "2026-01-02T08:15:00Z"
    assert iso_date("2026-01-02T10:15:00+02:00") == "2026-01-02T08:15:00Z"
    assert iso_date("yesterday") is None and iso_date(None) is None


def test_filter_drops_old_and_mirrors_keeps_order_and_gives_reasons():
    results = [
        SearchResult("https://a.example.com/new", "new", published="2026-01-03"),
        SearchResult("https://en.wikipedia.org/wiki/X", "wiki", published="2026-01-03"),
        SearchResult("https://b.example.com/old", "old", published="2025-06-01"),
        SearchResult("https://c.example.com/undated", "undated"),
        SearchResult("ftp://d.example.com/file", "ftp", published="2026-01-03"),
    ]
    f = SourceFilter(since="2026-01-01")
    assert [r.title for r in f.filter(results)] == ["new", "undated"]
    assert [r.title for r in SourceFilter(since="2026-01-01", keep_undated=False).filter(results)] == ["new"]
    # a per-call since overrides the constructor's
    assert [r.title for r in f.filter(results, since="2025-01-01")] == ["new", "old", "undated"]
    verdict = f.judge("https://b.example.com/old", "2025-06-01")
    assert not verdict.keep and "before 2026-01-01" in verdict.reason
    assert "wikipedia.org" in f.judge("https://en.wikipedia.org/wiki/X").reason
    assert not SourceFilter(extra_mirrors=["Mirror-Site.com"]).judge("https://www.mirror-site.com/x").keep


class _Fixed(SearchBackend):
    name = "fixed"

    def __init__(self, results):
        self.results = results
        self.calls = []

    def search(self, query, *, since=None, limit=10):
        self.calls.append((query, since, limit))
        return self.results[:limit]


def test_filtered_search_wraps_any_backend():
    inner = _Fixed([SearchResult("https://en.wikipedia.org/wiki/A", "w"),
                    SearchResult("https://a.example.com/1", "a", published="2026-02-01"),
                    SearchResult("https://b.example.com/2", "b", published="2020-02-01"),
                    SearchResult("https://c.example.com/3", "c", published="2026-02-02")])
    search = FilteredSearch(inner, SourceFilter())
    out = search.search("q", since="2026-01-01", limit=2)
    assert [r.title for r in out] == ["a", "c"]
    assert inner.calls == [("q", "2026-01-01", 4)]  # asked for more, because filtering removes some
    assert search.name == "fixed"
