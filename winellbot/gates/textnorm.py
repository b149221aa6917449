"""Text normalisation shared by the gates.

Sources arrive in two shapes: cased web text, and reference text that has lost
its case and punctuation (``covid19``, ``shouldnt``, ``1200``). A suggestion's
sentence is cased wikitext. To compare them fairly, both sides are folded the
same way: markup removed, accents folded, lower-cased, and punctuation *inside*
a word deleted (``COVID-19`` -> ``covid19``, ``1,200`` -> ``1200``) while
punctuation between words becomes a space.
"""
from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

_REF = re.compile(r"<ref\b[^>]*/>|<ref\b[^>]*>.*?</ref\s*>", re.IGNORECASE | re.DOTALL)
_CONVERT = re.compile(r"\{\{\s*(?:convert|cvt)\s*\|\s*([^|{}]*)\|\s*([^|{}]*)[^{}]*\}\}", re.IGNORECASE)
_TEMPLATE = re.compile(r"\{\{[^{}]*\}\}")
_WIKILINK = re.compile(r"\[\[(?:[^\]|]*\|)?([^\]]*)\]\]")
_EXTLINK = re.compile(r"\[(?:https?:)?//[^\s\]]+\s*([^\]]*)\]")
_TAG = re.compile(r"<[^>]+>")
_BOLD_ITALIC = re.compile(r"'{2,}")
_SPACE = re.compile(r"\s+")
_COMBINING = re.compile(r"[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]")
# Trademark and copyright signs: decoration, and NFKD would spell "Moto2\u2122" as "moto2tm".
_MARKS = str.maketrans("", "", "\u2122\u00ae\u00a9\u2120")
_POSSESSIVE = re.compile(r"(?<=[a-z])'s\b")
_OWNER = re.compile(r"(\w+)['\u2019]s\b")

# Punctuation that may sit inside a word ("COVID-19", "1,200", "3.5", "don't").
_INNER = re.compile(r"(?<=[a-z0-9])[-\u2010\u2011'\u2019.,:](?=[a-z0-9])")
_WORD = re.compile(r"[a-z0-9]+")

STOP_WORDS = frozenset("""
a about above after again against all am an and any are aren as at be because been before being below
between both but by can cannot could couldn did didn do does doesn doing don down during each few for from
further had hadn has hasn have haven having he her here hers herself him himself his how i if in into is
isn it its itself just let ll me more most mustn my myself no nor not now of off on once only or other
ought our ours ourselves out over own re same shan she should shouldn so some such than that the their
theirs them themselves then there these they this those through to too under until up very was wasn we
were weren what when where which while who whom why will with won would wouldn you your yours yourself
yourselves also said says say would may might must shall since upon via per within without among
""".split())

MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september",
          "october", "november", "december")
WEEKDAYS = frozenset(("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"))
# A year of the last five centuries, or its decade ("1990s"), as a fact line names its time.
YEAR = re.compile(r"\b(?:1[5-9]\d\d|20\d\d)s?\b")
MONTH_ALIASES: dict[str, str] = {m: m for m in MONTHS}
MONTH_ALIASES.update({m[:3]: m for m in MONTHS if m != "may"})
MONTH_ALIASES["sept"] = "september"
# Any name of a month, long names first ("sept" before "sep"): for regular expressions.
MONTH_NAMES = "|".join(sorted(MONTH_ALIASES, key=len, reverse=True))
_MONTH_WORD = r"(?P<month%d>" + MONTH_NAMES + r")\.?"
_DAY = r"(?P<day%d>[0-3]?\d)(?:st|nd|rd|th)?"
# A day of a month, written either way round ("12 February", "February 12th", "Feb. 12", "12th of Feb").
_DAY_OF_MONTH = re.compile(r"\b(?:" + _DAY % 1 + r"\s+(?:of\s+)?" + _MONTH_WORD % 1 + r"|" + _MONTH_WORD % 2
                           + r"\s+" + _DAY % 2 + r")\b", re.IGNORECASE)


def days_of_month(text: str) -> frozenset[tuple[str, int]]:
    """The days a text names as (month, day): "Feb. 12", "12 February" and "February 12th" are one."""
    found = set()
    for m in _DAY_OF_MONTH.finditer(text):
        k = 1 if m.group("month1") else 2
        month, day = m.group(f"month{k}"), m.group(f"day{k}")
        if 1 <= int(day) <= 31 and month != "may":  # the verb ("at 10 may be") is no month
            found.add((MONTH_ALIASES[month.lower()], int(day)))
    return frozenset(found)

_UNITS = ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
          "sixteen seventeen eighteen nineteen twenty").split()
