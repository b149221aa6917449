"""The copying gate: copied prose is blocked, an explicit quote is flagged for paraphrase."""
from __future__ import annotations

import pytest

from winellbot.gates.copying import CopyingGate, longest_run, overlap
from winellbot.models import Article, Citation, Document, Edit, Suggestion, Update

ARTICLE = Article("Harbour Museum", "", ())

SOURCE = ("The Harbour Museum will close its east wing for eighteen months while engineers replace the "
          "roof, which was damaged by a storm in January, the museum's director told reporters on Friday. "
          "Exhibits from the wing will travel to partner museums in three other cities during the work, "
          "and the reopening is planned for the museum's centenary celebrations in the autumn of next year.")
STRIPPED = ("the harbour museum will close its east wing for eighteen months while engineers replace the roof "
            "which was damaged by a storm in january the museums director told reporters on friday exhibits "
            "from the wing will travel to partner museums in three other cities during the work")

COPIED_PARAGRAPH = ("The Harbour Museum will close its east wing for eighteen months while engineers replace the "
                    "roof, which was damaged by a storm in January. Exhibits from the wing will travel to "
                    "partner museums in three other cities during the work.")
ONE_SENTENCE = ("The Harbour Museum will close its east wing for eighteen months while engineers replace "
                "the roof, which was damaged by a storm in January.")
PARAPHRASE = "A January storm damaged the museum's roof, and its east wing is to shut for a year and a half."
ATTRIBUTED_QUOTE = ('The director said the roof "was damaged by a storm in January, the museum\'s director told '
                    'reporters" and would be repaired.')


def make(added: str, *, quoted: bool = False, text: str = SOURCE) -> Suggestion:
    doc = Document("d1", "https://news.example.org/museum", "Museum wing to close", text)
    return Suggestion(
        article_title=ARTICLE.title, revid=1, section_path=("History",), paragraph_index=0,
        edit=Edit("Old.", "Old. " + added, added, Citation(doc.url, doc.title), quoted=quoted),
        update=Update(added, ("History",), "", doc),
    )


def severities(s: Suggestion) -> list[str]:
    return [f.severity for f in CopyingGate().check(ARTICLE, s)]


@pytest.mark.parametrize("text", [SOURCE, STRIPPED], ids=["cased", "stripped"])
@pytest.mark.parametrize("added", [COPIED_PARAGRAPH, ONE_SENTENCE])
def test_copied_prose_is_blocked(added, text):
    assert severities(make(added, text=text)) == ["block"]


@pytest.mark.parametrize("text", [SOURCE, STRIPPED], ids=["cased", "stripped"])
def test_marked_quote_is_flagged_for_paraphrase(text):
    findings = CopyingGate().check(ARTICLE, make(ONE_SENTENCE, quoted=True, text=text))
    assert [f.severity for f in findings] == ["flag"]
    assert "paraphrase" in findings[0].message


def test_marked_quote_too_long_to_quote_is_blocked():
    gate = CopyingGate(max_quote_words=30)
    findings = gate.check(ARTICLE, make(COPIED_PARAGRAPH, quoted=True))
    assert [f.severity for f in findings] == ["block"]


@pytest.mark.parametrize("added", [
    PARAPHRASE,
    "The museum plans to reopen the wing for its centenary.",
    "Exhibits will be lent to museums in three cities.",
])
def test_own_words_pass(added):
    assert severities(make(added)) == []


def test_close_paraphrase_is_flagged():
    added = "Engineers will replace the roof, which was damaged by a storm, over eighteen months."
    assert severities(make(added)) == ["flag"]


def test_attributed_quotation_marks_are_not_copying():
    assert "block" not in severities(make(ATTRIBUTED_QUOTE))


def test_measures():
    m = overlap(ONE_SENTENCE, SOURCE)
    assert m.longest_run == m.words == 24 and m.containment == 1.0
    assert longest_run(["a", "b", "c", "x"], ("z", "a", "b", "c", "a", "b"), {"a": [1, 4], "b": [2, 5], "c": [3]}) == 3
    assert overlap("nothing in common here at all today", SOURCE).containment == 0.0
