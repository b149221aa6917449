"""Whether a posted fact has entered its article.

At posting time :func:`fingerprint` keeps what the article looked like (the URLs it cited, its
sentences as short hashes) and what the posted fact brings that the article lacked: its names
(capitalised words) and figures (numbers, dates, number words), and its other content words.

:class:`AdoptionReader` reads a later revision of the article against that fingerprint. The fact is
adopted when either

* the suggestion's source URL is cited in the article and was not before (``cited``), or
* a sentence that the article did not have before states the fact: every one of its new figures and
  at least two thirds of its new names, two of them at the least (``sentence``). A fact with fewer
  than two names and figures needs :data:`WORD_SHARE` of its new words instead.

A sentence that cites another source adopts the fact with that source. Nothing here reads the wiki.
"""
from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass

from winellbot.article import named_ref_urls, parse_article
from winellbot.editor.cited import paragraph_sentences
from winellbot.errors import ArticleParseError
from winellbot.facts import key_sentence, terms
from winellbot.gates.textnorm import content_tokens, strip_markup
from winellbot.models import Article, Suggestion
from winellbot.text import words

NAME_SHARE = 2 / 3  # of the fact's new names a sentence must state
MIN_STATED = 2  # names and figures a stating sentence must share with the fact, at the least
WORD_SHARE = 0.6  # of the fact's new words, for a fact with too few names and figures
MIN_WORDS = 3
_URL = re.compile(r"https?://[^\s|\]\[<>\"{}]+", re.IGNORECASE)


def normal_url(url: str) -> str:
    """A URL compared loosely: no scheme, no ``www.``, lower-case host, no trailing slash or fragment."""
    url = (url or "").strip().split("#", 1)[0]
    url = re.sub(r"^[a-z]+://", "", url, flags=re.IGNORECASE)
    host, _, rest = url.partition("/")
    host = host.lower().removeprefix("www.")
    return (host + ("/" + rest if rest else "")).rstrip("/")


def cited_urls(wikitext: str) -> set[str]:
    """Every URL in a page's wikitext (references, cite templates, external links), normalised."""
    return {normal_url(u) for u in _URL.findall(wikitext)}


def sentence_key(sentence: str) -> str:
    """A short hash of a sentence's words (case, spacing and punctuation left out)."""
    folded = " ".join(w.lower() for w in words(strip_markup(sentence)))
    return hashlib.sha1(folded.encode("utf-8")).hexdigest()[:12]


def names_of(text: str) -> set[str]:
    """Capitalised words after a sentence's first word, folded as the gates fold words."""
    return {tok for w in words(text)[1:] if w[:1].isupper() for tok in content_tokens(w)}


@dataclass(frozen=True)
class PageSentence:
    section: tuple[str, ...]
    paragraph: str  # the paragraph's plain text
    text: str
    urls: tuple[str, ...]  # what its references cite, normalised


def page_sentences(article: Article) -> list[PageSentence]:
    """Every prose sentence of an article with the URLs its own references cite."""
    named = named_ref_urls(article.wikitext)
    out = []
    for section in article.sections:
        for para in section.paragraphs:
            for text, urls in paragraph_sentences(para.wikitext, named):
                out.append(PageSentence(section.path, para.text, text, tuple(normal_url(u) for u in urls)))
    return out


def fingerprint(article: Article, suggestion: Suggestion, features: dict | None = None) -> dict:
    """The outcome row kept when ``suggestion`` is posted about ``article`` (its latest revision)."""
    fact = key_sentence(suggestion.update.text, article) or suggestion.update.text
    known = terms(article.plain_text + " " + article.title)
    mine = terms(fact)
    return {
        "suggestion_id": suggestion.id, "page": article.title, "fact": fact,
        "names": json.dumps(sorted(names_of(fact) - known.words - known.figures)),
        "figures": json.dumps(sorted(mine.figures - known.figures)),
        "words": json.dumps(sorted(mine.words - known.words)),
        "source_url": suggestion.update.document.url, "baseline_revid": article.revid,
        "baseline_urls": json.dumps(sorted(cited_urls(article.wikitext))),
        "baseline_sentences": json.dumps(sorted({sentence_key(s.text) for s in page_sentences(article)})),
        "features": json.dumps(features) if features is not None else None,
    }


@dataclass(frozen=True)
class Adoption:
    """How a fact entered the article: ``how`` is ``cited`` or ``sentence``; ``source`` the URL cited
    for it ("" when the sentence cites nothing); ``sentence`` the article sentence that states it."""

    how: str
    source: str
    sentence: str = ""
    paragraph: str = ""
    section: tuple[str, ...] = ()


class AdoptionReader:
    """Reads one revision of an article for the facts posted about it."""

    def read(self, title: str, wikitext: str, tracked: list[dict]) -> dict[str, Adoption | None]:
        """``{suggestion id: Adoption or None}`` for each tracked row (decoded, see
        :meth:`winellbot.state.outcomes.OutcomeStore.watched`) against this revision's text."""
        try:
            article = parse_article(title, wikitext)
        except ArticleParseError:
            return {row["suggestion_id"]: None for row in tracked}
        sentences = page_sentences(article)
        urls = cited_urls(wikitext)
        return {row["suggestion_id"]: self._one(row, sentences, urls) for row in tracked}

    def _one(self, row: dict, sentences: list[PageSentence], urls: set[str]) -> Adoption | None:
        before = set(row["baseline_sentences"])
        fresh = [s for s in sentences if sentence_key(s.text) not in before]
        ours = normal_url(row["source_url"] or "")
        cited = bool(ours) and ours in urls and ours not in set(row["baseline_urls"])
        stating = [s for s in fresh if states(row, s.text)]
        if cited:
            best = next((s for s in stating if ours in s.urls), None) \
                or next((s for s in fresh if ours in s.urls), None) or (stating[0] if stating else None)
            return _adoption("cited", row["source_url"], best)
        if not stating:
            return None
        best = stating[0]
        known = set(row["baseline_urls"])
        source = next((u for u in best.urls if u not in known), "")  # a reference the article had is no news
        return _adoption("sentence", source, best)


def states(row: dict, sentence: str) -> bool:
    """Whether ``sentence`` states the fact of ``row`` (its new names and figures, or its words)."""
    t = terms(sentence)
    names, figures = set(row["names"]), set(row["figures"])
    if len(names) + len(figures) >= MIN_STATED:
        have_names = names & (t.words | names_of(sentence))
        if not figures <= t.figures | t.words:
            return False
        if names and len(have_names) < NAME_SHARE * len(names):
            return False
        return len(have_names) + len(figures) >= MIN_STATED
    new_words = set(row["words"])
    shared = new_words & t.words
    return len(new_words) >= MIN_WORDS and len(shared) >= WORD_SHARE * len(new_words) \
        and (not figures or figures <= t.figures)


def _adoption(how: str, source: str, sentence: PageSentence | None) -> Adoption:
    if sentence is None:
        return Adoption(how, source)
    return Adoption(how, source, sentence.text, sentence.paragraph, sentence.section)
