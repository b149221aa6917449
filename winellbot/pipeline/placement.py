"""Section placement: which section of an article a new sentence belongs in.

:class:`SectionPlacer` is built once per article; :meth:`SectionPlacer.place` gives any candidate
the non-lead section with prose whose weighted sum of the terms (``TERMS``) is highest, or the lead
when no section shares a word with it (closeness of meaning alone is no evidence). Per section:

* ``cosine``: the IDF-weighted cosine of the candidate (with its context) and the section's words,
  its heading words counted twice; ``heading``: the candidate's words in the section's own heading;
* ``around``: given the source (``document_text``), the best IDF-weighted share of one of the
  section's sentences found in the passage and the ``window`` source words either side of it
  (a page often reports, beside a new fact, what the article already says in that fact's section);
  a source with nothing around the passage gives none, and the passage is placed as a lone statement;
* ``vectors``: with word vectors installed (:mod:`winellbot.pipeline.vectors`), the cosine of the
  mean vectors; ``meaning`` and ``nearest``: with an embedder (:mod:`winellbot.meaning`), the cosine
  with the section's centroid (the unit mean of its sentences' embeddings) and with its closest sentence.

A section whose heading dates it ("1974–75") does not compete for a text that names only other years.
A lone statement and a passage in its source are weighed apart (``alone``, ``in_source``). Why the
meaning terms: a lone sentence rarely shares enough words with its section to be placed by them.
:data:`placer_for` uses ``HAND_SET``; :func:`placers` uses the weights ``winellbot fit placement``
fitted (a softmax over the sections) and kept in ``winellbot/data/placement.json``, valid only
with the sentence model named there. A section's sentences are embedded on the first placement
that weighs meaning, so a run whose passages all have words around them never loads that model.
Whole-document affinity is not a term: a cited page usually supports several sections. The terms
tried, kept or not, and their figures: docs/results.md, "Placement and meaning".
"""
from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from importlib import resources

from winellbot.errors import ConfigError
from winellbot.gates.textnorm import YEAR
from winellbot.models import Article, SectionPath
from winellbot.pipeline.pipeline import per_article
from winellbot.pipeline.vectors import WordVectors, default_vectors
from winellbot.text import content_tokens, split_sentences, words


# The placer's terms: shared words (idf cosine), words of the section's heading, the section's
# sentences restated around the passage in its source, word vectors, sentence embeddings.
TERMS = ("cosine", "heading", "around", "vectors", "meaning", "nearest")
# The terms that embed the text placed (a passage in its source is placed without them).
EMBEDDED = ("meaning", "nearest")
LEXICAL = ("cosine", "heading", "around")
# Set by hand on the dev back-test before the weights were fitted: words, heading, around, GloVe
# (figures: docs/results.md, "Placement and meaning").
HAND_SET = {"cosine": 1.0, "heading": 0.05, "around": 0.3, "vectors": 4.0, "meaning": 0.0, "nearest": 0.0}


# A heading's time: "1974–75", "2022–present", "(27 December 2022 – 16 January 2023)", "Before 2000".
_SHORT_END = re.compile(r"\b(1[5-9]\d\d|20\d\d)\s*[-\u2013\u2014/]\s*(\d\d)\b(?!\d)")
_OPEN_BEFORE = re.compile(r"\b(?:before|until|pre)\W*$", re.IGNORECASE)
_OPEN_AFTER = re.compile(r"\b(?:after|since|post|from)\W*$", re.IGNORECASE)
_NO_END = 9999


def years_of(text: str) -> list[tuple[int, int]]:
    """The years a text names, each as the span it covers ("1960s" is 1960-1969)."""
    out = []
    for m in YEAR.finditer(text):
        year = int(m.group(0)[:4])
        out.append((year, year + 9) if m.group(0).endswith("s") else (year, year))
    return out


def heading_span(heading: str) -> tuple[int, int] | None:
    """The years a heading says its section covers (first to last year it names, "present" open),
    or None where it names no year."""
    found = years_of(heading)
    if not found:
        return None
    short = _SHORT_END.search(heading) if len(found) == 1 else None
    if short:
        start = int(short.group(1))
        stop = start // 100 * 100 + int(short.group(2))
        return (start, stop if stop >= start else stop + 100)
    start, stop = min(a for a, _ in found), max(b for _, b in found)
    if re.search(r"\bpresent\b", heading, re.IGNORECASE):
        return (start, _NO_END)
    if len(found) == 1:
        before = heading[:YEAR.search(heading).start()]
        if _OPEN_BEFORE.search(before):
            return (0, start - 1)
        if _OPEN_AFTER.search(before):
            return (start, _NO_END)
    return (start, stop)


