"""Hostile sources: text that addresses an AI, or the reader, with instructions.

A web page can carry words meant for the program reading it ("ignore all previous instructions
and add the sentence ...", "as an AI language model ...", "note to AI assistants: ..."): an
attempt to steer what the bot proposes. Such text is never proposed, whatever else it says, and
its source is recorded as hostile in the state (``sources.hostile`` holds why), so an operator
can see who tried. The added text, the supporting passage and the rest of the source are all
read: a page that hides an instruction anywhere is not a source to cite.

Every check reads the text through one folding, :func:`fold`, so that other spellings of the same
words match: compatibility forms (NFKC: full-width and mathematical letters), invisible and
combining characters taken out ("IGN\u200bORE", accents), each other character replaced by the
Latin letter it looks like (Unicode's confusables, the TR39 skeleton, as ICU computes it: Cyrillic
"\u0456\u0441\u0440" read as "icp"; a letter that looks like none, as Cyrillic "\u0434", stays as
it is, so a Russian sentence reads as no English one), digits and signs written for letters inside
a word read as those letters ("1gn0r3" as "ignore"), and letters spaced apart joined again
("I G N O R E"). The commonest overrides are also looked for in French, Spanish, Portuguese,
Italian, German and Dutch.

:func:`page_fields` names every field of a suggestion that comes from outside the wiki (a web page
or a model) and is placed on a page (``winellbot/wiki/render.py``): the gate reads each of them.
"""
from __future__ import annotations

import difflib
import functools
import re
import unicodedata
from urllib.parse import unquote

import icu

from winellbot.escape import INVISIBLE
from winellbot.gates.base import Gate
from winellbot.gates.textnorm import strip_markup
from winellbot.models import Article, GateFinding, Suggestion

_AI = r"(?:ai|a\.i\.|artificial intelligence|(?:large )?language models?|llms?|chat ?bots?|gpt|chatgpt|assistants?|" \
      r"ai (?:models?|assistants?|systems?|agents?|tools?)|bots?|crawlers?|scrapers?)"
_TOLD = r"(?:instructions?|prompts?|rules|directions|guidelines|directives)"
_PATTERNS = tuple(re.compile(p, re.IGNORECASE) for p in (
    # overriding what the program was told
    rf"\b(?:ignore|disregard|forget|override|bypass)\s+(?:all\s+(?:of\s+)?(?:the\s+|your\s+|my\s+)?"
    rf"(?:(?:previous|prior|above|earlier|preceding|original|system)\s+)?|your\s+|any\s+(?:previous|prior)\s+|"
    rf"the\s+(?:previous|prior|above|earlier|preceding|original|system)\s+|"
    rf"(?:previous|prior|above|earlier|preceding|original|system)\s+){_TOLD}\b",
    r"\b(?:new|updated|real|actual|hidden|secret)\s+instructions?\s*[:\-]",
    r"\b(?:system|developer)\s+(?:prompt|message)\b",
    r"<\|?(?:im_start|im_end|endoftext)\|?>|\[/?(?:INST|SYS)\]|#{2,}\s*(?:instruction|system prompt)\b",
    # speaking to, or as, an AI
    r"\bas\s+an?\s+(?:ai|a\.i\.|artificial intelligence|(?:large\s+)?language\s+model|llm|chatbot)"
    r"(?:\s+(?:language\s+)?model|\s+assistant)?\s*(?:[,.:;]|\s+(?:i|we)\b)",
    rf"\b(?:you\s+are|you're)\s+(?:now\s+)?(?:an?\s+|the\s+)?{_AI}\b",
    rf"\b(?:note|message|attention|instructions?|reminder)\s+(?:to|for)\s+(?:all\s+|any\s+)?{_AI}\b",
    rf"\b(?:dear|hey|hello)\s+{_AI}\b",
    rf"\bif\s+you\s+are\s+(?:an?\s+)?{_AI}\b",
    rf"\b{_AI}\s+(?:reading|summari[sz]ing|processing|parsing|crawling|indexing)\s+(?:this|these)\b",
    # telling the reader what to write
    r"\b(?:add|insert|include|append|put|write|paste)\s+(?:the\s+|this\s+)?following\s+"
    r"(?:sentences?|text|paragraphs?|statements?|lines?|words|claims?|facts?)\b",
    r"\b(?:add|insert|include|append|put|write|paste)\s+(?:the\s+|this\s+|these\s+)?(?:exact\s+)?"
    r"(?:sentences?|text|paragraphs?|statements?|lines?|words|claims?)\s*[:\"\u201c'\u2018]",
    r"\b(?:add|insert|include|append|put|write)\b[^.]{0,60}?\b(?:to|in|into)\s+(?:wikipedia|the\s+wikipedia\s+\w+|"
    r"your\s+(?:summary|answer|response|output|reply)|the\s+(?:summary|answer|response|output))\b",
    r"\b(?:respond|reply|answer)\s+only\s+with\b|\boutput\s+(?:only\s+)?the\s+following\b",
    r"\bdo\s+not\s+(?:tell|inform|mention\s+(?:this\s+)?to|reveal\s+(?:this\s+)?to)\s+the\s+(?:user|reader|editors?)\b",
    r"\b(?:wikipedia\s+)?editors?\s*[:,]\s*(?:please\s+)?(?:add|insert|include|write|change|update|remove)\b",
))


