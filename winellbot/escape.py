"""Make untrusted text safe inside wikitext.

Everything the bot shows a reviewer comes from web pages or from a model, and
either could contain wiki markup meant to do harm when saved on a talk page:
a template (``{{delete}}``), a category, a signature, a heading that breaks the
page layout, a ``</nowiki>`` that escapes a quoting wrapper.

Two tools live here:

* :func:`escape_text` / :func:`escape_param` turn any string into wikitext that
  *renders as that exact string*: every character with a meaning in wikitext is
  written as an HTML character reference, which MediaWiki shows literally and
  never parses as markup. No ``<nowiki>`` wrapper is used, so there is nothing
  to break out of.
* :func:`check_proposed_wikitext` looks at the proposed paragraph, which is
  meant to be real wikitext (links, bold, the bot's own ``<ref>{{cite news}}``),
  and keeps only a whitelist of node kinds built from mwparserfromhell's parse.
  Anything else is reported as a problem and escaped, so it shows as text.
"""
from __future__ import annotations

import re
import unicodedata
from collections import Counter
from dataclasses import dataclass

import mwparserfromhell
from mwparserfromhell.nodes import (
    Comment,
    ExternalLink,
    HTMLEntity,
    Tag,
    Template,
    Text,
    Wikilink,
)
from mwparserfromhell.wikicode import Wikicode

# Characters with a meaning somewhere in wikitext; written as references everywhere.
_ALWAYS = {
    "&": "&amp;",
    "<": "&lt;",
    ">": "&gt;",
    "[": "&#91;",
    "]": "&#93;",
    "{": "&#123;",
    "}": "&#125;",
    "|": "&#124;",
    "~": "&#126;",
}
# Characters that only mean something at the start of a line (lists, headings,
# indents, tables, horizontal rules, preformatted text).
_LINE_START = {
    "*": "&#42;",
    "#": "&#35;",
    ":": "&#58;",
    ";": "&#59;",
    "=": "&#61;",
    "-": "&#45;",
    "!": "&#33;",
    " ": "&#32;",
}
# Bidirectional overrides can make shown text read differently from what it is.
_BIDI = {chr(c) for c in (*range(0x202A, 0x202F), *range(0x2066, 0x206A))}
# Invisible characters: they split words ("IGN\u200bORE") and hide what a reader sees.
INVISIBLE = frozenset("\u200b\u200c\u200d\u2060\ufeff\u00ad\u180e")
_DOUBLED = re.compile(r"_(?=_)|'(?=')")  # __MAGICWORD__ and ''italic''/'''bold'''
# Free external links: MediaWiki links every protocol of $wgUrlProtocols written in running text,
# "scheme://" ones and these that need no slashes (its 1.39 defaults).
COLON_PROTOCOLS = ("bitcoin", "geo", "magnet", "mailto", "matrix", "news", "sip", "sips", "sms", "tel", "urn",
                   "xmpp")
_URL_SCHEME = re.compile(rf"(?i)\b([a-z][a-z0-9+.-]*):(?=//)|\b({'|'.join(COLON_PROTOCOLS)}):")
_WHITESPACE = re.compile(r"\s+")


def _clean(s: str) -> str:
    """Drop control characters (except newline and tab), bidi overrides and invisible characters."""
    return "".join(
        ch for ch in s
        if ch in "\n\t" or (unicodedata.category(ch) != "Cc" and ch not in _BIDI and ch not in INVISIBLE)
    )


def _escape_line(line: str, line_start: bool = True) -> str:
    line = "".join(_ALWAYS.get(ch, ch) for ch in line)
    line = _DOUBLED.sub(lambda m: "&#95;" if m.group() == "_" else "&#39;", line)
    line = _URL_SCHEME.sub(lambda m: (m.group(1) or m.group(2)) + "&#58;", line)
    if line_start and line and line[0] in _LINE_START:
        line = _LINE_START[line[0]] + line[1:]
    return line


