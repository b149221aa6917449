"""Fetching a search result's page and extracting its text, title, date and publisher.

Every fetch goes through :class:`WebFetcher`: URLs are checked by
:class:`winellbot.search.urls.UrlGuard` at every redirect hop (redirects are
followed here, not by requests, so no hop escapes the check), bodies are read
with a size cap, only textual content types are accepted, and trafilatura
turns the HTML into a :class:`Document`. Pages are cached in the state by
canonical URL, and a failed fetch is recorded there before it is raised as
:class:`FetchError`, which the aggregation loop treats as an empty iteration.
"""
from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass
from typing import Any
from urllib.parse import urljoin

import requests

from winellbot.deadline import Deadline
from winellbot.errors import FetchError, UnsafeURLError
from winellbot.models import Document, SearchResult, stable_id
from winellbot.interface import Fetcher
from winellbot.search._web import DEFAULT_USER_AGENT
from winellbot.search.filters import iso_date, registered_domain
from winellbot.search.urls import Resolver, UrlGuard, canonical_url, guarded_adapter
from winellbot.text import kept_text

log = logging.getLogger(__name__)

_REDIRECTS = (301, 302, 303, 307, 308)
_CHUNK = 64 * 1024


@dataclass(frozen=True)
class RawPage:
    """What came over the wire: the final URL after redirects, its content type and body."""

    url: str
    content_type: str
    body: bytes
    encoding: str | None = None


def document_id(url: str) -> str:
    """A document's id: the hash of its canonical URL."""
    return stable_id(canonical_url(url))


