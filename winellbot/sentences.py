"""What a reviewer sees in one sentence of a source, read before it may become a suggestion's fact.

:func:`read` looks at a single sentence against the article it would be added to and returns a
:class:`Reading`: whether it is a sentence at all (a verb with a subject, a capital, an end), what
it leans on that a reader of the fact alone would not have (a pronoun, "the stand", "last week"),
what in it is page text rather than reporting (bylines, share buttons, menus, time stamps), whose
voice it is (a quotation, the first or second person, a question), what kind of text it comes from
(scripture, play-by-play, a programme's promotion), and what it brings that the article lacks
(names, figures, words) against how much of one article sentence it repeats.

Each problem is a short reason in :attr:`Reading.problems` under the name of the rubric's error it
would earn (``unclear``, ``furniture``, ``subjective``, ``primary``), so that the fact picker can
skip such sentences and the editorial gates can say why they hold one. The figures are features of
the acceptability score (:mod:`winellbot.acceptability`).
"""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field

from winellbot.gates.textnorm import (
    MONTHS,
    WEEKDAYS,
    YEAR,
    claim_words,
    content_tokens,
    days_of_month,
    quoted_spans,
)
from winellbot.meaning import english
from winellbot.models import Article
from winellbot.pipeline.restore import english_words
from winellbot.text import split_sentences, words

MIN_WORDS = 6
MAX_WORDS = 35
# A sentence that holds this share of one article sentence's words repeats it: not a new fact.
STATED = 0.6

# Words that stand for something said before: a fact line that opens with one leans on a sentence
# the reviewer does not have.
_LEANING = frozenset("he she it they him her them his its their this these those such both".split())
_CONNECTIVES = frozenset("and but so also however meanwhile moreover furthermore instead still yet then "
                         "additionally besides nevertheless therefore thus".split())
# Openings of more than one word that continue a sentence before the line ("For example, ...", "During
# this initial stage, ...", "One of such schools ...", "In all, ...", "Some examples are ..."), before a
# small word, a figure or a comma (not a title: "This Is England"). A connective with its own
# complement ("In addition to the stadium, ...") and "the former" ("The former mayor ...") stand alone.
# ("Later" and "Then" are times: a year in the line settles them, as it settles "In this year's ...".)
_CONTINUING = re.compile(
    r"^[\"'\u201c\u2018]?(?:for\s+(?:example|instance)|(?:in\s+addition|as\s+a\s+result|in\s+contrast|"
    r"by\s+contrast)(?!\s+(?:to|of)\b)|in\s+turn|likewise|similarly|hence|consequently|nonetheless|"
    r"on\s+the\s+other\s+hand|in\s+fact|indeed|as\s+such|even\s+so|after\s+that|another|"
    r"in\s+(?:sum|short|brief|particular|all|summary)(?=\s*,)|(?:some|other)\s+examples|like\s+many\s+others|"
    r"the\s+latter(?=\s*(?:,|'s|\s+(?:was|is|were|are|had|has|became|would|will|said)\b))|"
    r"one\s+of\s+(?:such|these|those|them)|"
    r"(?:(?:during|in|at|by|after|before|from|since|until|under|with|for|of|on)\s+)?(?:this|that|these|those|such))"
    r"\b(?=\s*,|\s+(?-i:[a-z0-9]))", re.IGNORECASE)
_TIME_WORDS = frozenset("year years season seasons month months week weeks day days time spring summer autumn fall "
                        "winter century decade".split())
_RELATIVE_TIME = re.compile(
    r"\b(?:yesterday|today|tonight|tomorrow|recently|currently|this\s+(?:week|month|year|weekend|season|"
    r"morning|afternoon|evening|summer|winter|spring|autumn|fall)|(?:last|next|coming)\s+(?:week|month|year|"
    r"weekend|season|night|summer|winter|spring|autumn|fall|monday|tuesday|wednesday|thursday|friday|"
    r"saturday|sunday)|earlier\s+this|later\s+this|\d+\s+(?:hours?|days?|weeks?|months?)\s+ago|"
    r"(?:a|one|two|three)\s+(?:days?|weeks?|months?)\s+ago)\b", re.IGNORECASE)
