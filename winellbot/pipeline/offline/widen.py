"""A chosen passage given the rest of its suggestion's word budget from the source around it.

The extractor reads a page in passages of 80 words because they are scored and placed best at
that size (see :class:`winellbot.pipeline.offline.extractor.OfflineExtractor`), while a suggestion may
hold 100. The missing fact often sits just past the passage's edge: the passage was chosen
because it retells article sentences, and the sentence the article lacks is next to them in
the source. :class:`Widener` gives the few passages the pipeline keeps the source's sentences
on both sides (running prose: whole sentences, the next one first) or its words (a text that
lost its punctuation) up to the budget, after they are placed and before they are edited: what
is scored, kept and placed does not change, only how much of the source the reviewer is shown.
(Placing the widened text instead placed worse.) A widening never takes words of another kept
passage of the same page, which would show the same text twice.

Figures, and the variants tried and not kept: docs/results.md, "The widener".
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from winellbot.gates.copying import MAX_QUOTE_WORDS
from winellbot.gates.style import StyleGate
from winellbot.gates.style import sentences as style_sentences
from winellbot.gates.textnorm import words as gate_words
from winellbot.models import Article, Update
from winellbot.pipeline.offline.passages import piece_sums, sentence_spans, speaks
from winellbot.pipeline.offline.profile import BOILERPLATE, profile
from winellbot.pipeline.pagetext import is_cased, safe_text, unglue
from winellbot.pipeline.placement import find_passage
from winellbot.pipeline.restore import recase, restore_word
from winellbot.text import content_tokens, words


class Widener:
    """Widens each update to ``budget`` word pieces of its source (the copying gate's count).

    A side stops growing at what the extractor would not propose (a line too short to be prose,
    the first or second person, page furniture); a widening that brings in words the style gate
    stops or flags ("don't miss", "today") is tried on one side only, then dropped: the reviewer's
    checks are about the fact, not about the text around it. An update whose quote cannot be
    found in its source again is left as it is.
    """

    def __init__(self, *, budget: int = MAX_QUOTE_WORDS) -> None:
        self.budget = budget
        self._style: StyleGate | None = None  # its word lists are read on the first widening, not at start-up

    def refine(self, article: Article, updates: list[Update]) -> list[Update]:
        """Each update widened, best first, never into the words of another update of the same page:
        two passages a few sentences apart would otherwise both show the text between them."""
        sources = [_Source.of(article, u) for u in updates]
        taken: dict[str, list[tuple[int, int]]] = {}
        for source in sources:
            if source is not None:
                taken.setdefault(source.key, []).append(source.core)
        out = []
        for update, source in zip(updates, sources):
            if source is None:
                out.append(update)
                continue
            others = list(taken[source.key])
            others.remove(source.core)
            widened, span = self._widen(update, source, others)
            taken[source.key].append(span)
            out.append(widened)
        return out

    def _widen(self, update: Update, source: "_Source", taken: list[tuple[int, int]]) -> tuple[Update, tuple[int, int]]:
        """The widened update and the words of its source it now shows."""
        free = lambda block: source.addable(block) and not any(  # noqa: E731
            a < block[1] and block[0] < b for a, b in taken)
        stopped = self._stopped(update.text)
        for sides in ((True, True), (True, False), (False, True)):
            span, wider, proposed = self._fit(source, sides, free)
            if not proposed or len(words(proposed)) <= len(words(update.text)):
                break
            if self._stopped(proposed) <= stopped:
                return replace(update, text=proposed, quote=wider,
                               reason=f"{update.reason}; widened to {len(words(proposed))} words with the "
                                      "source's text around it"), span
        return update, source.core

    def _fit(self, source: "_Source", sides, addable) -> tuple[tuple[int, int], str | None, str | None]:
        """The widest growth whose text the copying gate counts within the budget (it folds and spells
        out words: "135 million" counts three, "al_east" two)."""
        budget = self.budget
        for _ in range(3):
            span = _grow(source.blocks, *source.core, source.sums, budget, sides, addable)
            if span is None:
                break
            wider = " ".join(b[2] for b in source.blocks[span[0]: span[1] + 1])
            proposed = source.render(wider)
            over = len(gate_words(proposed)) - self.budget
            if over <= 0:
                return (source.blocks[span[0]][0], source.blocks[span[1]][1]), wider, proposed
            budget -= over
        return source.core, None, None

    def _stopped(self, text: str) -> set[str]:
        """The words in ``text`` for which the style gate flags, holds or blocks a suggestion."""
        if self._style is None:
            self._style = StyleGate()
        return {m.group(0).lower() for sentence in style_sentences(text)
                for _, severity, m in self._style.matches(sentence) if severity in ("flag", "hold", "block")}


@dataclass(frozen=True)
class _Source:
    """An update's source cut into blocks it can grow by: sentences of running prose, else words."""

    key: str
    core: tuple[int, int]   # the words of the source the update shows now
    blocks: list
    sums: list[int]
    addable: object
    render: object

    @classmethod
    def of(cls, article: Article, update: Update) -> "_Source | None":
        casing = profile(article).casing
        text = unglue(update.document.text, casing)
        doc_words = words(text)
        quote = update.quote.split()
        start = find_passage(quote, text, whole=True)
        if start < 0:
            return None
        core = (start, start + len(quote))  # the run of sentences or the window it was cut from
        if is_cased(text):
            return cls(update.document.url, core, sentence_spans(text), piece_sums(doc_words), _addable, safe_text)
        return cls(update.document.url, core, [(i, i + 1, w) for i, w in enumerate(doc_words)], piece_sums(doc_words),
                   lambda block: _addable((*block[:2], restore_word(block[2], casing))),
                   lambda t: safe_text(recase(t.split(), casing)))


def _grow(blocks: list[tuple[int, int, str | None]], start: int, end: int, sums: list[int],
          budget: int, sides: tuple[bool, bool], addable) -> tuple[int, int] | None:
    """The first and last block of the passage (from the block at word ``start`` to the one that
    holds word ``end - 1``), grown by one block after and one before in turn while the whole stays
    within ``budget`` word pieces.
    A side stops at a block that is not prose or that the extractor would not propose (first or
    second person, page furniture)."""
    first = next((i for i, (a, b, _) in enumerate(blocks) if a <= start < b), None)
    if first is None or blocks[first][0] != start:
        return None  # the passage does not start a block: it was not cut from these
    last = next((i for i in range(first, len(blocks)) if blocks[i][1] >= end), len(blocks) - 1)
    fits = lambda a, b: sums[blocks[b][1]] - sums[blocks[a][0]] <= budget  # noqa: E731
    while last > first and not fits(first, last):
        last -= 1
    if not fits(first, last) or any(b[2] is None for b in blocks[first: last + 1]):
        return None
    lo, hi, (open_after, open_before) = first, last, sides
    while open_after or open_before:
        if open_after:
            open_after = hi + 1 < len(blocks) and addable(blocks[hi + 1]) and fits(lo, hi + 1)
            hi += open_after
        if open_before:
            open_before = lo > 0 and addable(blocks[lo - 1]) and fits(lo - 1, hi)
            lo -= open_before
    return lo, hi


def _addable(block: tuple[int, int, str | None]) -> bool:
    text = block[2]
    return text is not None and not speaks(text) and not set(content_tokens(text)) & BOILERPLATE

