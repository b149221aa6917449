"""Whether a fact line stands alone: what a reviewer reading only the line cannot resolve.

:func:`problems` reads one sentence (a fact line) and returns, under the name of the rubric's error
it would earn (``unclear`` or ``furniture``), the reason it cannot stand as a line of an article:

* a personal pronoun (he, she, his, their ...) before anyone is named in the line: whose?
* a time that only the page's date fixes ("this past June", "in recent weeks", "once again",
  "at the time", "now 21", "has just started"), with no year in the line;
* a sentence cut at an abbreviation that needs a word after it ("... Drs.", "... Art.", "def.");
* two texts run together: a caption, headline or a sentence with no full stop before a capitalised
  joining word ("... Grand Prix After the start, ...", "... shipping industry In November, ...");
* a dateline glued to the sentence ("Harare, 16 May 2023:The ...", "01/17/2020The ...");
* a photo's caption, which ends on the weekday and date it was taken ("... at the White House in
  Washington Friday, Sept. 30, 2022.");
* two blocks of a page glued inside the line: a figure, a closing bracket or a full stop followed at
  once by a capitalised word ("12/23/2019Japanese author ...", "(35mm)Ten year-old ...", "... it.The").

These are the lines the blind verdicts never accepted as they stand (docs/results.md, "What is
posted: blind editor verdicts"). :mod:`winellbot.gates.editorial` holds a suggestion for them,
and the fact picker (:mod:`winellbot.pipeline.offline.fact`) passes over such a sentence for
another of its passage. The rules read the line alone: an empty mapping means none applies.
"""
from __future__ import annotations

import functools
import re

from winellbot.gates.textnorm import MONTH_NAMES, MONTHS, WEEKDAYS, YEAR
from winellbot.meaning import english

_PERSONAL = frozenset("he she him his her hers they them their theirs".split())
# Capitalised openers that name no one ("Later they ...", "In her first work ...").
_OPENERS = frozenset("""
the a an in on at by after before during when while as with for from to of into onto over under
now later then once since until despite following among about because if unlike earlier instead
however also still yet even only just not no what which who whom where how why like having although
though but and so or nor according some all one many most several both each every this that these
those it there here such other another few more much meanwhile moreover furthermore besides
""".split())
# Capitalised words of a date, which name no one ("On Christmas Day 1978, they ...").
_DATE_WORDS = frozenset(MONTHS) | frozenset(WEEKDAYS) | frozenset("christmas easter day eve".split())
_VAGUE_TIME = re.compile(
    r"\b(?:this\s+past|(?:the\s+)?(?:past|last)\s+(?:few|several|couple)|in\s+recent\s+(?:days|weeks|months|years)|"
    r"once\s+again|at\s+(?:the|that)\s+time|so\s+far|to\s+date|these\s+days|of\s+late|lately|"
    r"in\s+the\s+coming\s+(?:days|weeks|months)|(?:has|have)\s+just)\b|(?:^|,\s)(?:now|later|then)\b", re.IGNORECASE)
# Abbreviations that need a word after them: a line that ends on one was cut short.
# (Not "St.", "Inc.", "Jr.", "ft.", "etc.": a sentence may end on those.)
_OPEN_ABBREVIATIONS = frozenset("mr mrs ms dr drs prof gen col lt sgt capt cmdr adm gov sen rep rev hon pres vs "
                                "art arts def para sec ch nos fig vol pp op cf e.g i.e lit".split())
# A capitalised joining word inside a line, after a word with no punctuation: where a caption or a
# sentence with no full stop runs into the next. ("I" and "A" are left out: "World War I", "Plan A".)
_JOINS = frozenset("the in on at by after before during when while this these he she they it his her "
                   "their we as according".split())
_TRAILING_MARK = re.compile(r"[.,;:!?\"'\u201d\u2019)\]\-\u2013\u2014]$")
_MONTH = r"(?i:" + "|".join(MONTHS) + r")"
_DATELINE = re.compile(
    r"^(?:[A-Z][\w.'\- ]{1,30},\s+(?:\d{1,2}\s+" + _MONTH + r"|" + _MONTH + r"\s+\d{1,2}),?\s+\d{4}\s*"
    r"[:\-\u2013\u2014]|\d{1,2}/\d{1,2}/\d{2,4}(?=\S)|[A-Z][A-Z .]{2,}\s*\((?:Reuters|AP|AFP|PTI|IANS|ANI|UPI|CNN)\)"
    r"\s*[\-\u2013\u2014])")


def _bare(word: str) -> str:
    return word.strip(".,;:!?\"'()[]\u201c\u201d\u2018\u2019").lower()


@functools.lru_cache(maxsize=4096)
def problems(line: str) -> dict[str, str]:
    """The rubric errors (``unclear``, ``furniture``) the line earns on its own, each with its reason
    (the mapping is shared by the cache: do not change it)."""
    ws = line.split()
    found: dict[str, str] = {}
    why = dangling_pronoun(ws) or vague_time(line) or cut_at_abbreviation(ws)
    if why:
        found["unclear"] = why
    why = dateline(line) or run_together(ws) or glued_blocks(ws) or photo_caption(line)
    if why:
        found["furniture"] = why
    return found


