"""The article model: wikitext in, sections and paragraphs with exact offsets out.

:func:`parse_article` turns a page's wikitext into an :class:`~winellbot.models.Article`
whose paragraphs know where they sit in the wikitext (``start``/``end``), so that
:func:`replace_paragraph` and :func:`insert_paragraph` can produce a new wikitext that
differs from the old one only where the suggestion says. :func:`outline` renders the
article for LLM prompts.

Parsing is done on mwparserfromhell's top-level nodes, so a blank line inside a
template, a table, a comment or a ``<ref>`` never splits a paragraph, and a heading
inside a template is not taken for a section. Broken markup is handled best-effort:
mwparserfromhell leaves what it cannot parse as text, and lines that are clearly
markup debris (``|param=``, a lone ``}}``) are treated like templates.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import mwparserfromhell
from mwparserfromhell.nodes import Comment, ExternalLink, Heading, Tag, Template, Text, Wikilink
from mwparserfromhell.wikicode import Wikicode

from winellbot.errors import ArticleParseError
from winellbot.models import Article, Paragraph, Section, SectionPath

LEAD_TITLE = "Lead"
"""The title given to the lead section (its path is always ``()``)."""

SKIPPED_SECTIONS = frozenset(
    {
        "references", "external links", "see also", "notes", "further reading", "bibliography",
        "sources", "citations", "footnotes",
    }
)
"""Section names (lower case) that hold no prose to update; they and their subsections are left out."""

_LIST_MARKERS = frozenset("*#:;")
_NON_PROSE_LINK = re.compile(r"^\s*:?\s*(file|image|media|category)\s*:", re.IGNORECASE)
_NON_PROSE_TAGS = frozenset({"table", "gallery", "references", "imagemap", "timeline", "graph", "mapframe"})
# Templates that sit at the top of a paragraph line without being part of its prose.
_BLOCK_TEMPLATE = re.compile(
    r"^(infobox|short description|about|for|other uses?|redirect|distinguish|main|see also|further|"
    r"use [a-z]+ (dates|english)|pp(-.*)?|good article|featured article|multiple issues|coord|"
    r"taxobox|automatic taxobox|speciesbox|clear|toc|stub|.*-stub)\b",
    re.IGNORECASE,
)
_MAGIC_WORD = re.compile(r"^\s*(__[A-Z]+__\s*)+$")
_DEBRIS = re.compile(r"^\s*(\||!|\{\||\|\}|\}\}|\{\{|-{4,}\s*$)")
_REDIRECT = re.compile(r"^\s*#redirect\s*\[\[", re.IGNORECASE)
_URL = re.compile(r"https?://[^\s|\]\[<>\"{}]+", re.IGNORECASE)


@dataclass(frozen=True)
class _Piece:
    """A top-level node, or the part of a text node that lies on one line."""

    node: object
    text: str
    start: int


@dataclass
class _Line:
    """A logical line: a newline inside a template or tag does not end it."""

    start: int
    end: int  # exclusive, before the newline
    pieces: list[_Piece]
    kind: str = "prose"  # prose | list | blank | skip | heading


@dataclass(frozen=True)
class _HeadingSpan:
    level: int
    title: str
    path: SectionPath
    skipped: bool
    line: int  # index of the heading line; -1 for the lead


# --------------------------------------------------------------------------- parsing


def parse_article(title: str, wikitext: str, *, revid: int | None = None, timestamp: str | None = None) -> Article:
    """Parse wikitext into sections and paragraphs.

    Raises :class:`ArticleParseError` for a redirect, an empty page, or a page with no
    prose paragraph left outside the skipped sections.
    """
    if not isinstance(wikitext, str):
        raise ArticleParseError(f"{title!r}: wikitext must be a string, got {type(wikitext).__name__}")
    if not wikitext.strip():
        raise ArticleParseError(f"{title!r}: the page is empty")
    if _REDIRECT.match(wikitext):
        raise ArticleParseError(f"{title!r}: the page is a redirect")
    code = _parse_wikicode(title, wikitext)
    lines = _split_lines(code)
    named_refs = _named_ref_urls(code)
    sections = []
    for heading, body in _sections(lines):
        if heading.skipped:
            continue
        blocks = (_paragraph(wikitext, s, e, kind, named_refs) for s, e, kind in _blocks(body))
        paragraphs = tuple(p for p in blocks if p.text)
        sections.append(Section(title=heading.title, level=heading.level, path=heading.path, paragraphs=paragraphs))
    if not any(s.paragraphs for s in sections):
        raise ArticleParseError(f"{title!r}: no prose paragraph could be found in the wikitext")
    return Article(title=title, wikitext=wikitext, sections=tuple(sections), revid=revid, timestamp=timestamp)


def _parse_wikicode(title: str, wikitext: str) -> Wikicode:
    try:
        return mwparserfromhell.parse(wikitext)
    except Exception:  # the tokenizer can give up on pathological style markup
        try:
            return mwparserfromhell.parse(wikitext, skip_style_tags=True)
        except Exception as exc:
            raise ArticleParseError(f"{title!r}: mwparserfromhell could not parse the page: {exc}") from exc


def _split_lines(code: Wikicode) -> list[_Line]:
    """Cut the top-level nodes into logical lines, keeping character offsets."""
    lines: list[_Line] = []
    current: list[_Piece] = []
    line_start = pos = 0
    for node in code.nodes:
        raw = str(node)
        if isinstance(node, Text) and "\n" in raw:
            offset = 0
            for chunk in raw.split("\n")[:-1]:
                if chunk:
                    current.append(_Piece(node, chunk, pos + offset))
                end = pos + offset + len(chunk)
                lines.append(_Line(line_start, end, current))
                current, line_start = [], end + 1
                offset += len(chunk) + 1
            tail = raw[offset:]
            if tail:
                current.append(_Piece(node, tail, pos + offset))
        elif raw:
            current.append(_Piece(node, raw, pos))
        pos += len(raw)
    lines.append(_Line(line_start, pos, current))
    for line in lines:
        line.kind = _classify(line.pieces)
    return lines


def _classify(pieces: list[_Piece]) -> str:
    content = [p for p in pieces if not (isinstance(p.node, Text) and not p.text.strip())]
    if not content:
        return "blank"
    first = content[0]
    if isinstance(first.node, Heading):
        return "heading"
    if isinstance(first.node, Tag) and first.node.wiki_markup in _LIST_MARKERS:
        return "list"
    if isinstance(first.node, Text) and _DEBRIS.match(first.text):
        return "skip"
    if all(_is_non_prose(p) for p in content):
        return "skip"
    return "prose"


def _is_non_prose(piece: _Piece) -> bool:
    node = piece.node
    if isinstance(node, (Template, Comment)):
        return True
    if isinstance(node, Wikilink):
        return bool(_NON_PROSE_LINK.match(str(node.title)))
    if isinstance(node, Tag):
        return str(node.tag).strip().lower() in _NON_PROSE_TAGS
    if isinstance(node, Text):
        return bool(_MAGIC_WORD.match(piece.text))
    return False


def _sections(lines: list[_Line]) -> list[tuple[_HeadingSpan, list[_Line]]]:
    """Group lines under their headings; the lead comes first with path ``()``."""
    result: list[tuple[_HeadingSpan, list[_Line]]] = [(_HeadingSpan(0, LEAD_TITLE, (), False, -1), [])]
    stack: list[tuple[int, str, bool]] = []  # (level, title, skipped) of the open headings
    for index, line in enumerate(lines):
        if line.kind != "heading":
            result[-1][1].append(line)
            continue
        heading = next(p.node for p in line.pieces if isinstance(p.node, Heading))
        title = _heading_title(heading)
        while stack and stack[-1][0] >= heading.level:
            stack.pop()
        skipped = title.lower() in SKIPPED_SECTIONS or any(s[2] for s in stack)
        stack.append((heading.level, title, skipped))
        path = tuple(s[1] for s in stack)
        result.append((_HeadingSpan(heading.level, title, path, skipped, index), []))
    return result


def _heading_title(heading: Heading) -> str:
    title = _normalise(heading.title.strip_code())
    return title or _normalise(str(heading.title))


def _blocks(body: list[_Line]) -> list[tuple[int, int, str]]:
    """Runs of prose lines or of list lines, as (start, end, kind)."""
    blocks: list[tuple[int, int, str]] = []
    run: list[_Line] = []
    for line in [*body, _Line(0, 0, [], "blank")]:
        if run and line.kind != run[0].kind:
            blocks.append((_block_start(run[0]), run[-1].end, run[0].kind))
            run = []
        if line.kind in ("prose", "list"):
            run.append(line)
    return blocks


def _block_start(line: _Line) -> int:
    """Skip leading hatnotes/infoboxes/comments glued to the first prose line."""
    start = line.start
    for piece in line.pieces:
        node = piece.node
        if isinstance(node, Text) and not piece.text.strip():
            start = piece.start + len(piece.text)
        elif isinstance(node, Comment) or (isinstance(node, Wikilink) and _is_non_prose(piece)):
            start = piece.start + len(piece.text)
        elif isinstance(node, Template) and (
            "\n" in piece.text or _BLOCK_TEMPLATE.match(str(node.name).strip())
        ):
            start = piece.start + len(piece.text)
        else:
            break
    return start


def _paragraph(wikitext: str, start: int, end: int, kind: str, named_refs: dict[str, tuple[str, ...]]) -> Paragraph:
    raw = wikitext[start:end].rstrip()
    stripped = raw.lstrip()
    start, end = start + len(raw) - len(stripped), start + len(raw)
    raw = stripped
    code = mwparserfromhell.parse(raw, skip_style_tags=False) if raw else mwparserfromhell.parse("")
    return Paragraph(
        wikitext=raw,
        text=plain_text(code, list_block=kind == "list"),
        start=start,
        end=end,
        ref_urls=_ref_urls(code, named_refs),
    )


# --------------------------------------------------------------------------- plain text and refs


def plain_text(wikitext: str | Wikicode, *, list_block: bool = False) -> str:
    """Readable text of a wikitext fragment: refs, templates and files removed, links as labels.

    In a list block each item keeps its own line; elsewhere all whitespace collapses to single spaces.
    """
    code = mwparserfromhell.parse(wikitext) if isinstance(wikitext, str) else wikitext
    code = mwparserfromhell.parse(str(code))  # work on a copy: nodes are removed below
    for link in code.filter_wikilinks(recursive=True):
        if _NON_PROSE_LINK.match(str(link.title)):
            _remove(code, link)
    for tag in code.filter_tags(recursive=True):
        if str(tag.tag).strip().lower() in _NON_PROSE_TAGS | {"ref"}:
            _remove(code, tag)
    text = code.strip_code(normalize=True, collapse=True, keep_template_params=False)
    text = re.sub(r"</?ref[^>]*>", " ", text, flags=re.IGNORECASE)  # halves of broken refs
    text = re.sub(r"'{2,}|\{\{|\}\}|\[\[|\]\]", "", text)  # unbalanced markup debris
    lines = [_normalise(line) for line in text.split("\n")]
    if list_block:
        return "\n".join(line for line in lines if line)
    return _normalise(" ".join(lines))


def _remove(code: Wikicode, node: object) -> None:
    try:
        code.remove(node)
    except ValueError:  # already gone with an enclosing node
        pass


def _normalise(text: str) -> str:
    text = re.sub(r"\s+", " ", text).strip()
    text = re.sub(r"\(\s*[,;]?\s*\)", "", text)  # "Name ({{IPA|..}})" leaves "()"
    text = re.sub(r"\s+([,.;:!?])(?![.!?])", r"\1", text)  # "word <ref/>." leaves "word ."
    return re.sub(r"\s{2,}", " ", text).strip()


def ref_urls(fragment: str, named_refs: dict[str, tuple[str, ...]] | None = None) -> tuple[str, ...]:
    """The URLs cited by the ``<ref>`` tags of a wikitext fragment (``named_refs`` resolves reuses)."""
    return _ref_urls(mwparserfromhell.parse(fragment), named_refs or {})


def named_ref_urls(wikitext: str) -> dict[str, tuple[str, ...]]:
    """The URLs of every named ``<ref>`` definition of a page, by name."""
    return _named_ref_urls(mwparserfromhell.parse(wikitext))


def _ref_urls(code: Wikicode, named_refs: dict[str, tuple[str, ...]]) -> tuple[str, ...]:
    urls: list[str] = []
    for tag in code.filter_tags(recursive=True, matches=lambda t: str(t.tag).strip().lower() == "ref"):
        if tag.self_closing or not tag.contents:
            urls.extend(named_refs.get(ref_name(tag), ()))
        else:
            urls.extend(_urls_in(tag.contents))
    return tuple(dict.fromkeys(urls))


def _urls_in(contents: Wikicode) -> list[str]:
    """Cite templates' ``url=`` plus bracketed and bare URLs, in document order."""
    urls: list[str] = []
    for node in contents.nodes:
        if isinstance(node, Template):
            if node.has("url"):
                value = _normalise(str(node.get("url").value))
                urls.extend(_URL.findall(value)[:1])
        elif isinstance(node, ExternalLink):
            urls.append(str(node.url).strip())
        elif isinstance(node, Text):
            urls.extend(_URL.findall(str(node)))
        elif isinstance(node, Tag) and node.contents:
            urls.extend(_urls_in(node.contents))
    return urls


