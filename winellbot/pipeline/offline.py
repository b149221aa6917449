"""The offline pipeline: every WINELL stage without a model.

* :class:`OfflineCriteria`: a section's characteristic terms (TF-IDF over the
  article's sections, plus its heading words).
* :class:`OfflineNavigator`: queries from the title and a section's terms not yet
  tried, avoiding terms of ignored updates; reads the best unread result.
* :class:`OfflineExtractor`: passages of a document that share the article's
  vocabulary (they are about the subject) but bring content tokens the article
  lacks, each placed in the section whose text best matches the passage's
  neighbourhood in the document.
* :class:`OfflineAggregator`: ignores what the section or a kept update already
  says, replaces a kept update by a longer one on the same fact, adds otherwise.
* :class:`OfflineEditor`: appends the sentence with a ``{{cite news}}`` reference.

It is the free first pass the LLM pipeline can build on, and the bot's
fallback when no model is configured. Its quality is measured by ``winellbot
backtest`` (see :mod:`winellbot.bench`).
"""
from __future__ import annotations

import bisect
import datetime as dt
import functools
import math
import re
from collections import Counter
from dataclasses import dataclass, field

from winellbot.models import (
    Article,
    Citation,
    Decision,
    Document,
    Edit,
    NavigationStep,
    Paragraph,
    SectionCriteria,
    SectionPath,
    Update,
)
from winellbot.pipeline.interface import (
    Aggregator,
    CriteriaInducer,
    Editor,
    Extractor,
    Memory,
    Navigator,
    SearchBackend,
)
from winellbot.pipeline.loop import UpdateAggregationLoop
from winellbot.pipeline.pipeline import Pipeline, per_article
from winellbot.pipeline.placement import placer_for
from winellbot.pipeline.pagetext import LIST_NOTE, has_capitals, is_cased, safe_text, unglue
from winellbot.pipeline.restore import RESTORED_NOTE, name_casing, name_pairs, recase
from winellbot.search.urls import citation_url
from winellbot.text import STOP_WORDS, content_tokens, split_sentences, words

# Words that mark page furniture rather than reporting.
BOILERPLATE = frozenset(
    "cookie cookies javascript subscribe subscription newsletter login password advertisement "
    "privacy copyright browser unsubscribe signup sitemap".split()
)


# --- article profile -----------------------------------------------------------------


@dataclass(frozen=True)
class _Profile:
    """What the stages need to know about an article, computed once per article."""

    vocabulary: frozenset[str]
    sentences: tuple[tuple[SectionPath, frozenset[str]], ...]
    sections: tuple[tuple[SectionPath, Counter], ...]  # non-lead sections with prose
    idf: dict[str, float]
    casing: dict[str, str]
    title_tokens: frozenset[str]
    index: dict[str, tuple[int, ...]]          # content token -> ids of the sentences that have it
    sentence_sizes: tuple[int, ...]
    name_pairs: frozenset[tuple[str, str]]     # adjacent capitalised words ("khmer", "rouge")




@per_article
def profile(article: Article) -> _Profile:
    """The article's precomputed vocabulary, sentences and sections (cached per revision)."""
    sentences = []
    sections = []
    for sec in article.sections:
        bag: Counter = Counter(content_tokens(" ".join(sec.path)) * 2)
        for para in sec.paragraphs:
            for sentence in split_sentences(para.text):
                toks = frozenset(content_tokens(sentence))
                if toks:
                    sentences.append((sec.path, toks))
                    bag.update(toks)
        if sec.path and sec.paragraphs:
            sections.append((sec.path, bag))
    df = Counter(tok for _, bag in sections for tok in bag)
    n = max(len(sections), 1)
    idf = {tok: math.log((n + 1) / (c + 0.5)) + 1.0 for tok, c in df.items()}
    vocabulary = frozenset(content_tokens(article.plain_text + " " + article.title))
    index: dict[str, list[int]] = {}
    for i, (_, toks) in enumerate(sentences):
        for tok in toks:
            index.setdefault(tok, []).append(i)
    return _Profile(vocabulary, tuple(sentences), tuple(sections), idf, name_casing(article.plain_text),
                    frozenset(content_tokens(article.title)), {t: tuple(ids) for t, ids in index.items()},
                    tuple(len(toks) for _, toks in sentences), name_pairs(article.plain_text))


