"""Reviewed before posted, against the real local wiki: nothing reaches a page before a reviewer
approves it; an approval is posted once, naming the reviewer (a double decision, a crash between the
wiki write and the state's record, a restarted job never give two posts); an article whose opt-in
says ``review=no`` is posted directly; a running job posts an approval within its poll.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time

import pytest
from wikiscene import (after_a_killed_job, configured_state, for_a_job_to_kill, in_process, page_text as text, recorded,
                       run_cycle, warm_embeddings)

from winellbot.config import dump_settings
from winellbot.errors import PostingRefused
from winellbot.state.reviews import Decision, ReviewStore

MARK = "<!-- winellbot-suggestion:"


@pytest.fixture
def reviewed(scene):
    scene["settings"].review.mode = "reviewed"
    return scene


def approve(state, sid: str, who: str = "Reviewer One") -> None:
    assert ReviewStore(state).decide(Decision(sid, who, "approve")).taken


def test_a_cycle_posts_nothing_before_a_reviewer_approves(reviewed, site):
    s = reviewed["settings"]
    report, state, _ = run_cycle(s, [reviewed["opted"], reviewed["listed"]])
    assert report.counter["errors"] == 0, list(state.db["errors"].rows)
    assert report.counter["suggestions"] > 0 and report.counter["posted"] == 0
    assert MARK not in text(site, f"Talk:{reviewed['opted']}")
    assert MARK not in text(site, f"{s.wiki.queue}/{reviewed['listed']}")
    waiting = state.suggestions(status="proposed")
    assert waiting and all(r["estimate"] is not None and r["features"] for r in waiting)


def test_an_approved_suggestion_is_posted_once_naming_the_reviewer(reviewed, site):
    s = reviewed["settings"]
    _, state, _ = run_cycle(s, [reviewed["opted"], reviewed["listed"]])
    first, other = [r["id"] for r in state.suggestions(page=reviewed["opted"], status="proposed")][:2]
    approve(state, first)
    assert not ReviewStore(state).decide(Decision(first, "Reviewer Two", "approve")).taken  # two reviewers
    report, state, _ = run_cycle(s, [reviewed["opted"], reviewed["listed"]])
    talk = text(site, f"Talk:{reviewed['opted']}")
    assert talk.count(f"{MARK}{first} -->") == 1 and f"{MARK}{other} -->" not in talk
    assert "[[User:Reviewer One|Reviewer One]]" in talk
    assert state.suggestion(first)["status"] == "posted"
    assert MARK not in text(site, f"{s.wiki.queue}/{reviewed['listed']}")  # nothing approved there
    run_cycle(s, [reviewed["opted"]])  # a later cycle posts it no more
    assert text(site, f"Talk:{reviewed['opted']}").count(f"{MARK}{first} -->") == 1


def test_an_approved_status_without_a_recorded_approval_is_never_posted(reviewed, site):
    s = reviewed["settings"]
    _, state, _ = run_cycle(s, [reviewed["opted"]])
    sid = state.suggestions(page=reviewed["opted"], status="proposed")[0]["id"]
    state.set_status(sid, "approved", "set by hand, with no reviewer")
    run_cycle(s, [reviewed["opted"]])
    assert MARK not in text(site, f"Talk:{reviewed['opted']}")


def test_the_writer_refuses_an_unreviewed_suggestion_unless_the_opt_in_says_review_no(reviewed, site):
    from wikiscene import fact_suggestion

    from winellbot import factory
    from winellbot.wiki import render

    s = reviewed["settings"]
    writer = factory.build_wiki(s, os.path.dirname(s.state.path)).writer
    sug = fact_suggestion(reviewed["opted"])
    body = render.render_section([sug], bot_user=reviewed["bot"])
    with pytest.raises(PostingRefused, match="review=no"):
        writer.post_talk_section(reviewed["opted"], "Suggestions", body, [sug.id], unreviewed=[sug.id])
    with pytest.raises(PostingRefused, match="without a reviewer"):
        writer.post_queue(f"{s.wiki.queue}/{reviewed['listed']}", render.render_queue_entry(sug, bot_user="B"),
                          [sug.id], unreviewed=[sug.id])
    assert MARK not in text(site, f"Talk:{reviewed['opted']}")
    reviewed["wiki"].edit(f"Talk:{reviewed['opted']}", "{{Winellbot|review=no}}\nEarlier talk.")
    done = writer.post_talk_section(reviewed["opted"], "Suggestions", body, [sug.id], unreviewed=[sug.id])
    assert done.posted_ids == (sug.id,)


def test_an_article_that_asks_for_no_review_gets_its_suggestions_directly(reviewed, site):
    reviewed["wiki"].edit(f"Talk:{reviewed['opted']}", "{{Winellbot|review=no}}\nEarlier talk.")
    report, state, _ = run_cycle(reviewed["settings"], [reviewed["opted"], reviewed["listed"]])
    assert MARK in text(site, f"Talk:{reviewed['opted']}")
    assert state.suggestions(page=reviewed["opted"], status="posted")
    assert MARK not in text(site, f"{reviewed['settings'].wiki.queue}/{reviewed['listed']}")


def test_an_approval_for_an_article_not_opted_in_goes_to_the_userspace_queue(reviewed, site):
    s = reviewed["settings"]
    _, state, _ = run_cycle(s, [reviewed["listed"]])
    sid = state.suggestions(page=reviewed["listed"], status="proposed")[0]["id"]
    approve(state, sid)
    run_cycle(s, [reviewed["listed"]])
    queue = text(site, f"{s.wiki.queue}/{reviewed['listed']}")
    assert queue.count(f"{MARK}{sid} -->") == 1 and "Reviewer One" in queue


def test_approvals_decided_at_once_by_many_reviewers_count_once(reviewed):
    s = reviewed["settings"]
    _, state, _ = run_cycle(s, [reviewed["opted"]])
    sid = state.suggestions(page=reviewed["opted"], status="proposed")[0]["id"]
    results = []

    def one(who: str) -> None:
        mine = configured_state(s)  # each reviewer's request has its own connection
        results.append(ReviewStore(mine).decide(Decision(sid, who, "approve")).taken)

    threads = [threading.Thread(target=one, args=(f"Reviewer {i}",)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results.count(True) == 1
    assert [r["verdict"] for r in ReviewStore(state).decisions(sid)] == ["approve"]


def test_a_kill_between_the_post_and_its_record_never_posts_twice(reviewed, site, tmp_path):
    s = reviewed["settings"]
    _, state, _ = run_cycle(s, [reviewed["opted"]])
    sid = state.suggestions(page=reviewed["opted"], status="proposed")[0]["id"]
    approve(state, sid)
    config = tmp_path / "winellbot.toml"
    config.write_text(dump_settings(s), encoding="utf-8")
    env = for_a_job_to_kill(dict(os.environ, WINELLBOT_PAUSE_AFTER_WRITE="60", PYTHONUNBUFFERED="1"))
    args = ["once", "--config", str(config), f"-page:{reviewed['opted']}"]
    proc = subprocess.Popen([sys.executable, "-m", "winellbot.cli", *args], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT)
    deadline = time.time() + 120
    while time.time() < deadline and proc.poll() is None and MARK not in text(site, f"Talk:{reviewed['opted']}"):
        time.sleep(0.3)
    assert proc.poll() is None, proc.stdout.read().decode()
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert configured_state(s).suggestion(sid)["status"] == "approved", "killed before the state recorded it"
    done = after_a_killed_job(s, *args)  # the restarted job
    assert done.returncode == 0, done.stdout + done.stderr
    again = in_process(*args)  # then another
    assert again.returncode == 0, again.stdout + again.stderr
    assert text(site, f"Talk:{reviewed['opted']}").count(f"{MARK}{sid} -->") == 1
    assert configured_state(s).suggestion(sid)["status"] == "posted"


def test_a_running_job_posts_an_approval_within_its_poll(reviewed, site, tmp_path):
    s = reviewed["settings"]
    s.review.poll_seconds = 1  # the setting's least
    s.schedule.interval_minutes = 600
    config = tmp_path / "winellbot.toml"
    config.write_text(dump_settings(s), encoding="utf-8")
    warm_embeddings(s, [reviewed["opted"]])  # the job's cycle loads no sentence model
    job = subprocess.Popen([sys.executable, "-m", "winellbot.cli", "run", "--config", str(config),
                            f"-page:{reviewed['opted']}"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           env=dict(os.environ, PYTHONUNBUFFERED="1"))
    try:
        deadline = time.time() + 240
        waiting = []
        while time.time() < deadline and not (waiting and cycle_over(s)) and job.poll() is None:
            time.sleep(0.2)
            waiting = recorded(s, page=reviewed["opted"], status="proposed")
        if not waiting:
            job.kill()
            pytest.fail("the job's first cycle found nothing: " + job.stdout.read().decode()[-3000:])
        approve(configured_state(s), waiting[0]["id"])  # after the cycle's own look for approvals
        approved_at = time.time()
        while time.time() < approved_at + 60 and MARK not in text(site, f"Talk:{reviewed['opted']}"):
            time.sleep(0.2)
        assert f"{MARK}{waiting[0]['id']} -->" in text(site, f"Talk:{reviewed['opted']}"), "not posted within 60 s"
    finally:
        job.send_signal(signal.SIGTERM)
        try:
            job.wait(timeout=60)
        except subprocess.TimeoutExpired:
            job.kill()


def cycle_over(settings) -> bool:
    """The running job's latest run (its first cycle) has ended."""
    state = configured_state(settings, readonly=True)
    try:
        run = state.latest_run()
        return run is not None and run["status"] != "running"
    finally:
        state.db.close()