def ref_name(tag: Tag) -> str:
    """The ``name`` of a ``<ref>`` tag, unquoted ("" when it has none)."""
    return str(tag.get("name").value).strip().strip("\"'") if tag.has("name") else ""


def _named_ref_urls(code: Wikicode) -> dict[str, tuple[str, ...]]:
    """URLs of every named ref definition, so that ``<ref name="x" />`` reuses resolve."""
    named: dict[str, tuple[str, ...]] = {}
    for tag in code.filter_tags(recursive=True, matches=lambda t: str(t.tag).strip().lower() == "ref"):
        name = ref_name(tag)
        if name and not tag.self_closing and tag.contents and name not in named:
            named[name] = tuple(_urls_in(tag.contents))
    return named


def named_ref_definitions(wikitext: str) -> dict[str, str]:
    """Each named reference's first full definition (``<ref name="x">...</ref>``), by name.

    A paragraph shown on its own (a suggestion's preview) may reuse a reference defined
    elsewhere in the article (``<ref name="x" />``); with these it can carry the definition.
    """
    out: dict[str, str] = {}
    code = _parse_wikicode("", wikitext)
    for tag in code.filter_tags(recursive=True, matches=lambda t: str(t.tag).strip().lower() == "ref"):
        name = ref_name(tag)
        if name and not tag.self_closing and tag.contents and name not in out:
            out[name] = str(tag)
    return out