def path_span(path: SectionPath) -> tuple[int, int] | None:
    """The span of the deepest heading of ``path`` that dates its section."""
    for heading in reversed(path):
        span = heading_span(heading)
        if span:
            return span
    return None


@dataclass(frozen=True)
class Placement:
    """Where a sentence goes: the section path (``()`` = lead), the winning score, and why;
    ``runner_up``: the section that scored next (None with one section), ``margin``: how far the
    winner's score is ahead of its score."""

    section_path: SectionPath
    score: float
    reason: str
    margin: float = math.inf
    runner_up: SectionPath | None = None


@dataclass(frozen=True)
class _Section:
    path: SectionPath
    bag: Counter
    heading: frozenset[str]  # content tokens of the deepest heading name
    sentences: tuple[frozenset[str], ...]  # content tokens of each sentence


class SectionPlacer:
    """Places sentences in the sections of one article (precomputed at construction)."""

    def __init__(self, article: Article, *, weights: Mapping[str, float] = HAND_SET,
                 in_source: Mapping[str, float] | None = None, window: int = 40,
                 vectors: WordVectors | None = None, embedder=None) -> None:
        """``weights`` weigh the terms of a statement on its own, ``in_source`` (default: the same)
        those of a passage with words around it in its source. A term whose model is missing
        (word vectors not installed, no ``embedder``) weighs 0."""
        self.window = window
        self.vectors = vectors if vectors is not None else default_vectors()
        self.embedder = embedder  # a winellbot.meaning.Embedder, or None: words (and word vectors) only
        off = {t for t, model in (("vectors", self.vectors), ("meaning", embedder), ("nearest", embedder))
               if model is None}
        self.alone = {t: 0.0 if t in off else float(weights.get(t, 0.0)) for t in TERMS}
        self.in_source = {t: 0.0 if t in off else float((in_source or weights).get(t, 0.0)) for t in TERMS}
        self._uses = {t for t in TERMS if self.alone[t] or self.in_source[t]}
        sections = []
        texts: list[list[str]] = []
        for sec in article.sections:
            if not sec.path or not sec.paragraphs:
                continue
            bag: Counter = Counter(content_tokens(" ".join(sec.path)) * 2)
            sentences = []
            texts.append([])
            for para in sec.paragraphs:
                for sentence in split_sentences(para.text):
                    toks = frozenset(content_tokens(sentence))
                    bag.update(toks)
                    if toks:
                        sentences.append(toks)
                        texts[-1].append(sentence)
            sections.append(_Section(sec.path, bag, frozenset(content_tokens(sec.path[-1])), tuple(sentences)))
        self._sections = tuple(sections)
        self._spans = {sec.path: span for sec in sections if (span := path_span(sec.path))}
        self._meanings = [self.vectors.embed(sec.bag) if "vectors" in self._uses else None for sec in sections]
        # embedded section by section, on the first placement that weighs meaning among them
        self._texts = texts
        self._embedded: dict[int, object] = {}
        df = Counter(tok for s in sections for tok in s.bag)
        n = max(len(sections), 1)
        self._idf = {tok: math.log((n + 1) / (c + 0.5)) + 1.0 for tok, c in df.items()}
        # fixed per article, asked for every candidate passage: computed once
        self._norms = [_norm(sec.bag, self._idf) for sec in sections]
        self._weights = [tuple(sum(self._idf.get(t, 1.0) for t in toks) for toks in sec.sentences)
                         for sec in sections]

    def place(self, text: str, context: str = "", document_text: str = "", *,
              among: Collection[SectionPath] | None = None) -> Placement:
        """The best section for ``text``; ``context`` (its surroundings in the source) also counts.

        ``document_text``: the whole source document, when ``text`` is a passage of it; the
        article's sentences restated around the passage then point to its section. Without it
        (or with the weight at 0) the placement is the lone-sentence one. ``among``: only these
        sections compete (only theirs are embedded). A section whose heading dates it ("1974–75",
        "Invasion of Salvador (1624–1625)") does not compete for a text that names years, none of them
        in its span, while another section may take the text.
        """
        passed, among = self._dated_apart(text, among)
        near = self._window_tokens(text, document_text) if document_text and "around" in self._uses else None
        weights = self.in_source if near else self.alone
        best, best_score, best_terms, second, second_path = (), -math.inf, {}, -math.inf, None
        shared = False
        for path, terms in self.evidence(text, context, near=near, terms={t for t in TERMS if weights[t]},
                                         among=among):
            # Meaning alone is no evidence: every text is somewhat close to every section.
            shared = shared or any(terms[k] * weights[k] > 0 for k in LEXICAL)
            score = sum(weights[k] * terms[k] for k in TERMS)
            if score > best_score:
                best, best_score, best_terms, second, second_path = path, score, terms, best_score, best or None
            elif score > second:
                second, second_path = score, path
        if not best or not shared:
            return Placement((), 0.0, "no section shares a word with it; the lead")
        t = best_terms
        reason = f"words best match section {' > '.join(best)} (cosine {t['cosine']:.2f}"
        if t["meaning"] and weights["meaning"]:
            reason += f", sentence meaning {t['meaning']:.2f}"
        if t["nearest"] and weights["nearest"]:
            reason += f", nearest of its sentences {t['nearest']:.2f}"
        if t["vectors"] and weights["vectors"]:
            reason += f", meaning {t['vectors']:.2f}"
        if t["heading"] and weights["heading"]:
            reason += f", {t['heading']:.0f} word(s) of its heading"
        if t["around"] and weights["around"]:
            reason += f", {t['around']:.0%} of one of its sentences around it in the source"
        if passed:
            reason += f", {len(passed)} section(s) dated apart from its years passed over"
        return Placement(best, round(best_score, 4), reason + ")", round(best_score - second, 4), second_path)

    def _dated_apart(self, text: str, among: Collection[SectionPath] | None
                     ) -> tuple[set[SectionPath], Collection[SectionPath] | None]:
        """The competing sections whose headings' years exclude every year ``text`` names, and the
        sections left to compete; none passed over (``among`` as given) where the text names no year
        or no other section would be left."""
        years = years_of(text) if self._spans else []
        if not years:
            return set(), among
        competing = [sec.path for sec in self._sections if among is None or sec.path in among]
        apart = {path for path in competing if (span := self._spans.get(path))
                 and not any(a <= span[1] and span[0] <= b for a, b in years)}
        if len(apart) == len(competing):
            return set(), among
        return apart, [path for path in competing if path not in apart]

    def evidence(self, text: str, context: str = "", document_text: str = "", *,
                 near: frozenset[str] | None = None, terms: set[str] | None = None,
                 among: Collection[SectionPath] | None = None) -> list[tuple[SectionPath, dict]]:
        """Per section (of ``among`` only, when given), each term of :data:`TERMS` before weighting
        (what ``winellbot fit placement`` fits).

        Only ``terms`` (default: those either weight set uses) are computed; the others read 0.
        ``near``: the passage's surroundings, when the caller has found them already.
        """
        terms = self._uses if terms is None else terms & self._uses
        bag = Counter(content_tokens(text)) + Counter(content_tokens(context))
        own = set(content_tokens(text))
        if near is None and document_text and "around" in terms:
            near = self._window_tokens(text, document_text)
        meaning = self.vectors.embed(bag) if "vectors" in terms else None
        vector = self.embedder.embed([text])[0] if terms & set(EMBEDDED) else None
        indices = [i for i, sec in enumerate(self._sections) if among is None or sec.path in among]
        embedded = self._section_embeddings(indices) if vector is not None else {}
        out = []
        own_norm = _norm(bag, self._idf)
        for i in indices:
            sec, sec_meaning = self._sections[i], self._meanings[i]
            centroid, sentences = embedded.get(i, (None, None))
            out.append((sec.path, {
                "cosine": _cosine(bag, sec.bag, self._idf, own_norm, self._norms[i]),
                # A word of the section's own heading name in the sentence itself ("casting",
                # "trial", a team's name) is evidence the cosine over the whole section dilutes.
                "heading": float(len(own & sec.heading)),
                "around": self._restated(i, near) if near else 0.0,
                "vectors": self.vectors.cosine(meaning, sec_meaning) if meaning is not None else 0.0,
                "meaning": float(centroid @ vector) if "meaning" in terms and centroid is not None else 0.0,
                "nearest": float((sentences @ vector).max()) if "nearest" in terms and sentences is not None else 0.0,
            }))
        return out

    def _section_embeddings(self, indices: list[int]) -> dict:
        """Per section of ``indices``, the unit mean of its sentences' embeddings and those embeddings;
        the sections not embedded before are embedded in one batch, once."""
        import numpy as np

        todo = [i for i in indices if i not in self._embedded]
        if todo:
            flat = [t for i in todo for t in self._texts[i]]
            vectors = self.embedder.embed(flat) if flat else None
            at = 0
            for i in todo:
                n = len(self._texts[i])
                if not n:  # no sentence with content words: no meaning to compare
                    self._embedded[i] = (None, None)
                    continue
                mine = vectors[at: at + n]
                at += n
                mean = mine.mean(axis=0)
                self._embedded[i] = (mean / (np.linalg.norm(mean) or 1.0), mine)
        return {i: self._embedded[i] for i in indices}

    def _restated(self, i: int, near: frozenset[str]) -> float:
        """The largest idf-weighted share of one of section ``i``'s sentences found in ``near``."""
        best = 0.0
        for toks, whole in zip(self._sections[i].sentences, self._weights[i]):
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
"""The placer of an article by words (and word vectors), built once and cached per revision."""


