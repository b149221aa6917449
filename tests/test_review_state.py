"""The review queue and decisions in the state (winellbot/state/reviews.py), on either engine: the
verdicts' moves, one decision counting once, the queue's order, depth and filters, re-estimating
after a refit, and what the decisions teach (fit acceptability --from-state, the outcomes report)."""
from __future__ import annotations

import json
import threading

import pytest
from review_scene import queue_suggestions

from winellbot.outcomes.learning import decision_examples
from winellbot.outcomes.report import OutcomeReport, as_text
from winellbot.state.db import State
from winellbot.state.reviews import Decision, DecisionError, QueueFilter, ReviewStore


@pytest.fixture
def queued(tmp_path):
    state = State(tmp_path / "state.sqlite")
    made = queue_suggestions(state, ["Quillhaven", "Marrowby", "Tarnwick"], per_page=5)
    return state, ReviewStore(state), made


def test_each_verdict_moves_the_suggestion_once(queued):
    state, store, made = queued
    a, b, c, d = (s.id for s in made[:4])
    assert store.decide(Decision(a, "R1", "approve")).status == "approved"
    assert store.decide(Decision(b, "R1", "reject", ("not_new", "unclear"))).status == "rejected"
    assert store.decide(Decision(c, "R1", "adopted")).status == "accepted"
    late = store.decide(Decision(b, "R2", "approve"))
    assert not late.taken and "reject by R1" in late.why
    assert not store.decide(Decision(a, "R2", "reject")).taken  # an approval is the one decision, posted as such
    assert store.decide(Decision(d, "R1", "skip")).status == "proposed"
    assert state.suggestion(d)["status"] == "proposed"
    assert [r["verdict"] for r in store.decisions()] == ["approve", "reject", "adopted", "skip"]
    assert store.approvals([a, b, c]) == {a: "R1"}


@pytest.mark.parametrize("bad", [Decision("x", "R", "maybe"), Decision("x", "R", "reject", ("rude",)),
                                 Decision("x", " ", "approve"), Decision("x", "R", "reject", section=("H",))])
def test_a_malformed_decision_is_refused_before_anything_is_written(queued, bad):
    state, store, made = queued
    with pytest.raises(DecisionError):
        store.decide(Decision(made[0].id, bad.reviewer, bad.verdict, bad.reasons, bad.section))
    assert not store.decisions()


def test_many_reviewers_at_once_one_decision_counts(queued, tmp_path):
    state, store, made = queued
    sid, taken = made[0].id, []

    def decide(i: int) -> None:
        mine = ReviewStore(State(tmp_path / "state.sqlite"))
        taken.append(mine.decide(Decision(sid, f"R{i}", "approve" if i % 2 else "reject")).taken)

    threads = [threading.Thread(target=decide, args=(i,)) for i in range(8)]
    [t.start() for t in threads]
    [t.join() for t in threads]
    assert taken.count(True) == 1 and len([r for r in store.decisions(sid)]) == 1


def test_the_queue_best_first_depth_per_article_and_filters(queued):
    state, store, made = queued
    rows = store.queue(depth=2, limit=100)
    assert len(rows) == 6 and [r["estimate"] for r in rows] == sorted((r["estimate"] for r in rows), reverse=True)
    per_page = {}
    for r in rows:
        per_page.setdefault(r["page"], []).append(r["estimate"])
    for page, estimates in per_page.items():  # each article's two best
        best = sorted((s["estimate"] for s in state.suggestions(page=page)), reverse=True)[:2]
        assert sorted(estimates, reverse=True) == best
    first = rows[0]["id"]
    store.decide(Decision(first, "R1", "approve"))
    assert first not in {r["id"] for r in store.queue(depth=2)}  # the next one of its article shows instead
    assert len(store.queue(depth=2, limit=100)) == 6
    assert [r["id"] for r in store.queue(QueueFilter(status="approved"))] == [first]
    assert {r["page"] for r in store.queue(QueueFilter(page="Tarnwick"), depth=5)} == {"Tarnwick"}
    assert store.count(QueueFilter(section="History"), depth=5) == sum(
        1 for s in made if s.section_path[0] == "History" and s.id != first)
    with pytest.raises(DecisionError):
        store.queue(QueueFilter(status="everything"))


def test_a_refit_reorders_the_queue(queued):
    state, store, _ = queued
    before = [r["id"] for r in store.queue(depth=5, limit=100)]
    changed = store.rescore(lambda f: 1 - f["passage"])
    after = [r["id"] for r in store.queue(depth=5, limit=100)]
    assert changed == len(before) and after != before
    by_id = {r["id"]: json.loads(r["features"]) for r in state.suggestions()}
    assert [by_id[i]["passage"] for i in after] == sorted(by_id[i]["passage"] for i in after)
    assert store.rescore(lambda f: f["no such measurement"]) == 0  # measured before the model's features


def test_decisions_teach_the_score_and_fill_the_outcomes_report(queued):
    state, store, made = queued
    store.decide(Decision(made[0].id, "R1", "approve"))
    store.decide(Decision(made[1].id, "R2", "reject", ("off_topic",)))
    store.decide(Decision(made[2].id, "R1", "adopted"))
    store.decide(Decision(made[3].id, "R1", "skip"))
    examples = decision_examples(store.labelled())
    assert sorted((e.suggestion_id, e.label) for e in examples) == sorted(
        [(made[0].id, 1), (made[1].id, 0), (made[2].id, 1)])
    assert all(e.features == {"words": 0.5, "passage": e.features["passage"]} for e in examples)
    table = OutcomeReport().build([], decisions=store.decisions())
    assert table.reviews["decided"] == 3 and table.reviews["reject_reasons"] == {"off_topic": 1}
    assert table.reviews["useful_share"] == pytest.approx(2 / 3, abs=1e-3)
    assert "Review page: 3 decided by 2 reviewer(s)" in as_text(table)
