"""Sessions the server can end (winellbot/review/sessions.py, winellbot/state/sessions.py), against the real
local wiki: logout, the idle and absolute timeouts, a block found on any page, and the cookie a refused
cross-site form must not replace. The store's contracts hold on SQLite and MariaDB alike.
"""
from __future__ import annotations

import secrets

import pytest
from mariadb import mariadb, mariadb_url  # noqa: F401 - the fixtures

from review_client import client_of, page_settings, token
from review_scene import queue_suggestions
from winellbot.config import Settings
from winellbot.review.app import create_app
from winellbot.review.inputs import wiki_name
from winellbot.state.db import State
from winellbot.state.reviews import ReviewStore
from winellbot.state.sessions import SessionStore

PASSWORD = "Ses-" + secrets.token_urlsafe(16)
NAMES = {"one": "Session One", "blocked": "Session Blocked"}


@pytest.fixture(scope="module")
def reviewers(local_wiki):
    for name in NAMES.values():
        local_wiki.create_user(name, PASSWORD)
    return NAMES


@pytest.fixture
def setup(local_wiki, reviewers, tmp_path):
    settings = page_settings(local_wiki, tmp_path)
    state = State(settings.state.path)
    made = queue_suggestions(state, ["Quillhaven"], per_page=3, wiki=wiki_name(local_wiki.api_url))
    app = create_app(settings, secret_key="s-" + secrets.token_hex(8))
    return {"settings": settings, "state": state, "app": app, "made": made}


def login(app, name: str):
    c = client_of(app)
    r = c.post("/login/local", data={"csrf": token(c.get("/login").data), "username": name, "password": PASSWORD})
    assert r.status_code == 303, r.data[:300]
    return c


def cookie_of(c) -> str:
    return c.get_cookie("winellbot_review", domain="localhost").value


def with_cookie(app, value: str):
    c = client_of(app)
    c.set_cookie("winellbot_review", value, domain="localhost")
    return c


def sessions(state: State) -> list[dict]:
    return [dict(r) for r in state.db.query("select * from review_sessions order by started")]


def test_a_cookie_copied_before_logout_logs_no_one_in_after_it(setup):
    c = login(setup["app"], NAMES["one"])
    sid = setup["made"][0].id
    csrf = token(c.get(f"/s/{sid}").data)
    copied = cookie_of(c)
    assert with_cookie(setup["app"], copied).get("/queue").status_code == 200  # the copy works while logged in
    assert c.post("/logout", data={"csrf": csrf}).status_code == 302
    thief = with_cookie(setup["app"], copied)
    r = thief.get("/queue")
    assert r.status_code == 302 and r.headers["Location"].endswith("/login")
    r = with_cookie(setup["app"], copied).post(f"/s/{sid}/decide", data={"csrf": csrf, "verdict": "approve"})
    assert r.status_code == 302 and r.headers["Location"].endswith("/login")
    assert setup["state"].suggestion(sid)["status"] == "proposed" and not ReviewStore(setup["state"]).decisions(sid)
    (row,) = sessions(setup["state"])
    assert row["ended"] is not None and row["ended_why"] == "logged out"


def test_an_idle_session_and_one_past_its_longest_life_end_on_the_server(setup):
    c = login(setup["app"], NAMES["one"])
    assert c.get("/queue").status_code == 200
    setup["state"].db.execute("update review_sessions set seen = seen - 61 * 60")  # 61 minutes without a request
    setup["state"].db.conn.commit()
    r = c.get("/queue", follow_redirects=True)
    assert b"idle longer than 60 min" in r.data and b'id="password"' in r.data
    c = login(setup["app"], NAMES["one"])
    setup["state"].db.execute("update review_sessions set started = started - 13 * 3600 where ended is null")
    setup["state"].db.conn.commit()
    r = c.get("/queue", follow_redirects=True)
    assert b"longest life (12 h)" in r.data
    assert all(row["ended"] is not None for row in sessions(setup["state"]))


def test_a_block_found_on_a_page_ends_every_session_of_the_reviewer(setup, local_wiki):
    name = NAMES["blocked"]
    first, second = login(setup["app"], name), login(setup["app"], name)
    local_wiki.block(name)
    try:
        assert first.get("/queue").status_code == 200  # the standing read at login is trusted for 30 s
        setup["state"].db.execute("update review_sessions set standing_read = standing_read - 31")
        setup["state"].db.conn.commit()
        r = first.get("/queue")
        assert r.status_code == 403 and b"blocked" in r.data
    finally:
        local_wiki.unblock(name)
    assert second.get("/queue").status_code == 302  # ended too, though its own reading was fresh
    assert first.get("/queue").status_code == 302
    assert {row["ended_why"] for row in sessions(setup["state"])} == {f"{name} is blocked on the wiki (fixture)"}


