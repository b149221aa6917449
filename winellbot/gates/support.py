"""Source support, offline: the added sentence must rest on the passage it cites.

Two checks, both lexical and cheap:

* strict: every number and date of the sentence, and every proper name, must
  occur in the cited passage or document (after folding case, accents,
  thousands separators, number words and month abbreviations). A number the
  source does not have is made up: ``block``. A missing name: ``hold``.
* graded: the share of the sentence's content words found in the source must
  clear ``hold_below`` (else ``hold``), and the share found in one passage (the
  quote, or the best window of the source) must clear ``flag_below`` (else
  ``flag``: the words are scattered, the reviewer should read the source).

The default thresholds were set from what human-written sentences share with the
source that best supports each (calibration: docs/results.md, "The support
gate's calibration").

The model judge (:mod:`winellbot.gates.judge`) adds a reading of meaning on top.
"""
from __future__ import annotations

import re

from winellbot.gates.base import Gate
from winellbot.gates.textnorm import (
    MONTH_ALIASES,
    NUMBER_WORDS,
    STOP_WORDS,
    WEEKDAYS,
    ClaimWord,
    claim_words,
    is_content,
    stream,
    strip_markup,
    windows,
)
from winellbot.models import Article, GateFinding, Suggestion

# Combining marks belong to the word: "Türkiye" written with a combining dot over its "i" is one name.
_CAPITALISED = re.compile(r"(?<![\w'\u2019-])[A-Z][\w\u2019'.\u0300-\u036f-]*")
# Capitalised words that open or decorate a sentence without naming anything.
_NOT_NAMES = frozenset({"mr", "mrs", "ms", "dr", "st", "sir", "jr", "sr", "inc", "ltd", "co", "the"}) | WEEKDAYS


def source_text(suggestion: Suggestion) -> tuple[str, str]:
    """The cited passage and the whole source text."""
    return suggestion.update.quote or "", suggestion.update.document.text


def source_index(suggestion: Suggestion) -> set[str]:
    """Every token the source offers: its text, title, date and the cited passage."""
    doc = suggestion.update.document
    index = set(stream(doc.text))  # stream() is cached per text: one document serves many suggestions
    for extra in (doc.title, doc.published or "", suggestion.update.quote):
        index.update(stream(extra))
    return index


def coverage(words: list[ClaimWord], index: set[str]) -> float:
    """Share of the claim's content words found in ``index`` (1.0 when it has none)."""
    content = [w for w in words if is_content(w.token)]
    if not content:
        return 1.0
    return sum(1 for w in content if w.found_in(index)) / len(content)


def passage_score(words: list[ClaimWord], quote: str, text: str, *, window: int = 80,
                  context: frozenset[str] = frozenset()) -> float:
    """Coverage by the quoted passage or by the best window of the source; ``context``
    (the source's title and date) counts as part of every passage."""
    size = max(window, 4 * len(words))
    best = coverage(words, set(stream(quote)) | context) if quote else 0.0
    for index in windows(stream(text), size):
        if best >= 1.0:
            break
        best = max(best, coverage(words, index | context))
    return best


def _after_title(before: str) -> bool:
    """Whether the text before a word ends with an abbreviated title ("Dr. ", "St. ")."""
    last = before.split()[-1:] or [""]
    return last[0].endswith(".") and last[0][:-1].lower() in _NOT_NAMES


def _opens_sentence(text: str, at: int) -> bool:
    """Whether ``text[at]`` opens a sentence: the text's start (after nothing but spaces), or after an
    end mark and a space, or after an opening quotation mark or bracket, and not after an abbreviated
    title ("Dr. Smith"). (A regular expression anchored at the end of ``text[:at]`` read the whole
    prefix for every capitalised word: quadratic in a long article.)"""
    j = at
    while j > 0 and text[j - 1].isspace():
        j -= 1
    if j == 0:
        return True
    mark = text[j - 1]
    opens = (mark in ".!?:;" and j < at) or mark in "\"\u201c("
    return opens and not _after_title(text[max(0, j - 40): j])


def proper_names(text: str) -> list[str]:
    """Capitalised words that name something (sentence openers only inside a multi-word name)."""
    names = []
    matches = list(_CAPITALISED.finditer(text))
    for i, m in enumerate(matches):
        word = m.group(0).rstrip(".'\u2019-")
        low = word.lower()
        first = re.split(r"[-'\u2019]", low)[0]
        if low in STOP_WORDS or low in _NOT_NAMES or first in MONTH_ALIASES or first in NUMBER_WORDS \
                or len(word) < 2:
            continue
        if _opens_sentence(text, m.start()):
            nxt = matches[i + 1] if i + 1 < len(matches) else None
            if nxt is None or text[m.end():nxt.start()].strip():
                continue  # an ordinary word that opens the sentence
        names.append(word)
    return list(dict.fromkeys(names))


class SupportGate(Gate):
    """Numbers, dates and names must be in the source; enough of the wording must be too."""

    name = "support"

    def __init__(self, *, hold_below: float = 0.5, flag_below: float = 0.5, window: int = 80,
                 number_severity: str = "block", name_severity: str = "hold") -> None:
        self.hold_below = hold_below
        self.flag_below = flag_below
        self.window = window
        self.number_severity = number_severity
        self.name_severity = name_severity

    def check(self, article: Article, suggestion: Suggestion) -> list[GateFinding]:
        claim = strip_markup(suggestion.edit.added_text)
        quote, text = source_text(suggestion)
        if not claim:
            return [self.finding("hold", "the suggestion adds no text to check")]
        if not quote.strip() and not text.strip():
            return [self.finding("hold", "no source text to check the sentence against")]
        index = source_index(suggestion)
        words = claim_words(claim)
        findings = []
        numbers = [f.token for w in words if not w.found_in(index) for f in w.figures if not f.found_in(index)]
        if numbers:
            findings.append(self.finding(self.number_severity,
                                         "numbers or dates not in the cited source: " + ", ".join(numbers)))
        names = [n for n in proper_names(claim) if not all(w.found_in(index) for w in claim_words(n))]
        if names:
            findings.append(self.finding(self.name_severity, "names not in the cited source: " + ", ".join(names)))
        score = coverage(words, index)
        if score < self.hold_below:
            findings.append(self.finding("hold", f"only {score:.0%} of the sentence's content words are in the "
                                                 f"cited source (needs {self.hold_below:.0%})"))
            return findings
        doc = suggestion.update.document
        context = frozenset(stream(doc.title)) | frozenset(stream(doc.published or ""))
        passage = passage_score(words, quote, text, window=self.window, context=context)
        if passage < self.flag_below:
            findings.append(self.finding("flag", f"no single passage of the source carries the sentence (best "
                                                 f"{passage:.0%} of its content words); check the source says this"))
        return findings
