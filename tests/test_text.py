"""Tokeniser, sentence splitter and suggestion cleaning (winellbot.text)."""
import pytest

from winellbot.text import clean_suggestion_text, content_tokens, longest_unpunctuated_run, split_sentences, words


def test_content_tokens_follow_the_bench_definition():
    toks = content_tokens("The café's 1,200 fans in Malmö didn't see it on 2.5 big TVs")
    assert toks == ["cafe", "1200", "fans", "malmo", "see", "2.5", "big", "tvs"]


def test_content_tokens_drop_short_words_and_stop_words():
    assert content_tokens("It is an ox of the yet") == ["yet"]
    assert content_tokens("") == []


@pytest.mark.parametrize("text, expected", [
    ("Mr. Smith met Dr. Jones. They talked.", ["Mr. Smith met Dr. Jones.", "They talked."]),
    ("He moved to the U.S. in 1999. It rained.", ["He moved to the U.S. in 1999.", "It rained."]),
    ("J. R. R. Tolkien wrote it. Then he left!", ["J. R. R. Tolkien wrote it.", "Then he left!"]),
    ("It cost 2.5 million. Fine?", ["It cost 2.5 million.", "Fine?"]),
    ('She said "Go. Now." and left. Next.', ['She said "Go. Now." and left.', "Next."]),
    ("It happened (see No. 5. and so on) yesterday. Then more.",
     ["It happened (see No. 5. and so on) yesterday.", "Then more."]),
    ("It opened on Jan. 5 at 3 p.m. Everyone came.", ["It opened on Jan. 5 at 3 p.m. Everyone came."]),
])
def test_split_sentences(text, expected):
    assert split_sentences(text) == expected


def test_clean_suggestion_text_removes_markup_and_keeps_100_words():
    text = ("'''Bold''' [[Target|shown]] and [[plain]] {{tmpl|a={{inner}}}}fact."
            "<ref>{{cite news |url=http://x}}</ref><ref name=\"a\"/> end")
    assert clean_suggestion_text(text) == "Bold shown and plain fact. end"
    long = " ".join(f"w{i}" for i in range(150))
    assert words(clean_suggestion_text(long)) == [f"w{i}" for i in range(100)]


@pytest.mark.parametrize("text, expected", [
    ("", 0),
    ("The bridge opened in 2024.", 5),
    ("Built in 1932, opened in 1934 (after delays) and widened later", 4),
    ("one two - three four \u2014 five", 3),
    ("menu home news sport weather contact about us", 8),
])
def test_longest_unpunctuated_run(text, expected):
    assert longest_unpunctuated_run(text) == expected