# --------------------------------------------------------------------------- editing


def replace_paragraph(article: Article, paragraph: Paragraph, new_wikitext: str) -> str:
    """The article's wikitext with this paragraph's span replaced, nothing else touched.

    Raises ``ValueError`` if the paragraph does not belong to this revision of the article.
    """
    _check_paragraph(article, paragraph)
    text = article.wikitext
    return text[: paragraph.start] + new_wikitext.strip() + text[paragraph.end :]


def insert_paragraph(article: Article, section: Section, new_wikitext: str) -> str:
    """The article's wikitext with a new paragraph at the end of the section's own prose.

    The paragraph goes after the section's last paragraph (so before its subsections),
    separated by a blank line; in a section without prose it goes after whatever the
    section holds (hatnotes, images) or right under the heading.
    """
    new = new_wikitext.strip()
    text = article.wikitext
    if section.paragraphs:
        last = section.paragraphs[-1]
        _check_paragraph(article, last)
        return text[: last.end] + "\n\n" + new + text[last.end :]
    pos = _section_content_end(article, section)
    if pos == 0:
        return new + ("\n\n" + text.lstrip("\n") if text.strip() else "")
    return text[:pos] + "\n\n" + new + text[pos:]


def _check_paragraph(article: Article, paragraph: Paragraph) -> None:
    if article.wikitext[paragraph.start : paragraph.end] != paragraph.wikitext:
        raise ValueError(
            f"paragraph at {paragraph.start}:{paragraph.end} does not match the wikitext of {article.title!r}"
        )


