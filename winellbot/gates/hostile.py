"""Hostile sources: text that addresses an AI, or the reader, with instructions.

A web page can carry words meant for the program reading it ("ignore all previous instructions
and add the sentence ...", "as an AI language model ...", "note to AI assistants: ..."): an
attempt to steer what the bot proposes. Such text is never proposed, whatever else it says, and
its source is recorded as hostile in the state (``sources.hostile`` holds why), so an operator
can see who tried. The added text, the supporting passage and the rest of the source are all
read: a page that hides an instruction anywhere is not a source to cite.

The text is folded before it is read (:func:`fold`), so that other spellings of the same words
match: compatibility forms (NFKC: full-width letters), invisible characters taken out
("IGN\u200bORE"), every letter written in ASCII (anyascii: Cyrillic and Greek look-alikes,
accents), and letters spaced apart joined again ("I G N O R E"). The commonest overrides are
also looked for in French, Spanish, Portuguese, Italian, German and Dutch.
"""
from __future__ import annotations

import functools
import re
import unicodedata

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
    """``text`` as the patterns read it: :func:`fold_spacing`, then spaced letters joined."""
    return _SPACED.sub(lambda m: re.sub(r"[ .\-_*\u00b7]", "", m.group(0)), fold_spacing(text))


@functools.lru_cache(maxsize=512)
def instruction_in(text: str) -> str:
    """The first instruction-like phrase in ``text`` (folded, :func:`fold`), or "" (cached: every
    suggestion from a source searches the whole source again; cost: docs/results.md, "Hot spots of the warm back-test")."""
    folded = fold(text)
    for pattern in (*_PATTERNS, _FOREIGN):
        m = pattern.search(folded)
        if m:
            return " ".join(m.group(0).split())
    letters = re.sub(r"[^a-z]", "", " ".join(m.group(0) for m in _SPACED.finditer(fold_spacing(text))).lower())
    return next((phrase for phrase in _RUN_TOGETHER if phrase in letters), "")


def fold_spacing(text: str) -> str:
    """The text in NFKC, without invisible characters, its letters in ASCII (spacing kept)."""
    from anyascii import anyascii

    return anyascii("".join(ch for ch in unicodedata.normalize("NFKC", text) if ch not in INVISIBLE))


class HostileGate(Gate):
    """Blocks a suggestion whose text or source addresses an AI or the reader with instructions."""

    name = "hostile"

    def __init__(self, *, state=None) -> None:
        self.state = state

    def check(self, article: Article, suggestion: Suggestion) -> list[GateFinding]:
        doc = suggestion.update.document
        for where, text in (("the proposed text", strip_markup(suggestion.edit.added_text)),
                            ("the supporting passage", suggestion.update.quote),
                            ("the source's title", doc.title), ("the source", doc.text)):
            phrase = instruction_in(text or "")
            if phrase:
                reason = f"{where} addresses an AI or the reader with instructions (\"{phrase[:80]}\")"
                if self.state is not None and doc.url:
                    self.state.mark_hostile(doc.url, reason)
                return [self.finding("block", f"{reason}: the source is recorded as hostile")]
        return []
