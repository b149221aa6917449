"""Text utilities shared by the project: content tokens, sentences, cleaning.

``content_tokens`` is the tokeniser of the backtest's lexical judge (see the
bench README): lowercased words of three or more letters that are not English
stop words, plus number tokens, with accents folded and a possessive 's dropped.
The pipeline uses the same tokeniser, so "new relative to the article" means the
same thing to the bot and to the judge.
"""
from __future__ import annotations

import functools
import re
import unicodedata

# NLTK's English stop word list (the classic 179 words), written out so that the
# project does not need NLTK or its data download.
STOP_WORDS = frozenset("""
i me my myself we our ours ourselves you you're you've you'll you'd your yours yourself yourselves
he him his himself she she's her hers herself it it's its itself they them their theirs themselves
what which who whom this that that'll these those am is are was were be been being have has had
having do does did doing a an the and but if or because as until while of at by for with about
against between into through during before after above below to from up down in out on off over
under again further then once here there when where why how all any both each few more most other
some such no nor not only own same so than too very s t can will just don don't should should've
now d ll m o re ve y ain aren aren't couldn couldn't didn didn't doesn doesn't hadn hadn't hasn
hasn't haven haven't isn isn't ma mightn mightn't mustn mustn't needn needn't shan shan't shouldn
shouldn't wasn wasn't weren weren't won won't wouldn wouldn't
""".split())

_POSSESSIVE = re.compile(r"(?<=\w)['\u2019]s\b", re.IGNORECASE)
_TOKEN = re.compile(r"\d[\d,]*(?:\.\d+)?|[a-z]+")
_WORDS = re.compile(r"\S+")


def fold(text: str) -> str:
    """Lowercase with accents removed (é -> e, ß kept as is)."""
    if text.isascii():  # most text: nothing to decompose (the character loop was a tenth of a backtest)
        return text.lower()
    decomposed = unicodedata.normalize("NFKD", text.lower())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def content_tokens(text: str) -> list[str]:
    """The content tokens of ``text`` in order (duplicates kept).

    Words of 3+ letters not in :data:`STOP_WORDS`, and numbers with their
    thousands commas removed ("1,200" -> "1200"; "2.5" stays one token).
    """
    return list(_content_tokens(text))


@functools.lru_cache(maxsize=1 << 16)
def _content_tokens(text: str) -> tuple[str, ...]:
    # the pipeline asks again and again for the same sentences' tokens (placement, scoring, gates)
    folded = _POSSESSIVE.sub("", fold(text))
    tokens: list[str] = []
    for tok in _TOKEN.findall(folded):
        if tok[0].isdigit():
            tokens.append(tok.rstrip(",").replace(",", ""))
        elif len(tok) >= 3 and tok not in STOP_WORDS:
            tokens.append(tok)
    return tuple(tokens)


def words(text: str) -> list[str]:
    """Whitespace-separated words, punctuation attached (what "100 words" counts)."""
    return _WORDS.findall(text)


_MARK = re.compile(r"[.,;:!?()\[\]\"\u201c\u201d\u2014\u2013]|^-$")


def longest_unpunctuated_run(text: str) -> int:
    """The most words in a row with no punctuation mark among them (a sentence's stop ends a run).

    Edited prose breaks every few words; a page that lost its punctuation, a menu or a
    table dump runs on (how rarely articles' own sentences run over 40 words: docs/results.md,
    "Readable text in articles").
    """
    longest = current = 0
    for word in words(text):
        current += 1
        longest = max(longest, current)
        if _MARK.search(word):
            current = 0
    return longest


# --- sentence splitting -----------------------------------------------------------

ABBREVIATIONS = frozenset("""
mr mrs ms dr st jr sr prof gen col lt sgt capt cmdr adm gov sen rep rev hon pres inc ltd co corp
no nos vs etc lit approx est dept univ fig jan feb mar apr jun jul aug sep sept oct nov dec mt ft
ave blvd rd op cf al e.g i.e ca vol pp ed eds
""".split())

_CLOSERS = {"(": ")", "[": "]", "\u201c": "\u201d", '"': '"'}
_END = re.compile(r"[.!?]+[\"'\u201d\u2019)\]]*(?=\s+|$)")