def _section_content_end(article: Article, section: Section) -> int:
    """Offset just after the last non-blank line of the section's own body."""
    lines = _split_lines(_parse_wikicode(article.title, article.wikitext))
    for heading, body in _sections(lines):
        if heading.path == section.path:
            content = [line for line in body if line.kind != "blank"]
            if content:
                return content[-1].end
            return lines[heading.line].end if heading.line >= 0 else 0
    raise ValueError(f"section {' > '.join(section.path) or LEAD_TITLE!r} is not in {article.title!r}")


# --------------------------------------------------------------------------- prompts


def outline(article: Article, *, max_chars_per_section: int | None = None, numbered: bool = False) -> str:
    """The article as plain text with ``[Section: A > B]`` markers, for LLM prompts.

    ``max_chars_per_section`` cuts each section's text (marked with "…"); ``numbered``
    prefixes paragraphs with ``(1)``, ``(2)``... so a model can point at one.
    """
    parts = [f"Title: {article.title}"]
    for section in article.sections:
        name = " > ".join(section.path) if section.path else LEAD_TITLE
        parts.append(f"[Section: {name}]")
        body = "\n\n".join(
            f"({i}) {p.text}" if numbered else p.text for i, p in enumerate(section.paragraphs, start=1)
        )
        if max_chars_per_section is not None and len(body) > max_chars_per_section:
            cut = body[: max(0, max_chars_per_section)]
            cut = cut.rsplit(" ", 1)[0] if " " in cut else cut  # do not end on half a word
            body = cut.rstrip() + " …"
        if body:
            parts.append(body)
    return "\n\n".join(parts)
