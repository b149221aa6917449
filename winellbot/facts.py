"""What a reviewer needs to judge a new fact quickly: the fact in one line, the article sentence it
may make stale, and whether two sources report the same fact.

All three work on words and figures (numbers, number words, months), folded the way the gates
fold them (:mod:`winellbot.gates.textnorm`), so "2 to 4 October 2026" in one source and "from
2 to 4 October" in another count as the same figures.
"""
from __future__ import annotations

from dataclasses import dataclass

from winellbot.gates.textnorm import MONTH_ALIASES, claim_words, content_tokens, strip_markup
from winellbot.models import Article
from winellbot.sentences import MAX_WORDS
from winellbot.text import split_sentences, words

# A sentence retells an article sentence when that one has this share of its words, the words cut to
# their first letters (inflections and "-ly" aside: "followed", "following").
RETOLD_SHARE = 0.6
RETOLD_STEM = 5
# A sentence of the article is named as possibly stale when this share of its words and figures
# recur in the update, it states a figure, and the update brings a figure it lacks.
STALE_SHARE = 0.4
STALE_MIN_SHARED = 3
# Two updates report the same fact when the figures of one's key sentence (at least this many)
# all appear in the other.
SAME_FACT_FIGURES = 3


@dataclass(frozen=True)
class Terms:
    """A text's content words (figures left out) and its figures, folded."""

    words: frozenset[str]
    figures: frozenset[str]

    @property
    def all(self) -> frozenset[str]:
        return self.words | self.figures


def terms(text: str) -> Terms:
    figures = {f.token for w in claim_words(text) for f in w.figures}
    figures |= {alt for w in claim_words(text) for f in w.figures for alt in f.alts if alt.isdigit()}
    plain = frozenset(t for t in content_tokens(text) if t not in figures and not t.isdigit())
    return Terms(plain, frozenset(figures))


def key_sentence(update_text: str, article: Article) -> str:
    """The update's sentence that carries its news, cut to one short line.

    News is written top down, so the first sentence that brings at least three things the article
    lacks (figures new to it count double: they are usually the news) wins, unless it only retells
    an article sentence (:func:`_retold`); failing that, the sentence that brings the most, retold
    ones last.
    """
    known = terms(article.plain_text + " " + article.title)
    sentences = [s for s in split_sentences(strip_markup(update_text)) if s.strip()]
    if not sentences:
        return ""
    novelty = []
    for sentence in sentences:
        t = terms(sentence)
        novelty.append(len(t.words - known.words) + 2 * len(t.figures - known.figures))
    stems = [_stems(other) for other in split_sentences(article.plain_text)]
    fresh = [not _retold(s, stems, known) if n else False for s, n in zip(sentences, novelty)]
    first = next((i for i, n in enumerate(novelty) if n >= 3 and fresh[i]), None)
    best = first if first is not None else max(range(len(sentences)), key=lambda i: (fresh[i], novelty[i], -i))
    return shorten(sentences[best])


def _stems(sentence: str) -> frozenset[str]:
    return frozenset(w[:RETOLD_STEM] for w in terms(sentence).words)


def _retold(sentence: str, article_stems: list[frozenset[str]], known: Terms) -> bool:
    """Whether ``sentence`` says an article sentence again in other words: no figure or capitalised
    name the article lacks, and one article sentence has :data:`RETOLD_SHARE` of its words, compared
    by their first letters ("the railway reached the town in 1871, and the boatyards grew rapidly in
    the decades that followed" retold as "the railway arrived in 1871 and the boatyards grew quickly
    in the following decades": three words the article lacks, none of them news)."""
    t = terms(sentence)
    names = {tok for w in words(sentence)[1:] if w[:1].isupper() for tok in content_tokens(w)}
    if t.figures - known.figures or not t.words or names - known.words - known.figures:
        return False
    own = _stems(sentence)
    return any(len(own & other) >= RETOLD_SHARE * len(own) for other in article_stems)


def shorten(sentence: str, limit: int = MAX_WORDS) -> str:
    """At most ``limit`` words; a cut sentence ends in an ellipsis. The default is the fact line's
    own limit (:data:`winellbot.sentences.MAX_WORDS`), so a fact sentence the gates passed is posted whole."""
    parts = words(sentence)
    if len(parts) <= limit:
        return sentence.strip()
    return " ".join(parts[:limit]).rstrip(",;:") + " …"


def stale_sentence(article: Article, update_text: str) -> str | None:
    """The article sentence that the update most likely makes out of date, or None.

    A candidate states a date or a number; the update shares enough of its words and figures
    (at least :data:`STALE_MIN_SHARED`, and :data:`STALE_SHARE` of them); and the update's sentence
    closest to it brings a date or number the article does not have (a new date, count or amount
    for the same thing). A source that only restates the article's figures makes nothing stale.
    Of several candidates, the one sharing most (share times count) is named.
    """
    update = [terms(s) for s in split_sentences(strip_markup(update_text)) if s.strip()]
    if not update:
        return None
    everything = frozenset().union(*(t.all for t in update))
    title = terms(article.title).words
    known = terms(article.plain_text).figures
    best: tuple[float, str] | None = None
    for sec in article.sections:
        for sentence in (s for para in sec.paragraphs for s in split_sentences(para.text)):
            mine = terms(sentence)
            if not _dated(mine.figures):
                continue
            own = (mine.words - title) | mine.figures
            shared = own & everything
            if len(shared) < STALE_MIN_SHARED or len(shared) / len(own) < STALE_SHARE:
                continue
            closest = max(update, key=lambda t: len(own & t.all))
            if not _dated(closest.figures - known):
                continue
            score = len(shared) ** 2 / len(own)
            if best is None or score > best[0]:
                best = (score, sentence)
    return best[1] if best else None


def _dated(figures: frozenset[str]) -> bool:
    """Whether some figure is a written number or a month (not a number word like "hundred")."""
    return any(any(c.isdigit() for c in f) or f in MONTH_ALIASES for f in figures)


def same_fact(a: str, b: str, article: Article) -> bool:
    """Whether two updates report the same fact (say, from two sources).

    Either their texts are near copies, or every figure of one's key sentence (three or more)
    appears in the other update.
    """
    ta, tb = terms(strip_markup(a)), terms(strip_markup(b))
    if ta.all and tb.all and len(ta.all & tb.all) / min(len(ta.all), len(tb.all)) >= 0.8:
        return True
    for one, other in ((a, tb), (b, ta)):
        figures = terms(key_sentence(one, article)).figures
        if len(figures) >= SAME_FACT_FIGURES and figures <= other.figures:
            return True
    return False
