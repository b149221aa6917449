"""Deadlines, not timeouts: a server that sends its answer a byte at a time cannot hold a request for
longer than its total deadline, whichever kind of request (winellbot/deadline.py). Each server here
waits less between bytes than the client's timeout per read, so only a total deadline ends the request."""
from __future__ import annotations

import threading
import time

import pytest
from search_http import TricklingServer

from winellbot.errors import FetchError, ModelError, SearchError
from winellbot.llm.base import ChatRequest, Message
from winellbot.llm.openai_backend import OpenAIBackend
from winellbot.models import SearchResult
from winellbot.search.brave import BraveNewsSearch
from winellbot.search.fetch import WebFetcher
from winellbot.search.gdelt import GdeltSearch
from winellbot.search.searxng import SearxngSearch

INTERVAL = 0.15  # seconds between the server's bytes
READ_TIMEOUT = 5.0  # each wait for the next byte: never reached
DEADLINE = 0.75


def bounded(call, limit: float = 15.0):
    """``call()`` in a thread: (its error, seconds taken); fails the test if it is still running after ``limit``."""
    done: dict = {}

    def run():
        began = time.monotonic()
        try:
            call()
        except Exception as exc:  # noqa: BLE001 (the test looks at it)
            done["error"] = exc
        done["took"] = time.monotonic() - began

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(limit)
    assert not thread.is_alive(), f"still waiting on the trickling server after {limit} s"
    return done.get("error"), done["took"]


@pytest.mark.parametrize("make", [
    lambda url: SearxngSearch(base_url=url, timeout=READ_TIMEOUT, deadline=DEADLINE),
    lambda url: GdeltSearch(base_url=url + "/api", timeout=READ_TIMEOUT, deadline=DEADLINE),
    lambda url: BraveNewsSearch(api_key="k", base_url=url + "/news", timeout=READ_TIMEOUT, deadline=DEADLINE),
], ids=["searxng", "gdelt", "brave"])
def test_a_trickling_search_backend_gives_up_at_its_deadline_in_one_line(make):
    with TricklingServer(interval=INTERVAL, content_type="application/json") as srv:
        error, took = bounded(lambda: make(srv.url).search("harbour bridge"))
    assert isinstance(error, SearchError), error
    assert f"no complete answer within {DEADLINE:g} s" in str(error) and "\n" not in str(error), error
    assert took < DEADLINE + 1.5, took


def test_a_trickling_source_page_gives_up_at_its_deadline():
    fetcher = WebFetcher(allow_private=True, timeout=READ_TIMEOUT, total_timeout=DEADLINE)
    with TricklingServer(interval=INTERVAL, content_type="text/html") as srv:
        error, took = bounded(lambda: fetcher.fetch(SearchResult(url=srv.url + "/story", title="Story")))
    assert isinstance(error, FetchError) and f"not fetched within {DEADLINE:g} s" in str(error), error
    assert took < DEADLINE + 1.5, took


@pytest.mark.parametrize("headers_first", [True, False], ids=["trickled-body", "trickled-headers"])
def test_a_trickling_llm_server_gives_up_at_its_deadline_each_try(headers_first):
    backend = OpenAIBackend(base_url=None, api_key="k", model="m", timeout=DEADLINE, max_retries=1,
                            sleep=lambda s: None)
    with TricklingServer(interval=INTERVAL, headers_first=headers_first, content_type="application/json") as srv:
        backend.base_url = srv.url + "/v1"
        error, took = bounded(lambda: backend.chat(ChatRequest("editor", (Message("user", "Hello"),), max_tokens=8)))
        tries = srv.connections
    assert isinstance(error, ModelError), error
    assert str(error) == f"openai: gave up after 2 attempts: no complete answer within {DEADLINE:g} s (a total deadline)"
    assert tries == 2 and took < 2 * DEADLINE + 1.5, (tries, took)
