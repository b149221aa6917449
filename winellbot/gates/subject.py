"""Subject: a passage is proposed for an article only when it is about the article's subject.

The subject counts as named when the passage's context names it (the page's headline, or the
passage with the sentences just before it, where "the club" or "she" gets its meaning), or when
the passage names two or more of the names the article itself uses (one shared name is only a
relation: the town a festival is held in).

Blocked, each with its reason:
* a page headlined about something else that the passage names at least as often as the subject;
* a page of a paragraph or more that never names the subject;
* a passage about a name the article never uses, named twice or more in its context.
A topic's article (a sentence-case title such as "Pendency of court cases in India") is told
through the names it uses, so a page headlined about one of them is about the topic. A short
source that names neither the subject nor anything else twice passes: nothing there says it is
about something else, and the other gates still check what it claims.

The subject's names come from the article: its title without a disambiguation or trailing topic
("Mercury (planet)" -> "Mercury"), the names bolded in its lead, an abbreviation in brackets
after one of them, and their first and last distinctive words (not generic parts of names such
as "City" or "Club", nor offices). The article's own names are the words its text writes as names
at least twice and in capitals at least three times in four. Words are matched folded, so
sources that lost their case and punctuation match too.
"""
from __future__ import annotations

import re
from collections import Counter
from functools import lru_cache

from winellbot.gates.base import Gate
from winellbot.gates.support import proper_names
from winellbot.gates.textnorm import MONTHS, STOP_WORDS, WEEKDAYS, strip_markup, words
from winellbot.models import Article, GateFinding, Suggestion

# Parts of names that name nothing on their own.
GENERIC = frozenset("""
new old north south east west northern southern eastern western upper lower great little saint st
united city town village county state states province district region national international royal
republic kingdom empire university college school academy institute club football soccer association
athletic athletics sports sporting rovers wanderers rangers team company corporation group holdings
inc ltd limited plc llc co fc afc cf sc festival river lake mount mountain island islands park street
road station airport church cathedral museum hospital party league cup championship championships
season series film album song band railway line list history politics people war battle election
elections general prime minister president king queen prince princess lord sir lady duke earl
department ministry council government act bill award awards prize world olympics games tournament
open grand prix centre center house hall tower bridge castle palace square international
robotics technologies technology systems software media records entertainment studios pictures airlines
airways motors energy bank foundation trust society press publishing network communications industries
enterprises partners capital labs arts literary authority agency commission committee service services
museum gallery theatre theater orchestra choir review magazine news times post herald journal
supreme high judge judges justice justices senator governor mayor sheriff officer detective chief captain
colonel lieutenant sergeant admiral commander professor doctor reverend bishop archbishop pope cardinal
coach chairman chairwoman director ambassador secretary chancellor title titles
amendment constitution treaty accord agreement declaration charter resolution convention conference summit
""".split())
_CALENDAR = frozenset(MONTHS) - {"may"} | WEEKDAYS
_DISAMBIGUATION = re.compile(r"\s*\([^)]*\)\s*$")
_TOPIC = re.compile(r"\s+(?:in|at|of|and|during|since|from|on|by)\s+\S.*$")
_YEAR = re.compile(r"^\d{4}(?:[–-]\d{2,4})?\s+|\s+\d{4}(?:[–-]\d{2,4})?$")
_BOLD = re.compile(r"'''+([^'\n]{2,80}?)'''+")
_BRACKETED = r"'*\s*\('*([A-Z][A-Za-z0-9&-]{1,11})'*\)"  # after a name: its abbreviation, "(DDT4)"


def subject_names(article: Article) -> tuple[tuple[str, ...], ...]:
    """The subject's names as folded word sequences, longest first."""
    return _names(article.title, _lead_wikitext(article))


def _lead_wikitext(article: Article) -> str:
    lead = next((s for s in article.sections if s.level == 0), None)
    return "\n".join(p.wikitext for p in lead.paragraphs[:2]) if lead is not None else ""