# "said on Monday" dates the saying, not the fact: only a weekday that dates the fact counts.
_ON_WEEKDAY = re.compile(r"(?<!said )(?<!told )(?<!announced )(?<!reported )(?<!added )(?<!stated )"
                         r"\b(?:on|last|this|next)\s+(?:" + "|".join(WEEKDAYS) + r")\b", re.IGNORECASE)
_DATED = re.compile(r"\b(?:1[5-9]\d\d|20\d\d)\b|\b(?:" + "|".join(MONTHS) + r")\b", re.IGNORECASE)
_PERSON = frozenset("i me my mine we us our ours you your yours im ive youre youve weve".split())
# A sentence cut short ends on a word that needs another after it ("... to the.", "... pursuant to S. 7 of.").
_OPEN_END = frozenset("the a an of to in on at by for with from and or but nor that which who whose whom his her "
                      "their its our your as than into onto about is was were are be been being this these those "
                      "very such if because while when where s".split())
_BACK = frozenset("he she it they him her them his its their hers theirs".split())
# Page text: what a site prints around its reporting.
_FURNITURE = re.compile(
    r"\b(?:share\s+(?:this|on)|sign\s+up|subscribe|newsletter|click\s+here|read\s+more|read\s+the\s+story|"
    r"see\s+more|show\s+(?:more|less)|view\s+all|advertisement|sponsored|cookies?\s+policy|privacy\s+policy|"
    r"terms\s+of\s+(?:use|service)|all\s+rights\s+reserved|getty\s+images|photo\s*(?:by|credit|:)|"
    r"image\s*(?:by|credit|:)|follow\s+us|related\s+(?:stories|articles|story)|also\s+read|"
    r"print\s+friendly|log\s*in|updated\s+(?:on\s+)?(?:\d|jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)|"
    r"get\s+the\s+latest|write\s+a\s+review|(?:user|critic)\s+reviews?|rate\s+this|watch\s+(?:the\s+)?trailer|"
    r"skip\s+to|updated\s*:|published\s*:|copyright|read\s+also|shop\s+now|trending\s+(?:now|hot)|"
    r"\d+(?:\.\d+)?k?\s+views|barnes\s+(?:&\s+)?noble|(?:facebook|twitter|"
    r"whatsapp|linkedin|pinterest|flipboard|reddit|email)\s+(?:twitter|facebook|whatsapp|linkedin|email|"
    r"pinterest|reddit|share))\b", re.IGNORECASE)
_TIMESTAMP = re.compile(r"\b\d{1,2}:?\d{2}\s*(?:am|pm)\b|\b\d{3,4}(?:am|pm)\b|\b(?:gmt|bst|edt|est|pst|utc)\b",
                        re.IGNORECASE)
_BYLINE = re.compile(r"^(?:by|written\s+by|reporting\s+by|story\s+by)\s+[A-Z]", re.IGNORECASE)
_SEPARATORS = re.compile(r"[|\u203a\u00bb\u2022\u25b6]|\s/\s")
# Primary text: what a source quotes or performs rather than reports.
_SCRIPTURE = re.compile(r"\b(?:thee|thou|thy|thine|hath|unto|ye|shalt|doth|lord\s+god)\b|\b\d+:\d+\b",
                        re.IGNORECASE)
_PLAY = re.compile(r"\b\d{1,3}(?:st|nd|rd|th)\s+minute\b|\b\d{1,3}'\s|\byard\s+line\b|\bfirst\s+down\b|"
                   r"\b(?:kicks?|shoots?|passes|fires?|heads?)\s+(?:it\s+)?(?:wide|over|home|into)\b",
                   re.IGNORECASE)
_PROMO = re.compile(r"\b(?:tune\s+in|airs?\s+(?:on|at|tonight)|watch\s+(?:it\s+)?(?:now|live|on)|"
                    r"streaming\s+now|now\s+streaming|available\s+(?:now|to\s+stream)|tickets?\s+(?:are\s+)?"
                    r"(?:on\s+sale|available)|book\s+now|buy\s+now|don'?t\s+miss|(?:visitors|fans|guests|readers|travell?ers)\s+"
                    r"(?:planning|should|will\s+want|are\s+advised))\b", re.IGNORECASE)


