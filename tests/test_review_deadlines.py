"""The review page's requests to the wiki have a total deadline: a server that sends its headers and
then a byte every 0.3 s (tests/trickle_server.py), which no per-read timeout catches, holds a login, a
standing read or an OAuth step no longer than the deadline, and the page answers with one line.
"""
from __future__ import annotations

import secrets
import time

import pytest

from search_http import TricklingServer
from winellbot.config import Settings
from winellbot.review.app import create_app
from winellbot.review.wiki import WikiAccount, WikiTooSlow

DEADLINE_S = 1.0
SLACK_S = 2.5  # the watchdog's thread, the server's next byte, a loaded machine


def test_the_standing_read_gives_up_at_its_deadline():
    with TricklingServer(interval=0.3, content_type="application/json") as slow:
        url = slow.url
        account = WikiAccount(f"{url}/w/api.php", local_login=True, deadline_s=DEADLINE_S)
        started = time.monotonic()
        with pytest.raises(WikiTooSlow) as caught:
            account.standing("Reviewer One")
        assert time.monotonic() - started < DEADLINE_S + SLACK_S
    message = str(caught.value)
    assert "\n" not in message and "standing" in message and f"within {DEADLINE_S:g} s (a total deadline)" in message


def test_the_preview_of_a_revision_gives_up_at_its_deadline():
    with TricklingServer(interval=0.3, content_type="application/json") as slow:
        account = WikiAccount(f"{slow.url}/w/api.php", deadline_s=DEADLINE_S)
        started = time.monotonic()
        with pytest.raises(WikiTooSlow, match="rendering the preview"):
            account.parse_preview("New fact: a bridge opened in 2026.", "Talk:Lowmere")
        assert time.monotonic() - started < DEADLINE_S + SLACK_S


def _app(tmp_path, account):
    settings = Settings()
    settings.wiki.api_url = account.api_url
    settings.state.path = str(tmp_path / "state.sqlite")
    app = create_app(settings, wiki=account, secret_key="d-" + secrets.token_hex(8))
    c = app.test_client()
    c.environ_base["wsgi.url_scheme"] = "https"
    with c.session_transaction() as s:
        s["csrf"] = "t" * 43
    return c


def test_the_login_page_answers_within_the_deadline_with_one_line(tmp_path):
    with TricklingServer(interval=0.3, content_type="application/json") as slow:
        url = slow.url
        c = _app(tmp_path, WikiAccount(f"{url}/w/api.php", local_login=True, deadline_s=DEADLINE_S))
        started = time.monotonic()
        r = c.post("/login/local", data={"csrf": "t" * 43, "username": "Reviewer One", "password": "x"})
        assert time.monotonic() - started < DEADLINE_S + SLACK_S
    assert r.status_code == 502 and b"(a total deadline)" in r.data
    assert c.get("/queue").status_code == 302  # no one logged in


def test_an_oauth_step_gives_up_at_its_deadline(tmp_path):
    with TricklingServer(interval=0.3, content_type="application/json") as slow:
        url = slow.url
        account = WikiAccount(f"{url}/w/api.php", oauth_url=f"{url}/w/index.php", consumer_key="k" * 16,
                              consumer_secret="s" * 32, deadline_s=DEADLINE_S)
        c = _app(tmp_path, account)
        started = time.monotonic()
        r = c.post("/oauth/start", data={"csrf": "t" * 43})
        assert time.monotonic() - started < DEADLINE_S + SLACK_S
        with c.session_transaction() as s:
            s["request_token"] = ["a" * 16, "b" * 16]
        started = time.monotonic()
        back = c.get(f"/oauth/callback?oauth_token={'a' * 16}&oauth_verifier=v1")
        assert time.monotonic() - started < DEADLINE_S + SLACK_S
    assert r.status_code == 502 and b"(a total deadline)" in r.data
    assert back.status_code == 502 and b"(a total deadline)" in back.data