def test_a_block_found_at_a_decision_ends_the_session(setup, local_wiki):
    name = NAMES["blocked"]
    c = login(setup["app"], name)
    sid = setup["made"][1].id
    csrf = token(c.get(f"/s/{sid}").data)
    local_wiki.block(name)
    try:
        r = c.post(f"/s/{sid}/decide", data={"csrf": csrf, "verdict": "approve"})
        assert r.status_code == 403
    finally:
        local_wiki.unblock(name)
    assert c.get("/queue").status_code == 302
    assert setup["state"].suggestion(sid)["status"] == "proposed"


def test_a_refused_cross_site_form_sets_no_cookie(setup):
    """A cross-site form's POST carries no cookie (SameSite=Lax) and no token: its 400 answer must not set
    a fresh, anonymous cookie, which the browser would keep in place of the reviewer's."""
    c = login(setup["app"], NAMES["one"])
    sid = setup["made"][0].id
    elsewhere = client_of(setup["app"])  # the browser, sending no cookie with another site's form
    r = elsewhere.post(f"/s/{sid}/decide", data={"verdict": "approve", "csrf": "forged"})
    assert r.status_code == 400 and "Set-Cookie" not in r.headers
    r = c.post(f"/s/{sid}/decide", data={"verdict": "approve", "csrf": "forged"})  # same site, stale token
    assert r.status_code == 400 and "Set-Cookie" not in r.headers
    assert c.get("/queue").status_code == 200


# -- the store's contracts, on each engine -----------------------------------------------------------
@pytest.fixture(params=["sqlite", "mariadb"])
def state(request, tmp_path):
    if request.param == "mariadb":
        return State(url=request.getfixturevalue("mariadb_url"))
    return State(str(tmp_path / "state.sqlite"))


def test_the_session_store_on_each_engine(state):
    now = [1_800_000_000.0]
    store = SessionStore(state, idle_s=3600, absolute_s=12 * 3600, now=lambda: now[0])
    a, b, other = store.start("Ann"), store.start("Ann"), store.start("Bob")
    assert store.check(a, "Ann").live and not store.check(a, "Bob").live  # a token is one reviewer's
    assert not store.check("made-up", "Ann").live
    kept = {r[0] for r in state.db.execute("select id from review_sessions").fetchall()}
    assert len(kept) == 3 and not kept & {a, b, other}  # the tokens' hashes, not the tokens
    store.end(a, "logged out")
    assert store.check(a, "Ann").why == "the session ended (logged out)" and store.check(b, "Ann").live
    now[0] += 3000
    assert store.check(b, "Ann").live  # used: its idle time starts again
    now[0] += 3000
    assert store.check(b, "Ann").live and not store.check(other, "Bob").live  # Bob idle 6000 s
    now[0] += 11 * 3600
    assert "longest life" in store.check(b, "Ann").why
    c = store.start("Ann")
    assert store.end_reviewer("Ann", "blocked") == 1 and not store.check(c, "Ann").live


def test_logout_and_a_block_end_sessions_on_a_mariadb_state_too(local_wiki, reviewers, mariadb_url):
    settings = Settings()
    settings.wiki.api_url = local_wiki.api_url
    settings.state.url = mariadb_url
    queue_suggestions(State(url=mariadb_url), ["Quillhaven"], per_page=2, wiki=wiki_name(local_wiki.api_url))
    app = create_app(settings, secret_key="m-" + secrets.token_hex(8))
    c = login(app, NAMES["one"])
    copied = cookie_of(c)
    assert c.get("/queue").status_code == 200
    c.post("/logout", data={"csrf": token(c.get("/queue").data)})
    assert with_cookie(app, copied).get("/queue").status_code == 302
    blocked = login(app, NAMES["blocked"])
    local_wiki.block(NAMES["blocked"])
    try:
        sid = first_item(blocked)
        r = blocked.post(f"/s/{sid}/decide", data={"csrf": token(blocked.get(f"/s/{sid}").data), "verdict": "skip"})
        assert r.status_code == 403
    finally:
        local_wiki.unblock(NAMES["blocked"])
    assert blocked.get("/queue").status_code == 302
    rows = State(url=mariadb_url).db.query("select reviewer, ended_why from review_sessions order by started")
    assert [(r["reviewer"], r["ended_why"]) for r in rows] == [
        (NAMES["one"], "logged out"), (NAMES["blocked"], f"{NAMES['blocked']} is blocked on the wiki (fixture)")]


def first_item(c) -> str:
    return c.get("/next").headers["Location"].split("/s/")[1].split("?")[0]
