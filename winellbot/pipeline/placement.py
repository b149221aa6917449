"""Section placement: which section of an article a new sentence belongs in.

:class:`SectionPlacer` is built once per article and answers
:meth:`SectionPlacer.place` for any number of candidate sentences. It scores every
non-lead section with prose by the IDF-weighted cosine between the candidate
(plus its context in the source document) and the section's words, its heading
words counted twice, plus a small bonus per candidate word that appears in the
section's own (deepest) heading name.

Measured on the 327 held-out sentences of the dev back-test (lone sentence, no
context; ``winellbot backtest ... --oracle``): cosine alone places 50.8%; the
heading bonus 52.9% (51.9% / 53.9% on even / odd tasks; the bonus weight was
chosen on each half and holds on the other). Every other lexical signal tried
(paragraph or sentence nearest match, neighbouring sentence pairs, shared proper
nouns, years, section-size priors, whole top-level subtree match, a heading-word
model learnt across articles) gained nothing under two-fold cross-validation:
a sentence alone rarely shares enough words with its section to place it, so
the remaining errors need meaning rather than word overlap.

When the candidate comes from a document (``document_text``), the document's
words around it count too: reference pages often report, next to the new fact,
things the article already says in the fact's section. The placer finds the
candidate in the document and adds, per section, ``window_weight`` times the
best idf-weighted share of one of the section's sentences found in the
candidate and the ``window`` words either side of it. Measured with a scratch
harness on the dev back-test (for each held-out fact, the extractor's unit of its
supporting document that recalls most of it, placed with the extractor's
context; 322 facts, 97 of them recalled >= 0.6): 44.7% -> 48.4% of all, 53.6% ->
62.9% of the recalled ones; by task halves 45.6% -> 50.0% (even) and 43.8% ->
46.9% (odd); weight 0.4 chosen on even tasks gives 45.1% on odd, weight 0.3 (top-40
window sentence of the section) chosen on odd gives 48.1% on even. Whole-document
affinity (per section, how much of its sentences the whole document contains:
mean, top two, share or count above 0.6, or votes of every document passage for
its best-matching section) placed 24-34% alone and gained 0-1 point on top of the
rest under the same two-fold cross-validation, so it is not used: a cited page
usually supports several sections.

A document with no words around the passage (a one-sentence source; the back-test's
oracle documents) adds nothing: the passage's own overlap with one section sentence is
no evidence of place (oracle back-test S_acc 54.5% -> 55.7%, C_hard 52.3% -> 53.5%).

Meaning, when word vectors are installed (:mod:`winellbot.pipeline.vectors`): the
cosine between the mean vectors of the candidate (with its context) and of the
section, times ``vector_weight``, is added. On the lone held-out sentences it
placed 49.5% alone; with the lexical score, weight 4 was chosen on each half of
the tasks (57.4% on even, 51.5% on odd tasks when chosen on the other half). In the
back-test, weight 4: S_acc 51.9% -> 59.6% (oracle 52.5% -> 54.5%); 2 and 8 did
worse on the dev run.
"""
from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass

from winellbot.models import Article, SectionPath
from winellbot.pipeline.pipeline import per_article
from winellbot.pipeline.vectors import WordVectors, default_vectors
from winellbot.text import content_tokens, split_sentences, words


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
    heading: frozenset[str]  # content tokens of the deepest heading name
    sentences: tuple[frozenset[str], ...]  # content tokens of each sentence