@dataclass(frozen=True)
class Reading:
    """One sentence read against its article.

    ``problems`` maps a rubric error (``unclear``, ``furniture``, ``subjective``, ``primary``) to
    the reason it applies; an empty mapping means the sentence can stand as a fact line. The
    other fields are measurements: ``new_names`` and ``new_figures`` count the capitalised words
    and figures the article lacks, ``new_words`` its other content words the article lacks,
    ``stated`` the largest share of the sentence's content words (the title's left out) found in
    one article sentence, ``known`` the share found anywhere in the article, ``title`` the share of the title's words it
    names, ``back`` its pronouns that point back (he, its, their), ``names_known`` the share of its
    capitalised words the article also has, ``lead_day`` whether it names a day of a month that the
    article's lead names (the day of the article's own event, as a retelling dates it).
    """

    text: str
    words: int
    problems: dict[str, str] = field(default_factory=dict)
    new_names: int = 0
    new_figures: int = 0
    new_words: int = 0
    stated: float = 0.0
    known: float = 0.0
    title: float = 0.0
    dated: bool = False
    quoted: float = 0.0
    verb: bool = False
    back: int = 0
    names_known: float = 1.0
    lead_day: bool = False

    @property
    def clean(self) -> bool:
        return not self.problems

    @property
    def news(self) -> float:
        """How much the sentence brings that the article lacks (figures and names weigh most)."""
        return 2.0 * self.new_figures + 1.5 * self.new_names + min(self.new_words, 6) * 0.5


@dataclass(frozen=True, eq=False)  # compared and hashed by identity: one per article (cached), a cache key
class ArticleTerms:
    """The article's words, folded, and each sentence's, for the novelty figures of a reading."""

    vocabulary: frozenset[str]
    sentences: tuple[frozenset[str], ...]
    title: frozenset[str]
    title_text: str
    lead_days: frozenset[tuple[str, int]] = frozenset()  # the days of a month the lead names


@functools.lru_cache(maxsize=64)
def _article_terms(title: str, plain: str, lead: str) -> ArticleTerms:
    sentences = tuple(frozenset(_terms(s)) for s in split_sentences(plain.replace("\n\n", " \n ")))
    vocabulary = frozenset().union(*sentences) | frozenset(_terms(title))
    return ArticleTerms(vocabulary, tuple(s for s in sentences if s), frozenset(_terms(title)), title,
                        days_of_month(lead))


def article_terms(article: Article) -> ArticleTerms:
    lead = article.section(())
    return _article_terms(article.title, article.plain_text, lead.text if lead else "")


def _terms(text: str) -> list[str]:
    """Content tokens and figures, folded (numbers kept, "1,200" as "1200")."""
    out = list(content_tokens(text))
    out += [f.token for w in claim_words(text) for f in w.figures]
    return out


def sentences_of(passage: str) -> list[str]:
    """A passage cut into sentences by the punctuation it has (the parser would be slower and,
    on restored punctuation, no better)."""
    return [s for s in split_sentences(passage) if s.strip()]


def read(sentence: str, article: Article, *, parse: bool = True) -> Reading:
    """``sentence`` read against ``article``; with ``parse``, spaCy's parser says whether it has
    a verb with a subject (without, a missing verb is not reported)."""
    return _read(sentence.strip(), article_terms(article), parse)


@functools.lru_cache(maxsize=8192)
def _read(text: str, art: ArticleTerms, parse: bool) -> Reading:
    ws = words(text)
    problems: dict[str, str] = {}
    _shape(text, ws, problems)
    _leaning(text, ws, art, problems)
    _page_text(text, ws, problems)
    _voice(text, ws, problems)
    glued = None if "unclear" in problems else _glued(ws, art.vocabulary)
    if glued:
        problems["unclear"] = f"words run together: {glued!r}"
    verb = True
    if parse and "unclear" not in problems:
        missing = _clause_problem(text, art.title_text)
        verb = missing is None
        if missing:
            problems["unclear"] = missing
    own = set(_terms(text))
    figures = {f.token for w in claim_words(text) for f in w.figures}
    names = {t for w in ws[1:] if w[:1].isupper() for t in content_tokens(w)} - figures
    new = own - art.vocabulary
    # The subject's own name is in every sentence about it: what repeats the article is the rest.
    rest = own - art.title
    stated = max((len(rest & s) / len(rest) for s in art.sentences), default=0.0) if rest else 0.0
    quoted = sum(e - s for s, e in quoted_spans(text)) / max(1, len(text))
    return Reading(
        text=text, words=len(ws), problems=problems,
        new_names=len(names & new), new_figures=len(figures & new), new_words=len(new - names - figures),
        stated=round(stated, 3), known=round(len(rest & art.vocabulary) / max(1, len(rest)), 3),
        title=round(len(art.title & own) / max(1, len(art.title)), 3),
        dated=bool(_DATED.search(text)), quoted=round(quoted, 3), verb=verb,
        back=sum(w.strip(".,;:!?\"'()").lower() in _BACK for w in ws),
        names_known=round(len(names - new) / len(names), 3) if names else 1.0,
        lead_day=bool(art.lead_days and days_of_month(text) & art.lead_days),
    )