class WebFetcher(Fetcher):
    """Fetches web pages safely and turns them into documents.

    ``state`` (a :class:`winellbot.state.db.State`) is optional; with it, pages
    are cached by canonical URL and failures recorded. ``allow_private`` and
    ``allowed_networks`` are as in :class:`UrlGuard`; ``resolver`` replaces the
    system resolver (tests). A ``session`` passed in gets the connection guard
    mounted on it unless ``allow_private``.
    """

    def __init__(self, *, state=None, timeout: float = 10, max_bytes: int = 3_000_000, max_redirects: int = 5,
                 allow_private: bool = False, allowed_networks: tuple[str, ...] = (),
                 allowed_content_types: tuple[str, ...] = ("text/html", "application/xhtml+xml", "text/plain"),
                 user_agent: str = DEFAULT_USER_AGENT, session: requests.Session | None = None,
                 resolver: Resolver | None = None, min_text_chars: int = 1,
                 total_timeout: float | None = None) -> None:
        self.state = state
        self.timeout = timeout
        # requests' timeout bounds each socket wait, not the whole fetch; a server
        # that trickles one byte at a time would otherwise hold the run (winellbot/deadline.py).
        self.total_timeout = total_timeout if total_timeout is not None else 3 * timeout
        self.max_bytes = max_bytes
        self.max_redirects = max_redirects
        self.allowed_content_types = tuple(t.lower() for t in allowed_content_types)
        self.user_agent = user_agent
        self.min_text_chars = min_text_chars
        self.guard = UrlGuard(allow_private=allow_private, allowed_networks=allowed_networks,
                              resolver=resolver)
        if session is None:
            session = requests.Session()
            session.trust_env = False  # an environment proxy would bypass the connection guard
        # Mounted even when private addresses are allowed: it hands every socket to the deadline.
        adapter = guarded_adapter(self.guard)
        session.mount("http://", adapter)
        session.mount("https://", adapter)
        self.session = session

    # -- the one public method ------------------------------------------------
    def fetch(self, result: SearchResult) -> Document:
        """The document behind ``result``: from the cache, or fetched and extracted (then cached).

        Raises :class:`FetchError` (:class:`UnsafeURLError` for refused URLs)
        after recording the failure in the state.
        """
        try:
            key = canonical_url(result.url)
        except UnsafeURLError as exc:
            self._record_failure(result.url, result.url, exc)
            raise
        cached = self._cached(key)
        if cached is not None:
            return cached
        try:
            raw = self.download(result.url)
            document = self.extract(raw, result, key)
        except FetchError as exc:
            self._record_failure(key, result.url, exc)
            raise
        except Exception as exc:  # a bug or an odd page in trafilatura must not end the run
            error = FetchError(f"{type(exc).__name__}: {exc}")
            self._record_failure(key, result.url, error)
            raise error from exc
        self._record_success(key, result.url, document)
        return document

    # -- network ----------------------------------------------------------------
    def download(self, url: str) -> RawPage:
        """GET ``url``, following at most ``max_redirects`` redirects, each hop checked by the guard.

        All of it, redirects, headers and body, must arrive within ``total_timeout``: a deadline
        shuts the sockets down when it passes, however slowly a server trickles its bytes.
        """
        with Deadline(self.total_timeout) as deadline:
            try:
                page = self._download(url)
            except FetchError as exc:
                if deadline.expired:
                    raise FetchError(f"not fetched within {self.total_timeout:g} s") from exc
                raise
        if deadline.expired:  # the body ended because the deadline cut it short
            raise FetchError(f"not fetched within {self.total_timeout:g} s")
        return page

    def _download(self, url: str) -> RawPage:
        for _ in range(self.max_redirects + 1):
            self.guard.check(url)
            try:
                # Connection: close, so every hop opens a socket of its own that the deadline watches.
                resp = self.session.get(url, allow_redirects=False, stream=True, timeout=self.timeout,
                                        headers={"User-Agent": self.user_agent, "Connection": "close",
                                                 "Accept": "text/html,application/xhtml+xml,text/plain;q=0.9"})
            except requests.RequestException as exc:
                raise FetchError(f"request failed: {exc}") from exc
            with resp:
                if resp.status_code in _REDIRECTS:
                    location = resp.headers.get("Location")
                    if not location:
                        raise FetchError(f"HTTP {resp.status_code} without a Location header")
                    url = urljoin(url, location)
                    continue
                return self._read(url, resp)
        raise FetchError(f"more than {self.max_redirects} redirects")

    def _read(self, url: str, resp: requests.Response) -> RawPage:
        if resp.status_code != 200:
            raise FetchError(f"HTTP {resp.status_code}")
        content_type = resp.headers.get("Content-Type", "").split(";", 1)[0].strip().lower()
        if content_type not in self.allowed_content_types:
            raise FetchError(f"content type {content_type or 'missing'!r} is not accepted")
        declared = resp.headers.get("Content-Length", "")
        if declared.isdigit() and int(declared) > self.max_bytes:
            raise FetchError(f"body of {declared} bytes exceeds the cap of {self.max_bytes}")
        body = bytearray()
        try:
            # iter_content decompresses, so the cap also bounds a compressed bomb.
            for chunk in resp.iter_content(_CHUNK):
                body += chunk
                if len(body) > self.max_bytes:
                    raise FetchError(f"body exceeds the cap of {self.max_bytes} bytes")
        except requests.RequestException as exc:
            raise FetchError(f"reading the body failed: {exc}") from exc
        return RawPage(url=url, content_type=content_type, body=bytes(body),
                       encoding=_charset(resp.headers.get("Content-Type", "")))

    # -- extraction -------------------------------------------------------------
    def extract(self, raw: RawPage, result: SearchResult, key: str | None = None) -> Document:
        """Title, main text, date and publisher of a downloaded page, as a :class:`Document`."""
        key = key or canonical_url(raw.url)
        if raw.content_type == "text/plain":
            fields: dict[str, Any] = {"text": raw.body.decode(raw.encoding or "utf-8", errors="replace")}
        else:
            fields = _trafilatura_fields(raw.body, raw.url)
        text = (fields.get("text") or "").strip()
        if len(text) < self.min_text_chars:
            raise FetchError("no main text found on the page")
        return Document(
            id=stable_id(key),
            url=canonical_url(raw.url),
            title=(fields.get("title") or result.title or "").strip(),
            text=text,
            published=iso_date(fields.get("date")) or result.published,
            publisher=(fields.get("sitename") or registered_domain(raw.url) or None),
        )

    # -- state ------------------------------------------------------------------
    def _cached(self, key: str) -> Document | None:
        if self.state is None:
            return None
        row = self.state.source(key)
        if not row or row.get("status") != "ok" or not row.get("text"):
            return None
        return Document(id=stable_id(key), url=row.get("final_url") or key, title=row.get("title") or "",
                        text=row["text"], published=row.get("published"), publisher=row.get("publisher"))

    def _record_success(self, key: str, original_url: str, doc: Document) -> None:
        if self.state is None:
            return
        text, why = kept_text(doc.text)  # a text the bot does not read is not kept (nor served from here again)
        self.state.record_source(key, original_url=original_url, final_url=doc.url, title=doc.title,
                                 publisher=doc.publisher, published=doc.published, status="ok", error=why,
                                 content_hash=hashlib.sha256(doc.text.encode("utf-8")).hexdigest(), text=text)

    def _record_failure(self, key: str, original_url: str, exc: Exception) -> None:
        log.info("fetch failed: %s: %s", original_url, exc)
        if self.state is None:
            return
        self.state.record_source(key, original_url=original_url, status="error", error=str(exc)[:2000])


def _charset(content_type: str) -> str | None:
    """The declared charset; None when absent (requests would guess ISO-8859-1 for text/*)."""
    for part in content_type.split(";")[1:]:
        name, _, value = part.partition("=")
        if name.strip().lower() == "charset" and value.strip():
            charset = value.strip().strip('"')
            try:
                "".encode(charset)
            except LookupError:
                return None
            return charset
    return None


def _trafilatura_fields(body: bytes, url: str) -> dict[str, Any]:
    """trafilatura 2.x's ``bare_extraction`` with metadata, as a plain dict (title, text, date, sitename)."""
    import trafilatura

    found = trafilatura.bare_extraction(body, url=url, with_metadata=True, include_comments=False,
                                        include_images=False, include_links=False)
    if found is None:
        return {}
    if isinstance(found, dict):  # trafilatura 1.x, or as_dict=True
        return found
    return {name: getattr(found, name, None) for name in ("title", "text", "date", "sitename", "hostname")}
