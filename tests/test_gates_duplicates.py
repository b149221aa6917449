"""The duplicates gate: facts the article states, and suggestions proposed or rejected before."""
from __future__ import annotations

import pytest

from winellbot.gates.duplicates import DuplicatesGate
from winellbot.models import (Article, Citation, Document, Edit, Paragraph, PipelineResult, Section, Suggestion,
                              Update)
from winellbot.state.db import State

TEXT = "The Harbour Museum opened in 1921. Its east wing was added in 1958 to house the maritime collection."
ARTICLE = Article("Harbour Museum", TEXT, (Section("", 0, (), (Paragraph(TEXT, TEXT, 0, len(TEXT)),)),))


def make(added: str, url: str = "https://news.example.org/museum") -> Suggestion:
    doc = Document("d1", url, "Museum news", added)
    return Suggestion(
        article_title=ARTICLE.title, revid=1, section_path=(), paragraph_index=0,
        edit=Edit(TEXT, TEXT + " " + added, added, Citation(doc.url, doc.title)),
        update=Update(added, (), added, doc),
    )


NEW_FACT = "The museum will close its east wing for eighteen months from January 2025 to replace the roof."


@pytest.mark.parametrize("added", [
    "The east wing was added in 1958 to house the maritime collection.",
    "In 1958 the museum's east wing was added to house its maritime collections.",
    "The Harbour Museum opened in 1921.",
])
def test_fact_already_in_the_article_is_blocked(added):
    findings = DuplicatesGate().check(ARTICLE, make(added))
    assert [f.severity for f in findings] == ["block"]
    assert "already says" in findings[0].message


def test_new_fact_passes():
    assert DuplicatesGate().check(ARTICLE, make(NEW_FACT)) == []
    assert DuplicatesGate(state=State()).check(ARTICLE, make(NEW_FACT)) == []


def record(state: State, s: Suggestion, status: str, reason: str = "") -> None:
    run = state.start_run("offline")
    state.record_result(run, ARTICLE.title, PipelineResult(suggestions=(s,)))
    if status != "proposed":
        state.set_status(s.id, status, reason)


NEAR_DUPLICATE = "From January 2025 the museum will close the east wing for eighteen months to replace its roof."


@pytest.mark.parametrize("status, words", [
    ("rejected", "rejected before on"),
    ("accepted", "accepted before on"),
    ("posted", "already posted on"),
    ("proposed", "already proposed on"),
])
@pytest.mark.parametrize("again", [NEW_FACT, NEAR_DUPLICATE], ids=["same", "near"])
def test_earlier_suggestions_are_not_posted_again(status, words, again):
    state = State()
    record(state, make(NEW_FACT), status, reason="not notable")
    findings = DuplicatesGate(state=state).check(ARTICLE, make(again, url="https://other.example.com/x"))
    assert [f.severity for f in findings] == ["block"]
    assert words in findings[0].message
    if status == "rejected":
        assert "not notable" in findings[0].message


@pytest.mark.parametrize("status", ["held", "withdrawn"])
def test_held_or_withdrawn_do_not_count(status):
    state = State()
    record(state, make(NEW_FACT), status)
    assert DuplicatesGate(state=state).check(ARTICLE, make(NEW_FACT)) == []


def test_rejection_outranks_a_pending_copy():
    state = State()
    record(state, make(NEAR_DUPLICATE), "proposed")
    record(state, make(NEW_FACT), "rejected")
    findings = DuplicatesGate(state=state).check(ARTICLE, make(NEW_FACT, url="https://third.example.net/"))
    assert findings[0].message.startswith("rejected before on")


def test_different_fact_on_the_same_page_passes():
    state = State()
    record(state, make(NEW_FACT), "rejected")
    other = "A new director, Maria Okafor, was appointed by the museum's trustees in May 2024."
    assert DuplicatesGate(state=state).check(ARTICLE, make(other)) == []


def test_other_pages_are_not_compared():
    state = State()
    s = make(NEW_FACT)
    record(state, s, "rejected")
    elsewhere = Article("Another Museum", "", ())
    assert DuplicatesGate(state=state).check(elsewhere, make(NEW_FACT)) == []