_TENS = {"thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90,
         "hundred": 100, "dozen": 12}
_ORDINALS = ("first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth "
             "thirteenth fourteenth fifteenth sixteenth seventeenth eighteenth nineteenth twentieth").split()
NUMBER_WORDS: dict[str, str] = {w: str(i) for i, w in enumerate(_UNITS)}
NUMBER_WORDS.update({w: str(n) for w, n in _TENS.items()})
NUMBER_WORDS.update({w: str(i + 1) for i, w in enumerate(_ORDINALS)})
CARDINAL_WORDS = frozenset(_UNITS[2:]) | frozenset(_TENS)
_DIGITS_TO_WORDS: dict[str, tuple[str, ...]] = {}
for _w, _d in NUMBER_WORDS.items():
    _DIGITS_TO_WORDS[_d] = _DIGITS_TO_WORDS.get(_d, ()) + (_w,)

SCALES = {"thousand": 1_000, "million": 1_000_000, "billion": 1_000_000_000, "trillion": 1_000_000_000_000}
_SCALED = re.compile(r"\b(\d+(?:[.,]\d+)?)\s+(thousand|million|billion|trillion)\b")
_ISO_DATE = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})(?=\b|t\d)", re.IGNORECASE)
_ORDINAL_SUFFIX = re.compile(r"^(\d+)(?:st|nd|rd|th|s|m|bn|k|km|kg|mm|cm|ft|mi|mph|am|pm)$")
_FIGURE = re.compile(r"^\d+(?:st|nd|rd|th|s|m|bn|k|km|kg|mm|cm|ft|mi|mph|am|pm)?$")


def strip_markup(wikitext: str) -> str:
    """Plain text of a wikitext fragment: no refs, templates, link syntax or tags."""
    text = _REF.sub(" ", wikitext)
    text = _CONVERT.sub(r"\1 \2", text)
    for _ in range(5):  # nested templates, innermost first
        text, n = _TEMPLATE.subn(" ", text)
        if not n:
            break
    text = _WIKILINK.sub(r"\1", text)
    text = _EXTLINK.sub(r"\1", text)
    text = _TAG.sub(" ", text)
    text = _BOLD_ITALIC.sub("", text)
    return _SPACE.sub(" ", text).strip()


@lru_cache(maxsize=256)
def fold(text: str) -> str:
    """Accents removed, lower-cased, typographic quotes made plain, possessive 's dropped."""
    if not text.isascii():
        text = _COMBINING.sub("", unicodedata.normalize("NFKD", text.translate(_MARKS)))
        text = text.replace("\u2018", "'").replace("\u2019", "'")
    return _POSSESSIVE.sub("", text.lower())


def _expand(text: str) -> str:
    """ISO dates spelled out, scaled numbers also written in full, both sides alike."""
    text = _ISO_DATE.sub(_iso_to_words, text)
    return _SCALED.sub(_scaled_in_full, text)


def _iso_to_words(m: re.Match) -> str:
    year, month, day = m.group(1), int(m.group(2)), int(m.group(3))
    if not (1 <= month <= 12 and 1 <= day <= 31):
        return m.group(0)
    return f"{day} {MONTHS[month - 1]} {year} "


def _scaled_in_full(m: re.Match) -> str:
    number = m.group(1).replace(",", ".")
    try:
        full = round(float(number) * SCALES[m.group(2)])
    except ValueError:
        return m.group(0)
    return f"{m.group(0)} ({full})"


def words(text: str) -> list[str]:
    """Folded word tokens, punctuation inside words deleted (``COVID-19`` -> ``covid19``)."""
    folded = _expand(fold(text))
    return _WORD.findall(_INNER.sub("", folded))



_RUN = re.compile(r"[a-z0-9]+(?:[-\u2010\u2011'.,:][a-z0-9]+)*")
_PUNCT = re.compile(r"[-\u2010\u2011'.,:]")


@lru_cache(maxsize=64)
def stream(text: str) -> tuple[str, ...]:
    """A source's tokens in order; a word written with inner punctuation gives
    its joined form and then its parts (``covid-19`` -> ``covid19 covid 19``)."""
    out: list[str] = []
    for run in _RUN.findall(_expand(fold(text))):
        if _PUNCT.search(run):
            out.append(_PUNCT.sub("", run))
            out.extend(_WORD.findall(run))
        else:
            out.append(run)
    return tuple(out)



def is_content(token: str) -> bool:
    return token not in STOP_WORDS and (len(token) >= 3 or any(c.isdigit() for c in token))


