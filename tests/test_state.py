"""SQLite state: migrations, the suggestion lifecycle, transactions."""

import pytest

from winellbot.errors import StateError
from winellbot.models import (Citation, Decision, Document, Edit, GateFinding, NavigationStep, PipelineResult,
                              SearchResult, Suggestion, Update)
from winellbot.state.db import MIGRATIONS, State


def suggestion(text="The bridge opened in 2026.", findings=()):
    d = Document("d1", "https://news.example/bridge", "Bridge opens", "The bridge opened in 2026.")
    u = Update(text, ("History",), text, d, score=1.0)
    e = Edit("Old paragraph.", "Old paragraph. " + text, text, Citation(d.url, d.title))
    return Suggestion("Town", 7, ("History",), 0, e, u, findings)


def test_migrations_apply_once_and_are_recorded(tmp_path):
    path = tmp_path / "state.sqlite"
    first = State(path)
    assert first.version == MIGRATIONS[-1][0]
    assert first.migrate() == []  # nothing left to apply
    again = State(path)
    assert again.version == first.version
    assert {"pages", "runs", "sources", "updates", "suggestions", "posts"} <= set(again.db.table_names())


def test_a_corrupt_file_gives_a_clear_state_error(tmp_path):
    path = tmp_path / "state.sqlite"
    path.write_bytes(b"this is not a database" * 100)
    with pytest.raises(StateError, match="cannot open state database"):
        State(path)


def test_record_result_stores_decisions_steps_and_suggestions():
    state = State()
    run = state.start_run("offline")
    s = suggestion()
    result = PipelineResult(
        suggestions=(s,),
        decisions=(Decision("add", s.update, "new fact"), Decision("ignore", s.update, "duplicate")),
        steps=(NavigationStep("town bridge", SearchResult(s.update.document.url, "t"), "best match"),),
        errors=("fetch failed: x",),
    )
    state.record_result(run, "Town", result)
    assert [r["action"] for r in state.db["decisions"].rows] == ["add", "ignore"]
    assert next(state.db["steps"].rows)["chosen_url"] == s.update.document.url
    row = state.suggestion(s.id)
    assert row["status"] == "proposed" and row["section"] == "History"
    assert state.db["errors"].count == 1


def test_blocked_suggestion_is_held_with_its_findings():
    state = State()
    run = state.start_run("offline")
    s = suggestion(findings=(GateFinding("support", "block", "number 2026 not in source"),))
    state.record_result(run, "Town", PipelineResult((s,)))
    assert state.suggestion(s.id)["status"] == "held"
    assert next(state.db["gate_results"].rows)["message"] == "number 2026 not in source"


def test_a_suggestion_proposed_again_keeps_its_lifecycle():
    state = State()
    s = suggestion()
    state.record_result(state.start_run("offline"), "Town", PipelineResult((s,)))
    state.set_status(s.id, "rejected", "not notable")
    state.record_result(state.start_run("offline"), "Town", PipelineResult((s,)))
    assert state.suggestion(s.id)["status"] == "rejected"
    assert state.db["suggestions"].count == 1


def test_record_post_marks_posted_and_unknown_status_is_refused():
    state = State()
    s = suggestion()
    state.record_result(state.start_run("offline"), "Town", PipelineResult((s,)))
    state.record_post([s.id], "Talk:Town", 42, "Suggested updates")
    assert state.suggestion(s.id)["status"] == "posted"
    assert state.posts("Talk:Town")[0]["revid"] == 42
    with pytest.raises(StateError):
        state.set_status(s.id, "maybe")


def test_a_failing_write_leaves_nothing_half_done(monkeypatch):
    state = State()
    s = suggestion()
    bad = PipelineResult((s, "not a suggestion"))  # the second item breaks mid-transaction
    with pytest.raises(Exception):
        state.record_result(state.start_run("offline"), "Town", bad)
    assert state.db["suggestions"].count == 0


def test_due_pages_respects_next_due():
    state = State()
    state.touch_page("A", next_due="2999-01-01T00:00:00+00:00")
    state.touch_page("B", next_due="2000-01-01T00:00:00+00:00")
    assert state.due_pages(["A", "B", "C"]) == ["B", "C"]


def test_a_clock_that_ran_fast_leaves_no_cap_open_and_parks_no_page():
    """Issues 30 and 45: a run with the clock 400 days ahead left posts and due dates in the future;
    such a post counts as posted now (issue 30 left it out of the caps, and two more posts went up)."""
    import datetime as dt

    state = State()
    s = suggestion()
    state.record_result(state.start_run("offline"), "Town", PipelineResult((s,)))
    ahead = (dt.datetime.now(dt.timezone.utc) + dt.timedelta(days=400)).replace(microsecond=0).isoformat()
    state.record_post([s.id], "Talk:Town", 42, "Suggested updates")
    state.db["posts"].update(1, {"posted_at": ahead})
    week_ago = (dt.datetime.now(dt.timezone.utc) - dt.timedelta(days=7)).isoformat()
    assert state.count_posts(week_ago, page="Town") == 1  # the future-dated post counts
    assert state.count_posts(week_ago, page="Elsewhere") == 0
    state.touch_page("Town", next_due=ahead)
    assert state.due_pages(["Town"]) == []  # without the horizon, the page waits for its due date
    assert state.due_pages(["Town"], horizon_days=7) == ["Town"]