def escape_text(s: str, *, inline: bool = True, strip: bool = True) -> str:
    """Wikitext that renders as the literal text ``s`` and cannot carry markup.

    With ``inline`` (the default) every run of whitespace, newlines included,
    becomes one space, so the result can sit inside a line of the bot's own
    markup. With ``inline=False`` line breaks are kept and each line's first
    character is neutralised (no list, heading, table or ``----`` can start).
    ``strip=False`` keeps leading and trailing spaces and leaves the first
    character alone, for pieces joined into the middle of a line (a word
    diff); such a piece must never be placed at the start of a line.
    """
    s = _clean(s)
    if inline:
        s = _WHITESPACE.sub(" ", s)
        return _escape_line(s.strip(), True) if strip else _escape_line(s, False)
    lines = [ln.rstrip() for ln in s.replace("\r\n", "\n").replace("\r", "\n").split("\n")]
    return "\n".join(_escape_line(ln) for ln in lines).strip("\n")


def escape_param(s: str) -> str:
    """A value safe inside a template parameter: no ``|``, ``=``, ``}}`` or newline survives."""
    return escape_text(s, inline=True).replace("=", "&#61;")


# -- the proposed paragraph ------------------------------------------------

CITATION_TEMPLATES = frozenset({"cite news", "cite web"})
CITATION_PARAMS = frozenset({
    "url", "title", "work", "website", "publisher", "date", "access-date", "accessdate",
    "author", "last", "first", "language", "archive-url", "archive-date", "url-status", "agency",
})
# Namespace names and aliases (English) and common interwiki prefixes: a link to
# any of these is not a plain article link.
_PREFIXES = frozenset({
    "media", "special", "talk", "user", "user talk", "wikipedia", "wikipedia talk", "wp", "project",
    "project talk", "file", "file talk", "image", "image talk", "mediawiki", "mediawiki talk",
    "template", "template talk", "help", "help talk", "category", "category talk", "portal",
    "portal talk", "draft", "draft talk", "module", "module talk", "timedtext", "timedtext talk",
    "book", "gadget", "gadget definition", "topic", "wt", "ut", "cat", "h", "t", "mos", "wikt",
    "wiktionary", "w", "m", "meta", "commons", "c", "d", "wikidata", "s", "wikisource", "q",
    "wikiquote", "n", "wikinews", "b", "wikibooks", "v", "wikiversity", "voy", "wikivoyage",
    "species", "mw", "phab", "foundation", "wmf", "outreach", "incubator", "mediazilla", "rev",
    "diff", "oldid", "toollabs", "google", "iarchive",
})
_LANGUAGE_CODE = re.compile(r"^[a-z]{2,3}(-[a-z0-9]{2,8})*$")
_TEXT_PROBLEMS = (
    (re.compile(r"~~~"), "signature"),
    (re.compile(r"__[A-Za-z]+__"), "magic word"),
    (re.compile(r"<\s*/?\s*[A-Za-z!]"), "stray tag (possible <nowiki> break-out)"),
    (re.compile(r"\{\{|\}\}|\{\||\|\}"), "stray template or table braces"),
    (re.compile(r"\[\[|\]\]|\[(?:https?:)?//", re.I), "stray link brackets"),
    (_URL_SCHEME, "bare link"),
    (re.compile(r"\n[ \t]"), "line starting with a space (preformatted text)"),
)


@dataclass(frozen=True)
class WikitextCheck:
    """The verdict on a proposed paragraph.

    ``text`` is always safe to save: the allowed markup is kept and everything
    else is escaped so that it shows as plain text. ``problems`` says what was
    escaped and why; ``ok`` is true when nothing had to be.
    """

    text: str
    problems: tuple[str, ...]

    @property
    def ok(self) -> bool:
        return not self.problems


def check_proposed_wikitext(s: str, allowed_ref: bool = True, *,
                            original: str | None = None) -> WikitextCheck:
    """Keep only whitelisted markup in a proposed paragraph.

    Allowed anywhere: plain text, HTML entities, bold/italic, links to articles
    (no namespace, interwiki or language prefix). With ``allowed_ref``, also a
    ``<ref>`` holding exactly one ``{{cite news}}``/``{{cite web}}`` with plain,
    known, named parameters, and ``<ref name=... />`` re-uses. Markup that is
    already in ``original`` (the article's current paragraph) is kept as it is,
    up to the number of times it occurs there: it is in the article already.
    Comments from ``original`` are dropped (they would not show anyway).
    """
    budget: Counter[str] = Counter()
    if original:
        budget.update(str(n) for n in mwparserfromhell.parse(original).nodes
                      if not isinstance(n, Text))
    problems: list[str] = []
    out = _filter(mwparserfromhell.parse(_clean(s).strip()), allowed_ref, budget, problems)
    return WikitextCheck(text=out, problems=tuple(problems))


