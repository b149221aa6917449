"""A source document cut into candidate passages: runs of whole sentences on a cased page, word windows
on a page that lost its case, each with its content tokens and its size in word pieces.
"""
from __future__ import annotations

import bisect
import functools
import re
from dataclasses import dataclass, field

from winellbot.pipeline.pagetext import safe_text
from winellbot.pipeline.restore import recase
from winellbot.text import STOP_WORDS, content_tokens, split_sentences


@dataclass(frozen=True)
class Unit:
    quote: str     # the source words
    start: int     # word offset in the document
    end: int
    tokens: frozenset[str]
    cased: str | None = None  # the proposed text, when the source gave it (prose)
    casing: dict | None = field(default=None, compare=False)  # else: restored from the article's casing

    @functools.cached_property
    def text(self) -> str:
        """What would be proposed (cleaned, cased, punctuated): for a lost-case window, restored only
        when asked (most windows are scored out before their text is read)."""
        return self.cased if self.cased is not None else safe_text(recase(self.quote.split(), self.casing or {}))



_TOKEN_CACHE: dict[str, tuple[str, ...]] = {}
_PIECES: dict[str, int] = {}
_PIECE = re.compile(r"\w+")
# A source's first or second person would read as the bot's own voice (the style gate stops it).
_PERSON = frozenset("i me my mine we us our ours you your yours".split())


def piece_sums(doc_words: list[str]) -> list[int]:
    """Prefix sums of word pieces (``COVID-19`` counts two, as strictly as the copying gate counts)."""
    sums = [0]
    for w in doc_words:
        pieces = _PIECES.get(w)
        if pieces is None:
            pieces = _PIECES[w] = max(1, len(_PIECE.findall(w)))
        sums.append(sums[-1] + pieces)
    return sums


def _fit(sums: list[int], start: int, end: int, budget: int) -> int:
    """The end of the longest span from ``start`` (at most ``end``) within ``budget`` pieces."""
    return min(end, bisect.bisect_right(sums, sums[start] + budget) - 1)


def prose_share(text: str) -> float:
    """The share of stop words: running prose has many, menus, lists and tables few."""
    pieces = text.split()
    return sum(map(_is_stop, pieces)) / max(1, len(pieces))


@functools.lru_cache(maxsize=1 << 16)
def _is_stop(word: str) -> bool:
    return word.lower().strip(".,;:\"'()") in STOP_WORDS


_QUOTED = re.compile(r"\u201c[^\u201d]*\u201d|\"[^\"]*\"")


def speaks(text: str) -> bool:
    """A first or second person word outside quotation marks."""
    text = _QUOTED.sub(" ", text)
    return any(w.lower() in _PERSON and w != "US" for w in _PIECE.findall(text))


def word_tokens(doc_words: list[str]) -> list[tuple[str, ...]]:
    """The content tokens of each word (cached: documents repeat most of their words)."""
    if len(_TOKEN_CACHE) > 200_000:
        _TOKEN_CACHE.clear()
        _PIECES.clear()
    out = []
    for w in doc_words:
        toks = _TOKEN_CACHE.get(w)
        if toks is None:
            toks = _TOKEN_CACHE[w] = tuple(content_tokens(w))
        out.append(toks)
    return out


def _span_tokens(tokens: list[tuple[str, ...]], start: int, end: int) -> frozenset[str]:
    return frozenset(t for word in tokens[start:end] for t in word)


def sentence_spans(text: str) -> list[tuple[int, int, str | None]]:
    """Each sentence of a cased page's prose lines (8 words or more) with its span of words; a
    shorter line (a heading, a menu item) is one span without text (None)."""
    spans: list[tuple[int, int, str | None]] = []
    offset = 0
    for line in text.split("\n"):
        line_words = len(line.split())
        if line_words >= 8:
            pos = offset
            for sentence in split_sentences(line):
                n = len(sentence.split())
                spans.append((pos, pos + n, sentence))
                pos += n
        elif line_words:
            spans.append((offset, offset + line_words, None))
        offset += line_words
    return spans


def sentence_units(text: str, max_words: int, sums: list[int], tokens: list[tuple[str, ...]]) -> list[Unit]:
    """Each sentence of a cased page's prose lines, alone and joined with the sentences after
    it on its line while they fit in ``max_words``."""
    spans = [span for span in sentence_spans(text) if span[2] is not None]
    units: list[Unit] = []
    for i, (start, _, sentence) in enumerate(spans):
        first = sentence.lstrip("\"'\u201c\u2018(")[:1]
        if not (first.isupper() or first.isdigit()):
            continue
        units.append(_make_unit([sentence], start, sums, tokens, max_words))
        run, j = [sentence], i
        while j + 1 < len(spans) and spans[j + 1][0] == spans[j][1] and \
                _fit(sums, start, spans[j + 1][1], max_words) == spans[j + 1][1]:
            j += 1
            run.append(spans[j][2])
        if len(run) > 1:
            units.append(_make_unit(run, start, sums, tokens, max_words))
    return units


def _make_unit(sentences: list[str], start: int, sums: list[int], tokens: list[tuple[str, ...]],
               max_words: int) -> Unit:
    quote = " ".join(sentences)
    split = quote.split()
    kept = split[: _fit(sums, start, start + len(split), max_words) - start]
    return Unit(cased=safe_text(" ".join(kept)), quote=quote, start=start, end=start + len(kept),
                 tokens=_span_tokens(tokens, start, start + len(kept)))


def window_units(doc_words: list[str], size: int, step: int, casing: dict[str, str],
                  sums: list[int], tokens: list[tuple[str, ...]]) -> list[Unit]:
    """Overlapping word windows of an uncased text, with case restored from the article."""
    units = []
    for start in range(0, max(1, len(doc_words) - size // 2), step):
        chunk = doc_words[start: _fit(sums, start, min(len(doc_words), start + size), size)]
        if len(chunk) < 8:
            continue
        units.append(Unit(casing=casing, quote=" ".join(chunk), start=start,
                           end=start + len(chunk), tokens=_span_tokens(tokens, start, start + len(chunk))))
    return units