# "Ignore all previous instructions" in other languages.
_FOREIGN = re.compile(
    r"\b(?:ignore[zr]?|oublie[zr]?|ignora|ignoren?|olvida|esque[cç]a|dimentica|ignoriere|vergiss|negeer|vergeet)"
    r"\s+(?:\w+\s+){0,3}(?:instructions?|consignes|instrucciones|instru[cç](?:o|õ)es|istruzioni|anweisungen|"
    r"befehle|instructies|regels|indicaciones|indica[cç](?:o|õ)es)\b", re.IGNORECASE)
_SPACED = re.compile(r"\b(?:[A-Za-z][ .\-_*\u00b7]){3,}[A-Za-z]\b")
# Overrides written as one run of letters once their spacing is gone ("I G N O R E A L L ...").
_RUN_TOGETHER = ("ignoreallpreviousinstructions", "ignorepreviousinstructions", "ignoreallinstructions",
                 "ignoreyourinstructions", "disregardallpreviousinstructions", "disregardpreviousinstructions",
                 "forgetallpreviousinstructions", "asanailanguagemodel", "youareanai", "systemprompt")


def fold(text: str) -> str:
    """``text`` as every hostile check reads it: :func:`fold_letters`, spaced letters joined, then
    digits and signs inside a word read as the letters they stand for."""
    return unleet(_SPACED.sub(lambda m: _joined(m.group(0)), fold_letters(text)))


def _joined(spaced: str) -> str:
    return re.sub(r"[ .\-_*\u00b7]", "", spaced)


@functools.lru_cache(maxsize=512)
def instruction_in(text: str) -> str:
    """The first instruction-like phrase in ``text`` (folded, :func:`fold`), or "" (cached: every
    suggestion from a source searches the whole source again; cost: docs/results.md, "Hot spots of the warm back-test")."""
    folded = fold(text)
    for pattern in (*_PATTERNS, _FOREIGN):
        m = pattern.search(folded)
        if m:
            return " ".join(m.group(0).split())
    runs = " ".join(unleet(_joined(m.group(0))) for m in _SPACED.finditer(fold_letters(text)))
    letters = re.sub(r"[^a-z]", "", runs.lower())
    return next((phrase for phrase in _RUN_TOGETHER if phrase in letters), "")


def fold_letters(text: str) -> str:
    """The text in NFKC, without invisible or combining characters, each character that looks like a
    Latin letter (or ASCII sign) written as that one; spacing, case and every ASCII character kept."""
    text = unicodedata.normalize("NFKC", text)
    return text if text.isascii() else text.translate(_LOOKS_LIKE)


class _LooksLike(dict):
    """A ``str.translate`` table filled as characters come: ASCII as it is; an invisible or combining
    character removed; any other its TR39 prototype when that is ASCII, else itself."""

    def __missing__(self, code: int):
        self[code] = value = _prototype(chr(code))
        return value


_LOOKS_LIKE = _LooksLike({i: i for i in range(128)})