def test_a_suggestion_recorded_for_another_wiki_is_never_posted_here(reviewed, site):
    """Two wikis in one state: a bot on another wiki recorded a suggestion for an article of the same title;
    approved, it stays unposted by this wiki's bot (a recorded skip), while this wiki's own approval is posted."""
    s = reviewed["settings"]
    _, state, bot = run_cycle(s, [reviewed["opted"], reviewed["listed"]])
    here = bot._wiki_name()
    ours, theirs = [r["id"] for r in state.suggestions(page=reviewed["opted"], status="proposed")][:2]
    (elsewhere,) = [r["id"] for r in state.suggestions(page=reviewed["listed"], status="proposed")][:1]
    assert {r["wiki"] for r in state.suggestions(status="proposed")} == {here}
    with state.db.atomic():  # as a bot on another wiki sharing the state records its suggestions
        for sid in (theirs, elsewhere):
            state.db.execute("update suggestions set wiki = 'de.wikipedia.org' where id = ?", [sid])
    for sid in (ours, theirs, elsewhere):
        approve(state, sid)
    report, state, _ = run_cycle(s, [reviewed["opted"]])
    talk = text(site, f"Talk:{reviewed['opted']}")
    assert f"{MARK}{ours} -->" in talk and f"{MARK}{theirs} -->" not in talk
    assert MARK not in text(site, f"{s.wiki.queue}/{reviewed['listed']}")  # not even by the approved-only pass
    assert state.suggestion(ours)["status"] == "posted"
    assert state.suggestion(theirs)["status"] == state.suggestion(elsewhere)["status"] == "approved"
    [skip] = [e["message"] for e in state.db["errors"].rows if e["stage"] == "post"]
    assert skip == f"skipped: suggestion {theirs} is for de.wikipedia.org, not {here}; not posted here"
