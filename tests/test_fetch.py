"""The web fetcher: SSRF guard, redirects, caps, content types, extraction, cache and failure records."""
from __future__ import annotations

import hashlib

import pytest

from search_http import LocalServer, Reply
from winellbot.errors import FetchError, UnsafeURLError
from winellbot.models import SearchResult, stable_id
from winellbot.search.fetch import WebFetcher, document_id
from winellbot.search.urls import UrlGuard, canonical_url, is_public_address
from winellbot.state.db import State

LOOPBACK = ("127.0.0.1/32",)

NEWS_PAGE = """<!DOCTYPE html>
<html lang="en"><head>
<meta charset="utf-8">
<title>Harbour bridge opens to traffic | Harbour Gazette</title>
<meta property="og:title" content="Harbour bridge opens to traffic">
<meta property="og:site_name" content="Harbour Gazette">
<meta property="article:published_time" content="2026-01-02T08:00:00Z">
</head><body>
<nav><a href="/">Home</a> <a href="/news">News</a> <a href="/sport">Sport</a></nav>
<article>
<h1>Harbour bridge opens to traffic</h1>
<p>The new harbour bridge opened to road traffic on Friday morning, four months later than the
council had planned when construction began in the spring of 2023.</p>
<p>About three thousand vehicles crossed in the first hour, according to the transport office,
which said the queue at the northern approach cleared by nine o'clock.</p>
<p>The council leader said the final cost of the crossing was 412 million pounds, some sixty million
above the original estimate, mostly because of steel prices and a redesign of the southern pier.</p>
<p>Cyclists will be able to use the separate lane on the eastern side from next week, once the
lighting along the deck has been inspected.</p>
</article>
<footer>Copyright Harbour Gazette. All rights reserved.</footer>
</body></html>"""


@pytest.fixture
def server():
    with LocalServer() as srv:
        yield srv


def result(url: str, **kw) -> SearchResult:
    return SearchResult(url=url, title=kw.pop("title", "from search"), **kw)


def no_resolver(host, port):
    raise AssertionError(f"the test tried to resolve {host}")


# -- the address classifier and the guard, without a network -----------------
@pytest.mark.parametrize("address, public", [
    ("10.0.0.1", False), ("172.16.5.4", False), ("192.168.1.1", False), ("127.0.0.1", False),
    ("169.254.169.254", False), ("0.0.0.0", False), ("100.64.0.1", False), ("224.0.0.251", False),
    ("240.0.0.1", False), ("255.255.255.255", False),
    ("::1", False), ("::", False), ("fe80::1", False), ("fe80::1%eth0", False), ("fc00::1", False),
    ("fec0::1", False), ("ff02::1", False),
    ("::ffff:127.0.0.1", False), ("::ffff:10.0.0.1", False), ("::ffff:169.254.169.254", False),
    ("64:ff9b::a00:1", False), ("2002:c0a8:101::", False),
    ("8.8.8.8", True), ("93.184.216.34", True), ("2606:4700:4700::1111", True), ("::ffff:8.8.8.8", True),
    ("not-an-ip", False),
])
def test_address_classifier(address, public):
    assert is_public_address(address) is public


@pytest.mark.parametrize("url", [
    "http://10.0.0.1/", "http://192.168.1.20/admin", "http://169.254.169.254/latest/meta-data/",
    "http://[::1]:8080/", "http://127.0.0.1/", "http://[::ffff:127.0.0.1]/", "https://0.0.0.0/",
])
def test_literal_private_addresses_refused(url):
    fetcher = WebFetcher(resolver=lambda host, port: [host.strip("[]")])
    with pytest.raises(UnsafeURLError, match="non-public address"):
        fetcher.fetch(result(url))


@pytest.mark.parametrize("url", ["file:///etc/passwd", "gopher://127.0.0.1:70/_x", "ftp://example.com/a",
                                 "javascript:alert(1)", "data:text/html,hi"])
def test_non_http_schemes_refused(url):
    with pytest.raises(UnsafeURLError, match="non-http"):
        WebFetcher(resolver=no_resolver).fetch(result(url))


