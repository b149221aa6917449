"""The bot's clock (winellbot/clock.py): it agrees with the wiki's, and a time recorded ahead of now
counts as now in every comparison (issue 45: with the clock 400 days ahead, posts were dated then and
left out of the caps, and the pages' last check hid the news published since).

The clock of a whole job is faked with libfaketime (Debian's ``faketime``) on the subprocess, against
the real local wiki, whose clock stays right; a :class:`Clock` in the test's process is given its own
time source.
"""
from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import subprocess
import sys

import pytest

from wikiscene import configured_state, in_process, warm_embeddings

from winellbot.article import parse_article
from winellbot.search.dated import since_for
from winellbot.clock import TOLERANCE_S, Clock, describe, is_ahead
from winellbot.config import Settings, dump_settings
from winellbot.models import Citation, Document, Edit, PipelineResult, Suggestion, Update
from winellbot.posting import PostPlanner
from winellbot.state.db import State
from winellbot.state.posts import PostClaims

DAY = 86400.0
REAL = dt.datetime(2026, 5, 1, 12, 0, tzinfo=dt.timezone.utc)


def fact(page: str, text: str) -> Suggestion:
    doc = Document("d", f"https://news.example.org/{abs(hash(text))}", "News", text)
    edit = Edit("Old.", f"Old. {text}", text, Citation(doc.url, "News"))
    return Suggestion(page, 1, ("History",), 0, edit, Update(text, ("History",), text, doc))


def posted_ahead(state: State, page: str, text: str, days: float = 400) -> Suggestion:
    """A suggestion for ``page`` recorded as posted ``days`` after now: what a clock that ran fast left."""
    s = fact(page, text)
    state.record_result(state.start_run("offline"), page, PipelineResult((s,)))
    state.record_post([s.id], f"Talk:{page}", 1, "Suggestions")
    ahead = (dt.datetime.now(dt.timezone.utc) + dt.timedelta(days=days)).replace(microsecond=0).isoformat()
    state.db.execute("update posts set posted_at = ? where suggestion_id = ?", [ahead, s.id])
    return s


# -- the clock itself ------------------------------------------------------------------------------------

def test_a_clock_400_days_ahead_takes_the_wikis_time():
    machine = REAL.timestamp() + 400 * DAY
    clock = Clock(source=lambda: machine)
    assert clock.now() == REAL + dt.timedelta(days=400)
    ahead = clock.agree_with(REAL)
    assert ahead == pytest.approx(400 * DAY) and describe(ahead) == "400 days ahead of"
    assert clock.now() == REAL and clock.stamp() == "2026-05-01T12:00:00+00:00" and clock.today() == REAL.date()
    clock.agree_with(REAL + dt.timedelta(days=400))  # the machine's clock was set right: no offset any more
    assert clock.offset == 0.0 and clock.now() == REAL + dt.timedelta(days=400)


def test_a_difference_within_the_tolerance_keeps_no_offset():
    clock = Clock(source=lambda: REAL.timestamp() + TOLERANCE_S - 1)
    assert clock.agree_with(REAL.replace(tzinfo=None)) == pytest.approx(TOLERANCE_S - 1)  # naive: UTC
    assert clock.offset == 0.0
    behind = Clock(source=lambda: REAL.timestamp() - 3 * 60)
    assert describe(behind.agree_with(REAL)) == "3 minutes behind" and behind.now() == REAL


def test_a_time_is_ahead_only_well_past_now():
    assert is_ahead("2026-05-02", REAL) and is_ahead("2026-05-01T12:01:00+00:00", REAL)
    assert not is_ahead("2026-05-01T12:00:05+00:00", REAL), "another job's clock a few seconds ahead"
    assert not is_ahead("2026-04-30T00:00:00Z", REAL) and not is_ahead(None, REAL) and not is_ahead("soon", REAL)


# -- a record ahead of now counts as now ---------------------------------------------------------------------

def test_a_post_dated_ahead_counts_in_the_posting_caps():
    state = State()
    posted_ahead(state, "Town", "The harbour wall was repaired in 2026.")
    article = parse_article("Town", "'''Town''' is a town.\n\n== History ==\nOld.\n")
    planner = PostPlanner(state, max_per_page_per_week=1, max_per_wiki_per_day=10)
    plan = planner.plan(article, [fact("Town", "A new library opened in 2026 with 20,000 books.")])
    assert plan.post == () and len(plan.capped) == 1 and "(1 posted)" in plan.cap_reason
    wiki_cap = PostPlanner(state, max_per_page_per_week=5, max_per_wiki_per_day=1)
    assert wiki_cap.plan(article, [fact("Town", "A ferry line opened in 2026.")]).post == ()


def test_a_post_or_claim_dated_ahead_counts_when_jobs_claim_posts():
    state = State()
    posted_ahead(state, "Town", "The harbour wall was repaired in 2026.")
    claims = PostClaims(state, "job-a")
    assert claims.claim("Town", ["s2"], per_page_week=1, per_wiki_day=10) == [], "the post dated ahead counts"
    assert claims.claim("Village", ["s3"], per_page_week=5, per_wiki_day=2) == ["s3"]
    ahead = (dt.datetime.now(dt.timezone.utc) + dt.timedelta(days=400)).replace(microsecond=0).isoformat()
    state.db.execute("update post_claims set claimed_at = ? where suggestion_id = 's3'", [ahead])
    assert PostClaims(state, "job-b").claim("Hamlet", ["s4"], per_page_week=5, per_wiki_day=2) == [], \
        "the post and the claim dated ahead: 2 today"