def _shape(text: str, ws: list[str], problems: dict[str, str]) -> None:
    if len(ws) < MIN_WORDS:
        problems["unclear"] = f"{len(ws)} words: too short to be a fact"
    elif len(ws) > MAX_WORDS:
        problems["unclear"] = f"{len(ws)} words: longer than a fact line ({MAX_WORDS})"
    elif not (text[:1].isupper() or text[:1].isdigit() or text[:1] in "\"\u201c'"):
        problems["unclear"] = "does not start a sentence"
    elif not text.rstrip("\"'\u201d\u2019)").endswith((".", "!")):
        problems["unclear"] = "a question" if text.rstrip("\"'\u201d\u2019)").endswith("?") \
            else "does not end as a sentence"
    elif ws[-1].rstrip(".!\"'\u201d\u2019)").lower() in _OPEN_END:
        problems["unclear"] = f"cut short: ends on {ws[-1].rstrip('.')!r}"
    elif text.count("(") != text.count(")") or text.count("\u201c") != text.count("\u201d") \
            or text.count('"') % 2:
        problems["unclear"] = "a bracket or quotation mark is left open"


def _leaning(text: str, ws: list[str], art: ArticleTerms, problems: dict[str, str]) -> None:
    """A first word that points back at something the reviewer was not shown."""
    if "unclear" in problems or not ws:
        return
    first = ws[0].strip("\"'\u201c\u2018,").lower()
    if first in _LEANING:
        problems["unclear"] = f"opens with {ws[0]!r}, which points back at something not shown"
    elif first in _CONNECTIVES:
        problems["unclear"] = f"opens with {ws[0]!r}, which continues a sentence not shown"
    elif why := continues_a_sentence(text):
        problems["unclear"] = why
    elif first == "the" and len(ws) > 1:
        head = ws[1].strip(",.;:").lower()
        # "The stand was rebuilt": which stand? "The new stand of Quarry Lane" says. ("The two-tier
        # stand" no more than "the stand"; "The 16-member squad" leaves it to the other rules.)
        named = any(w[:1].isupper() for w in ws[2:5])
        if head.replace("-", "").isalpha() and ws[1][:1].islower() and head not in art.title_text.lower() \
                and not named:
            problems["unclear"] = f"'the {head}' with nothing before it to say which"
    if "unclear" not in problems and (_RELATIVE_TIME.search(text) or
                                      (_ON_WEEKDAY.search(text) and not _DATED.search(text))):
        problems["unclear"] = "a time relative to the page's date ('last week', 'on Monday'), with no date"


def continues_a_sentence(line: str) -> str | None:
    """An opening of more than one word that continues a sentence the line does not include ("For
    example, ..."); "this year" and the like after a preposition count as a time, which a year in the
    line settles ("at that time" does not: which time is the sentence before's)."""
    line = line.strip()
    m = _CONTINUING.match(line)
    if not m:
        return None
    after = line[m.end():].split()
    if m.group(0).split()[-1].lower() in ("this", "these") and after \
            and after[0].strip(".,;:!?\"'").lower().removesuffix("'s") in _TIME_WORDS and YEAR.search(line):
        return None
    return f"it opens on {m.group(0).strip(chr(34) + chr(39))!r}, which answers a sentence not shown"


_GLUE = frozenset("the and of to in for on at by with from said says click here more however we but".split())