def _filter(code: Wikicode, allowed_ref: bool, budget: Counter[str], problems: list[str]) -> str:
    parts = []
    for node in code.nodes:
        raw = str(node)
        if not isinstance(node, Text) and budget[raw] > 0:
            budget[raw] -= 1
            parts.append("" if isinstance(node, Comment) else raw)
            continue
        problem = _node_problem(node, allowed_ref)
        if problem is None and isinstance(node, Tag) and node.wiki_markup in ("''", "'''"):
            inner = _filter(node.contents, allowed_ref, budget, problems)
            parts.append(f"{node.wiki_markup}{inner}{node.wiki_markup}")
            continue
        if problem is None:
            parts.append(raw)
        else:
            problems.append(f"{problem}: {raw[:80]!r}")
            core = raw.strip()  # escape_text trims each line: keep the spaces around the node
            parts.append(raw[:len(raw) - len(raw.lstrip())] + escape_text(core, inline=False)
                         + raw[len(raw.rstrip()):] if core else raw)
    return "".join(parts)


def _node_problem(node, allowed_ref: bool) -> str | None:
    """Why this node is not allowed, or None when it is."""
    if isinstance(node, Text):
        for pattern, name in _TEXT_PROBLEMS:
            if pattern.search(str(node)):
                return name
        return None
    if isinstance(node, HTMLEntity):
        return None
    if isinstance(node, Wikilink):
        return _link_problem(node)
    if isinstance(node, Tag):
        if node.wiki_markup in ("''", "'''"):
            return None
        if str(node.tag).strip().lower() == "ref" and not node.wiki_markup:
            return _ref_problem(node) if allowed_ref else "reference not allowed here"
        return f"markup <{str(node.tag).strip()}> not allowed"
    if isinstance(node, Template):
        return "template outside the bot's citation"
    if isinstance(node, ExternalLink):
        return "external link outside the citation"
    if isinstance(node, Comment):
        return "comment"
    return f"{type(node).__name__.lower()} not allowed"


def _link_problem(link: Wikilink) -> str | None:
    title = str(link.title).strip()
    if not title or title.startswith(":") or any(c in title for c in "{}[]<>|~%&\n"):
        return "link target not a plain article"
    prefix, sep, _ = title.partition(":")
    prefix = prefix.strip().replace("_", " ").lower()
    if sep and (prefix in _PREFIXES or _LANGUAGE_CODE.match(prefix)):
        return f"link to namespace or other wiki ({prefix}:)"
    if link.text is not None:
        for inner in link.text.nodes:
            if not isinstance(inner, (Text, HTMLEntity)) or _node_problem(inner, False):
                return "link label with markup"
    return None


def _ref_problem(tag: Tag) -> str | None:
    for attr in tag.attributes:
        if str(attr.name).strip().lower() != "name" or not _is_plain(attr.value):
            return "reference attribute other than a plain name"
    if tag.self_closing:
        return None if tag.attributes else "empty self-closing reference"
    nodes = [n for n in tag.contents.nodes if not (isinstance(n, Text) and not str(n).strip())]
    if len(nodes) != 1 or not isinstance(nodes[0], Template):
        return "reference holding something other than one citation template"
    tpl: Template = nodes[0]
    name = str(tpl.name).strip().replace("_", " ").lower()
    if name not in CITATION_TEMPLATES:
        return f"reference with template {name!r}"
    for param in tpl.params:
        key = str(param.name).strip().lower()
        if not param.showkey or key not in CITATION_PARAMS:
            return f"citation parameter {key!r} not allowed"
        if not _is_plain(param.value):
            return f"citation parameter {key!r} holds markup"
        if key in ("url", "archive-url") and not re.match(r"https?://\S+$", str(param.value).strip()):
            return f"citation {key} is not an http(s) address"
    return None


def _is_plain(value: Wikicode) -> bool:
    """Only text (no markup of any kind, nothing a Text check objects to) and entities."""
    for node in value.nodes:
        if isinstance(node, HTMLEntity):
            continue
        if not isinstance(node, Text):
            # free URLs inside a parameter parse as external links; they are plain here
            if isinstance(node, ExternalLink) and not node.brackets and not node.title:
                continue
            return False
        if _node_problem(node, False):
            return False
    return True