def dangling_pronoun(ws: list[str], *, parse: bool = True) -> str | None:
    """The first personal pronoun of the line when no one is named before it: no capitalised name (the
    words of a date name no one) and, with ``parse``, no noun that is a subject before it in spaCy's
    parse ("The team traded their pick" says whose; "Later they would decide" does not), nor a name
    that is the main verb's subject after it ("In his first season, Hart won ...")."""
    for i, w in enumerate(ws):
        if _bare(w) in _PERSONAL:
            named = any(b[:1].isupper() and (k > 0 or _bare(b) not in _OPENERS) and _bare(b) not in _DATE_WORDS
                        for k, b in enumerate(ws[:i]))
            line = " ".join(ws)
            if named or (parse and (_subject_before(line, i) or _named_subject(line))):
                return None
            return f"{w.strip('.,;:')!r} before anyone is named in the line: whose?"
    return None


@functools.lru_cache(maxsize=1024)
def _parsed(line: str):
    """spaCy's parse of a line (both pronoun checks read it)."""
    return english()(line, disable=["ner"])


def _subject_before(line: str, index: int) -> bool:
    """Whether a noun or name that is a subject comes before the ``index``-th word (by spaces)."""
    doc = _parsed(line)
    start = len(" ".join(line.split()[:index]))  # the pronoun's character offset (less a space)
    return any(t.idx < start and t.pos_ in ("NOUN", "PROPN") and t.dep_ in ("nsubj", "nsubjpass")
               for t in doc)


def _named_subject(line: str) -> bool:
    """Whether the main verb's subject is a name, which an opening phrase's pronoun may point ahead to
    ("Hours before a vote to impeach him, Castillo dissolved Congress")."""
    return any(c.pos_ == "PROPN" and c.dep_ in ("nsubj", "nsubjpass")
               for t in _parsed(line) if t.dep_ == "ROOT" for c in t.children)


def vague_time(line: str) -> str | None:
    """A time that only the page's date fixes, in a line with no year."""
    m = _VAGUE_TIME.search(line)
    if m and not YEAR.search(line):
        return f"a time only the page's date fixes ({m.group(0).strip(', ')!r}), with no year"
    return None


def cut_at_abbreviation(ws: list[str]) -> str | None:
    """A line that ends on an abbreviation that needs a word after it ("Drs.", "Art.")."""
    if ws and ws[-1].endswith(".") and _bare(ws[-1]) in _OPEN_ABBREVIATIONS:
        return f"cut short at the abbreviation {ws[-1]!r}"
    return None


def run_together(ws: list[str]) -> str | None:
    """A capitalised joining word after a word with no punctuation, before a small word or a
    figure: two texts (a caption, a headline, a sentence with no full stop) run together."""
    for i in range(1, len(ws) - 1):
        word, before, after = ws[i], ws[i - 1], ws[i + 1]
        if word[:1].isupper() and word[1:].strip(",;:").islower() and _bare(word) in _JOINS and not _TRAILING_MARK.search(before) \
                and (after[:1].islower() or after[:1].isdigit() or _bare(after) in MONTHS):
            return f"two texts run together at {' '.join(ws[i - 1: i + 2])!r}"
    return None


# Inside a word: a figure or a closing bracket, or a full stop after two letters, then a capitalised
# word ("2019Japanese", "(S permit)This", "unfolds.The"); not a capital alone ("3M", "U.S.").
_GLUED_BLOCK = re.compile(r"(?:(?<=[0-9)\]])|(?<=[a-z]{2}[.!?]))[A-Z][a-z]")


def glued_blocks(ws: list[str]) -> str | None:
    """A word in which two blocks of a page meet with no space: a date, a caption's credit or a
    sentence's end glued to the next text's capitalised first word."""
    for w in ws:
        m = _GLUED_BLOCK.search(w)
        if m and m.start() > 0:
            return f"two blocks of the page glued together at {w!r}"
    return None


# The weekday not after "on" ("... played on Friday, September 30, 2022." is a sentence).
_CAPTION_END = re.compile(r"(?<!\bon )(?<!\bOn )\b(?:" + "|".join(w.capitalize() for w in sorted(WEEKDAYS))
                          + r"),?\s+(?i:" + MONTH_NAMES + r")\.?\s+\d{1,2},\s+\d{4}\.?$")


def photo_caption(line: str) -> str | None:
    """A news photo's caption: it ends on the weekday and the date of the picture."""
    m = _CAPTION_END.search(line.strip())
    return f"a photo's caption, ending on the day it was taken ({m.group(0).rstrip('.')!r})" if m else None


def dateline(line: str) -> str | None:
    """A dateline glued to the start of the line ("Harare, 16 May 2023:The ...")."""
    m = _DATELINE.match(line)
    return f"a dateline before the sentence: {m.group(0).strip()!r}" if m else None