def _glued(ws: list[str], vocabulary: frozenset[str]) -> str | None:
    """A word that is two run together ("octoberthe", "here618pm"): a page whose links and headlines
    lost the space between them. Only what such a join leaves is looked for: letters and figures
    mixed, or a known word with a function word or a sentence's opening ("the", "said", "however",
    "we") stuck to it; compound names ("Lowbridge") and long English words ("breathtaking") are words."""
    english = english_words()
    for w in ws:
        bare = w.strip(".,;:!?\"'()\u201c\u201d\u2018\u2019")
        token = bare.lower()
        if len(token) < 7 or token in english or token in vocabulary or not token.isalnum():
            continue
        if any(c.isdigit() for c in token) and any(c.isalpha() for c in token) and not re.fullmatch(
                r"[a-z]+\d{1,3}|\d+(?:st|nd|rd|th|s|km|kg|mm|cm)", token):
            return w
        known = lambda part: part in english or part in vocabulary  # noqa: E731
        # A two-letter word ("on", "in") only where a sentence's opening lost its space after a
        # lower-case word: English writes "onscreen", and names end in it ("Michelin").
        name = bare[:1].isupper()
        if english and token.isalpha() and any(
                (k > 2 and token[:k] in _GLUE and known(token[k:]))
                or (token[k:] in _GLUE and (len(token) - k > 2 or not name) and known(token[:k]))
                for k in range(2, len(token) - 1)):
            return w
    return None


