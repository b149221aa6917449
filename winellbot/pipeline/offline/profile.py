"""What the offline stages know of an article, computed once per revision: its vocabulary, its
sentences and sections with their terms, the casing of its names; and the content tokens of a text.
"""
from __future__ import annotations

import functools
import math
from collections import Counter
from dataclasses import dataclass

from winellbot.models import (
    Article,
    SectionPath,
)
from winellbot.pipeline.pipeline import per_article
from winellbot.pipeline.restore import name_casing, name_pairs
from winellbot.text import content_tokens, split_sentences

# Words that mark page furniture rather than reporting.
BOILERPLATE = frozenset(
    "cookie cookies javascript subscribe subscription newsletter login password advertisement "
    "privacy copyright browser unsubscribe signup sitemap".split()
)




@dataclass(frozen=True)
class Profile:
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
def profile(article: Article) -> Profile:
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
    return Profile(vocabulary, tuple(sentences), tuple(sections), idf, name_casing(article.plain_text),
                    frozenset(content_tokens(article.title)), {t: tuple(ids) for t, ids in index.items()},
                    tuple(len(toks) for _, toks in sentences), name_pairs(article.plain_text))


# --- criteria and navigation ---------------------------------------------------------------



@functools.lru_cache(maxsize=4096)
def token_set(text: str) -> frozenset[str]:
    """The content tokens of a text, cached: the loop compares the same updates many times."""
    return frozenset(content_tokens(text))
