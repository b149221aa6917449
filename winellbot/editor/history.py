"""Editor examples from revision history (WINELL Appendix A and B.1).

Revisions come from a MediaWiki XML dump (mwxml) or from the API (Pywikibot). Consecutive
revisions are compared section by section (the page as a whole when the headings changed);
an edit is kept when it inserts one or two whole sentences into an existing paragraph, cites a
URL the page did not cite before, and removes nothing. The cited page is fetched through the
project's fetcher and the passage that supports the new sentences becomes the example's source.

Filtering, as in the paper: noise (replacement or control characters, markup left in the text),
length (the insertion 8 to 80 words), back-and-forth (edits that a later revision reverts, found
by mwreverts' identity-revert detector, the reverts themselves, and sentences that do not survive
to the page's latest revision), non-content sections (references, external links ...: never
parsed as prose by :func:`winellbot.article.parse_article`), and edits that change only
formatting (the text's sentences are the same).
"""
from __future__ import annotations

import hashlib
import random
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from winellbot.article import named_ref_urls, parse_article
from winellbot.editor.cited import CitedSentence, examples_from_article, make_example, paragraph_sentences
from winellbot.editor.examples import EditorExample
from winellbot.errors import ArticleParseError, FetchError
from winellbot.models import Document
from winellbot.wiki.site import connect

MIN_INSERTED_WORDS, MAX_INSERTED_WORDS = 8, 80
MAX_INSERTED_SENTENCES = 2
_NOISE = re.compile(r"[\ufffd\x00-\x08\x0b\x0c\x0e-\x1f]|\{\{|\}\}|\[\[|\]\]|<[a-z/]|\|")


