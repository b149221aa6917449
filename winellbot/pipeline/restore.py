"""Case, possessives and contractions for source texts that lost them.

Some copies of web pages come without case or punctuation (WikiGenBench stores the
pages an article cites that way). The offline extractor proposes passages of such
texts with their names written as the article writes them, a name's lost
possessive (``ethiopias`` -> ``Ethiopia's``, but not ``news``) and common contractions
(``doesnt`` -> ``doesn't``) repaired, months, days and "I" capitalised, a capital
first and a full stop last, and tells the reviewer the capitals are the bot's.

Sentence boundaries inside such a passage are not restored here: a word-frequency
boundary model found few of them and was wrong more often than right (figures:
docs/results.md, "The punctuation restorer"). The punctuation restorer
(:mod:`winellbot.pipeline.offline.punctuate`) does that instead.
"""
from __future__ import annotations

import functools
import re
from collections import Counter

from winellbot.bundled import ModelMissing, minilm_dir
from winellbot.text import STOP_WORDS

# "May" and "march" are also a verb, so only unambiguous names.
_ALWAYS_CASED = {w.lower(): w for w in """January February April June July August September October
November December Monday Tuesday Wednesday Thursday Friday Saturday Sunday I""".split()}
# Not "we're": without its apostrophe it is "were", far the commoner word (restored, "they we're defeated"
# read as the bot's first person and the style gate stopped it).
_CONTRACTIONS = {
    w.replace("'", ""): w for w in """don't doesn't didn't isn't wasn't weren't aren't can't couldn't wouldn't
    shouldn't hasn't haven't hadn't they're you're I've I'm we've they've you've that's there's what's
    here's who's""".split()
}
_MID_SENTENCE_WORD = re.compile(r"(?<![.!?]\s)(?<!^)\b([A-Za-z][\w'-]*)")


def name_casing(text: str) -> dict[str, str]:
    """The usual written form of each word the text capitalises mid-sentence (names, places)."""
    seen: dict[str, Counter] = {}
    for match in _MID_SENTENCE_WORD.finditer(text):
        word = match.group(1)
        seen.setdefault(word.lower(), Counter())[word] += 1
    casing = {}
    for low, forms in seen.items():
        form, count = forms.most_common(1)[0]
        if form != low and count > forms.get(low, 0):
            casing[low] = form
    return casing


_NAME_PAIR = re.compile(r"(?=\b([A-Z][\w'-]*)\s+([A-Z][\w'-]*))")


def name_pairs(text: str) -> frozenset[tuple[str, str]]:
    """Pairs of adjacent capitalised words the text writes (lower-cased): the parts of its many-word
    names ("Khmer Rouge", "New York"), where an English word is part of a name."""
    return frozenset((a.lower(), b.lower()) for a, b in _NAME_PAIR.findall(text) if a.lower() not in STOP_WORDS)


def restore_word(word: str, casing: dict[str, str]) -> str:
    """One lower-cased word as it would be written: a name's case, a lost apostrophe."""
    if word in casing:
        return casing[word]
    if word in _ALWAYS_CASED:
        return _ALWAYS_CASED[word]
    if word in _CONTRACTIONS:
        return _CONTRACTIONS[word]
    if len(word) > 3 and word.endswith("s") and word[:-1] in casing and word not in english_words():
        return casing[word[:-1]] + "'s"
    return word


@functools.cache
def english_words() -> frozenset[str]:
    """Whole words of the bundled MiniLM's (uncased English) vocabulary: a lost possessive is read
    only where the word is not one of them ("news" stays "news" when the article names "New York").

    The check stops most false possessives ("news", "teams", "kings"), at the cost of some true ones
    ("johns") left as read (figures: docs/results.md, "Readable suggestions on the dev back-test").
    Empty without the model package: then every possessive is read, as before the check existed."""
    try:
        lines = (minilm_dir() / "vocab.txt").read_text(encoding="utf-8").split()
    except (ModelMissing, OSError):
        return frozenset()
    return frozenset(w for w in lines if w.isalpha())


def recase(tokens: list[str], casing: dict[str, str]) -> str:
    """Restore the words of an uncased passage, capitalise its first and end with a full stop."""
    out = [restore_word(w, casing) for w in tokens]
    if out:
        out[0] = out[0][:1].upper() + out[0][1:]
    text = " ".join(out).rstrip(" ,;:")
    return text if text.endswith((".", "!", "?")) else text + "."


RESTORED_NOTE = ("the copy of this source that the bot read had lost its case and punctuation: the words are "
                 "the source's, the capitals and apostrophes are restored by the bot; check them against the source")
