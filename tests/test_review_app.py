"""The review page as a web page, against the real local wiki and a real state: login, the queue, one
suggestion, the decisions, and each safety rule (docs/review.md; winellbot/review/security.py).

Each rule has a test that fails without it: the CSRF token, escaping of every source and model
field, the Content-Security-Policy, the cookie flags, login before anything, nothing served from
outside the tool, the reviewer's standing read at every action, the local login only for 127.0.0.1.
"""
from __future__ import annotations

import os
import re
import secrets
import sys

import lxml.html
import pytest

from review_client import client_of, page_settings, token
from review_scene import HOSTILE_TEXT, hostile, queue_suggestions
from winellbot.review.app import create_app
from winellbot.review.inputs import wiki_name
from winellbot.review.wiki import WikiAccount
from winellbot.state.db import State
from winellbot.state.reviews import ReviewStore

PASSWORD = "Rev-" + secrets.token_urlsafe(16)


@pytest.fixture(scope="module")
def reviewers(local_wiki):
    names = {"one": "Reviewer One", "two": "Reviewer Two", "blocked": "Reviewer Blocked"}
    for name in names.values():
        local_wiki.create_user(name, PASSWORD)
    return names


@pytest.fixture
def setup(local_wiki, reviewers, tmp_path):
    settings = page_settings(local_wiki, tmp_path)
    state = State(settings.state.path)
    made = queue_suggestions(state, ["Quillhaven", "Marrowby"], per_page=4, extra=[hostile("Quillhaven")],
                             wiki=wiki_name(local_wiki.api_url))
    app = create_app(settings, secret_key="test-" + secrets.token_hex(8))
    return {"settings": settings, "state": state, "app": app, "made": made, "names": reviewers}


def logged_in(app, name: str):
    c = client_of(app)
    r = c.post("/login/local", data={"csrf": token(c.get("/login").data), "username": name, "password": PASSWORD})
    assert r.status_code == 303, r.data[:500]
    return c


def decide(c, sid: str, verdict: str, **extra):
    csrf = token(c.get(f"/s/{sid}").data)
    return c.post(f"/s/{sid}/decide", data={"csrf": csrf, "verdict": verdict, **extra})


def test_nothing_without_login(setup):
    c = client_of(setup["app"])
    for path in ("/queue", "/next", f"/s/{setup['made'][0].id}"):
        r = c.get(path)
        assert r.status_code == 302 and r.headers["Location"].endswith("/login"), path
    sid = setup["made"][0].id
    r = c.post(f"/s/{sid}/decide", data={"csrf": token(c.get("/login").data), "verdict": "approve"})
    assert r.status_code == 302 and r.headers["Location"].endswith("/login")
    assert setup["state"].suggestion(sid)["status"] == "proposed"


def test_the_queue_is_ordered_by_the_estimate_with_at_most_depth_per_article(setup):
    c = logged_in(setup["app"], setup["names"]["one"])
    page = lxml.html.fromstring(c.get("/queue").data)
    estimates = [float(x) for x in page.xpath('//table[@id="queue"]//td[@class="num"]/text()')]
    assert estimates == sorted(estimates, reverse=True)
    articles = page.xpath('//table[@id="queue"]//tbody/tr/td[2]/a/text()')
    assert articles.count("Quillhaven") == 3 and articles.count("Marrowby") == 3  # depth 3 of 5 and of 4
    only = lxml.html.fromstring(c.get("/queue?page=Marrowby").data)
    assert set(only.xpath('//table[@id="queue"]//tbody/tr/td[2]/a/text()')) == {"Marrowby"}


def test_approve_records_one_row_and_a_second_click_records_nothing(setup):
    c = logged_in(setup["app"], setup["names"]["one"])
    sid = setup["made"][0].id
    r = decide(c, sid, "approve")
    assert r.status_code == 303
    again = c.post(f"/s/{sid}/decide", data={"csrf": token(c.get("/queue").data), "verdict": "approve"},
                   follow_redirects=True)
    assert b"Not recorded: already approved" in again.data
    rows = ReviewStore(setup["state"]).decisions(sid)
    assert [(r["verdict"], r["reviewer"]) for r in rows] == [("approve", "Reviewer One")]
    assert setup["state"].suggestion(sid)["status"] == "approved"


def test_reject_with_the_rubric_reasons_is_a_row(setup):
    c = logged_in(setup["app"], setup["names"]["two"])
    sid = setup["made"][1].id
    decide(c, sid, "reject", reasons=["not_new", "wrong_section"])
    (row,) = ReviewStore(setup["state"]).decisions(sid)
    assert (row["verdict"], row["reasons"], row["reviewer"]) == ("reject", "not_new,wrong_section", "Reviewer Two")
    assert setup["state"].suggestion(sid)["status"] == "rejected"
    assert decide(c, setup["made"][2].id, "reject", reasons=["made_up"]).status_code == 400