@lru_cache(maxsize=256)
def _names(title: str, lead: str) -> tuple[tuple[str, ...], ...]:
    base = _DISAMBIGUATION.sub("", title).strip()
    forms = {title, base, _TOPIC.sub("", base)} | {m.group(1).strip() for m in _BOLD.finditer(lead)}
    forms |= {_YEAR.sub("", f).strip() for f in forms}  # "2023 PGA Championship" -> "PGA Championship"
    # The abbreviation the lead gives in brackets after one of them: "... Title Tournament (DDT4)".
    forms |= {m.group(1) for f in forms if f for m in re.finditer(re.escape(f) + _BRACKETED, lead)}
    names: set[tuple[str, ...]] = set()
    for form in forms:
        tokens = tuple(words(form))
        if tokens:
            names.add(tokens)
        # Its first distinctive word ("Norvane" Robotics) and its last (Maria "Olsen") stand for it;
        # a topic's title capitalises its first word for the sentence case only ("Ferry services ...").
        found = [w for w in re.findall(r"[^\W\d_][\w'’.-]*", form) if _distinctive(w)]
        if descriptive(form) and found and form.startswith(found[0]):
            found = found[1:]
        names.update((tuple(words(w))) for w in found[:1] + found[-1:])
        initials = "".join(w[0] for w in re.findall(r"[^\W\d_]+", form) if w[0].isupper()).lower()
        if len(initials) >= 3:  # "Major League Baseball" -> "MLB", "Anti-Red Tape Authority" -> "ARTA"
            names.add((initials,))
    return tuple(sorted(names, key=len, reverse=True))


def _distinctive(word: str) -> bool:
    """A capitalised word of four letters or more, or an acronym ("PGA"), that is no generic part of names."""
    token = words(word)
    if len(token) != 1 or token[0] in GENERIC or token[0] in STOP_WORDS or token[0] in _CALENDAR:
        return False
    return (word.isupper() and len(token[0]) >= 2) or (word[:1].isupper() and len(token[0]) >= 4)


def names_in(tokens: list[str], names: tuple[tuple[str, ...], ...]) -> bool:
    """Whether any name occurs, as whole words, in the folded ``tokens``."""
    return mentions(tokens, names) > 0


def mentions(tokens: list[str], names: tuple[tuple[str, ...], ...]) -> int:
    """How many times ``names`` (longest first) occur in ``tokens``, without overlaps."""
    count, i = 0, 0
    while i < len(tokens):
        hit = next((n for n in names if tuple(tokens[i:i + len(n)]) == n), None)
        count, i = (count + 1, i + len(hit)) if hit else (count, i + 1)
    return count


def headline_subjects(title: str, text: str, names: tuple[tuple[str, ...], ...]) -> list[str]:
    """The names in a headline that are not the subject's: distinctive capitalised words that the
    page's own text writes capitalised more often than not (a headline capitalises any word)."""
    own = {token for name in names for token in name}
    out = []
    for word in re.findall(r"[^\W\d_][\w'’.-]*", title):
        word = re.sub(r"['’]s$", "", word)  # "Quillhaven's north quay": the page writes "Quillhaven"
        token = words(word)
        if not _distinctive(word) or token[0] in own:
            continue
        capital = len(re.findall(rf"\b{re.escape(word[:1].upper() + word[1:])}\b", text))
        lower = len(re.findall(rf"\b{re.escape(word.lower())}\b", text))
        if capital > lower:
            out.append(token[0])
    return out


def context_tokens(passage: str, document: str, before: int) -> list[str] | None:
    """The passage's words with up to ``before`` words of its document in front of it; None when
    the passage cannot be found in the document (only the passage then counts)."""
    doc, quote = words(document), words(passage)
    if not quote or len(doc) < len(quote):
        return None
    probe = quote[: min(6, len(quote))]
    first = probe[0]
    for i, token in enumerate(doc):
        if token == first and doc[i:i + len(probe)] == probe:
            return doc[max(0, i - before): i + len(quote)]
    return None