def test_pending_suggestions_are_rebuilt_from_state_with_the_same_id(tmp_path):
    path = tmp_path / "s.sqlite"
    s = suggestion(findings=(GateFinding("style", "flag", "relative time: 'recently'"),))
    s = Suggestion(s.article_title, s.revid, s.section_path, s.paragraph_index, s.edit, s.update, s.findings)
    State(path).record_result(1, "Town", PipelineResult((s,)))
    [again] = State(path).pending("Town")  # a new process, as after a crash
    assert again.id == s.id
    assert again.edit == s.edit
    assert again.findings == s.findings
    assert again.update.quote == s.update.quote and again.section_path == ("History",)


def test_a_rebuilt_suggestion_keeps_the_reason_it_was_made_with(tmp_path):
    # The loop records the update placed by words; the pipeline's last looks place it again by
    # meaning. What the reviewer reads ("Why this section") must be the final reason.
    import dataclasses

    path = tmp_path / "s.sqlite"
    s = suggestion()
    loop_update = dataclasses.replace(s.update, section_path=("Transport",),
                                      reason="words best match section Transport")
    final = dataclasses.replace(s, update=dataclasses.replace(s.update, reason="words best match section History"))
    State(path).record_result(1, "Town", PipelineResult((final,), decisions=(Decision("add", loop_update, "new"),)))
    [again] = State(path).pending("Town")
    assert again.update.reason == "words best match section History"
    assert again.section_path == ("History",)


def test_a_suggestion_stored_before_its_reason_was_takes_the_loops_record(tmp_path):
    path = tmp_path / "s.sqlite"
    s = suggestion()
    recorded = State(path)
    recorded.record_result(1, "Town", PipelineResult((s,), decisions=(Decision("add", s.update, "new"),)))
    recorded.db["updates"].update(s.update.key, {"reason": "placed by words"})
    recorded.db["suggestions"].update(s.id, {"update_reason": None})  # as a row of an older version
    [again] = State(path).pending("Town")
    assert again.update.reason == "placed by words"


@pytest.mark.slow
def test_read_only_opens_beside_a_writer_in_rollback_journal_mode_never_see_a_torn_file(tmp_path):
    """Issue 30: a read-only open of a delete-journal database (the mode on NFS) was made immutable,
    so it ignored the writer's locks and now and then read a half-written file."""
    import subprocess
    import sys
    import time

    path, stop = tmp_path / "s.sqlite", tmp_path / "stop"
    State(path, journal_mode="delete").db["t"].insert({"id": 0, "x": "y" * 2000}, pk="id")
    # The writer writes until the reader has read for 6 s and at least 60 times (at most 120 s): on a busy
    # machine (the suite runs in two processes) 6 s alone can leave too few reads to find anything.
    writer = subprocess.Popen([sys.executable, "-c", f"""
import os, sqlite3, time
db = sqlite3.connect({str(path)!r}, timeout=30)
i = 1
end = time.time() + 120
while time.time() < end and not os.path.exists({str(stop)!r}):
    with db:
        db.executemany("insert into t (id, x) values (?, ?)", [(i * 1000 + k, "y" * 2000) for k in range(300)])
        db.execute("delete from t where id < ?", (i * 1000 - 2000,))
    i += 1
"""])
    problems, reads, began = [], 0, time.monotonic()
    try:
        while writer.poll() is None:
            if problems or (time.monotonic() - began > 6 and reads > 60):
                stop.touch()
            try:
                state = State(path, readonly=True)
                rows = state.db.execute("select count(*), sum(length(x)) from t").fetchone()
                assert rows[1] == rows[0] * 2000
                reads += 1
                state.db.conn.close()
            except Exception as exc:  # noqa: BLE001 - every failure is the finding
                problems.append(repr(exc))
            time.sleep(0.001)
    finally:
        stop.touch()
        writer.wait()
    assert reads > 50 and problems == [], (reads, problems[:3])


def test_a_damaged_file_read_only_is_one_line_naming_it(tmp_path):
    bad = tmp_path / "bad.sqlite"
    bad.write_bytes(b"SQLite format 3\x00" + b"garbage" * 3000)
    with pytest.raises(StateError, match=f"{bad}.*move it aside"):
        State(bad, readonly=True)


@pytest.mark.slow
def test_a_transaction_that_reads_then_writes_waits_for_another_process_writing_between(tmp_path):
    """A real job died beside dry runs: its transaction read, a dry run then kept its cost, and the
    job's first write failed at once with "database is locked" (SQLite's busy snapshot), not waiting."""
    import subprocess
    import sys

    path = tmp_path / "state.sqlite"
    job = State(path)
    other = f"""
from winellbot.state.db import State
State({str(path)!r}).start_run("dry-run")
"""
    with job.db.atomic():
        before = job.db.execute("select count(*) from runs").fetchone()[0]
        # the other process writes while this transaction is open: it waits for the transaction to end
        writer = subprocess.Popen([sys.executable, "-c", other], stderr=subprocess.PIPE, text=True)
        with pytest.raises(subprocess.TimeoutExpired):
            writer.wait(timeout=3)
        job.db["runs"].insert({"started": "x", "status": "running", "backend": "offline"})
    assert writer.wait(timeout=60) == 0, writer.stderr.read()
    assert job.db.execute("select count(*) from runs").fetchone()[0] == before + 2
