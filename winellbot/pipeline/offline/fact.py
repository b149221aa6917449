"""The fact as the unit of a suggestion: one sentence of the source, picked out of a passage.

The extractor chooses passages (about 100 words of a page) because the passages that retell the
article's sentences are where a missing sentence sits. A reviewer, though, needs one fact: a
sentence an article could hold as it stands, that says something the article lacks, with the
source's words for it beside it. :class:`FactPicker` is the pipeline's last refiner: for each
passage it reads every sentence (:func:`winellbot.sentences.read`) and keeps the one that brings
most news among those that stand alone (a verb with a subject, no pronoun or "the stand" pointing
back, no page text, nobody's own voice, none of the line-alone problems of
:mod:`winellbot.gates.standalone`: a pronoun before anyone is named, a time only the page's date
fixes, a dateline or caption run into it; nor one dated the day of a month that the article's lead
gives, which retells the article's own event). The update's text becomes that sentence, its quote the
source's words for it, and its reason says what it brings. A passage with no such sentence keeps
its best sentence anyway, so that the editorial gates (:mod:`winellbot.gates.editorial`) hold it
with the reason, counted in the reports, instead of it vanishing unexplained.
"""
from __future__ import annotations

from dataclasses import replace

from winellbot.gates.standalone import problems as alone_problems
from winellbot.models import Article, Update
from winellbot.sentences import STATED, Reading, read, sentences_of
from winellbot.text import words

# An opening word that only joins the sentence to the one before ("However, ...") is dropped from
# the fact line; the quote keeps it.
_JOINERS = ("however,", "meanwhile,", "additionally,", "moreover,", "furthermore,", "also,", "but", "and",
            "so,", "still,", "instead,", "nevertheless,", "in addition,")


class FactPicker:
    """Turns each passage into its fact sentences (see the module's docstring).

    At most ``per_passage`` sentences of a passage become candidates, best first; ``restatements``
    (a :class:`winellbot.pipeline.offline.meaning.Restatements`) also passes over a sentence that
    an article sentence says in other words.
    """

    def __init__(self, *, per_passage: int = 1, restatements=None) -> None:
        self.per_passage = per_passage
        self.restatements = restatements

    def refine(self, article: Article, updates: list[Update]) -> list[Update]:
        """The fact sentences of every passage, passage by passage; a sentence that two passages
        share is kept once, with the first (best-scored) passage."""
        out: list[Update] = []
        seen: set[str] = set()
        for update in updates:
            for picked in self.pick(article, update):
                if picked.text.lower() not in seen:
                    seen.add(picked.text.lower())
                    out.append(picked)
        return out

    def pick(self, article: Article, update: Update) -> list[Update]:
        """The passage's sentences that could stand as facts, best first; with none, its best
        sentence alone (the gates will say what is wrong with it)."""
        sentences = sentences_of(update.text)
        readings = [read(_unjoined(s), article, parse=False) for s in sentences]
        order = sorted(range(len(readings)), key=lambda i: -_worth(readings[i], alone_problems(readings[i].text)))
        chosen = [i for i in order if self._stands(article, readings[i])][: self.per_passage]
        if not chosen and order:
            chosen = order[:1]
        return [replace(update, text=readings[i].text, quote=_source_words(sentences[i], update),
                        reason=f"{_brings(readings[i])}; {update.reason}") for i in chosen]

    def _stands(self, article: Article, r: Reading) -> bool:
        return stands(article, r) and (self.restatements is None or self.restatements.find(article, r.text) is None)


def stands(article: Article, r: Reading) -> bool:
    """Whether a sentence read against ``article`` could stand as a fact line by the reading's own
    rules: clean, bringing news, not mostly an article sentence, not dated the lead's day, none of
    the line-alone problems, and a verb with a subject (the parser runs only for what passed the rest)."""
    if not r.clean or r.news <= 0 or r.stated >= STATED or r.lead_day or alone_problems(r.text):
        return False
    return read(r.text, article).clean


def _worth(r: Reading, alone: dict[str, str]) -> float:
    """Which sentence of a passage is its fact: standing alone first (``alone``: its line-alone
    problems), then most news, less what an article sentence already says."""
    return (2.0 if r.clean and not alone else 0.0) + r.news - 4.0 * max(0.0, r.stated - 0.4) + (0.5 if r.dated else 0.0)


def _unjoined(sentence: str) -> str:
    low = sentence.lower()
    for joiner in _JOINERS:
        if low.startswith(joiner + " ") and len(sentence) > len(joiner) + 2:
            rest = sentence[len(joiner):].lstrip(" ,")
            return rest[:1].upper() + rest[1:]
    return sentence


def _brings(r: Reading) -> str:
    parts = []
    if r.new_figures:
        parts.append(f"{r.new_figures} figure{'s' * (r.new_figures > 1)}")
    if r.new_names:
        parts.append(f"{r.new_names} name{'s' * (r.new_names > 1)}")
    if r.new_words:
        parts.append(f"{r.new_words} other word{'s' * (r.new_words > 1)}")
    brings = ", ".join(parts) or "nothing"
    return f"the sentence brings {brings} the article lacks"


def _source_words(sentence: str, update: Update) -> str:
    """The source's own words for ``sentence``: on a page that lost its case and punctuation the
    run of its words that the restored sentence was read from, else the sentence as the page has it."""
    source = update.quote.split()
    mine = [w.strip(".,;:!?\"'()").lower() for w in words(sentence)]
    if not source or not mine:
        return sentence
    low = [w.strip(".,;:!?\"'()").lower() for w in source]
    head = mine[:3]
    for i in range(len(low) - len(head) + 1):
        if low[i: i + len(head)] == head:
            return " ".join(source[i: i + len(mine)])
    return sentence