def split_sentences(text: str) -> list[str]:
    """Split a paragraph into sentences with simple rules.

    No split after common abbreviations (Mr., Inc., Jan.), single-letter
    initials, dotted abbreviations (U.S., a.m.), inside decimals, or inside a
    quotation or parenthesis that closes later in the paragraph.
    """
    text = text.strip()
    sentences: list[str] = []
    start = 0
    for match in _END.finditer(text):
        end = match.end()
        if not _is_boundary(text, start, match.start(), end):
            continue
        piece = text[start:end].strip()
        if piece:
            sentences.append(piece)
        start = end
    rest = text[start:].strip()
    if rest:
        sentences.append(rest)
    return sentences


def _is_boundary(text: str, start: int, dot: int, end: int) -> bool:
    following = text[end:].lstrip()
    if not following:
        return True
    if text[dot] == ".":
        word = re.search(r"(\S+)$", text[start:dot])
        prev = word.group(1) if word else ""
        bare = prev.lstrip("(\"'\u201c[").lower()
        if bare in ABBREVIATIONS or (len(bare) == 1 and bare.isalpha()):
            return False
        if re.fullmatch(r"(?:[a-z]\.)+[a-z]", bare):  # U.S / a.m / e.g
            return False
    first = following[0]
    if first.islower():
        return False
    return not _inside_open_pair(text, start, end)


def _inside_open_pair(text: str, start: int, end: int) -> bool:
    """True when a quote or bracket opened in this sentence closes later in the paragraph."""
    piece = text[start:end]
    for opener, closer in _CLOSERS.items():
        if opener == closer:
            if piece.count(opener) % 2 == 1 and closer in text[end:]:
                return True
        elif piece.count(opener) > piece.count(closer) and closer in text[end:]:
            return True
    return False


# --- cleaning of suggestion text ---------------------------------------------------

_REF = re.compile(r"<ref[^>]*/>|<ref[^>]*>.*?</ref>", re.IGNORECASE | re.DOTALL)
_LINK = re.compile(r"\[\[(?:[^\]|]*\|)?([^\]]*)\]\]")
_QUOTES = re.compile(r"'{2,}")


def strip_templates(text: str) -> str:
    """Remove ``{{...}}`` templates, nested ones included."""
    prev = None
    while prev != text:
        prev = text
        text = re.sub(r"\{\{[^{}]*\}\}", "", text)
    return text


def clean_suggestion_text(text: str, max_words: int = 100) -> str:
    """The bench README's cleaning: refs, templates, links and quote marks out; first 100 words."""
    text = _REF.sub("", text)
    text = strip_templates(text)
    text = _LINK.sub(r"\1", text)
    text = _QUOTES.sub("", text)
    return " ".join(words(text)[:max_words])


# A PDF served as text, or a compressed or binary file decoded as characters, comes through as U+FFFD
# (what a decoder writes for bytes it cannot read), control and private-use characters: many in
# such a file, none in a page in any script (docs/results.md, "The language gate").
_UNREADABLE_SHARE = 0.05


def unreadable(text: str) -> int:
    """How many characters of ``text`` are U+FFFD, control (other than line breaks and tabs) or
    private-use characters: bytes decoded as text, never a page's own words."""
    return sum(1 for ch in text
               if ch == "\ufffd" or (ch < " " and ch not in "\n\r\t") or "\ue000" <= ch <= "\uf8ff")


# A source longer than this is not read: a news page's text is some thousands of characters, and
# reading time grows with the size: one very large document held a page for minutes
# (docs/results.md, "Reading a very large document").
MAX_DOCUMENT_CHARS = 500_000


def not_text(text: str) -> str:
    """Why ``text`` is not a page's words to read ("" when it is): a file's raw bytes, or a text
    over :data:`MAX_DOCUMENT_CHARS`."""
    if len(text) > MAX_DOCUMENT_CHARS:
        return f"{len(text):,} characters, over the cap of {MAX_DOCUMENT_CHARS:,} for one source"
    head = text.lstrip()[:5000]
    if head.startswith("%PDF-"):
        return "the raw bytes of a PDF file, not its text"
    bad = unreadable(head)
    if head and bad / len(head) > _UNREADABLE_SHARE:
        return f"{bad / len(head):.0%} of its first characters are unreadable bytes"
    return ""


def kept_text(text: str | None) -> tuple[str | None, str | None]:
    """What the state keeps of a source's text, and why not: the text the bot reads, or None and the
    reason it was not read (:func:`not_text`). A text over the cap, never read, is never stored whole."""
    problem = not_text(text) if text else ""
    return (None, f"not read: {problem}") if problem else (text, None)