def test_approve_into_another_section_moves_it(setup, local_wiki):
    local_wiki.edit("Marrowby", "Marrowby is a town.\n\n== History ==\nOld.\n\n== Government ==\nA council.\n")
    c = logged_in(setup["app"], setup["names"]["one"])
    sid = next(s.id for s in setup["made"] if s.article_title == "Marrowby" and s.section_path != ("Government",))
    c.post(f"/s/{sid}/decide", data={"csrf": token(c.get(f"/s/{sid}").data), "verdict": "move",
                                     "to_section": "Government"})
    row = setup["state"].suggestion(sid)
    assert (row["status"], row["section"]) == ("approved", "Government")
    (review,) = ReviewStore(setup["state"]).decisions(sid)
    assert review["section_to"] == "Government" and review["section_from"] != "Government"


def test_a_post_without_the_csrf_token_is_refused(setup):
    c = logged_in(setup["app"], setup["names"]["one"])
    sid = setup["made"][0].id
    assert c.post(f"/s/{sid}/decide", data={"verdict": "approve"}).status_code == 400
    assert c.post(f"/s/{sid}/decide", data={"verdict": "approve", "csrf": "forged"}).status_code == 400
    other = logged_in(setup["app"], setup["names"]["two"])  # a token of another session is not this one's
    assert c.post(f"/s/{sid}/decide", data={"verdict": "approve",
                                            "csrf": token(other.get("/queue").data)}).status_code == 400
    assert setup["state"].suggestion(sid)["status"] == "proposed"


def test_every_field_of_a_hostile_suggestion_is_escaped(setup):
    c = logged_in(setup["app"], setup["names"]["one"])
    bad = next(s for s in setup["made"] if s.update.text == HOSTILE_TEXT)
    for html in (c.get(f"/s/{bad.id}").data.decode(), c.get("/queue?page=Quillhaven&status=open").data.decode()):
        assert "<script>document.title" not in html and "<img src=x" not in html
        page = lxml.html.fromstring(html)
        assert not page.xpath('//*[@onerror or @onclick or @onload]')
        assert all(not href.strip().lower().startswith("javascript:") for href in page.xpath("//a/@href"))
        assert all(src.startswith("/static/") for src in page.xpath("//script/@src"))
        assert not page.xpath("//script[not(@src)]")  # no inline script at all
    item = lxml.html.fromstring(c.get(f"/s/{bad.id}").data)
    assert HOSTILE_TEXT in item.xpath('string(//*[@id="passage"])')  # shown, as text
    assert item.xpath('//*[@id="source"]')[0].tag != "a"  # a javascript: URL is no link


def test_headers_and_cookie_flags(setup):
    c = client_of(setup["app"])
    r = c.get("/login")
    csp = r.headers["Content-Security-Policy"]
    assert "default-src 'none'" in csp and "script-src 'self'" in csp and "frame-ancestors 'none'" in csp
    assert "unsafe-inline" not in csp
    assert r.headers["X-Frame-Options"] == "DENY" and r.headers["X-Content-Type-Options"] == "nosniff"
    cookie = r.headers["Set-Cookie"]
    assert "Secure" in cookie and "HttpOnly" in cookie and "SameSite=Lax" in cookie


def test_nothing_of_the_page_comes_from_outside_the_tool(setup):
    c = logged_in(setup["app"], setup["names"]["one"])
    for path in ("/login", "/queue", f"/s/{setup['made'][0].id}"):
        page = lxml.html.fromstring(c.get(path).data)
        loaded = page.xpath("//script/@src | //link/@href | //img/@src | //iframe/@src")
        assert loaded and all(u.startswith("/static/") for u in loaded), (path, loaded)
    assert c.get("/static/review.js").status_code == 200


def test_a_reviewer_blocked_after_login_is_refused_at_the_next_action(setup, local_wiki):
    name = setup["names"]["blocked"]
    c = logged_in(setup["app"], name)
    sid = setup["made"][3].id
    local_wiki.block(name)
    try:
        r = decide(c, sid, "approve")
        assert r.status_code == 403 and b"blocked" in r.data
        assert setup["state"].suggestion(sid)["status"] == "proposed"
        assert not ReviewStore(setup["state"]).decisions(sid)
        r = client_of(setup["app"]).post("/login/local", data={"csrf": token(client_of(setup["app"]).get("/login").data)})
        assert r.status_code in (400, 403)
    finally:
        local_wiki.unblock(name)


def test_the_groups_that_may_review_are_a_setting(setup):
    setup["settings"].review.reviewers = ["sysop"]
    c = client_of(setup["app"])
    r = c.post("/login/local", data={"csrf": token(c.get("/login").data), "username": setup["names"]["one"],
                                     "password": PASSWORD})
    assert r.status_code == 403 and b"none of the groups or rights" in r.data


def test_a_wrong_password_is_refused(setup):
    c = client_of(setup["app"])
    r = c.post("/login/local", data={"csrf": token(c.get("/login").data), "username": setup["names"]["one"],
                                     "password": "not-the-password"})
    assert r.status_code == 403
    assert c.get("/queue").status_code == 302


