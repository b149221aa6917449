"""The HTTP call every web search backend makes, with its failures turned into SearchError."""
from __future__ import annotations

import re
from typing import Any

import requests

from winellbot.deadline import DeadlinePassed, within
from winellbot.errors import SearchError
from winellbot.models import SearchResult

def user_agent(contact: str = "") -> str:
    """The User-Agent of news searches and fetches; ``contact`` (the bot's user page) is added when known."""
    return f"winellbot/0.1 (Wikipedia update suggestions for human review{'; ' + contact if contact else ''})"


DEFAULT_USER_AGENT = user_agent()

_TAG = re.compile(r"<[^>]+>")


def strip_tags(text: str | None) -> str:
    """Search APIs mark query words with <strong>; the snippet is plain text."""
    import html

    return html.unescape(_TAG.sub("", text or "")).strip()


def get_json(session: requests.Session, url: str, *, params: dict[str, Any], backend: str,
             timeout: float, deadline: float | None = None, headers: dict[str, str] | None = None) -> Any:
    """GET ``url`` and decode its JSON body; any failure is a :class:`SearchError` naming the backend.

    ``timeout`` bounds each wait for the server; ``deadline`` the whole request, body included, on a
    session mounted by :func:`winellbot.deadline.mount`."""
    try:
        resp = within(deadline, lambda: session.get(url, params=params, headers=headers, timeout=timeout))
    except DeadlinePassed as exc:
        raise SearchError(f"{backend}: gave up: {exc}") from exc
    except requests.RequestException as exc:
        raise SearchError(f"{backend}: request failed: {exc}") from exc
    if resp.status_code != 200:
        raise SearchError(f"{backend}: HTTP {resp.status_code}: {resp.text[:200].strip()}")
    try:
        return resp.json()
    except ValueError as exc:
        # GDELT, for one, answers errors ("phrase too short", rate limits) as plain text with 200.
        raise SearchError(f"{backend}: not JSON: {resp.text[:200].strip()}") from exc


def parse_results(data: Any, *, backend: str, limit: int, snippet: str, published: str,
                  date=lambda value: value) -> list[SearchResult]:
    """``data["results"]`` as SearchResults: items without a URL are skipped, at most ``limit``.

    Backends name the snippet and date fields differently (``snippet``, ``published``);
    ``date`` converts the date field's value.
    """
    items = data.get("results", []) if isinstance(data, dict) else []
    results: list[SearchResult] = []
    for item in items:
        if not isinstance(item, dict) or not item.get("url"):
            continue
        results.append(SearchResult(url=item["url"], title=strip_tags(item.get("title")),
                                    snippet=strip_tags(item.get(snippet)), published=date(item.get(published)),
                                    backend=backend, rank=len(results)))
        if len(results) >= limit:
            break
    return results