def content_tokens(text: str) -> list[str]:
    """Content words (no stop words, three letters or more, or containing a digit)."""
    return [t for t in words(text) if is_content(t)]


def singulars(tokens: Iterable[str]) -> frozenset[str]:
    """Tokens with a plural ``s`` dropped from words of four letters or more ("hundreds" -> "hundred")."""
    return frozenset(t[:-1] if t.isalpha() and len(t) > 3 and t.endswith("s") else t for t in tokens)


def alternatives(token: str, *, compound: bool = False) -> tuple[str, ...]:
    """Spellings of one folded token that count as the same word in a source.

    ``compound``: the token was joined from parts (``1.2`` -> ``12``), so it has
    no number-word or plural spelling of its own.
    """
    alts = [token]
    if compound:
        return tuple(alts)
    m = _ORDINAL_SUFFIX.match(token)
    if m:
        alts.append(m.group(1))
    digits = m.group(1) if m else token
    alts.extend(_DIGITS_TO_WORDS.get(digits, ()))
    if token in NUMBER_WORDS:
        alts.append(NUMBER_WORDS[token])
    if token in MONTH_ALIASES:
        month = MONTH_ALIASES[token]
        alts.extend([month, month[:3]])
    if token.isalpha() and len(token) > 3:
        alts.append(token[:-1] if token.endswith("s") else token + "s")  # plural <-> singular
    return tuple(dict.fromkeys(alts))


@dataclass(frozen=True)
class ClaimWord:
    """One word of a claim: its folded form, equivalent spellings, and its parts
    when it was written with inner punctuation (``COVID-19`` -> ``covid``, ``19``)."""

    token: str
    alts: tuple[str, ...]
    parts: tuple[str, ...] = ()

    @property
    def figures(self) -> tuple["ClaimWord", ...]:
        """The figures in this word that a source must state: a number (``1,200``,
        ``19th``, ``13m``), a cardinal word from two up, a month, or the numeric
        parts of a compound (``33-year-old`` -> ``33``). Codes such as ``Tech3``
        are names, not figures."""
        if _is_figure(self.token):
            return (self,)
        if self.parts:
            return tuple(ClaimWord(p, alternatives(p)) for p in self.parts if _is_figure(p))
        return ()

    def found_in(self, index: set[str]) -> bool:
        if any(a in index for a in self.alts):
            return True
        return len(self.parts) > 1 and all(p in index for p in self.parts)


def _is_figure(token: str) -> bool:
    # "may" is left out: as a month it comes with a day or year that is checked anyway.
    return bool(_FIGURE.match(token)) or token in CARDINAL_WORDS or (token in MONTH_ALIASES and token != "may")


def claim_words(text: str) -> list[ClaimWord]:
    """The words of a claim, each with the spellings a source may use for it."""
    chunks = _ISO_DATE.sub(_iso_to_words, fold(text)).split()
    # A source that lost its punctuation writes "NPR's" as "nprs"; the plural rule of
    # alternatives() covers only words of four letters or more.
    possessives = {fold(m) for m in _OWNER.findall(text)}
    out: list[ClaimWord] = []
    for i, chunk in enumerate(chunks):
        joined = _WORD.findall(_INNER.sub("", chunk))
        parts = tuple(_WORD.findall(chunk))
        nxt = _WORD.findall(chunks[i + 1]) if i + 1 < len(chunks) else []
        for token in joined:
            compound = len(joined) == 1 and len(parts) > 1
            alts = alternatives(token, compound=compound)
            if token in possessives:
                alts += (token + "s",)
            if nxt and nxt[0] in SCALES and re.fullmatch(r"\d+(?:[.,]\d+)?", chunk.strip(".,;:()")):
                alts += _in_full(chunk.strip(".,;:()"), nxt[0])
            out.append(ClaimWord(token, alts, parts if compound else ()))
    return out


def _in_full(number: str, scale: str) -> tuple[str, ...]:
    try:
        return (str(round(float(number.replace(",", ".")) * SCALES[scale])),)
    except ValueError:
        return ()


def windows(tokens: Sequence[str], size: int) -> Iterable[set[str]]:
    """Half-overlapping windows of ``size`` tokens, as sets."""
    if len(tokens) <= size:
        yield set(tokens)
        return
    step = max(1, size // 2)
    for start in range(0, len(tokens) - size + step, step):
        yield set(tokens[start:start + size])


def quoted_spans(text: str) -> list[tuple[int, int]]:
    """Character spans inside double quotation marks (straight or curly)."""
    spans = []
    for m in re.finditer(r"\"[^\"]*\"|\u201c[^\u201d]*\u201d", text):
        spans.append((m.start(), m.end()))
    return spans