@dataclass(frozen=True)
class Revision:
    id: int
    timestamp: str
    user: str
    comment: str
    text: str
    sha1: str = ""

    @property
    def checksum(self) -> str:
        return self.sha1 or hashlib.sha1(self.text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class _Para:
    path: tuple[str, ...]
    sentences: tuple[tuple[str, tuple[str, ...]], ...]  # (plain sentence, cited URLs)

    @property
    def texts(self) -> tuple[str, ...]:
        return tuple(s for s, _ in self.sentences)


def reverted_ids(revisions: list[Revision], radius: int = 15) -> set[int]:
    """Ids of revisions that were reverted, or that revert (identity reverts, by checksum)."""
    import mwreverts

    detector = mwreverts.Detector(radius=radius)
    out: set[int] = set()
    for rev in revisions:
        revert = detector.process(rev.checksum, rev.id)
        if revert is not None:
            out.add(revert.reverting)
            out.update(revert.reverteds)
    return out


def _paragraphs(title: str, text: str) -> tuple[list[_Para], set[str]]:
    """The page's prose paragraphs (sentences with their citations) and every URL it cites."""
    try:
        article = parse_article(title, text)
    except ArticleParseError:
        return [], set()
    named = named_ref_urls(text)
    paras, urls = [], set()
    for section in article.sections:
        for para in section.paragraphs:
            pairs = tuple(paragraph_sentences(para.wikitext, named))
            paras.append(_Para(section.path, pairs))
            urls.update(u for _, us in pairs for u in us)
    return paras, urls


def _insertion(old: _Para, new: _Para) -> tuple[int, int] | None:
    """(start, end) of the one block of sentences ``new`` inserts into ``old``, nothing else changed."""
    a, b = old.texts, new.texts
    size = len(b) - len(a)
    if size < 1 or size > MAX_INSERTED_SENTENCES:
        return None
    for i in range(len(a) + 1):
        if b[:i] == a[:i] and b[i + size:] == a[i:]:
            return i, i + size
    return None


def _best_old(new: _Para, old_paras: list[_Para], same_outline: bool) -> _Para | None:
    candidates = [p for p in old_paras if p.path == new.path] if same_outline else old_paras
    shared = [(len(set(p.texts) & set(new.texts)), p) for p in candidates]
    best = max(shared, key=lambda x: x[0], default=(0, None))
    return best[1] if best[0] else None


class HistoryMiner:
    """Turns one page's revisions into editor examples (see the module docstring)."""

    def __init__(self, fetch: Callable[[str], Document], *, seed: int = 0) -> None:
        self.fetch = fetch
        self.seed = seed
        self.skipped: Counter = Counter()

    def examples(self, title: str, revisions: Iterable[Revision]) -> list[EditorExample]:
        revs = sorted(revisions, key=lambda r: r.id)  # timestamps have 1 s resolution
        if len(revs) < 2:
            return []
        reverted = reverted_ids(revs)
        latest = set(_paragraph_texts(title, revs[-1].text))
        rng = random.Random(f"{self.seed}:{title}")
        out: list[EditorExample] = []
        previous = _paragraphs(title, revs[0].text)
        for old_rev, rev in zip(revs, revs[1:]):
            current = _paragraphs(title, rev.text)
            if rev.id in reverted:
                self.skipped["reverted or reverting edit"] += 1
            else:
                out += self._compare(title, old_rev, rev, previous, current, latest, rng)
            previous = current
        return out

    def _compare(self, title, old_rev, rev, previous, current, latest, rng) -> list[EditorExample]:
        (old_paras, old_urls), (new_paras, new_urls) = previous, current
        if [p.texts for p in old_paras] == [p.texts for p in new_paras]:
            self.skipped["no change to the text's sentences (formatting only)"] += 1
            return []
        fresh = new_urls - old_urls
        if not fresh:
            self.skipped["no new cited URL"] += 1
            return []
        same_outline = [p.path for p in old_paras] == [p.path for p in new_paras]
        out = []
        for n, para in enumerate(new_paras):
            old = _best_old(para, old_paras, same_outline)
            span = _insertion(old, para) if old else None
            if span is None:
                continue
            why = self._problem(para, span, fresh, latest)
            if why:
                self.skipped[why] += 1
                continue
            example = self._example(title, old_rev, rev, para, span, fresh, rng, n)
            if example:
                out.append(example)
        return out

    def _problem(self, para: _Para, span: tuple[int, int], fresh: set[str], latest: set[str]) -> str:
        inserted = para.sentences[span[0]:span[1]]
        text = " ".join(s for s, _ in inserted)
        if not any(set(urls) & fresh for _, urls in inserted):
            return "inserted sentences cite no new URL"
        if _NOISE.search(text):
            return "noise in the inserted text"
        if not MIN_INSERTED_WORDS <= len(text.split()) <= MAX_INSERTED_WORDS:
            return "insertion too short or too long"
        if not all(s in latest for s, _ in inserted):
            return "inserted text removed later (back-and-forth)"
        return ""

    def _example(self, title, old_rev, rev, para, span, fresh, rng, n) -> EditorExample | None:
        start, end = span
        urls = [u for _, us in para.sentences[start:end] for u in us if u in fresh]
        # One CitedSentence per insertion: the inserted block stands as one "sentence" to take out.
        sentences = (*para.texts[:start], " ".join(para.texts[start:end]), *para.texts[end:])
        cited = CitedSentence(para.path, sentences, start, tuple(urls))
        why = "no cited page could be read"
        for url in dict.fromkeys(urls):
            try:
                document = self.fetch(url)
            except FetchError:
                continue
            meta = {"article": title, "kind": "history", "revid": rev.id, "parentid": old_rev.id,
                    "user": rev.user, "comment": rev.comment, "timestamp": rev.timestamp, "url": url}
            example, why = make_example(f"rev-{rev.id}-{n}", title, cited, document, rng, meta)
            if example:
                return example
        self.skipped[why] += 1
        return None


def _paragraph_texts(title: str, text: str) -> Iterator[str]:
    for para in _paragraphs(title, text)[0]:
        yield from para.texts


def dump_revisions(path: str) -> Iterator[tuple[str, list[Revision]]]:
    """(title, revisions) of every page of a MediaWiki XML dump, read with mwxml."""
    import mwxml

    with open(path, "rb") as handle:
        for page in mwxml.Dump.from_file(handle):
            revs = [Revision(int(r.id), str(r.timestamp or ""), (r.user.text if r.user else "") or "",
                             r.comment or "", r.text or "", r.sha1 or "") for r in page]
            yield page.title, revs


def site_revisions(site, title: str, total: int | None = None) -> list[Revision]:
    """A page's revisions with their text, through Pywikibot (oldest first by id)."""
    import pywikibot

    page = pywikibot.Page(site, title)
    revs = [Revision(int(r.revid), str(r.timestamp), r.user or "", r.comment or "", r.text or "", r.sha1 or "")
            for r in page.revisions(content=True, total=total)]
    return sorted(revs, key=lambda r: r.id)


def examples_from_dump(path: str, fetch, *, skipped: Counter | None = None) -> list[EditorExample]:
    miner = HistoryMiner(fetch)
    out = [e for title, revs in dump_revisions(path) for e in miner.examples(title, revs)]
    if skipped is not None:
        skipped.update(miner.skipped)
    return out


def examples_from_wiki(api_url: str, titles: list[str], fetch, *, cited: bool = False,
                       skipped: Counter | None = None) -> list[EditorExample]:
    """Examples from pages read through the API: their history, or (``cited``) their cited sentences."""

    site = connect(api_url)
    miner = HistoryMiner(fetch)
    out: list[EditorExample] = []
    for title in titles:
        revs = site_revisions(site, title)
        if cited:
            out += examples_from_article(title, revs[-1].text, fetch, skipped=skipped) if revs else []
        else:
            out += miner.examples(title, revs)
    if skipped is not None:
        skipped.update(miner.skipped)
    return out