def test_names_resolving_to_private_addresses_refused():
    answers = {"intranet.example.com": ["10.1.2.3"], "mixed.example.com": ["93.184.216.34", "192.168.0.9"],
               "fine.example.com": ["93.184.216.34"]}
    guard = UrlGuard(resolver=lambda host, port: answers[host])
    with pytest.raises(UnsafeURLError, match="10.1.2.3"):
        guard.check("https://intranet.example.com/x")
    with pytest.raises(UnsafeURLError, match="192.168.0.9"):  # one bad address is enough
        guard.check("http://mixed.example.com/")
    guard.check("https://fine.example.com/story")  # no exception
    with pytest.raises(UnsafeURLError, match="credentials"):
        guard.check("http://user:pw@fine.example.com/")


def test_loopback_refused_unless_allowed(server):
    server.routes["/a"] = Reply(body=NEWS_PAGE)
    with pytest.raises(UnsafeURLError):
        WebFetcher().fetch(result(server.url + "/a"))
    assert server.requests == []
    assert "harbour bridge" in WebFetcher(allow_private=True).fetch(result(server.url + "/a")).text


@pytest.mark.parametrize("scheme", ["http", "https"])
def test_connection_guard_catches_a_name_that_changes_address(server, scheme):
    """DNS rebinding: the check sees a public address, the connection lands on loopback."""
    server.routes["/a"] = Reply(body=NEWS_PAGE)
    fetcher = WebFetcher(resolver=lambda host, port: ["93.184.216.34"])
    with pytest.raises(UnsafeURLError, match="127.0.0.1"):
        fetcher.fetch(result(f"{scheme}://127.0.0.1:{server.port}/a"))
    assert server.requests == []


# -- redirects ---------------------------------------------------------------------
@pytest.mark.parametrize("target", ["http://10.0.0.5/internal", "http://169.254.169.254/latest/meta-data/",
                                    "http://[::1]/", "file:///etc/passwd"])
def test_redirect_to_private_or_non_http_refused(server, target):
    server.routes["/go"] = Reply(302, "", headers={"Location": target})
    fetcher = WebFetcher(allowed_networks=LOOPBACK, resolver=lambda host, port: [host.strip("[]")])
    with pytest.raises(UnsafeURLError):
        fetcher.fetch(result(server.url + "/go"))
    assert [r.path for r in server.requests] == ["/go"]


def test_redirect_followed_to_allowed_page(server):
    server.routes["/short"] = Reply(301, "", headers={"Location": "/news/bridge?utm_source=x"})
    server.routes["/news/bridge"] = Reply(body=NEWS_PAGE)
    fetcher = WebFetcher(allowed_networks=LOOPBACK, resolver=lambda host, port: [host])
    doc = fetcher.fetch(result(server.url + "/short"))
    assert [r.path for r in server.requests] == ["/short", "/news/bridge"]
    assert doc.url == server.url + "/news/bridge"  # final URL, tracking parameter gone
    assert doc.id == document_id(server.url + "/short")


def test_redirect_loop_is_bounded(server):
    server.routes["/loop"] = Reply(302, "", headers={"Location": "/loop"})
    with pytest.raises(FetchError, match="more than 3 redirects"):
        WebFetcher(allow_private=True, max_redirects=3).fetch(result(server.url + "/loop"))
    assert len(server.requests) == 4


# -- size and type -------------------------------------------------------------------
@pytest.mark.parametrize("send_length", [True, False])
def test_size_cap(server, send_length):
    server.routes["/big"] = Reply(body=b"<html><body><p>" + b"x" * 5000 + b"</p></body></html>",
                                  send_length=send_length)
    with pytest.raises(FetchError, match="cap of 2000"):
        WebFetcher(allow_private=True, max_bytes=2000).fetch(result(server.url + "/big"))


@pytest.mark.parametrize("content_type", ["application/pdf", "image/png", "application/octet-stream", ""])
def test_wrong_content_type_refused(server, content_type):
    server.routes["/file"] = Reply(body=b"%PDF-1.7 ...", content_type=content_type)
    with pytest.raises(FetchError, match="content type"):
        WebFetcher(allow_private=True).fetch(result(server.url + "/file"))


@pytest.mark.parametrize("content_type", ["text/plain; charset=utf-8", "text/plain"])
def test_plain_text_page(server, content_type):
    server.routes["/notice.txt"] = Reply(body="The harbour bridge in Malmö opened on Friday.".encode(),
                                         content_type=content_type)
    doc = WebFetcher(allow_private=True).fetch(result(server.url + "/notice.txt", title="Notice",
                                                      published="2026-01-02"))
    assert doc.text == "The harbour bridge in Malmö opened on Friday."
    assert doc.title == "Notice" and doc.published == "2026-01-02"


