"""The widener gives a kept passage the rest of its suggestion's word budget from its source."""
import pytest

from winellbot.article import parse_article
from winellbot.gates.textnorm import words as gate_words
from winellbot.models import Document, Update
from winellbot.pipeline.pagetext import safe_text
from winellbot.pipeline.restore import recase
from winellbot.pipeline.offline.widen import Widener
from winellbot.text import words

ARTICLE = parse_article("Harbour Bridge", (
    "The Harbour Bridge is a road bridge in Port Town.\n\n"
    "== History ==\nConstruction of the Harbour Bridge began in 2020 under mayor Alice Brown."))

FILLER = "The council met on Monday to discuss the budget for roads and schools in the town hall."  # 18 words


def _update(doc: Document, quote: str, text: str | None = None) -> Update:
    return Update(text=text or quote, section_path=("History",), quote=quote, document=doc, reason="chosen")


def _widened(widener: Widener, update: Update) -> Update:
    return widener.refine(ARTICLE, [update])[0]


def test_a_prose_passage_gets_the_next_sentences_then_the_previous_ones_within_the_budget():
    passage = "The Harbour Bridge carried 12,000 vehicles in its first week."
    after = "Tolls paid for the bridge will end in 2031, the transport office said."
    doc = Document("n1", "https://news.example/a", "Bridge", " ".join(
        [FILLER] * 3 + [passage, after] + [FILLER] * 5))
    widened = _widened(Widener(budget=60), _update(doc, passage))
    assert widened.text.startswith(FILLER) and passage in widened.text and after in widened.text
    assert len(words(widened.text)) <= 60
    assert widened.quote in doc.text  # the quote still is the source's words, for the gates
    assert "widened to" in widened.reason and widened.section_path == ("History",)


def test_growth_stops_at_a_heading_a_first_person_sentence_and_page_furniture():
    passage = "The Harbour Bridge carried 12,000 vehicles in its first week."
    doc = Document("n1", "https://news.example/a", "Bridge", (
        "Latest news\n"                                   # too short to be prose: a heading
        f"{passage} Tolls will end in 2031, the office said. We asked readers what they think of it.\n"))
    widened = _widened(Widener(budget=100), _update(doc, passage))
    assert widened.text == f"{passage} Tolls will end in 2031, the office said."
    cookies = Document("n2", "https://news.example/b", "Bridge",
                       f"{passage} Accept cookies to continue reading this article on the site.\n")
    assert _widened(Widener(), _update(cookies, passage)).text == passage


@pytest.mark.parametrize("after", [
    "Don't miss the breathtaking, world-class views from the stunning bridge deck this summer.",  # stopped
    "Today the bridge is the town's busiest road and its best known sight.",                       # flagged
])
def test_a_side_that_brings_words_the_style_gate_stops_or_flags_is_left_out(after):
    passage = "The Harbour Bridge carried 12,000 vehicles in its first week."
    before = "Tolls paid for the bridge will end in 2031, the office said."
    doc = Document("n1", "https://news.example/a", "Bridge", f"{before} {passage} {after}\n")
    assert _widened(Widener(), _update(doc, passage)).text == f"{before} {passage}"


def test_a_text_that_lost_its_case_gets_words_on_both_sides_counted_as_the_copying_gate_counts():
    before = " ".join(f"alpha{i}" for i in range(30))
    after = " ".join(f"omega{i}" for i in range(30))
    quote = "the harbour bridge carried 12000 vehicles in its first week said mayor alice brown on friday"
    doc = Document("r1", "https://ref.example/a", "bridge", f"{before} {quote} 135 million {after}")
    update = _update(doc, quote, recase(quote.split(), {"harbour": "Harbour", "alice": "Alice"}))
    widened = _widened(Widener(budget=40), update)
    assert "Alpha29" in widened.text or "alpha29" in widened.text
    assert "135 million" in widened.text  # the copying gate counts it three words ("135 million (135000000)")
    assert len(gate_words(widened.text)) <= 40 < len(gate_words(widened.text)) + 3
    assert widened.quote in doc.text


def test_a_passage_not_found_in_its_source_again_is_left_as_it_is():
    doc = Document("n1", "https://news.example/a", "Bridge", FILLER * 4)
    update = _update(doc, "The Harbour Bridge carried 12,000 vehicles in its first week.")
    assert _widened(Widener(), update) == update


def test_restoring_case_leaves_were_alone():
    assert recase("they were defeated in 1979".split(), {}) == "They were defeated in 1979."


def test_two_passages_of_one_page_are_not_widened_into_each_other():
    first = "The Harbour Bridge carried 12,000 vehicles in its first week."
    second = "Tolls paid for the bridge will end in 2031, the transport office said."
    between = "Traffic on the old ferry fell by half in the same week, the operator said."
    doc = Document("n1", "https://news.example/a", "Bridge", " ".join(
        [FILLER] * 2 + [first, between, second] + [FILLER] * 2))
    a, b = Widener(budget=60).refine(ARTICLE, [_update(doc, first), _update(doc, second)])
    assert first in a.text and second in b.text
    assert between in a.text and between not in b.text  # the better-ranked one takes the text between
    assert second not in a.text and first not in b.text
    alone = _widened(Widener(budget=60), _update(doc, second))
    assert between in alone.text  # on its own it would have shown it


def test_a_passage_whose_cleaned_text_has_more_words_than_its_source_still_widens():
    passage = "The Harbour Bridge carried 12,000 vehicles|lorries in its first week."  # safe_text splits at "|"
    doc = Document("n1", "https://news.example/a", "Bridge", f"{FILLER} {passage}\nLatest news\n{FILLER} {FILLER}\n")
    widened = _widened(Widener(), _update(doc, passage, safe_text(passage)))
    assert widened.text == safe_text(f"{FILLER} {passage}")
