"""Revisions and undos reach the real local wiki as promised: a revised suggestion is posted once in its
reviewer's words, naming them, with the note, without the bot's line; a revision the writer's checks
refuse goes back to the queue and is never posted; an undo before the post leaves the talk page as it
was; an undo after the post withdraws it once, naming who undid it; an undo racing the job (before its
write, or between its write and its record) never leaves two posts, a post without an approval, or an
approval whose post is lost."""
from __future__ import annotations

import os
import threading
import time

import pytest
from wikiscene import configured_state, held_at, page_text as text, run_cycle

from winellbot.state.reviews import Decision, ReviewStore
from winellbot.state.revisions import RevisionStore

MARK = "<!-- winellbot-suggestion:"


@pytest.fixture
def reviewed(scene):
    scene["settings"].review.mode = "reviewed"
    return scene


def first_open(state, page: str) -> dict:
    return state.suggestions(page=page, status="proposed")[0]


def test_a_revision_is_posted_once_in_the_reviewers_words(reviewed, site):
    s, opted = reviewed["settings"], reviewed["opted"]
    _, state, _ = run_cycle(s, [opted])
    row = next(r for r in state.suggestions(page=opted, status="proposed") if "Maria Olsen" in r["update_text"])
    wording = "In March 2026 the town chose Maria Olsen as mayor."  # the reviewer's own words for the source's fact
    assert ReviewStore(state).decide(Decision(row["id"], "Reviewer One", "revise", text=wording,
                                              note="checked against the source")).taken
    run_cycle(s, [opted])
    talk = text(site, f"Talk:{opted}")
    assert talk.count(f"{MARK}{row['id']} -->") == 1 and wording in talk, state.suggestion(row["id"])["status_reason"]
    assert "checked against the source" in talk and "[[User:Reviewer One|Reviewer One]]" in talk
    box = talk.split(f"{MARK}{row['id']} -->")[1].split("'''Source:'''")[0]
    assert row["update_text"] not in box  # the bot's line stays in the state, out of the post
    assert "Automated checks" not in talk and "estimate" not in talk.lower()  # no measurement of the bot's
    [rev] = RevisionStore(state).of(row["id"])
    assert rev["status"] == "posted" and rev["post_url"] and "oldid=" in rev["post_url"]
    run_cycle(s, [opted])
    assert text(site, f"Talk:{opted}").count(f"{MARK}{row['id']} -->") == 1


def test_a_revision_the_writer_refuses_goes_back_to_the_queue_unposted(reviewed, site):
    s, opted = reviewed["settings"], reviewed["opted"]
    _, state, _ = run_cycle(s, [opted])
    row = first_open(state, opted)
    # recorded past the page's checks (as a forged or older page might): the writer checks again
    ReviewStore(state).decide(Decision(row["id"], "Reviewer One", "revise", text="See [[Category:Spam]] now."))
    run_cycle(s, [opted])
    assert MARK not in text(site, f"Talk:{opted}")
    after = state.suggestion(row["id"])
    assert after["status"] == "proposed" and "not posted" in after["status_reason"]
    assert RevisionStore(state).of(row["id"])[0]["status"] == "refused"
    assert ReviewStore(state).approvals([row["id"]]) == {}


def test_undo_before_the_post_leaves_the_talk_page_untouched(reviewed, site):
    s, opted = reviewed["settings"], reviewed["opted"]
    _, state, _ = run_cycle(s, [opted])
    row = first_open(state, opted)
    store = ReviewStore(state)
    store.decide(Decision(row["id"], "Reviewer One", "approve"))
    assert store.undo("Reviewer One", store.last_decision("Reviewer One")["id"]).taken
    before = text(site, f"Talk:{opted}")
    run_cycle(s, [opted])
    assert text(site, f"Talk:{opted}") == before and state.suggestion(row["id"])["status"] == "proposed"


def test_undo_after_the_post_withdraws_it_once_naming_who(reviewed, site):
    import pywikibot

    s, opted = reviewed["settings"], reviewed["opted"]
    _, state, _ = run_cycle(s, [opted])
    row = first_open(state, opted)
    store = ReviewStore(state)
    store.decide(Decision(row["id"], "Reviewer One", "approve"))
    run_cycle(s, [opted])
    assert state.suggestion(row["id"])["status"] == "posted"
    assert store.undo("Reviewer One", store.last_decision("Reviewer One")["id"]).status == "withdrawing"
    run_cycle(s, [opted])
    talk = text(site, f"Talk:{opted}")
    assert talk.count(f"{MARK}{row['id']} -->") == 1 and f"|id={row['id']}|status=withdrawn" in talk
    assert state.suggestion(row["id"])["status"] == "withdrawn"
    page = pywikibot.Page(site, f"Talk:{opted}")
    assert "Reviewer One" in page.latest_revision.comment
    revid = page.latest_revision_id
    run_cycle(s, [opted])  # withdrawn once: a later cycle changes nothing
    assert pywikibot.Page(site, f"Talk:{opted}").latest_revision_id == revid