# -- extraction, cache, failures --------------------------------------------------------
def test_extracts_title_text_date_and_publisher(server):
    server.routes["/news/bridge"] = Reply(body=NEWS_PAGE)
    doc = WebFetcher(allow_private=True).fetch(result(server.url + "/news/bridge", title="search title"))
    assert doc.title == "Harbour bridge opens to traffic"
    assert doc.publisher == "Harbour Gazette"
    assert doc.published == "2026-01-02"
    assert "412 million pounds" in doc.text and "Cyclists will be able" in doc.text
    assert "All rights reserved" not in doc.text and "Sport" not in doc.text
    assert doc.id == stable_id(server.url + "/news/bridge")


def test_second_fetch_is_served_from_state_without_a_request(server):
    server.routes["/news/bridge"] = Reply(body=NEWS_PAGE)
    state = State()
    fetcher = WebFetcher(state=state, allow_private=True)
    first = fetcher.fetch(result(server.url + "/news/bridge?utm_campaign=rss#comments"))
    again = fetcher.fetch(result(server.url + "/news/bridge/"))
    assert len(server.requests) == 1
    assert again == first
    row = state.source(server.url + "/news/bridge")
    assert row["status"] == "ok" and row["original_url"].endswith("utm_campaign=rss#comments")
    assert row["content_hash"] == hashlib.sha256(first.text.encode()).hexdigest()
    # a fresh fetcher on the same state also uses the cache
    WebFetcher(state=state, allow_private=True).fetch(result(server.url + "/news/bridge"))
    assert len(server.requests) == 1


def test_failures_are_recorded_and_raised(server):
    state = State()
    fetcher = WebFetcher(state=state, allow_private=True)
    with pytest.raises(FetchError, match="HTTP 404"):
        fetcher.fetch(result(server.url + "/missing"))
    row = state.source(server.url + "/missing")
    assert row["status"] == "error" and "HTTP 404" in row["error"]

    guarded = WebFetcher(state=state, resolver=lambda host, port: ["10.0.0.7"])
    with pytest.raises(UnsafeURLError):
        guarded.fetch(result("https://intranet.example.com/page"))
    assert state.source("https://intranet.example.com/page")["status"] == "error"

    server.routes["/empty"] = Reply(body="<html><body></body></html>")
    with pytest.raises(FetchError, match="no main text"):
        fetcher.fetch(result(server.url + "/empty"))
    assert state.source(server.url + "/empty")["status"] == "error"


def test_unreachable_host_is_a_fetch_error():
    with pytest.raises(FetchError, match="request failed"):
        WebFetcher(allow_private=True, timeout=2).fetch(result("http://127.0.0.1:9/"))


@pytest.mark.parametrize("url, canonical", [
    ("HTTP://News.Example.COM:80/a/b/?utm_source=x&id=3&fbclid=y#frag", "http://news.example.com/a/b?id=3"),
    ("https://news.example.com", "https://news.example.com/"),
    ("https://news.example.com:8443/x/?b=2&a=1", "https://news.example.com:8443/x?b=2&a=1"),
    ("https://news.example.com/p?UTM_Medium=e&q=a%20b", "https://news.example.com/p?q=a%20b"),
    ("https://[2606:4700::1]/x", "https://[2606:4700::1]/x"),
])
def test_canonical_url(url, canonical):
    assert canonical_url(url) == canonical


@pytest.mark.parametrize("headers_first", [True, False], ids=["trickled-body", "trickled-headers"])
def test_the_total_time_limit_holds_against_a_trickling_server(headers_first):
    """One byte every 0.2 s: each socket wait is short, so only a total limit can stop it."""
    import time

    from search_http import TricklingServer

    fetcher = WebFetcher(allow_private=True, timeout=1, total_timeout=2)
    with TricklingServer(interval=0.2, headers_first=headers_first) as srv:
        began = time.monotonic()
        with pytest.raises(FetchError, match="not fetched within 2 s"):
            fetcher.download(srv.url + "/slow")
        assert time.monotonic() - began < 3.5