class SectionPlacer:
    """Places sentences in the sections of one article (precomputed at construction)."""

    def __init__(self, article: Article, *, heading_bonus: float = 0.05, window_weight: float = 0.3,
                 window: int = 40, vector_weight: float = 4.0, vectors: WordVectors | None = None) -> None:
        self.heading_bonus = heading_bonus
        self.window_weight = window_weight
        self.window = window
        self.vectors = vectors if vectors is not None else default_vectors()
        self.vector_weight = vector_weight if self.vectors is not None else 0.0
        sections = []
        for sec in article.sections:
            if not sec.path or not sec.paragraphs:
                continue
            bag: Counter = Counter(content_tokens(" ".join(sec.path)) * 2)
            sentences = []
            for para in sec.paragraphs:
                for sentence in split_sentences(para.text):
                    toks = frozenset(content_tokens(sentence))
                    bag.update(toks)
                    if toks:
                        sentences.append(toks)
            sections.append(_Section(sec.path, bag, frozenset(content_tokens(sec.path[-1])), tuple(sentences)))
        self._sections = tuple(sections)
        self._meanings = [self.vectors.embed(sec.bag) if self.vector_weight else None for sec in sections]
        df = Counter(tok for s in sections for tok in s.bag)
        n = max(len(sections), 1)
        self._idf = {tok: math.log((n + 1) / (c + 0.5)) + 1.0 for tok, c in df.items()}

    def place(self, text: str, context: str = "", document_text: str = "") -> Placement:
        """The best section for ``text``; ``context`` (its surroundings in the source) also counts.

        ``document_text``: the whole source document, when ``text`` is a passage of it; the
        article's sentences restated around the passage then point to its section. Without it
        (or with the weight at 0) the placement is the lone-sentence one.
        """
        bag = Counter(content_tokens(text)) + Counter(content_tokens(context))
        own = set(content_tokens(text))
        near = self._window_tokens(text, document_text) if document_text and self.window_weight else None
        best, best_score = (), -math.inf
        best_cos = best_near = best_meaning = 0.0
        best_named = 0
        shared = False
        meaning = self.vectors.embed(bag) if self.vector_weight else None
        for sec, sec_meaning in zip(self._sections, self._meanings):
            cos = _cosine(bag, sec.bag, self._idf)
            # A word of the section's own heading name in the sentence itself ("casting",
            # "trial", a team's name) is evidence the cosine over the whole section dilutes.
            named = len(own & sec.heading)
            restated = self._restated(sec, near) if near else 0.0
            lexical = cos + self.heading_bonus * named + self.window_weight * restated
            shared = shared or lexical > 0
            close = self.vectors.cosine(meaning, sec_meaning) if meaning is not None else 0.0
            score = lexical + self.vector_weight * close
            if score > best_score:
                best, best_score, best_cos, best_named, best_near, best_meaning = \
                    sec.path, score, cos, named, restated, close
        # Meaning alone is no evidence: every text is somewhat close to every section.
        if not best or not shared:
            return Placement((), 0.0, "no section shares a word with it; the lead")
        reason = f"words best match section {' > '.join(best)} (cosine {best_cos:.2f}"
        if best_meaning:
            reason += f", meaning {best_meaning:.2f}"
        if best_named and self.heading_bonus:
            reason += f", {best_named} word(s) of its heading"
        if best_near:
            reason += f", {best_near:.0%} of one of its sentences around it in the source"
        return Placement(best, round(best_score, 4), reason + ")")

    def _restated(self, sec: _Section, near: frozenset[str]) -> float:
        """The largest idf-weighted share of one of the section's sentences found in ``near``."""
        best = 0.0
        for toks in sec.sentences:
            whole = sum(self._idf.get(t, 1.0) for t in toks)
            found = sum(self._idf.get(t, 1.0) for t in toks & near)
            best = max(best, found / whole)
        return best

    def _window_tokens(self, text: str, document_text: str) -> frozenset[str]:
        """Content tokens of ``text`` and the ``window`` document words either side of it."""
        doc = _document_words(document_text)
        mine = words(text)
        at = _find(doc, mine)
        if at < 0:  # not found word for word (the caller rewrote it): its surroundings are unknown
            return frozenset()
        end = at + len(mine)
        before, after = doc.words[max(0, at - self.window): at], doc.words[end: end + self.window]
        if not before and not after:  # the document is the passage: nothing around it
            return frozenset()
        return frozenset(content_tokens(" ".join(before + mine + after)))


placer_for = per_article(SectionPlacer)
"""The placer of an article, built once and cached per revision."""


@dataclass(frozen=True)
class _DocumentWords:
    words: list[str]
    starts: dict[tuple[str, ...], list[int]]  # first three words -> positions


_DOCUMENTS: dict[int, _DocumentWords] = {}


def _document_words(text: str) -> _DocumentWords:
    """The words of a document and where each three-word run starts (cached: one per document)."""
    key = hash(text)
    if key not in _DOCUMENTS:
        if len(_DOCUMENTS) > 256:
            _DOCUMENTS.clear()
        doc = words(text)
        starts: dict[tuple[str, ...], list[int]] = {}
        for i in range(len(doc)):
            starts.setdefault(tuple(doc[i: i + 3]), []).append(i)
        _DOCUMENTS[key] = _DocumentWords(doc, starts)
    return _DOCUMENTS[key]


def _find(doc: _DocumentWords, passage: list[str]) -> int:
    """Where ``passage`` starts in the document (its first eight words match), or -1."""
    head = passage[:8]
    for i in doc.starts.get(tuple(passage[:3]), ()):
        if doc.words[i: i + len(head)] == head:
            return i
    return -1


def _cosine(a: Counter, b: Counter, idf: dict[str, float]) -> float:
    dot = sum(a[t] * b[t] * idf.get(t, 1.0) ** 2 for t in a if t in b)
    if not dot:
        return 0.0
    na = math.sqrt(sum((c * idf.get(t, 1.0)) ** 2 for t, c in a.items()))
    nb = math.sqrt(sum((c * idf.get(t, 1.0)) ** 2 for t, c in b.items()))
    return dot / (na * nb)