@pytest.mark.parametrize("when", ["WINELLBOT_PAUSE_BEFORE_POST", "WINELLBOT_PAUSE_AFTER_WRITE"])
def test_an_undo_racing_the_job_never_leaves_a_post_without_its_approval(reviewed, site, when, monkeypatch):
    s, opted = reviewed["settings"], reviewed["opted"]
    _, state, _ = run_cycle(s, [opted])
    row = first_open(state, opted)
    store = ReviewStore(state)
    store.decide(Decision(row["id"], "Reviewer One", "approve"))
    reached, go_on = held_at(monkeypatch, when)
    done = {}
    job = threading.Thread(target=lambda: done.setdefault("report", run_cycle(s, [opted])[0]))
    job.start()
    try:
        assert reached.wait(120), "the job never reached its pause"
        if when == "WINELLBOT_PAUSE_AFTER_WRITE":  # the job has saved the post and waits before its record
            assert MARK in text(site, f"Talk:{opted}")
        # else the job is in its pause before the write (an undo earlier still leaves nothing posted too)
        assert store.undo("Reviewer One", store.last_decision("Reviewer One")["id"]).taken
    finally:
        go_on.set()
        job.join(120)
    assert "report" in done, "the racing job's cycle ended"
    monkeypatch.delenv(when)
    run_cycle(s, [opted])
    talk = text(site, f"Talk:{opted}")
    status = state.suggestion(row["id"])["status"]
    if when == "WINELLBOT_PAUSE_BEFORE_POST":  # the write read the approval again: nothing posted
        assert MARK not in talk and status == "proposed"
    else:  # written before the undo counted: recorded, then withdrawn once
        assert talk.count(f"{MARK}{row['id']} -->") == 1 and f"|id={row['id']}|status=withdrawn" in talk
        assert status == "withdrawn" and state.posted(page=opted)


def test_an_undo_then_a_crash_between_the_write_and_its_record_withdraws_the_post_once(reviewed, site, tmp_path):
    """The job saved the post, the reviewer undid the approval, the job was killed before its record: the
    next start records the post it finds on the wiki (state/intents.py), then withdraws it, once."""
    import signal
    import subprocess
    import sys

    from wikiscene import for_a_job_to_kill, wait_out_a_killed_job

    from winellbot.config import dump_settings

    s, opted = reviewed["settings"], reviewed["opted"]
    _, state, _ = run_cycle(s, [opted])
    row = first_open(state, opted)
    store = ReviewStore(state)
    store.decide(Decision(row["id"], "Reviewer One", "approve"))
    config = tmp_path / "winellbot.toml"
    config.write_text(dump_settings(s), encoding="utf-8")
    env = for_a_job_to_kill(dict(os.environ, WINELLBOT_PAUSE_AFTER_WRITE="60", PYTHONUNBUFFERED="1"))
    proc = subprocess.Popen([sys.executable, "-m", "winellbot.cli", "once", "--config", str(config), f"-page:{opted}"],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    deadline = time.time() + 120
    while time.time() < deadline and proc.poll() is None and MARK not in text(site, f"Talk:{opted}"):
        time.sleep(0.3)
    assert proc.poll() is None, proc.stdout.read().decode()
    assert store.undo("Reviewer One", store.last_decision("Reviewer One")["id"]).taken  # back in the queue ...
    proc.send_signal(signal.SIGKILL)  # ... while the job that saved the post dies before its record
    proc.wait()
    wait_out_a_killed_job(s)
    run_cycle(s, [opted])
    talk = text(site, f"Talk:{opted}")
    assert talk.count(f"{MARK}{row['id']} -->") == 1 and f"|id={row['id']}|status=withdrawn" in talk
    after = configured_state(s)
    assert after.suggestion(row["id"])["status"] == "withdrawn" and after.posted(page=opted)
    run_cycle(s, [opted])
    assert text(site, f"Talk:{opted}") == talk  # withdrawn once
