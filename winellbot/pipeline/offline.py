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

import datetime as dt
import math
import re
from collections import Counter
from dataclasses import dataclass

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
from winellbot.pipeline.pipeline import Pipeline
from winellbot.pipeline.placement import placer_for
from winellbot.text import content_tokens, split_sentences, words

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


_PROFILES: dict[tuple[str, int], _Profile] = {}


def profile(article: Article) -> _Profile:
    """The cached profile of an article (keyed by title and wikitext hash)."""
    key = (article.title, hash(article.wikitext))
    if key not in _PROFILES:
        if len(_PROFILES) > 64:
            _PROFILES.clear()
        _PROFILES[key] = _build_profile(article)
    return _PROFILES[key]


def _build_profile(article: Article) -> _Profile:
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
    return _Profile(vocabulary, tuple(sentences), tuple(sections), idf, _casing(article.plain_text),
                    frozenset(content_tokens(article.title)))


def _casing(text: str) -> dict[str, str]:
    """The usual written form of each word the article capitalises mid-sentence (names, places)."""
    seen: dict[str, Counter] = {}
    for match in re.finditer(r"(?<![.!?]\s)(?<!^)\b([A-Za-z][\w'-]*)", text):
        word = match.group(1)
        seen.setdefault(word.lower(), Counter())[word] += 1
    casing = {}
    for low, forms in seen.items():
        form, count = forms.most_common(1)[0]
        if form != low and count > forms.get(low, 0):
            casing[low] = form
    return casing


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


def _ignored_terms(memory: Memory) -> set[str]:
    """Terms that only ignored updates carried: searching them again would find the same things."""
    kept = {t for u in memory.kept for t in content_tokens(u.text)}
    ignored = Counter(t for d in memory.decisions if d.action == "ignore" for t in content_tokens(d.update.text))
    return {t for t, c in ignored.items() if c >= 2 and t not in kept}


# --- extraction ------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Unit:
    text: str      # what would be proposed (cleaned, cased, punctuated)
    quote: str     # the source words
    start: int     # word offset in the document
    end: int


class OfflineExtractor(Extractor):
    """Passages about the subject with content the article lacks, each mapped to a section."""

    def __init__(self, *, window: int = 60, step: int = 20, per_document: int = 4, context: int = 120,
                 min_new: int = 1) -> None:
        self.window = window
        self.step = step
        self.per_document = per_document
        self.context = context
        self.min_new = min_new

    def extract(self, article: Article, criteria: SectionCriteria, document: Document) -> list[Update]:
        prof = profile(article)
        doc_words = words(document.text)
        units = _sentence_units(document.text, self.window) if is_cased(document.text) else \
            _window_units(doc_words, self.window, self.step, prof.casing)
        scored = []
        for unit in units:
            toks = set(content_tokens(unit.quote))
            if not toks or toks & BOILERPLATE:
                continue
            known, new = toks & prof.vocabulary, toks - prof.vocabulary
            # In a long page, only passages with words the article lacks; a short statement
            # (one or two units) may also be known words in a combination the article never makes.
            if not known or (len(new) < self.min_new and len(units) > 3):
                continue
            stated = max((len(toks & s) / len(toks) for _, s in prof.sentences), default=0.0)
            if stated >= 0.8 or (len(new) < self.min_new and stated >= 0.6):
                continue
            weight = sum(prof.idf.get(t, 1.0) for t in known)
            scored.append((weight, unit, len(new), stated))
        scored.sort(key=lambda x: -x[0])
        updates = []
        taken: list[tuple[int, int]] = []
        for weight, unit, n_new, stated in scored:
            if any(unit.start < e and s < unit.end for s, e in taken):
                continue
            taken.append((unit.start, unit.end))
            near = " ".join(doc_words[max(0, unit.start - self.context): unit.end + self.context])
            placed = placer_for(article).place(unit.quote, near, document_text=document.text)
            path, fit = placed.section_path, placed.score
            reason = (f"{n_new} content words the article lacks, {weight:.1f} weight of its vocabulary; "
                      f"neighbourhood fits section {' > '.join(path) or 'lead'} ({fit:.2f})")
            updates.append(Update(text=unit.text, section_path=path, quote=unit.quote, document=document,
                                  score=round(weight, 3), reason=reason))
            if len(updates) >= self.per_document:
                break
        return updates

    def _place(self, prof: _Profile, doc_words: list[str], unit: _Unit) -> tuple[SectionPath, float]:
        """The section whose text best matches the unit and its neighbourhood in the document."""
        near = " ".join(doc_words[max(0, unit.start - self.context): unit.end + self.context])
        bag = Counter(content_tokens(unit.quote)) + Counter(content_tokens(near))
        best, best_score = (), 0.0
        for path, sec_bag in prof.sections:
            score = _cosine(bag, sec_bag, prof.idf)
            if score > best_score:
                best, best_score = path, score
        return best, best_score


