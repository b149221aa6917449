"""Style and neutrality: Wikipedia's "words to watch" and opinion stated as fact.

The word classes, their terms and what each costs live in
``winellbot/data/words_to_watch.toml`` (the severity table is documented
there); an operator's TOML file can add terms or change a class. Matching is on
word boundaries and ignores case unless a class says otherwise. A match inside
quotation marks is someone else's words and is skipped for classes marked
``quoted_exempt``; a sentence that attributes its content ("said", "according
to") costs a class its ``attributed_severity`` instead.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from winellbot.errors import ConfigError
from winellbot.gates.base import SEVERITIES, Gate, read_gate_data
from winellbot.gates.subject import subject_names
from winellbot.gates.support import proper_names
from winellbot.gates.textnorm import MONTHS, NUMBER_WORDS, STOP_WORDS, quoted_spans, strip_markup, words
from winellbot.models import Article, GateFinding, Severity, Suggestion

_ATTRIBUTION = re.compile(
    r"\b(?:said|says|told|tells|according\s+to|stated|states|wrote|writes|argued|argues|described|describes|"
    r"called|calls|believes|believed|announced|added|explained|testified|reported|recalled|insisted|claimed)\b",
    re.IGNORECASE,
)
_LEFT, _RIGHT = r"(?<![\w-])", r"(?![\w-])"
# Word classes that judge instead of stating: text made of them says nothing to keep.
EVALUATIVE = frozenset({"puffery", "promotional", "contentious_label", "unsupported_attribution", "doubt",
                        "editorialising", "cliche", "superlative", "review"})
# A figure or date: digits, a number word from two up, a month name.
_FIGURE = re.compile(r"\d|\b(?:" + "|".join(sorted(set(NUMBER_WORDS) - {"zero", "one", "first"} | set(MONTHS)))
                     + r")\b", re.IGNORECASE)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z\"\u201c])")


@dataclass(frozen=True)
class WordClass:
    """One kind of word to watch, with what a match costs."""

    name: str
    description: str
    severity: Severity
    attributed_severity: Severity
    quoted_exempt: bool
    pattern: re.Pattern
    skip_title_case: bool = False


def term_pattern(term: str) -> str:
    """A regex for one listed term: ``re:`` is raw; otherwise spaces, hyphens and
    apostrophes match their usual variants and the term must stand as whole words."""
    if term.startswith("re:"):
        return term[3:]
    parts = []
    for ch in term:
        if ch == " ":
            parts.append(r"\s+")
        elif ch == "-":
            parts.append(r"[-\s]?")
        elif ch in "'\u2019":
            parts.append("['\u2019]")
        else:
            parts.append(re.escape(ch))
    return _LEFT + "".join(parts) + _RIGHT


def _severity(value: str, where: str) -> Severity:
    if value not in SEVERITIES:
        raise ConfigError(f"words to watch: unknown severity {value!r} in {where}")
    return value  # type: ignore[return-value]


def _compile(name: str, spec: dict) -> WordClass:
    terms = sorted(spec.get("terms", []), key=len, reverse=True)
    if not terms:
        raise ConfigError(f"words to watch: class {name!r} has no terms")
    flags = 0 if spec.get("case_sensitive") else re.IGNORECASE
    # Plain terms share one pair of boundary checks, which keeps the scan fast.
    plain = [term_pattern(t)[len(_LEFT):-len(_RIGHT)] for t in terms if not t.startswith("re:")]
    raw = [term_pattern(t) for t in terms if t.startswith("re:")]
    parts = ([f"{_LEFT}(?:{'|'.join(plain)}){_RIGHT}"] if plain else []) + [f"(?:{r})" for r in raw]
    try:
        pattern = re.compile("|".join(parts), flags)
    except re.error as exc:
        raise ConfigError(f"words to watch: bad term in class {name!r}: {exc}") from exc
    severity = _severity(spec.get("severity", "flag"), name)
    return WordClass(
        name=name,
        description=spec.get("description", name.replace("_", " ")),
        severity=severity,
        attributed_severity=_severity(spec.get("attributed_severity", severity), name),
        quoted_exempt=bool(spec.get("quoted_exempt", True)),
        pattern=pattern,
        skip_title_case=bool(spec.get("skip_title_case", False)),
    )


@lru_cache(maxsize=8)
def load_word_classes(extra_path: str | None = None) -> tuple[WordClass, ...]:
    """The shipped classes, merged with an operator's file (terms added, settings overridden)."""
    specs = {name: dict(spec) for name, spec in read_gate_data("words_to_watch.toml", None, "words to watch file").items()}
    if extra_path:
        for name, spec in read_gate_data("words_to_watch.toml", extra_path, "words to watch file").items():
            merged = specs.setdefault(name, {})
            terms = merged.get("terms", []) if not spec.get("replace_terms") else []
            merged.update(spec)
            merged["terms"] = list(dict.fromkeys(terms + list(spec.get("terms", []))))
    return tuple(_compile(name, spec) for name, spec in specs.items() if spec.get("enabled", True))


