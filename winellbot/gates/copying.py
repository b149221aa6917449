"""Copying: text lifted from a source is not proposed as the article's own prose.

Two measures on folded words (case, accents and punctuation ignored, so a
lower-cased, punctuation-stripped source still counts as the same words):

* the longest run of words the added text shares with the source;
* n-gram containment: the share of the added text's word n-grams (5 by
  default) that occur in the source.

Wording inside quotation marks in the added text is an attributed quotation and
is left out of both measures. A suggestion whose ``Edit.quoted`` is set (the
offline, extractive editor) is a quotation as a whole: over the limits it is
flagged for the editor to paraphrase, unless it is too long to quote at all;
a run of ``RUN_LIMIT`` words or more is never shown as proposed article text
(:func:`copied_prose`: the talk page shows it as the source's words).
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from functools import lru_cache

from winellbot.gates.base import Gate
from winellbot.gates.textnorm import quoted_spans, strip_markup, words
from winellbot.models import Article, GateFinding, Suggestion


@dataclass(frozen=True)
class Overlap:
    longest_run: int
    containment: float
    words: int


@lru_cache(maxsize=32)
def _source_index(text: str, n: int) -> tuple[tuple[str, ...], dict[str, list[int]], frozenset]:
    tokens = tuple(words(text))
    positions: dict[str, list[int]] = defaultdict(list)
    for i, t in enumerate(tokens):
        positions[t].append(i)
    grams = frozenset(tokens[i:i + n] for i in range(len(tokens) - n + 1))
    return tokens, dict(positions), grams


def longest_run(claim: list[str], source: tuple[str, ...], positions: dict[str, list[int]]) -> int:
    """Length of the longest run of consecutive words shared by ``claim`` and ``source``."""
    best = 0
    for i, token in enumerate(claim):
        for j in positions.get(token, ()):
            if i and j and claim[i - 1] == source[j - 1]:
                continue  # inside a run already measured from its start
            k = 1
            while i + k < len(claim) and j + k < len(source) and claim[i + k] == source[j + k]:
                k += 1
            best = max(best, k)
    return best


def overlap(text: str, *sources: str, n: int = 5) -> Overlap:
    """Longest shared run and n-gram containment of ``text`` in any of ``sources``."""
    claim = words(text)
    own = {tuple(claim[i:i + n]) for i in range(len(claim) - n + 1)}
    run, shared = 0, set()
    for source in sources:
        if not source:
            continue
        tokens, positions, grams = _source_index(source, n)  # cached: one document serves many suggestions
        run = max(run, longest_run(claim, tokens, positions))
        shared |= own & grams
    return Overlap(run, len(shared) / len(own) if own else 0.0, len(claim))


def unquoted(text: str) -> tuple[str, int]:
    """``text`` without its quoted spans, and the number of words that were quoted."""
    spans = quoted_spans(text)
    quoted_words = sum(len(words(text[a:b])) for a, b in spans)
    for a, b in reversed(spans):
        text = text[:a] + " \u2026 " + text[b:]
    return text, quoted_words


RUN_LIMIT = 12  # words in a row from the source: over this, text is copied, never article prose
# A quotation for the reviewer (flagged "paraphrase it") may be as long as a suggestion may be (100
# added words); the talk page shows the same passage as the source's supporting quote anyway. The
# offline pipeline widens its passages to this many words (winellbot.pipeline.offline.widen).
MAX_QUOTE_WORDS = 100


def verbatim_run(suggestion: Suggestion, n: int = 5) -> int:
    """The longest run of the added text's words found word for word in its source or quote
    (an extractive suggestion is measured whole; otherwise its quoted spans are left out)."""
    claim = strip_markup(suggestion.edit.added_text)
    if not suggestion.edit.quoted:
        claim = unquoted(claim)[0]
    return overlap(claim, suggestion.update.document.text, suggestion.update.quote, n=n).longest_run


def copied_prose(suggestion: Suggestion) -> bool:
    """Whether the added text copies its source over the limit: then it is shown as the source's
    words, never proposed as article prose (the renderer asks this)."""
    return verbatim_run(suggestion) >= RUN_LIMIT


class CopyingGate(Gate):
    """Blocks copied prose; flags an explicit quotation for the editor to paraphrase."""

    name = "copying"

    def __init__(self, *, run_limit: int = RUN_LIMIT, containment_limit: float = 0.6, flag_run: int = 8,
                 flag_containment: float = 0.35, ngram: int = 5, max_quote_words: int = MAX_QUOTE_WORDS) -> None:
        # Copied text longer than max_quote_words is blocked.
        self.run_limit = run_limit
        self.containment_limit = containment_limit
        self.flag_run = flag_run
        self.flag_containment = flag_containment
        self.ngram = ngram
        self.max_quote_words = max_quote_words

    def check(self, article: Article, suggestion: Suggestion) -> list[GateFinding]:
        claim = strip_markup(suggestion.edit.added_text)
        sources = (suggestion.update.document.text, suggestion.update.quote)
        if not claim or not any(sources):
            return []
        if suggestion.edit.quoted:
            return self._check_quote(claim, sources)
        prose, quoted_words = unquoted(claim)
        findings = []
        if quoted_words > self.max_quote_words:
            findings.append(self.finding("flag", f"a long quotation ({quoted_words} words): quote less, "
                                                 "summarise the rest"))
        m = overlap(prose, *sources, n=self.ngram)
        what = f"{m.longest_run} words in a row and {m.containment:.0%} of its {self.ngram}-word phrases"
        if m.longest_run >= self.run_limit or m.containment >= self.containment_limit:
            findings.append(self.finding("block", f"copies the source ({what}); not proposed as article prose"))
        elif m.longest_run >= self.flag_run or m.containment >= self.flag_containment:
            findings.append(self.finding("flag", f"close paraphrase of the source ({what}); reword it"))
        return findings

    def _check_quote(self, claim: str, sources: tuple[str, ...]) -> list[GateFinding]:
        m = overlap(claim, *sources, n=self.ngram)
        if m.longest_run < self.flag_run and m.containment < self.flag_containment:
            return []
        if m.words > self.max_quote_words and m.longest_run >= self.run_limit:
            return [self.finding("block", f"copies {m.longest_run} words of the source in a row; too long to "
                                          f"quote (over {self.max_quote_words} words)")]
        if m.longest_run >= self.run_limit:
            return [self.finding("flag", f"keeps {m.longest_run} words of the source in a row: shown as the "
                                         "source's words, not proposed as article text: paraphrase it, in your own words")]
        return [self.finding("flag", f"keeps the source's wording ({m.longest_run} words in a row): "
                                     "paraphrase it before adding it to the article")]