def _page_text(text: str, ws: list[str], problems: dict[str, str]) -> None:
    found = _FURNITURE.search(text) or _TIMESTAMP.search(text) or _BYLINE.search(text) \
        or _SEPARATORS.search(text)
    if found:
        problems["furniture"] = f"page text: {found.group(0).strip()!r}"
        return
    capitals = [w for w in ws[1:] if w[:1].isupper()]
    if len(ws) >= 8 and len(capitals) / (len(ws) - 1) > 0.6:
        problems["furniture"] = "mostly capitalised words: a menu, a list of names or a headline"
    elif sum(any(c.isdigit() for c in w) for w in ws) > max(4, len(ws) // 3):
        problems["furniture"] = "mostly figures: a table or a schedule"


def _voice(text: str, ws: list[str], problems: dict[str, str]) -> None:
    spans = quoted_spans(text)
    outside = "".join(ch for i, ch in enumerate(text) if not any(s <= i < e for s, e in spans))
    plain = {w.strip(".,;:!?\"'()\u201c\u201d\u2019").lower() for w in outside.split()}
    if plain & _PERSON:
        problems["subjective"] = f"in the {'first' if plain & set('i me my mine we us our ours'.split()) else 'second'}" \
                                 " person: someone's own voice"
    elif spans and sum(e - s for s, e in spans) > 0.5 * len(text):
        problems["subjective"] = "mostly a quotation: someone's words, not a fact"
    if _SCRIPTURE.search(text):
        problems["primary"] = "reads as scripture or a verse reference"
    elif _PLAY.search(text):
        problems["primary"] = "play-by-play of a match"
    elif _PROMO.search(text):
        problems["primary"] = "promotes a broadcast or a sale, or advises visitors"


# Dependencies of a clause that hangs from a word rather than making a sentence of its own.
_NESTED = ("relcl", "acl", "advcl", "amod", "pcomp", "xcomp", "csubj")


# Verbs of saying, whose subject may follow them ("..., said Smith").
_SAYING = frozenset("say tell add state explain note write announce report claim ask reply continue insist "
                    "conclude argue".split())


def _subject_out_of_place(doc, root) -> str | None:
    """A subject where a whole sentence would not put it: after a verb of action with nothing before
    the verb to be its subject ("On November 19, follows Scott Calvin ..."), or cut from its verb by a
    lone comma ("Record of 21404 at the 2019 Chicago Marathon, was ..."): what is left of a sentence
    whose opening the line lost."""
    subjects = [c for c in root.children if c.dep_ in ("nsubj", "nsubjpass")]
    if not subjects:
        return None
    before = [c for c in root.children if c.i < root.i]
    if root.pos_ == "VERB" and root.tag_ in ("VBD", "VBZ", "VBP") and root.lemma_ not in _SAYING \
            and all(c.i > root.i for c in subjects) \
            and not any(c.dep_ in ("aux", "auxpass", "dobj", "attr", "ccomp") for c in before):
        return f"the verb {root.text!r} comes before its subject: the sentence's opening is missing"
    first = min(t.i for t in subjects[0].subtree)
    verb = min([root.i] + [c.i for c in before if c.dep_ in ("aux", "auxpass", "neg")])
    if first == 0 and verb > 1 and doc[verb - 1].text == "," \
            and sum(t.text == "," for t in doc[first:verb]) == 1:
        return "a lone comma between the subject and its verb: the sentence's opening is missing"
    return None


def _headline(root) -> str | None:
    """A headline's grammar: the line opens on its subject and goes on with "to" and a verb, never a
    verb of its own ("Government to fight hate and violence ...", "Darby Allin to retain the title")."""
    kids = list(root.children)
    subjects = [c for c in kids if c.dep_ in ("nsubj", "nsubjpass") and c.i < root.i]
    if root.tag_ == "VB" and subjects and min(t.i for t in subjects[0].subtree) == 0 \
            and any(c.dep_ == "aux" and c.lower_ == "to" for c in kids) \
            and not any(c.dep_ == "aux" and c.tag_ == "MD" for c in kids):
        return f"a headline: its subject has 'to {root.text}', no verb of its own"
    return None


def _as_it_happens(root) -> str | None:
    """A main verb in the present progressive ("Candidates are arriving at the count", "Aldrich is facing
    five counts"): reporting as it happens, true on the page's date and not said to be after it."""
    if root.tag_ == "VBG" and any(c.dep_ == "aux" and c.lower_ in ("is", "are", "am", "'s", "'re")
                                  for c in root.children):
        return f"told as it happens ({root.text!r} in the present): true on the page's date, not after it"
    return None


def _clause_problem(text: str, title: str = "") -> str | None:
    """What spaCy's parse says is missing for a main clause, or None: a verb (or auxiliary) with a
    subject of its own that heads the sentence, not a clause that hangs from one not shown ("After
    a clash eliminated the early leaders."), with its subject where a whole sentence puts it, neither
    a headline's "X to do Y" nor news told as it happens ("are arriving"). The article's title is
    read as a plain name: the small parser stumbles on codes and figures in one ("Listedtown aafe34
    2 elected ...")."""
    if title:
        text = re.sub(re.escape(title), "Smith", text, flags=re.IGNORECASE)
    doc = english()(text, disable=["ner"])
    roots = [t for t in doc if t.dep_ == "ROOT"]
    if len(roots) != 1:
        return "the parser reads more than one sentence in it"
    root = roots[0]
    if any(c.dep_ == "mark" for c in root.children):
        return "a subordinate clause with no main clause"
    if doc[0].tag_ in ("VBD", "VBZ", "VBP") and not any(c.dep_.startswith("nsubj") and c.i < root.i
                                                         for c in root.children):
        return f"starts with the verb {doc[0].text!r}: its subject is missing"
    if root.i == 0 and root.tag_ == "VB" and not any(c.dep_ in ("nsubj", "nsubjpass", "aux") for c in root.children):
        return f"opens on the bare verb {doc[0].text!r}: an instruction to the reader, or its subject is missing"
    why = _subject_out_of_place(doc, root) or _as_it_happens(root) or _headline(root)
    if why:
        return why
    # Under a root that is no verb, a verb in a relative or adverbial clause is no main clause ("131
    # children who died in the massacre, which claimed ..."): the line names something and stops.
    nested = () if root.pos_ in ("VERB", "AUX") else _NESTED
    for tok in doc:
        if tok.pos_ in ("VERB", "AUX") and tok.dep_ not in nested \
                and any(c.dep_ in ("nsubj", "nsubjpass", "expl", "csubj") for c in tok.children):
            return None
    # The small parser misreads some names before a verb ("Listedtown 89fd11 2 elected ..."): a
    # noun or name that the root verb governs from its left stands for the subject.
    if root.pos_ in ("VERB", "AUX") and any(c.i < root.i and c.pos_ in ("PROPN", "NOUN", "PRON")
                                             for c in root.children):
        return None
    return "no verb with a subject: not a sentence"
