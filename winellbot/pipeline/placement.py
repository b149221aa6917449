"""Section placement: which section of an article a new sentence belongs in.

:class:`SectionPlacer` is built once per article and answers
:meth:`SectionPlacer.place` for any number of candidate sentences. It scores every
non-lead section with prose by the IDF-weighted cosine between the candidate
(plus its context in the source document) and the section's words, its heading
words counted twice.
"""
from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass

from winellbot.models import Article, SectionPath
from winellbot.text import content_tokens, split_sentences


@dataclass(frozen=True)
class Placement:
    """Where a sentence goes: the section path (``()`` = lead), the winning score, and why."""

    section_path: SectionPath
    score: float
    reason: str


@dataclass(frozen=True)
class _Section:
    path: SectionPath
    bag: Counter


class SectionPlacer:
    """Places sentences in the sections of one article (precomputed at construction)."""

    def __init__(self, article: Article) -> None:
        sections = []
        for sec in article.sections:
            if not sec.path or not sec.paragraphs:
                continue
            bag: Counter = Counter(content_tokens(" ".join(sec.path)) * 2)
            for para in sec.paragraphs:
                for sentence in split_sentences(para.text):
                    bag.update(set(content_tokens(sentence)))
            sections.append(_Section(sec.path, bag))
        self._sections = tuple(sections)
        df = Counter(tok for s in sections for tok in s.bag)
        n = max(len(sections), 1)
        self._idf = {tok: math.log((n + 1) / (c + 0.5)) + 1.0 for tok, c in df.items()}

    def place(self, text: str, context: str = "") -> Placement:
        """The best section for ``text``; ``context`` (its surroundings in the source) also counts."""
        bag = Counter(content_tokens(text)) + Counter(content_tokens(context))
        best, best_score = (), 0.0
        for sec in self._sections:
            score = _cosine(bag, sec.bag, self._idf)
            if score > best_score:
                best, best_score = sec.path, score
        reason = (f"words best match section {' > '.join(best)} (cosine {best_score:.2f})" if best
                  else "no section shares a word with it; the lead")
        return Placement(best, best_score, reason)


def _cosine(a: Counter, b: Counter, idf: dict[str, float]) -> float:
    dot = sum(a[t] * b[t] * idf.get(t, 1.0) ** 2 for t in a if t in b)
    if not dot:
        return 0.0
    na = math.sqrt(sum((c * idf.get(t, 1.0)) ** 2 for t, c in a.items()))
    nb = math.sqrt(sum((c * idf.get(t, 1.0)) ** 2 for t, c in b.items()))
    return dot / (na * nb)
