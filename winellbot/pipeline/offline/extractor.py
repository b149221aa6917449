"""The offline extraction stage: the passages of a document that bring the article something new,
each with a score and a section.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from winellbot.models import (
    Article,
    Document,
    SectionCriteria,
    Update,
)
from winellbot.interface import (
    Extractor,
)
from winellbot.pipeline.offline.passages import (
    Unit,
    piece_sums,
    prose_share,
    sentence_units,
    speaks,
    window_units,
    word_tokens,
)
from winellbot.pipeline.offline.profile import BOILERPLATE, Profile, profile
from winellbot.pipeline.pagetext import LIST_NOTE, has_capitals, is_cased, unglue
from winellbot.pipeline.placement import placer_for
from winellbot.pipeline.restore import RESTORED_NOTE
from winellbot.text import words


@dataclass(frozen=True)
class _Scored:
    score: float
    unit: Unit
    known: int
    new: int
    stated: float   # the largest share of one article sentence this unit contains


class OfflineExtractor(Extractor):
    """Passages about the subject with content the article lacks, each mapped to a section.

    A passage is a run of sentences (cased pages) or a word window (texts that lost
    their case and punctuation) of at most ``window`` words; a suggestion may hold 100,
    but passages of 80 are placed better (the widener can fill them out later). The
    score rewards the article's known words and, most, the best share of one article
    sentence the passage contains: the article was written from such pages, and a
    missing sentence sat next to the ones that remain. A passage must still bring
    ``min_new`` words the article lacks. The stop-word share counts only up to
    ``prose_cap``: above it, page furniture full of stop words outranked the reporting.
    At most ``per_document`` passages are kept per document, none overlapping another and,
    in a page of more than three, none in the first or second person; each is placed in a
    section of the article.

    Scraped pages often lose the space between a link or headline and the next text
    ("choice?Norwich City", "PalaceCrystal Palace"); :func:`unglue` puts it back before
    the page is cut into passages.

    Figures (the passage size, the weights, unglue): docs/results.md, "The extractor".
    """

    def __init__(self, *, window: int = 80, step: int = 10, per_document: int = 5, context: int = 120,
                 min_new: int = 1, known_weight: float = 1 / 30, stated_weight: float = 1.5,
                 halves_weight: float = 0.1, prose_weight: float = 2.0, prose_cap: float = 0.25) -> None:
        self.window = window
        self.step = step
        self.per_document = per_document
        self.context = context
        self.min_new = min_new
        self.weights = (known_weight, stated_weight, halves_weight, prose_weight)
        self.prose_cap = prose_cap

    def extract(self, article: Article, criteria: SectionCriteria, document: Document) -> list[Update]:
        prof = profile(article)
        text = unglue(document.text, prof.casing)
        doc_words = words(text)
        tokens = word_tokens(doc_words)
        sums = piece_sums(doc_words)
        cased = is_cased(text)
        note = "" if cased else f"; {LIST_NOTE if has_capitals(text) else RESTORED_NOTE}"
        units = sentence_units(text, self.window, sums, tokens) if cased else \
            window_units(doc_words, self.window, self.step, prof.casing, sums, tokens)
        short = len(units) <= 3
        scored = [s for s in (self._score(prof, u, short) for u in units) if s is not None]
        scored.sort(key=lambda x: -x.score)
        chosen: list[_Scored] = []
        for item in scored:
            unit = item.unit
            if any(unit.start < c.unit.end and c.unit.start < unit.end for c in chosen):
                continue
            # A passage in the first or second person is never chosen, so it is looked for only
            # here, in the order of choice: a lost-case window's text is restored to read it,
            # too slow for every window of every page (docs/results.md, "Hot spots of the warm back-test").
            if not short and speaks(unit.text):
                continue
            chosen.append(item)
            if len(chosen) >= self.per_document:
                break
        updates: list[Update] = []
        for item in chosen:
            unit = item.unit
            near = " ".join(doc_words[max(0, unit.start - self.context): unit.end + self.context])
            placed = placer_for(article).place(unit.quote, near, document_text=text)
            reason = (f"{item.new} content words the article lacks, {item.known} it has; contains "
                      f"{item.stated:.0%} of an article sentence; {placed.reason}"
                      + note)
            updates.append(Update(text=unit.text, section_path=placed.section_path, quote=unit.quote,
                                  document=document, score=round(item.score, 4), reason=reason))
        return updates

    def _score(self, prof: Profile, unit: Unit, short: bool) -> _Scored | None:
        toks = unit.tokens
        if not toks or toks & BOILERPLATE:
            return None
        known = toks & prof.vocabulary
        n_new = len(toks) - len(known)
        # In a long page, only passages with words the article lacks; a short statement
        # (one or two units) may also be known words in a combination the article never makes.
        if not known or (n_new < self.min_new and not short):
            return None
        hits = Counter(i for t in known for i in prof.index.get(t, ()))
        said = max(hits.values(), default=0) / len(toks)
        if said >= 0.8 or (n_new < self.min_new and said >= 0.6):
            return None
        shares = [c / prof.sentence_sizes[i] for i, c in hits.items()]
        stated = max(shares, default=0.0)
        halves = sum(share >= 0.5 for share in shares)
        wk, ws, wh, wp = self.weights
        score = wk * len(known) + ws * stated + wh * halves + wp * min(prose_share(unit.quote), self.prose_cap)
        return _Scored(score, unit, len(known), n_new, stated)