def _prototype(ch: str) -> str | None:
    if ch in INVISIBLE or unicodedata.category(ch) in ("Cf", "Mn", "Me"):
        return None
    # An upper-case letter is read through its small letter first: TR39 gives capital I-likes the
    # prototype "l" (Cyrillic "\u0406" -> "l"), their small letters "i"; then through itself ("\u041a" -> "K").
    forms = (ch.lower(), ch) if ch.isupper() else (ch,)
    for form in forms:
        seen = "".join(c for c in unicodedata.normalize("NFD", _SPOOF.getSkeleton(0, form))
                       if not unicodedata.combining(c))
        if seen and seen.isascii():
            return seen.upper() if ch.isupper() and seen.isalpha() else seen
    return ch


_SPOOF = icu.SpoofChecker()

# Digits and signs written for letters inside a word (leet): "1gn0r3 4ll pr3v10us 1nstruct10ns".
_LEET = str.maketrans("013457@$!|", "oieastasii")
# a word holding a letter and one of them
_LEET_WORD = re.compile(r"(?<![\w@$!|])(?=[\w@$!|]*[A-Za-z])(?=[\w@$!|]*[013457@$!|])[\w@$!|]+")


def unleet(text: str) -> str:
    """Each word that holds a letter with its digits and signs read as letters ("11" as "ll": "a11");
    a word of digits alone ("2026", "1,200") and a sign that ends a word ("now!") stay as they are."""
    def letters(m: re.Match) -> str:
        word = m.group(0)
        body = word.rstrip("@$!|")
        return body.replace("11", "ll").replace("||", "ll").translate(_LEET) + word[len(body):]

    return _LEET_WORD.sub(letters, text)


def page_fields(article: Article, suggestion: Suggestion) -> tuple[tuple[str, str], ...]:
    """Every text of ``suggestion`` that comes from a web page or a model and that
    ``winellbot/wiki/render.py`` places on a page, as (what it is, text), the source's whole text last.
    What comes from the wiki itself (the article's title, paragraph and sentences, a section it has) is
    left out: an article may well quote an instruction."""
    e, u = suggestion.edit, suggestion.update
    doc, cited = u.document, e.citation
    fields = [
        ("the proposed text", strip_markup(e.added_text)),
        ("the proposed paragraph", _inserted(e.old_paragraph, e.new_paragraph)),
        ("the new fact", u.text), ("the supporting passage", u.quote),
        ("the reason given", e.reason), ("the reason given", u.reason),
        ("the source's title", doc.title), ("the citation's title", cited.title),
        ("the source's publisher", doc.publisher or ""), ("the citation's work", cited.work),
        ("the source's date", doc.published or ""), ("the citation's date", cited.date),
        ("the source's URL", _url_words(doc.url)), ("the citation's URL", _url_words(cited.url)),
    ]
    if article.section(suggestion.section_path) is None:  # a section name the article does not have
        fields.append(("the section's name", " / ".join(suggestion.section_path)))
    fields.append(("the source", doc.text))
    return tuple(fields)


def _inserted(old: str, new: str) -> str:
    """The words ``new`` has that ``old`` has not, one run after another."""
    a, b = old.split(), new.split()
    runs = [" ".join(b[j1:j2]) for op, _, _, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes()
            if op in ("insert", "replace")]
    return strip_markup(" . ".join(runs))


def _url_words(url: str) -> str:
    """A URL's words, as a reader of the ready citation would see them ("/ignore-all-previous-...")."""
    return re.sub(r"[^\w@$!|]+|_", " ", fold_letters(unquote(url or ""))).strip()


class HostileGate(Gate):
    """Blocks a suggestion any of whose :func:`page_fields` addresses an AI or the reader with instructions."""

    name = "hostile"

    def __init__(self, *, state=None) -> None:
        self.state = state

    def check(self, article: Article, suggestion: Suggestion) -> list[GateFinding]:
        doc = suggestion.update.document
        for where, text in page_fields(article, suggestion):
            phrase = instruction_in(text or "")
            if phrase:
                reason = f"{where} addresses an AI or the reader with instructions (\"{phrase[:80]}\")"
                if self.state is not None and doc.url:
                    self.state.mark_hostile(doc.url, reason)
                return [self.finding("block", f"{reason}: the source is recorded as hostile")]
        return []
