"""A reviewer's wording, checked on the page when it is submitted: the rules the bot's own line keeps.

The bot's fact line is plain prose: no markup, no link, no instruction, one fact in a sentence or two,
in the wiki's language; the citation and its template are the bot's. :func:`check_revision` refuses a
reviewer's text that breaks one of those rules, each refusal a :class:`Problem` in plain words;
:func:`check_note` does the same for the reviewer's note, which is posted too. Both are cheap (no
model but py3langid's, loaded once per process and read only for a text of :data:`LANGUAGE_WORDS`
words or more), so the page runs them on each submit; a paste far over the limit is refused on its
length before anything reads it. The job runs them again before it posts
(:mod:`winellbot.gates.revision`), with the gates that need the source and the article.
"""
from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from winellbot.escape import COLON_PROTOCOLS, INVISIBLE
from winellbot.gates.hostile import fold_letters, instruction_in
from winellbot.gates.language import FUNCTION_SHARE, NO_LANGUAGE, SURE, function_share, language_of
from winellbot.gates.textnorm import words
from winellbot.text import split_sentences

MAX_WORDS = 60        # the bot's lines stop at 35 (winellbot.sentences.MAX_WORDS); a reviewer may say more
MAX_CHARS = 600
MAX_SENTENCES = 2     # one fact: a sentence, or a sentence and its context
NOTE_WORDS, NOTE_CHARS = 60, 400
LANGUAGE_WORDS = 6    # fewer words than this are too few for the identifier to judge

_LANGUAGES = {"en": "English", "fr": "French", "de": "German", "es": "Spanish", "it": "Italian",
              "pt": "Portuguese", "nl": "Dutch", "sv": "Swedish", "da": "Danish", "no": "Norwegian",
              "fi": "Finnish", "pl": "Polish", "cs": "Czech", "ru": "Russian", "uk": "Ukrainian",
              "tr": "Turkish", "ar": "Arabic", "zh": "Chinese", "ja": "Japanese", "ko": "Korean",
              "la": "Latin", "id": "Indonesian", "ro": "Romanian", "hu": "Hungarian", "el": "Greek"}

# Bidirectional marks and overrides: the line would read differently from what it is.
_BIDI = frozenset("\u061c\u200e\u200f" + "".join(map(chr, range(0x202A, 0x202F)))
                  + "".join(map(chr, range(0x2066, 0x206A))))

# (code, pattern, what it is and why the line is better without it), in the order a reviewer meets them.
_MARKUP = (
    (re.compile(r"(?i)\{\{|\}\}|\bsubst\s*:|\{\{\{"),
     "templates ({{ }}, subst:) pull other pages into the post: the bot adds the citation's template itself"),
    (re.compile(r"\{\||\|\}"), "table markup ({| |}) is not part of a fact line"),
    (re.compile(r"(?i)<\s*/?\s*ref\b"), "references (<ref>) are added by the bot: the citation is its own"),
    (re.compile(r"(?i)<\s*/?\s*(?!ref\b)[a-z!]|<!--"), "HTML tags and comments are not written: type plain text"),
    (re.compile(r"__[A-Za-z]+__"), "magic words (__NOTOC__ and the like) change the whole page"),
    (re.compile(r"~{3,}"), "signatures (~~~~) are not typed: the post names you and the date itself"),
    (re.compile(r"={2,}"), "headings (== ==) would cut the talk page's section in two"),
    (re.compile(r"'{2,}"), "bold and italic markup ('' and ''') is not written: type plain text"),
    (re.compile(r"&(?:[A-Za-z][A-Za-z0-9]{1,31}|#[0-9]{1,7}|#[xX][0-9A-Fa-f]{1,6});"),
     "HTML character references (&nbsp;, &#91;) are not written: type the character itself"),
)
_LINE_START = re.compile(r"^[*#:;|!]|^-{4}")
_WIKILINK = re.compile(r"\[\[\s*:?\s*([^\]|]*)")
_SPECIAL_LINK = re.compile(r"(?i)^(category|file|image|media)\s*:")
_FOREIGN_LINK = re.compile(r"^[a-z]{2,3}(?:-[a-z0-9]{2,8})*\s*:")
_URL = re.compile(rf"(?i)\b[a-z][a-z0-9+.-]*://|(?<![\w:/])//[\w\[]|\bwww\d?\.|\b(?:{'|'.join(COLON_PROTOCOLS)}):\S"
                  r"|\b[a-z0-9-]+(?:\.[a-z0-9-]+)*\.[a-z]{2,}/")
_LINKS = "links and web addresses are not written: the citation is added by the bot, and the article's links " \
         "are the editors' to choose"


@dataclass(frozen=True)
class Problem:
    """Why a reviewer's text is refused: a short ``code`` and a ``message`` for the reviewer."""

    code: str
    message: str