class SubjectGate(Gate):
    """Blocks a suggestion whose passage is about something other than the article's subject."""

    name = "subject"

    def __init__(self, *, before: int = 50, page_words: int = 100) -> None:
        self.before = before  # words of the document before the passage: about two sentences
        self.page_words = page_words  # a paragraph: a page this long that never names the subject is not about it

    def check(self, article: Article, suggestion: Suggestion) -> list[GateFinding]:
        names = subject_names(article)
        if not names:
            return []
        doc = suggestion.update.document
        if names_in(words(doc.title or ""), names):
            return []  # the headline names the subject: its page is about it
        passage = suggestion.update.quote or suggestion.update.text
        context = context_tokens(passage, doc.text, self.before) or words(passage)
        ours = mentions(context, names)
        known = article_names(article.title, article.wikitext)
        own = {token for name in names for token in name}
        shared = {token for token in context if token in known and token not in own}
        tied = len(shared) >= 2  # two of the article's own names: its story, not a relation's
        used = set(article_words(article.wikitext))
        # The headline's own mention counts too: "its" and "the company" in its page refer to it.
        heads = headline_subjects(doc.title or "", doc.text, names)
        told = descriptive(article.title) and any(r in known for r in heads)
        rivals = {r: 1 + mentions(context, ((r,),)) for r in heads if not (tied and r in used) and not told}
        rival = max(rivals, key=rivals.get, default="")
        if rival and rivals[rival] >= ours:
            return [self.finding("block", f"not about {article.title}: the source's headline is about {rival!r}, "
                                          "which the passage names as often as the subject or more")]
        if ours or tied:
            return []
        page = words(doc.text)
        if len(page) >= self.page_words and not names_in(page, names):
            return [self.finding("block", f"not about {article.title}: its source never names the subject "
                                          f"in {len(page)} words")]
        counts = Counter(context)
        about = [n for n in _other_names(passage, names)
                 if not set(words(n)) & used and min(counts[t] for t in words(n)) >= 2]
        if about:
            return [self.finding("block", f"not about {article.title}: the passage is about {about[0]}, "
                                          "which the article never names")]
        return []


def descriptive(title: str) -> bool:
    """Whether a title describes a topic rather than names it: a word after the first in lower case
    that is not a stop word ("July 2023 Northeastern United States floods"; not "Mother of Mercy").

    Wikipedia titles are in sentence case, so this tells a topic's article from a name's. A topic
    is told through the names its article uses ("Pendency of court cases in India" through the
    Supreme Court): a page headlined about one of them is about the topic. For a named subject (a
    company, a fair) the town it is in stays a relation; how often the article names either says
    little there, since it mostly writes "the company" (the sample's company names itself three
    times and its town twice)."""
    found = re.findall(r"[^\W\d_][\w'’-]*", _DISAMBIGUATION.sub("", title))
    return any(w.islower() and w not in STOP_WORDS for w in found[1:])


def _other_names(passage: str, names: tuple[tuple[str, ...], ...]) -> list[str]:
    own = {token for name in names for token in name}
    return [n for n in proper_names(passage) if _distinctive(n) and not set(words(n)) <= own]


@lru_cache(maxsize=64)
def article_words(wikitext: str) -> tuple[str, ...]:
    """The article's plain text as folded words."""
    return tuple(words(strip_markup(wikitext)))


@lru_cache(maxsize=64)
def article_names(title: str, wikitext: str) -> frozenset[str]:
    """The names the article itself uses: distinctive words its text writes as names at least
    twice, in capitals at least three times in four ("Yankees" in a season's article, not "Court"
    where it also writes "the court")."""
    text = strip_markup(wikitext)
    counts = Counter(article_words(wikitext))
    found = set()
    for name in proper_names(text):
        token = words(name)
        if not _distinctive(name) or len(token) != 1 or counts[token[0]] < 2:
            continue
        bare = re.sub(r"['’]s$", "", name)
        lower = len(re.findall(rf"\b{re.escape(bare.lower())}\b", text))
        if 3 * lower <= counts[token[0]]:
            found.add(token[0])
    return frozenset(found)