def _cosine(a: Counter, b: Counter, idf: dict[str, float]) -> float:
    dot = sum(a[t] * b[t] * idf.get(t, 1.0) ** 2 for t in a if t in b)
    if not dot:
        return 0.0
    na = math.sqrt(sum((c * idf.get(t, 1.0)) ** 2 for t, c in a.items()))
    nb = math.sqrt(sum((c * idf.get(t, 1.0)) ** 2 for t, c in b.items()))
    return dot / (na * nb)


def is_cased(text: str) -> bool:
    """False for texts that lost their case and punctuation (as WikiGenBench stores references)."""
    sample = text[:5000]
    letters = sum(c.isalpha() for c in sample)
    upper = sum(c.isupper() for c in sample)
    stops = sample.count(". ") + sample.count(".\n") + sample.rstrip().rstrip("\"'\u201d\u2019)").endswith((".", "!", "?"))
    return letters > 0 and upper / letters > 0.01 and stops >= 1 and stops * 80 > len(sample.split())


def _sentence_units(text: str, max_words: int) -> list[_Unit]:
    """Sentences of the prose lines of a cased page, joined while they fit in ``max_words``."""
    units: list[_Unit] = []
    offset = 0
    for line in text.split("\n"):
        line_words = len(line.split())
        if line_words >= 8:
            current: list[str] = []
            start = offset
            for sentence in split_sentences(line):
                n = len(sentence.split())
                if current and sum(len(s.split()) for s in current) + n > max_words:
                    units.append(_make_unit(current, start))
                    start += sum(len(s.split()) for s in current)
                    current = []
                current.append(sentence)
            if current:
                units.append(_make_unit(current, start))
        offset += line_words
    return [u for u in units if u.text.lstrip("\"'\u201c\u2018(")[:1].isupper()
            or u.text.lstrip("\"'\u201c\u2018(")[:1].isdigit()]


def _make_unit(sentences: list[str], start: int) -> _Unit:
    quote = " ".join(sentences)
    n = len(quote.split())
    return _Unit(text=safe_text(" ".join(quote.split()[:100])), quote=quote, start=start, end=start + n)


def _window_units(doc_words: list[str], size: int, step: int, casing: dict[str, str]) -> list[_Unit]:
    """Overlapping word windows of an uncased text, with case restored from the article."""
    units = []
    for start in range(0, max(1, len(doc_words) - size // 2), step):
        chunk = doc_words[start: start + size]
        if len(chunk) < 8:
            continue
        quote = " ".join(chunk)
        units.append(_Unit(text=safe_text(recase(chunk, casing)), quote=quote, start=start,
                           end=start + len(chunk)))
    return units


def recase(tokens: list[str], casing: dict[str, str]) -> str:
    """Restore the case of lower-cased words from the article's usage and end with a full stop."""
    out = [casing.get(w, "I" if w == "i" else w) for w in tokens]
    if out:
        out[0] = out[0][:1].upper() + out[0][1:]
    text = " ".join(out).rstrip(" ,;:")
    return text if text.endswith((".", "!", "?")) else text + "."


_UNSAFE = re.compile(r"[\[\]{}<>|~]|'{2,}|__|https?://\S+")


def safe_text(text: str) -> str:
    """Text from a web page made inert as wikitext: no links, templates, tags, signatures or bold."""
    return re.sub(r"\s+([.,;:!?])", r"\1", " ".join(_UNSAFE.sub(" ", text).split()))


# --- aggregation and editing ------------------------------------------------------------------


class OfflineAggregator(Aggregator):
    """Ignore what is already said, replace a kept update by a longer one on the same fact, else add."""

    def __init__(self, *, stated: float = 0.8, same_fact: float = 0.6) -> None:
        self.stated = stated
        self.same_fact = same_fact

    def aggregate(self, article: Article, update: Update, kept: tuple[Update, ...]) -> Decision:
        toks = set(content_tokens(update.text))
        if not toks:
            return Decision("ignore", update, "no content words")
        prof = profile(article)
        section = [s for path, s in prof.sentences if path == tuple(update.section_path)]
        said = max((len(toks & s) / len(toks) for s in section), default=0.0)
        if said >= self.stated:
            return Decision("ignore", update, f"the section already says {said:.0%} of it in one sentence")
        for other in kept:
            theirs = set(content_tokens(other.text))
            overlap = len(toks & theirs) / max(1, min(len(toks), len(theirs)))
            if overlap < self.same_fact:
                continue
            if update.score > other.score and len(toks) > len(theirs):
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

    url = re.sub(r"[\s|{}\[\]<>]", "", c.url)
    return (f"<ref>{{{{cite news |url={url} |title={val(c.title)} |work={val(c.work)} "
            f"|date={val(c.date)} |access-date={val(c.access_date)}}}}}</ref>")


def build_offline_pipeline(*, max_suggestions: int = 5, max_iterations: int = 40, max_empty: int = 10,
                           today: dt.date | None = None) -> Pipeline:
    """The offline pipeline, as the production bot and the backtest both use it."""
    loop = UpdateAggregationLoop(OfflineNavigator(), OfflineExtractor(), OfflineAggregator(),
                                 max_iterations=max_iterations, max_empty=max_empty)
    return Pipeline(inducer=OfflineCriteria(), loop=loop, editor=OfflineEditor(),
                    max_suggestions=max_suggestions, today=today)