def test_the_password_login_is_only_for_a_wiki_on_127_0_0_1(setup, local_wiki):
    elsewhere = local_wiki.api_url.replace("127.0.0.1", "localhost")
    account = WikiAccount(elsewhere, local_login=True)
    assert not account.local
    app = create_app(setup["settings"], wiki=account, secret_key="x" * 32)
    c = client_of(app)
    page = c.get("/login").data
    assert b'id="password"' not in page
    with c.session_transaction() as session:
        csrf = session["csrf"]
    r = c.post("/login/local", data={"csrf": csrf, "username": setup["names"]["one"], "password": PASSWORD})
    assert r.status_code == 403 and b"only for a wiki on 127.0.0.1" in r.data


def test_skip_hides_it_from_this_reviewer_only(setup):
    one, two = logged_in(setup["app"], setup["names"]["one"]), logged_in(setup["app"], setup["names"]["two"])
    first = _first(one)
    decide(one, first, "skip")
    assert _first(one) != first and _first(two) == first
    assert setup["state"].suggestion(first)["status"] == "proposed"


def _first(c) -> str:
    r = c.get("/next")
    return re.search(r"/s/([0-9a-f]+)", r.headers["Location"]).group(1)


def test_the_toolforge_webservice_entry_serves_the_page(setup, tmp_path, monkeypatch):
    """scripts/toolforge/review: the setup links the entry point and the venv where Toolforge's Python
    webservice looks, and the entry point's ``app`` serves the page from the tool's settings file."""
    import importlib.util
    import subprocess
    from pathlib import Path

    from winellbot.config import dump_settings

    root = Path(__file__).resolve().parents[1] / "scripts" / "toolforge" / "review"
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").symlink_to(sys.executable)
    home = tmp_path / "home"
    done = subprocess.run(["bash", str(root / "webservice-setup.sh")], env={**os.environ, "HOME": str(home),
                          "WINELLBOT_VENV": str(venv)}, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert (home / "www/python/src/app.py").resolve() == (root / "app.py").resolve()
    assert (home / "www/python/venv").resolve() == venv.resolve()
    config = tmp_path / "winellbot.toml"
    config.write_text(dump_settings(setup["settings"]), encoding="utf-8")
    monkeypatch.setenv("WINELLBOT_CONFIG", str(config))
    monkeypatch.setenv("WINELLBOT_REVIEW_SECRET_KEY", "k" * 32)
    spec = importlib.util.spec_from_file_location("toolforge_review_app", home / "www/python/src/app.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    c = client_of(module.app)
    assert c.get("/login").status_code == 200
    assert logged_in(module.app, setup["names"]["one"]).get("/queue").status_code == 200


def oauth_app(setup, provider):
    account = WikiAccount(setup["settings"].wiki.api_url, oauth_url=provider.index_url, consumer_key=provider.key,
                          consumer_secret=provider.secret)
    return create_app(setup["settings"], wiki=account, secret_key="o" * 32)


def oauth_login(app, c):
    """The browser's path: the tool -> the wiki's authenticate page -> back to the tool's callback."""
    import requests

    start = c.post("/oauth/start", data={"csrf": token(c.get("/login").data)})
    assert start.status_code == 302, start.data[:300]
    at_wiki = requests.get(start.headers["Location"], allow_redirects=False, timeout=30)
    assert at_wiki.status_code == 302
    back = at_wiki.headers["Location"]
    assert back.startswith("https://localhost/oauth/callback?")
    return c.get(back.removeprefix("https://localhost"))


def test_oauth_login_names_the_reviewer_from_the_identify_answer(setup):
    """Against the stand-in provider (tests/oauth_provider.py): no Extension:OAuth can be installed here."""
    from oauth_provider import StandInOAuth

    provider = StandInOAuth("https://localhost/oauth/callback", user=setup["names"]["two"])
    with provider.serving():
        app = oauth_app(setup, provider)
        c = client_of(app)
        assert b'id="oauth"' in c.get("/login").data
        r = oauth_login(app, c)
        assert r.status_code == 303, r.data[:500]
        decide(c, setup["made"][0].id, "approve")
        assert ReviewStore(setup["state"]).decisions(setup["made"][0].id)[0]["reviewer"] == "Reviewer Two"


def test_a_forged_identify_answer_or_a_replayed_callback_logs_no_one_in(setup):
    from oauth_provider import StandInOAuth

    provider = StandInOAuth("https://localhost/oauth/callback", user=setup["names"]["one"])
    with provider.serving():
        app = oauth_app(setup, provider)
        provider.forge_identity = True
        c = client_of(app)
        r = oauth_login(app, c)
        assert r.status_code == 403 and b"did not complete" in r.data
        assert c.get("/queue").status_code == 302  # not logged in
        provider.forge_identity = False
        c2 = client_of(app)
        assert c2.get("/oauth/callback?oauth_verifier=abc&oauth_token=def").status_code == 400  # none started here