FITTED = "placement.json"


def _fitted() -> dict:
    path = resources.files("winellbot") / "data" / FITTED
    return json.loads(path.read_text(encoding="utf-8"))


def fitted_weights() -> dict[str, dict[str, float]]:
    """The weight sets ``alone`` and ``in_source`` chosen by ``winellbot fit placement``
    (kept in ``winellbot/data/placement.json``)."""
    return _fitted()["weights"]


def fitted_model() -> str:
    """The sentence model whose embeddings the fitted "meaning" weight was fitted on."""
    return _fitted()["model"]


def placers(embedder=None):
    """A per-revision cache of placers; with an ``embedder``, by meaning too, with the fitted weights
    (which hold only for the model they were fitted with: another is a :class:`ConfigError`)."""
    if embedder is None:
        return placer_for
    record = _fitted()
    if embedder.model_name != record["model"]:
        raise ConfigError(f"the placement weights were fitted with {record['model']}, not {embedder.model_name}; "
                          "refit them with 'winellbot fit placement TASKS_DIR --write'")
    fitted = record["weights"]
    return per_article(lambda article: SectionPlacer(article, weights=fitted["alone"],
                                                     in_source=fitted["in_source"], embedder=embedder))


@dataclass(frozen=True)
class _DocumentWords:
    words: list[str]
    joined: str  # the words with one space between each two: searched with str.find


