"""A scraped page's text as the offline extractor reads it: separators put back, whether it kept its
case and punctuation, and text made inert as wikitext."""
from __future__ import annotations

import re
from collections.abc import Container


# Link lists and headline menus lose their separators when a page is scraped:
# "NorwichNorwich City", "PelicanPelecanus occidentalis". Three lower-case letters before the
# capital keep names such as McDonald, DeSantis and YouTube out.
_GLUE = re.compile(r"[a-z\u00df-\u00ff]{3}[A-Z\u00c0-\u00de][a-z]")
# A match starts where its word does anyway (or at a "÷", which the glue's range holds but \w does
# not); anchored there, not every letter of a long page is tried as a start, which was slow
# (docs/results.md, "Hot spots of the warm back-test")
_GLUED_WORD = re.compile(r"(?:\b|(?=\u00f7))\w*" + _GLUE.pattern + r"\w*")
_GLUED_STOP = re.compile(r"([a-z\u00df-\u00ff)]{2}[.?!:]|[.?!][\"\u201d])([A-Z\u00c0-\u00de])")


def unglue(text: str, known: Container[str] = ()) -> str:
    """``text`` with a space put back where a scraper ran two words or sentences together.

    A run-together word the article itself writes (``known``: its lower-cased words) is a
    name such as PlayStation or LinkedIn and is left alone.
    """
    def split(m: re.Match) -> str:
        w = m.group(0)
        return w if w.lower() in known else _GLUE.sub(lambda g: g.group(0)[:3] + " " + g.group(0)[3:], w)

    return _GLUED_WORD.sub(split, _GLUED_STOP.sub(r"\1 \2", text))


# Said of a passage from a page that has capitals but few sentences, where RESTORED_NOTE would be wrong.
LIST_NOTE = ("this part of the source is a list, table or menu rather than sentences: its words are given "
             "in the page's order; check them against the source")


def has_capitals(text: str) -> bool:
    """True unless the text lost its case (as WikiGenBench stores the pages an article cites)."""
    sample = text[:5000]
    letters = sum(map(str.isalpha, sample))
    return letters > 0 and sum(map(str.isupper, sample)) / letters > 0.01


def is_cased(text: str) -> bool:
    """True for running prose: capitals and full stops (False for lost-case texts and for lists)."""
    sample = text[:5000]
    stops = sample.count(". ") + sample.count(".\n") + sample.rstrip().rstrip("\"'\u201d\u2019)").endswith((".", "!", "?"))
    return has_capitals(text) and stops >= 1 and stops * 80 > len(sample.split())


_UNSAFE = re.compile(r"[\[\]{}<>|~]|'{2,}|__|https?://\S+")


def safe_text(text: str) -> str:
    """Text from a web page made inert as wikitext: no links, templates, tags, signatures or bold."""
    return re.sub(r"\s+([.,;:!?])", r"\1", " ".join(_UNSAFE.sub(" ", text).split()))