# --- criteria and navigation ---------------------------------------------------------------


class OfflineCriteria(CriteriaInducer):
    """Per section, its most characteristic terms (TF-IDF against the other sections)."""

    def __init__(self, *, terms: int = 12) -> None:
        self.terms = terms

    def induce(self, article: Article) -> SectionCriteria:
        prof = profile(article)
        criteria = {}
        for path, bag in prof.sections:
            ranked = sorted(bag, key=lambda t: (-bag[t] * prof.idf.get(t, 1.0), t))
            criteria[path] = " ".join(ranked[: self.terms])
        return SectionCriteria(criteria=criteria, revid=article.revid)


class OfflineNavigator(Navigator):
    """Title plus one section's untried terms per query; the best unread result is read next."""

    def __init__(self, *, terms_per_query: int = 6, limit: int = 50) -> None:
        self.terms_per_query = terms_per_query
        self.limit = limit

    def navigate(self, article: Article, criteria: SectionCriteria, memory: Memory,
                 search: SearchBackend) -> NavigationStep:
        avoid = _ignored_terms(memory)
        tried = {t for q in memory.queries for t in q.split()}
        paths = list(criteria.criteria) or [()]
        queries = []
        for k in range(len(paths)):
            path = paths[(len(memory.queries) + k) % len(paths)]
            terms = [t for t in criteria.for_section(path).split() if t not in tried and t not in avoid]
            queries.append(f"{article.title} {' '.join(terms[: self.terms_per_query])}".strip())
        queries.append(article.title)
        # Last resort: every section's terms, so nothing related to the article goes unread.
        every = sorted({t for text in criteria.criteria.values() for t in text.split()})
        queries.extend(" ".join(every[i: i + 30]) for i in range(0, len(every), 30))
        for query in queries:
            for result in search.search(query, limit=self.limit):
                if result.url not in memory.read_urls:
                    return NavigationStep(query, result, f"best unread result (rank {result.rank}) for {query!r}")
        return NavigationStep(queries[-1], None, "every result of every query has been read")


@functools.lru_cache(maxsize=4096)
def _token_set(text: str) -> frozenset[str]:
    """The content tokens of a text, cached: the loop compares the same updates many times."""
    return frozenset(content_tokens(text))


def _ignored_terms(memory: Memory) -> set[str]:
    """Terms that only ignored updates carried: searching them again would find the same things."""
    kept = {t for u in memory.kept for t in _token_set(u.text)}
    ignored = Counter(t for d in memory.decisions if d.action == "ignore" for t in _token_set(d.update.text))
    return {t for t, c in ignored.items() if c >= 2 and t not in kept}


# --- extraction ------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Unit:
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


@dataclass(frozen=True)
class _Scored:
    score: float
    unit: _Unit
    known: int
    new: int
    stated: float   # the largest share of one article sentence this unit contains