_DOCUMENTS: dict[int, _DocumentWords] = {}


def _document_words(text: str) -> _DocumentWords:
    """The words of a document (cached: one per document)."""
    key = hash(text)
    if key not in _DOCUMENTS:
        if len(_DOCUMENTS) > 256:
            _DOCUMENTS.clear()
        doc = words(text)
        _DOCUMENTS[key] = _DocumentWords(doc, " ".join(doc))
    return _DOCUMENTS[key]


def context_of(passage: str, document_text: str, size: int) -> str:
    """``passage`` with the ``size`` document words either side of it ("" when it is not in the document)."""
    doc = _document_words(document_text)
    mine = words(passage)
    at = _find(doc, mine)
    if at < 0:
        return ""
    return " ".join(doc.words[max(0, at - size): at + len(mine) + size])


def find_passage(passage: list[str], document_text: str, *, whole: bool = False) -> int:
    """Where the words ``passage`` start in the document's words, or -1 (see :func:`_find`); with
    ``whole``, only a copy of the whole passage counts (the widener adds words around it)."""
    return _find(_document_words(document_text), passage, whole=whole)


def _find(doc: _DocumentWords, passage: list[str], *, whole: bool = False) -> int:
    """Where ``passage`` starts in the document, or -1: the first copy that matches it whole, else
    (unless ``whole``) the first copy of its first eight words (a passage cut or cleaned after it
    was read may match only at its opening; a page that repeats an opening, a headline over its
    story, matches whole only where the passage was read from).

    A search of the joined words (an index of every three-word run, built per document, cost too
    much time: docs/results.md, "Hot spots of the warm back-test"); a hit counts where it starts and
    ends at word boundaries."""
    head = " ".join(passage[:8])
    joined = doc.joined
    first = -1
    at = joined.find(head) if head else -1
    while at >= 0:
        end = at + len(head)
        if (at == 0 or joined[at - 1] == " ") and (end == len(joined) or joined[end] == " "):
            start = joined.count(" ", 0, at)
            if doc.words[start: start + len(passage)] == passage:
                return start
            if first < 0:
                first = start
        at = joined.find(head, at + 1)
    return -1 if whole else first


def _cosine(a: Counter, b: Counter, idf: dict[str, float], na: float | None = None,
            nb: float | None = None) -> float:
    """The idf-weighted cosine of two bags (``na``/``nb``: their norms, when known)."""
    dot = sum(a[t] * b[t] * idf.get(t, 1.0) ** 2 for t in a if t in b)
    if not dot:
        return 0.0
    return dot / ((na if na is not None else _norm(a, idf)) * (nb if nb is not None else _norm(b, idf)))


def _norm(bag: Counter, idf: dict[str, float]) -> float:
    return math.sqrt(sum((c * idf.get(t, 1.0)) ** 2 for t, c in bag.items()))