def check_revision(text: str, *, language: str = "en", max_words: int = MAX_WORDS, max_chars: int = MAX_CHARS,
                   max_sentences: int = MAX_SENTENCES) -> list[Problem]:
    """Every rule the reviewer's fact line breaks (none: it may be approved). ``language``: the wiki's
    (ISO 639-1; "" checks none)."""
    text = text.strip()
    if not any(ch.isalnum() for ch in text):
        return [Problem("empty", "The line is empty: write the fact as a sentence.")]
    too_long = _length(text, "line", max_words, max_chars)
    if too_long and too_long[0].code == "too_long" and len(text) > max_chars:
        return too_long  # a paste far over the limit is not read further
    found = too_long + _rules(text, language)
    sentences = len(split_sentences(" ".join(text.split())))
    if sentences > max_sentences:
        found.append(Problem("sentences", f"The line has {sentences} sentences: a fact line is one fact, in at "
                                          f"most {max_sentences} sentences."))
    return found


def check_note(text: str, *, language: str = "en", max_words: int = NOTE_WORDS,
               max_chars: int = NOTE_CHARS) -> list[Problem]:
    """Every rule the reviewer's note breaks; an empty note is fine (it is optional)."""
    text = text.strip()
    if not text:
        return []
    too_long = _length(text, "note", max_words, max_chars)
    if too_long and len(text) > max_chars:
        return too_long
    return too_long + _rules(text, language)


def _length(text: str, what: str, max_words: int, max_chars: int) -> list[Problem]:
    if len(text) > max_chars:
        return [Problem("too_long", f"The {what} is {len(text):,} characters long: at most {max_chars:,}.")]
    n = len(text.split())
    if n > max_words:
        return [Problem("too_long", f"The {what} is {n:,} words long: at most {max_words:,}.")]
    return []


def _rules(text: str, language: str) -> list[Problem]:
    """The rules a line and a note share: characters, markup, links, instructions, language."""
    found = _characters(text)
    if found:  # the other rules read the text as shown; hidden characters would fool them
        return found
    found += [Problem("markup", f"Not allowed: {why}.") for pattern, why in _MARKUP if pattern.search(text)]
    if "\n" in text or "\r" in text or _LINE_START.search(text):
        found.append(Problem("markup", "Not allowed: line breaks, and list, table or indent markup (* # : ; |) at "
                                       "the start of a line: write one line of prose."))
    found += _links(text)
    phrase = instruction_in(text)
    if phrase:
        found.append(Problem("instruction", f"The text reads as an instruction to a program or to the reader "
                                            f"(\"{phrase[:60]}\"): write the fact only."))
    found += _language(text, language)
    return found


def _characters(text: str) -> list[Problem]:
    """Control, invisible and bidirectional characters, and bytes decoded as text."""
    for ch in text:
        if ch in "\n\r\t":
            continue
        category = unicodedata.category(ch)
        if ch in _BIDI or ch in INVISIBLE or category in ("Cc", "Cf", "Co", "Cs", "Cn") or ch == "\ufffd":
            name = unicodedata.name(ch, "a control character")
            return [Problem("characters", f"The text holds an invisible or control character (U+{ord(ch):04X}, "
                                          f"{name.lower()}): retype it without.")]
    return []


def _links(text: str) -> list[Problem]:
    """A category, file or other wiki's link said as such; any other link or web address as one."""
    for target in (t.strip() for t in _WIKILINK.findall(text)):
        special = _SPECIAL_LINK.match(target)
        if special:
            what = "a category link would put the talk page in the category" \
                if special.group(1).lower() == "category" else "a file link would show the file on the talk page"
            return [Problem("link", f"Not allowed: {what}.")]
        if _FOREIGN_LINK.match(target):
            return [Problem("link", "Not allowed: a link to another wiki or language edition.")]
    if "[[" in text or "]]" in text or _URL.search(text) or _URL.search(fold_letters(text)):
        return [Problem("link", f"Not allowed: {_LINKS}.")]
    return []


def _language(text: str, language: str) -> list[Problem]:
    """The identifier's reading, as the language gate takes it (sure, and for English few function words)."""
    if not language or len(words(text)) < LANGUAGE_WORDS:
        return []
    found, sure = language_of(text)
    if found == language or sure < SURE or (language == "en" and function_share(text) >= FUNCTION_SHARE):
        return []
    wiki = _LANGUAGES.get(language, language)
    if found == NO_LANGUAGE:
        return [Problem("language", f"The text does not read as {wiki} prose: write the fact as a sentence.")]
    return [Problem("language", f"The text reads as {_LANGUAGES.get(found, found)} ({found}), not {wiki}: "
                                f"write it in {wiki}.")]
