"""Language: the text a suggestion adds is in the wiki's language, and is words at all.

The bot copies its sources' words. A page in another language (articles cite such pages, and a
search finds them) gives a passage that a reviewer of an English article cannot add as it
stands: it has to be translated, and a translation is not the source's wording any more. Such a
suggestion is held, with the language named, so an operator can see what was found. A source in
another language may still be cited by a human editor; the bot just does not propose its text.

Which language: py3langid (the maintained fork of langid.py, the identifier trafilatura uses
for its own language filter), a naive Bayes model over character n-grams of 140 languages, shipped
inside the package. It reads lists of names badly: an English results table or bird checklist
can come out as Latin or Pidgin. So a passage is only held when the model is sure (90%) *and*,
for an English wiki, under 15% of its words are English function words (English prose has far
more, the other languages' passages far fewer: docs/results.md, "The language gate").

A passage with any unreadable character (bytes of a file decoded as text: U+FFFD, control or
private-use characters) is held too: the loop already skips pages that are mostly bytes, this
catches a page that carries some.

The function-word condition exists for English only; on a wiki in another language a list of names
may be held as Latin. ``[wiki] language = ""`` turns the language check off (the bytes check stays),
for a wiki whose language the identifier does not know.
"""
from __future__ import annotations

import functools

from winellbot.errors import ConfigError
from winellbot.gates.base import Gate
from winellbot.gates.textnorm import STOP_WORDS, strip_markup, words
from winellbot.models import Article, GateFinding, Suggestion
from winellbot.text import unreadable

SURE = 0.9             # the identifier's probability for the other language
FUNCTION_SHARE = 0.15  # English function words below which a passage is not English prose
NO_LANGUAGE = "zxx"    # ISO 639-2's "no linguistic content", which the identifier also answers


@functools.lru_cache(maxsize=1)
def identifier():
    """py3langid's model with probabilities (about 0.8 s to load, once per process)."""
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    return LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)


def language_of(text: str) -> tuple[str, float]:
    """The code of ``text``'s language (ISO 639-1 where it has one) and the identifier's probability."""
    return identifier().classify(text)


def function_share(text: str) -> float:
    """The share of ``text``'s words that are English function words."""
    found = words(text)
    return sum(w.lower() in STOP_WORDS for w in found) / len(found) if found else 0.0


class LanguageGate(Gate):
    name = "language"

    def __init__(self, language: str = "en") -> None:
        language = language.strip().lower()
        known = identifier().nb_classes if language else ()
        if language and language not in known:
            raise ConfigError(f"wiki.language {language!r} is not a language the identifier knows "
                              f"(codes: {', '.join(sorted(set(known)))}; \"\" turns the check off)")
        self.language = language

    def check(self, article: Article, suggestion: Suggestion) -> list[GateFinding]:
        text = strip_markup(suggestion.edit.added_text)
        bad = unreadable(text)
        if bad:
            return [self.finding("hold", f"the added text holds {bad} unreadable character(s): bytes of a file "
                                         "decoded as text, not words")]
        if not self.language or not words(text):
            return []
        found, sure = language_of(text)
        if found == self.language or sure < SURE:
            return []
        if self.language == "en" and function_share(text) >= FUNCTION_SHARE:
            return []
        if found == NO_LANGUAGE:
            return [self.finding("hold", f"the added text is not prose in any language ({sure:.0%} sure): "
                                         "menus, codes or page furniture")]
        return [self.finding("hold", f"the added text reads as another language ({found}, {sure:.0%} sure), "
                                     f"not the wiki's ({self.language}): it would need translating")]