def _after_name(sentence: str, start: int) -> bool:
    before = sentence[:start].split()
    return bool(before) and before[-1][:1].isupper() and before[-1].lower() not in STOP_WORDS


def _in_title(sentence: str, m: re.Match) -> bool:
    """A capitalised word in mid-sentence (not "I"): most likely part of a title."""
    word = m.group(0)
    if word == "I" or not word[:1].isupper():
        return False
    before = sentence[:m.start()].rstrip()
    return bool(before) and before[-1] not in ".!?:;\"\u201c(\u2018'"


def sentences(text: str) -> list[str]:
    return [s for s in _SENTENCE_END.split(text) if s.strip()]


class StyleGate(Gate):
    """Finds words to watch in the added text; one finding per class, naming the words.

    Text that is mostly words to watch (more than ``empty_share`` of its content words, the
    subject's own name left out), or that states nothing checkable once they are removed (no
    figure, date or name besides the subject's), is blocked as a whole: an editor would reject it
    on sight, with nothing left to fix. Only unattributed words that cost at least a flag count.
    """

    name = "style"

    def __init__(self, *, extra_path: str | Path | None = None, classes: tuple[WordClass, ...] | None = None,
                 empty_share: float = 0.5) -> None:
        self.classes = classes if classes is not None else load_word_classes(str(extra_path) if extra_path else None)
        self.empty_share = empty_share

    def check(self, article: Article, suggestion: Suggestion) -> list[GateFinding]:
        text = strip_markup(suggestion.edit.added_text)
        hits: dict[str, tuple[WordClass, Severity, list[str]]] = {}
        spans: list[tuple[int, int]] = []  # where the words that count are
        at = 0
        for sentence in sentences(text):
            offset = text.find(sentence, at)
            at = offset + len(sentence)
            for cls, severity, m in self.matches(sentence):
                term = m.group(0).lower()
                _, worst, terms = hits.get(cls.name, (cls, severity, []))
                if SEVERITIES.index(severity) > SEVERITIES.index(worst):
                    worst = severity
                if term not in terms:
                    terms.append(term)
                hits[cls.name] = (cls, worst, terms)
                if severity != "info" and cls.name in EVALUATIVE:
                    spans.append((offset + m.start(), offset + m.end()))
        findings = [self.finding(sev, f"{cls.name.replace('_', ' ')}: " + ", ".join(f'"{t}"' for t in terms)
                                 + f" ({cls.description})")
                    for cls, sev, terms in hits.values()]
        source = suggestion.update.document.text or suggestion.update.quote
        if any(f.severity == "block" for f in findings):
            return findings  # stopped already; no need to say it twice
        empty = self._empty(article, text, spans, cased=source != source.lower())
        return findings + ([self.finding("block", empty)] if empty else [])

    def _empty(self, article: Article, text: str, spans: list[tuple[int, int]], *, cased: bool = True) -> str:
        """Why the text says nothing an editor could keep once its words to watch are gone ("" if it does)."""
        if not spans:
            return ""

        own = {token for name in subject_names(article) for token in name}
        content = [w for w in words(text) if w not in STOP_WORDS and w not in own]
        rest = text
        for a, b in sorted(spans, reverse=True):
            rest = rest[:a] + " \u2026 " + rest[b:]
        kept = [w for w in words(rest) if w not in STOP_WORDS and w not in own]
        share = 1 - len(kept) / len(content) if content else 1.0
        if share > self.empty_share:
            return f"mostly words to watch ({share:.0%} of its content words): nothing to keep"
        names = [n for n in proper_names(rest) if not set(words(n)) <= own]
        # A source that lost its case hides its names: then only the share above can tell.
        if not (_FIGURE.search(rest) or names) and cased:
            return "no checkable fact once the words to watch are removed (no figure, date or name)"
        return ""

    def matches(self, sentence: str) -> list[tuple[WordClass, Severity, re.Match]]:
        """(class, severity, match) for each word to watch in one sentence."""
        spans = quoted_spans(sentence)
        attributed = bool(_ATTRIBUTION.search(sentence))
        out = []
        for cls in self.classes:
            for m in cls.pattern.finditer(sentence):
                if cls.quoted_exempt and any(a <= m.start() < b for a, b in spans):
                    continue
                if m.group(0) == "I" and _after_name(sentence, m.start()):
                    continue  # a regnal or ordinal numeral: Henry I, World War I
                if cls.skip_title_case and _in_title(sentence, m):
                    continue  # part of a work's title: "Are You the One?", "Yes We Can"
                out.append((cls, cls.attributed_severity if attributed else cls.severity, m))
        return out
