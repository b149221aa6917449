"""The supporting passage of a page for a sentence, and whether the support is real.

A passage is built as the bench's examples are: the 60 words of the page that cover most of
the sentence's content tokens, plus 100 more words around them split at random between the two
sides (so the passage carries the page's noise too). *Support* is the share of the sentence's
content tokens found in the passage (the bench tokeniser, :func:`winellbot.text.content_tokens`).

Lexical support can be wrong: a race report shares a practice-session sentence's names without
stating its claim, a results table shares its numbers. :func:`support_problem` refuses a passage
where no two content words of the sentence appear together in the same order (the words are
scattered over the page, not said there), or where most of the sentence's numbers are missing
(compared digit for digit, so "13.5" matches a page that lost its punctuation, "135").
"""
from __future__ import annotations

import random
import re
from collections import Counter
from dataclasses import dataclass

from winellbot.editor.shortedit import answer_of
from winellbot.text import content_tokens

CORE_WORDS = 60
EXTRA_WORDS = 100
MIN_SUPPORT = 0.7
MIN_RUN = 2


@dataclass(frozen=True)
class Passage:
    text: str
    support: float
    run: int  # the longest run of the sentence's content tokens found in order in the passage


def longest_run(sentence: list[str], page: list[str]) -> int:
    """The most consecutive tokens of ``sentence`` that also appear consecutively in ``page``."""
    positions: dict[str, list[int]] = {}
    for i, tok in enumerate(page):
        positions.setdefault(tok, []).append(i)
    best = 0
    for i, tok in enumerate(sentence):
        for j in positions.get(tok, ()):
            k = 1
            while i + k < len(sentence) and j + k < len(page) and sentence[i + k] == page[j + k]:
                k += 1
            best = max(best, k)
    return best


def support(sentence: str, text: str) -> float:
    """Share of the sentence's distinct content tokens found in ``text``.

    As in the bench, a page word with a trailing ``s`` also counts without it (pages that lost
    their punctuation write "murphys" for "Murphy's").
    """
    wanted = set(content_tokens(sentence))
    page = set(content_tokens(text))
    page |= {t[:-1] for t in page if t.endswith("s")}
    return len(wanted & page) / len(wanted) if wanted else 0.0


def passage(sentence: str, text: str, rng: random.Random) -> Passage | None:
    """The passage of ``text`` that supports ``sentence`` best; None when the page has no words."""
    wanted = set(content_tokens(sentence))
    page_words = text.split()
    if not wanted or not page_words:
        return None
    per_word = [[t for t in content_tokens(w) if t in wanted] for w in page_words]
    counts: Counter = Counter()
    best_start, best_cover = 0, -1
    for i, toks in enumerate(per_word):  # slide a CORE_WORDS window, counting distinct tokens
        counts.update(toks)
        if i >= CORE_WORDS:
            counts.subtract(per_word[i - CORE_WORDS])
        cover = sum(1 for c in counts.values() if c > 0)
        if cover > best_cover:
            best_cover, best_start = cover, max(0, i - CORE_WORDS + 1)
    before = rng.randint(0, EXTRA_WORDS)
    start = max(0, best_start - before)
    end = min(len(page_words), best_start + CORE_WORDS + (EXTRA_WORDS - before))
    window = " ".join(page_words[start:end])
    return Passage(window, support(sentence, window), longest_run(content_tokens(sentence), content_tokens(window)))


def _digits(tokens: list[str]) -> set[str]:
    return {re.sub(r"\D", "", t) for t in tokens if t[0].isdigit()}


def support_problem(sentence: str, found: Passage | None) -> str:
    """Why ``found`` does not support ``sentence`` ("" when it does)."""
    if found is None:
        return "no text"
    if found.support < MIN_SUPPORT:
        return "weak support"
    if found.run < MIN_RUN:
        return "the sentence's words are scattered over the page"
    numbers = _digits(content_tokens(sentence))
    missing = numbers - _digits(content_tokens(found.text))
    if numbers and len(missing) * 2 > len(numbers):
        return "most of its numbers are not on the page"
    return ""


def example_problem(example) -> str:
    """Why an example's source does not truly support its new sentence ("" when it does).

    For examples made elsewhere (the bench's): their source is already the passage.
    """
    edit = answer_of(example)
    if edit is None:
        return "not a whole-sentence insertion"
    text = example.source.text
    found = Passage(text, support(edit.sentence, text), longest_run(content_tokens(edit.sentence),
                                                                    content_tokens(text)))
    return support_problem(edit.sentence, found)
