"""Which search results may serve as sources: not Wikipedia, not its mirrors, not too old.

Wikipedia cannot cite itself (WP:CIRCULAR), and its mirrors and forks copy
its text, so a "source" found there would only repeat the article. Domains are
matched on the registered domain (``en.m.wikipedia.org`` -> ``wikipedia.org``)
with the public suffix list bundled in ``tldextract``; a substring test would
both miss mirrors and hit innocent sites (``notwikipedia.org``).

The reliability list of news domains is a separate gate
(:mod:`winellbot.gates.sources`), which can reuse :func:`registered_domain`.
"""
from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from urllib.parse import urlsplit

from winellbot.models import SearchResult
from winellbot.interface import SearchBackend

#: Wikimedia projects (user-generated, not sources) and known mirrors/forks of Wikipedia.
WIKIPEDIA_AND_MIRRORS: frozenset[str] = frozenset({
    # Wikimedia's own projects
    "wikipedia.org", "wikimedia.org", "wikidata.org", "wiktionary.org", "wikiquote.org",
    "wikibooks.org", "wikisource.org", "wikinews.org", "wikiversity.org", "wikivoyage.org",
    "mediawiki.org", "wikipedia.com",
    # mirrors, readers and forks that republish Wikipedia's text
    "wikiwand.com", "wikiwix.com", "dbpedia.org", "everybodywiki.com", "wikimili.com",
    "alchetron.com", "wikizero.com", "wiki2.org", "infogalactic.com", "justapedia.org",
    "everipedia.org", "en-academic.com", "enacademic.com", "wikibrief.org", "wikiredia.com",
    "thefreedictionary.com", "wikiless.org", "wikiwix.org",
})


_HOST = re.compile(r"^[a-z0-9._:-]+$")


@lru_cache(maxsize=1)
def _extractor():
    import tldextract

    # The bundled suffix list only: no network fetch, no cache directory written.
    return tldextract.TLDExtract(suffix_list_urls=(), cache_dir=None)


def registered_domain(url: str) -> str:
    """The registrable domain of ``url`` in lower case (``https://en.m.wikipedia.org/x`` -> ``wikipedia.org``).

    IP addresses and hosts without a public suffix (``localhost``) come back as
    the bare host; an unparsable URL gives ``""``.
    """
    try:
        host = urlsplit(url if "//" in url else "//" + url).hostname or ""
    except ValueError:
        return ""
    host = host.rstrip(".").lower()
    if not _HOST.match(host):
        return ""
    parts = _extractor()(host)
    return parts.top_domain_under_public_suffix or host


def is_wikipedia_or_mirror(url: str, extra_domains: Iterable[str] = ()) -> bool:
    """Whether ``url``'s registered domain is Wikipedia, a Wikimedia project or a known mirror."""
    domain = registered_domain(url)
    return domain in WIKIPEDIA_AND_MIRRORS or domain in {d.lower() for d in extra_domains}


_COMPACT = re.compile(r"^(\d{4})(\d{2})(\d{2})(?:T?(\d{2})(\d{2})(\d{2})Z?)?$")


def parse_date(value: str | None) -> tuple[dt.datetime, bool] | None:
    """Parse the date formats the backends use; ``(aware UTC datetime, has_time)`` or None.

    Handles ISO 8601 (``2026-01-01``, ``2026-01-01T12:00:00Z``, with offsets or a
    space) and GDELT's compact ``20260101T120000Z``. Naive times are taken as UTC.
    """
    if not value or not isinstance(value, str):
        return None
    text = value.strip()
    m = _COMPACT.match(text)
    if m:
        y, mo, d, hh, mi, ss = m.groups()
        try:
            when = dt.datetime(int(y), int(mo), int(d), int(hh or 0), int(mi or 0), int(ss or 0),
                               tzinfo=dt.timezone.utc)
        except ValueError:
            return None
        return when, hh is not None
    if text.endswith("Z"):
        text = text[:-1] + "+00:00"
    try:
        when = dt.datetime.fromisoformat(text)
    except ValueError:
        return None
    has_time = len(text) > 10
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.timezone.utc)
    return when.astimezone(dt.timezone.utc), has_time


def iso_date(value: str | None) -> str | None:
    """``value`` normalised to ISO 8601 (date, or UTC datetime when it has a time); None if unparsable."""
    parsed = parse_date(value)
    if parsed is None:
        return None
    when, has_time = parsed
    return when.replace(microsecond=0).isoformat().replace("+00:00", "Z") if has_time else when.date().isoformat()


def published_since(published: str | None, since: str | None) -> bool | None:
    """True if ``published`` is on or after ``since``; None when either date is unknown.

    When one side has no time of day, only the days are compared, so a story
    dated the day of the last check is not lost to a missing hour.
    """
    p, s = parse_date(published), parse_date(since)
    if p is None or s is None:
        return None
    (pw, p_time), (sw, s_time) = p, s
    if p_time and s_time:
        return pw >= sw
    return pw.date() >= sw.date()


@dataclass(frozen=True)
class FilterVerdict:
    """Whether a result may be used as a source, and why."""

    keep: bool
    reason: str


class SourceFilter:
    """Drops Wikipedia, its mirrors, and results published before ``since``.

    ``keep_undated``: results whose date the backend did not give are kept (the
    fetcher reads the page's own date later); set False to drop them.
    """

    def __init__(self, *, since: str | None = None, keep_undated: bool = True,
                 extra_mirrors: Iterable[str] = ()) -> None:
        self.since = since
        self.keep_undated = keep_undated
        self.extra_mirrors = frozenset(d.lower() for d in extra_mirrors)

    def judge(self, url: str, published: str | None = None, *, since: str | None = None) -> FilterVerdict:
        """The verdict for one URL and its publication date; ``since`` overrides the constructor's."""
        scheme = urlsplit(url).scheme.lower()
        if scheme not in ("http", "https"):
            return FilterVerdict(False, f"not a web URL (scheme {scheme or 'missing'!r})")
        domain = registered_domain(url)
        if domain in WIKIPEDIA_AND_MIRRORS or domain in self.extra_mirrors:
            return FilterVerdict(False, f"{domain} is Wikipedia, a Wikimedia project or a mirror")
        cutoff = since or self.since
        if cutoff:
            fresh = published_since(published, cutoff)
            if fresh is False:
                return FilterVerdict(False, f"published {published}, before {cutoff}")
            if fresh is None and not self.keep_undated:
                return FilterVerdict(False, "no publication date")
        return FilterVerdict(True, "acceptable")

    def filter(self, results: Iterable[SearchResult], *, since: str | None = None) -> list[SearchResult]:
        """The results that pass :meth:`judge`, in their original order."""
        return [r for r in results if self.judge(r.url, r.published, since=since).keep]


class FilteredSearch(SearchBackend):
    """Wraps any backend so that only acceptable sources come out of it.

    Asks the inner backend for more than ``limit`` results because filtering
    can remove some of them.
    """

    def __init__(self, inner: SearchBackend, source_filter: SourceFilter | None = None, *,
                 overfetch: int = 2) -> None:
        self.inner = inner
        self.source_filter = source_filter or SourceFilter()
        self.overfetch = max(1, overfetch)
        self.name = getattr(inner, "name", "search")

    def search(self, query: str, *, since: str | None = None, limit: int = 10) -> list[SearchResult]:
        """The inner backend's results, filtered, at most ``limit``."""
        results = self.inner.search(query, since=since, limit=limit * self.overfetch)
        return self.source_filter.filter(results, since=since)[:limit]