class OfflineExtractor(Extractor):
    """Passages about the subject with content the article lacks, each mapped to a section.

    A passage is a run of sentences (cased pages) or a word window (texts that lost
    their case and punctuation) of at most ``window`` words (a suggestion may hold 100;
    on the dev backtest 80 placed best: S_acc 54% against 46% at 100, C_soft 13.1% against
    13.8%). Measured on the dev backtest, the passages that bring back removed
    facts are the ones that share most vocabulary with the article and contain much
    of one of its sentences: the article was written from them, and the missing
    sentence sat next to the ones that remain. So the score rewards known words and,
    most, the best share of one article sentence; a passage must still bring
    ``min_new`` words the article lacks. Weights chosen on a scratch simulation of the
    selection (2-fold by task): stated 1.0 -> 1.5, the best overlap with one section
    (weight 1/30) dropped, and the stop-word share capped at 0.25 instead of 0.35
    (dev C_soft 13.5% -> 15.9%, both halves 16%); page furniture with many stop
    words had outranked the reporting.

    Scraped pages often lose the space between a link or headline and the next text
    ("choice?Norwich City", "PalaceCrystal Palace"); :func:`unglue` puts it back before
    the page is cut into passages. On the dev backtest suggestions with two or more such
    joins went from 45 of 500 to 6 (C_soft 14.7% -> 15.0%, C_hard 8.6% -> 8.9%).
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
        tokens = _word_tokens(doc_words)
        sums = piece_sums(doc_words)
        cased = is_cased(text)
        note = "" if cased else f"; {LIST_NOTE if has_capitals(text) else RESTORED_NOTE}"
        units = _sentence_units(text, self.window, sums, tokens) if cased else \
            _window_units(doc_words, self.window, self.step, prof.casing, sums, tokens)
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
            # which for every window of every page was a tenth of the warm back-test.
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

    def _score(self, prof: _Profile, unit: _Unit, short: bool) -> _Scored | None:
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
        score = wk * len(known) + ws * stated + wh * halves + wp * min(_prose(unit.quote), self.prose_cap)
        return _Scored(score, unit, len(known), n_new, stated)


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


def _prose(text: str) -> float:
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


def _word_tokens(doc_words: list[str]) -> list[tuple[str, ...]]:
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


def _sentence_units(text: str, max_words: int, sums: list[int], tokens: list[tuple[str, ...]]) -> list[_Unit]:
    """Each sentence of a cased page's prose lines, alone and joined with the sentences after
    it on its line while they fit in ``max_words``."""
    spans = [span for span in sentence_spans(text) if span[2] is not None]
    units: list[_Unit] = []
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
               max_words: int) -> _Unit:
    quote = " ".join(sentences)
    split = quote.split()
    kept = split[: _fit(sums, start, start + len(split), max_words) - start]
    return _Unit(cased=safe_text(" ".join(kept)), quote=quote, start=start, end=start + len(kept),
                 tokens=_span_tokens(tokens, start, start + len(kept)))


def _window_units(doc_words: list[str], size: int, step: int, casing: dict[str, str],
                  sums: list[int], tokens: list[tuple[str, ...]]) -> list[_Unit]:
    """Overlapping word windows of an uncased text, with case restored from the article."""
    units = []
    for start in range(0, max(1, len(doc_words) - size // 2), step):
        chunk = doc_words[start: _fit(sums, start, min(len(doc_words), start + size), size)]
        if len(chunk) < 8:
            continue
        units.append(_Unit(casing=casing, quote=" ".join(chunk), start=start,
                           end=start + len(chunk), tokens=_span_tokens(tokens, start, start + len(chunk))))
    return units


# --- aggregation and editing ------------------------------------------------------------------


class OfflineAggregator(Aggregator):
    """Ignore what is already said, replace a kept update by a longer one on the same fact, else add."""

    def __init__(self, *, stated: float = 0.8, same_fact: float = 0.6, restatements=None) -> None:
        self.stated = stated
        self.same_fact = same_fact
        # A winellbot.pipeline.offline_meaning.Restatements: an article sentence that says the
        # same in other words makes an update old news too.
        self.restatements = restatements

    def aggregate(self, article: Article, update: Update, kept: tuple[Update, ...]) -> Decision:
        toks = _token_set(update.text)
        if not toks:
            return Decision("ignore", update, "no content words")
        prof = profile(article)
        section = [s for path, s in prof.sentences if path == tuple(update.section_path)]
        said = max((len(toks & s) / len(toks) for s in section), default=0.0)
        if said >= self.stated:
            return Decision("ignore", update, f"the section already says {said:.0%} of it in one sentence")
        restated = self.restatements.find(article, update.text) if self.restatements is not None else None
        if restated is not None:
            return Decision("ignore", update, restated)
        for other in kept:
            theirs = _token_set(other.text)
            overlap = len(toks & theirs) / max(1, min(len(toks), len(theirs)))
            if overlap < self.same_fact:
                continue
            # The better-scored of two passages on the same fact wins, whichever was read first.
            if update.score > other.score or (update.score == other.score and len(toks) > len(theirs)):
                return Decision("replace", update, f"says more about the same fact ({overlap:.0%} shared) "
                                                   f"than a kept update", replaces=other.key)
            return Decision("ignore", update, f"a kept update already says {overlap:.0%} of it")
        return Decision("add", update, "new relative to the section and to the kept updates")


class OfflineEditor(Editor):
    """Append the sentence to the paragraph with a cite news reference; the sentence is the added text."""

    def edit(self, paragraph: Paragraph | None, update: Update, citation: Citation) -> Edit:
        sentence = safe_text(update.text)
        ref = cite_news(citation)
        old = paragraph.wikitext if paragraph is not None else ""
        new = f"{old.rstrip()} {sentence}{ref}".strip()
        # quoted=True: the sentence keeps the source's wording, so the copying gate asks the
        # reviewer to paraphrase it instead of blocking it as copied prose.
        return Edit(old_paragraph=old, new_paragraph=new, added_text=sentence, citation=citation,
                    reason=f"appended the source's sentence: {update.reason}", quoted=True)


def cite_news(c: Citation) -> str:
    """A ``<ref>{{cite news ...}}</ref>`` whose values cannot break out of the template."""
    def val(s: str) -> str:
        return safe_text(s).replace("=", "-")

    url = citation_url(c.url)
    cited = f"|url={url} " if url else ""  # no url rather than a broken one: the sources gate holds it
    return (f"<ref>{{{{cite news {cited}|title={val(c.title)} |work={val(c.work)} "
            f"|date={val(c.date)} |access-date={val(c.access_date)}}}}}</ref>")


def build_offline_pipeline(*, max_suggestions: int, max_iterations: int, max_empty: int,
                           today: dt.date | None = None, embedder=None, placement_embedder=None) -> Pipeline:
    """The offline pipeline; :func:`winellbot.factory.build_pipeline` builds it for the bot and
    the backtest alike from the settings' one table of defaults, with a
    :class:`winellbot.meaning.Embedder` (``embedder=None``: words only, for tests of the lexical parts)
    and the placement's own (default ``embedder``): it must embed with the model the placement
    weights were fitted with, or building the placer raises :class:`winellbot.errors.ConfigError`."""
    from winellbot.pipeline.fact import FactPicker
    from winellbot.pipeline.offline_meaning import MeaningPlacer, Restatements, SentenceCutter
    from winellbot.pipeline.punctuate import Punctuator
    from winellbot.pipeline.widen import Widener

    restatements = Restatements(embedder) if embedder is not None else None
    placement_embedder = placement_embedder or embedder
    loop = UpdateAggregationLoop(OfflineNavigator(), OfflineExtractor(), OfflineAggregator(restatements=restatements),
                                 max_iterations=max_iterations, max_empty=max_empty)
    # The passages kept are placed by meaning, then widened to a suggestion's words, then cut at a
    # sentence's end if the widening could not fit them (winellbot.pipeline.widen); a passage of a page
    # that lost its punctuation is given marks back (winellbot.pipeline.punctuate).
    refiners = (Widener(), SentenceCutter(), Punctuator(), FactPicker(restatements=restatements),
                MeaningPlacer(placement_embedder)) if embedder is not None else ()
    return Pipeline(inducer=OfflineCriteria(), loop=loop, editor=OfflineEditor(),
                    max_suggestions=max_suggestions, today=today, refiners=refiners,
                    embedders=tuple({id(e): e for e in (embedder, placement_embedder) if e is not None}.values()))