def test_a_last_check_dated_ahead_does_not_move_the_search_window():
    settings = Settings()
    settings.search.window_days = 30
    today = dt.datetime.now(dt.timezone.utc).date()
    window = (today - dt.timedelta(days=30)).isoformat()
    assert since_for(settings, (today - dt.timedelta(days=2)).isoformat() + "T10:00:00+00:00") == \
        (today - dt.timedelta(days=2)).isoformat()
    assert since_for(settings, (today + dt.timedelta(days=400)).isoformat() + "T10:00:00+00:00") == window
    assert since_for(settings, None) == window


def test_a_page_last_run_ahead_of_now_is_due():
    state = State()
    now = dt.datetime.now(dt.timezone.utc).replace(microsecond=0)
    state.touch_page("Ahead", last_run=(now + dt.timedelta(days=400)).isoformat(),
                     next_due=(now + dt.timedelta(days=3)).isoformat())
    state.touch_page("Checked", last_run=now.isoformat(), next_due=(now + dt.timedelta(days=3)).isoformat())
    assert state.due_pages(["Ahead", "Checked", "New"]) == ["Ahead", "New"]


# -- a job whose machine's clock is 400 days ahead, on the real local wiki ------------------------------------

LIBRARY = ("{name} opened a new public library on {day}. The library in {name} holds 20,000 books and cost "
           "3.1 million euros, the town council said.")


def faked(days: int) -> list[str]:
    """The command prefix that runs a process with its clock ``days`` ahead (libfaketime)."""
    tool = shutil.which("faketime")
    if tool is None:
        pytest.fail("faketime is not installed (apt-get install faketime; scripts/setup.sh dev installs it)")
    return [tool, "-f", f"+{days}d"]


def once(config: str, *pages: str, prefix: list[str] | None = None) -> subprocess.CompletedProcess:
    """``winellbot once`` on ``pages``, which must exit 0. With ``prefix`` (:func:`faked`) in a process of its
    own, whose clock libfaketime sets; without, at the real time, the real CLI (``winellbot.cli.main``) in this
    process."""
    args = ["once", *(f"-page:{p}" for p in pages), "--config", config]
    if prefix:
        done = subprocess.run([*prefix, sys.executable, "-m", "winellbot.cli", *args], capture_output=True,
                              text=True, timeout=300, env=dict(os.environ))
    else:
        done = in_process(*args)
    assert done.returncode == 0, done.stdout + done.stderr
    return done


def add_news_today(scene: dict, town: str) -> str:
    """News for ``town`` published today (the real date), after the first run: returns its URL."""
    slug = town.lower().replace(" ", "-")
    day = dt.datetime.now(dt.timezone.utc).date()
    doc = {"id": f"{slug}-library", "url": f"https://news.example.org/{slug}-library",
           "title": f"{town} opens a library", "published": day.isoformat(), "publisher": "Westmark Gazette",
           "text": LIBRARY.format(name=town, day=f"{day.day} {day:%B %Y}")}
    with open(os.path.join(scene["settings"].search.corpus_dir, "news.jsonl"), "a", encoding="utf-8") as fh:
        fh.write("\n" + json.dumps(doc))
    return doc["url"]


@pytest.mark.parametrize("ahead", ["machine clock", "records"])
def test_a_clock_400_days_ahead_then_the_real_time_keeps_the_cap_and_finds_the_news(scene, tmp_path, ahead):
    """``machine clock``: the first job runs with its clock 400 days ahead (the wiki's is right). ``records``:
    the first job runs at the real time and its records are then dated 400 days ahead, as a fast clock
    left them before the bot read the wiki's. Then a job at the real time, after news was published."""
    settings = scene["settings"]
    settings.posting.max_per_page_per_week = 1
    config = tmp_path / "winellbot.toml"
    config.write_text(dump_settings(settings), encoding="utf-8")
    towns = [scene["opted"], scene["listed"]]
    if ahead == "machine clock":
        warm_embeddings(settings, towns)  # the job under libfaketime loads no sentence model
    first = once(str(config), *towns, prefix=faked(400) if ahead == "machine clock" else None)
    state = configured_state(settings)
    if ahead == "machine clock":
        assert "400 days ahead of the wiki's" in first.stderr, first.stderr
    else:
        with state.db.atomic():
            for table, key, column in (("posts", "id", "posted_at"), ("pages", "title", "last_checked"),
                                       ("pages", "title", "last_run"), ("pages", "title", "next_due")):
                for r in list(state.db.query(f"select {key}, {column} from {table} where {column} is not null")):
                    shifted = (dt.datetime.fromisoformat(r[column]) + dt.timedelta(days=400)).isoformat()
                    state.db.execute(f"update {table} set {column} = ? where {key} = ?", [shifted, r[key]])
        state = configured_state(settings)
        assert all(is_ahead(p["posted_at"]) for p in state.posted()) and all(
            is_ahead(state.page(t)["last_checked"]) for t in towns)
    now = dt.datetime.now(dt.timezone.utc)
    posts = state.posted()
    assert sorted(p["page"] for p in posts) == sorted(towns), "one post a page: the cap is 1 a week"
    if ahead == "machine clock":
        for p in posts:  # dated by the wiki's clock, not the machine's
            assert abs((dt.datetime.fromisoformat(p["posted_at"]) - now).total_seconds()) < 300, p
    waiting = {t: len(state.suggestions(page=t, status="proposed")) for t in towns}
    assert all(waiting.values()), f"the cap left suggestions waiting: {waiting}"
    url = add_news_today(scene, scene["opted"])
    once(str(config), *towns)
    state = configured_state(settings)
    assert sorted(p["page"] for p in state.posted()) == sorted(towns), "the cap held: no second post in the week"
    assert any(s["url"] == url for s in state.suggestions(page=scene["opted"])), \
        "the news published after the first job's check was found"
