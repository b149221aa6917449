"""Reviewers' revisions and undos in the state (winellbot/state/revisions.py, ReviewStore.undo), on either
engine: a revision is an approval with its wording kept beside the bot's line; an undo takes back only
the reviewer's latest decision, once, and only while the suggestion is where that decision put it."""
from __future__ import annotations

import pytest
from review_scene import queue_suggestions

from winellbot.state.db import State
from winellbot.state.reviews import Decision, DecisionError, ReviewStore
from winellbot.state.revisions import RevisionStore


@pytest.fixture
def queued(tmp_path):
    state = State(tmp_path / "state.sqlite")
    made = queue_suggestions(state, ["Quillhaven", "Marrowby"], per_page=4)
    return state, ReviewStore(state), made


def test_a_revision_is_an_approval_that_keeps_both_wordings(queued):
    state, store, made = queued
    s = made[0]
    done = store.decide(Decision(s.id, "R1", "revise", section=("History",), text="The ferry terminal opened in 2026.",
                                 note="shorter", started_from="passage"))
    assert done.taken and state.suggestion(s.id)["status"] == "approved"
    assert store.approvals([s.id]) == {s.id: "R1"}
    [rev] = RevisionStore(state).of(s.id)
    assert rev["bot_text"] == s.update.text and rev["text"] == "The ferry terminal opened in 2026."
    assert rev["section_to"] == "History" and rev["note"] == "shorter" and rev["started_from"] == "passage"
    assert rev["status"] == "approved" and RevisionStore(state).live([s.id])[s.id]["id"] == rev["id"]
    assert state.suggestion(s.id)["update_text"] == s.update.text  # the bot's line stays in the state
    assert store.decisions(s.id)[0]["note"] == "shorter"


@pytest.mark.parametrize("bad", [dict(verdict="revise"), dict(verdict="revise", text="  "),
                                 dict(verdict="approve", text="x"), dict(verdict="revise", text="x" * 2001),
                                 dict(verdict="reject", note="n" * 501), dict(verdict="revise", text="x",
                                                                               started_from="web")])
def test_a_malformed_revision_is_refused_before_anything_is_written(queued, bad):
    state, store, made = queued
    with pytest.raises(DecisionError):
        store.decide(Decision(made[0].id, "R1", **bad))
    assert not store.decisions() and not RevisionStore(state).of(made[0].id)


def test_undo_before_the_post_returns_it_to_the_queue_in_its_section(queued):
    state, store, made = queued
    s = made[1]
    store.decide(Decision(s.id, "R1", "revise", section=("Economy",), text="A reworded line."))
    last = store.last_decision("R1")
    done = store.undo("R1", last["id"])
    row = state.suggestion(s.id)
    assert done.taken
    assert row["status"] == "proposed" and row["section"] == " > ".join(s.section_path)
    assert store.approvals([s.id]) == {}
    assert RevisionStore(state).of(s.id)[0]["status"] == "undone" and not RevisionStore(state).live([s.id])
    again = store.undo("R1", last["id"])  # a double undo takes nothing else back
    assert not again.taken and state.suggestion(s.id)["status"] == "proposed"


def test_undo_takes_back_only_the_latest_decision_of_that_reviewer(queued):
    state, store, made = queued
    a, b, c = (s.id for s in made[:3])
    store.decide(Decision(a, "R1", "reject", ("unclear", "other"), note="says nothing new"))
    store.decide(Decision(b, "R1", "adopted"))
    store.decide(Decision(c, "R2", "approve"))
    first = store.decisions(a)[0]
    assert not store.undo("R1", first["id"]).taken  # not R1's latest: refused
    assert not store.undo("R2", store.last_decision("R1")["id"]).taken  # not R2's decision
    assert store.undo("R1", store.last_decision("R1")["id"]).taken
    assert state.suggestion(b)["status"] == "proposed" and state.suggestion(a)["status"] == "rejected"
    assert store.undo("R1", store.last_decision("R1")["id"]).taken  # then the one before, asked for by its id
    assert state.suggestion(a)["status"] == "proposed" and state.suggestion(c)["status"] == "approved"


def test_undo_after_the_post_asks_the_writer_to_withdraw_it(queued):
    state, store, made = queued
    s = made[2]
    store.decide(Decision(s.id, "R1", "approve"))
    state.record_post([s.id], "Talk:Quillhaven", 12, "Updates", {s.id: "http://w/index.php?oldid=12"})
    done = store.undo("R1", store.last_decision("R1")["id"])
    assert done.taken and done.status == "withdrawing"
    row = state.suggestion(s.id)
    assert row["status"] == "withdrawing" and "R1" in row["status_reason"]
    assert store.approvals([s.id]) == {}


def test_an_undo_racing_the_post_leaves_the_approval_or_the_withdrawal_never_neither(queued):
    state, store, made = queued
    s = made[3]
    store.decide(Decision(s.id, "R1", "approve"))
    last = store.last_decision("R1")
    # the job read the approval, then the reviewer undid it, then the job recorded its post
    store.undo("R1", last["id"])
    state.record_post([s.id], "Talk:Marrowby", 13, "Updates", {})
    assert store.settle_posted([s.id]) == [s.id]
    assert state.suggestion(s.id)["status"] == "withdrawing"


def test_skipped_items_are_listed_and_brought_back(queued):
    state, store, made = queued
    store.decide(Decision(made[0].id, "R1", "skip"))
    [row] = store.skipped("R1")
    assert row["id"] == made[0].id and made[0].id not in {r["id"] for r in store.queue(reviewer="R1", depth=9)}
    assert not store.unskip("R2", row["review_id"])
    assert store.unskip("R1", row["review_id"]) and not store.skipped("R1")
    assert made[0].id in {r["id"] for r in store.queue(reviewer="R1", depth=9)}
