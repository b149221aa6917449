"""Wikitext for suggestions shown to reviewers, and reading their verdicts back.

A rendered suggestion is a block between two hidden markers::

    <!-- winellbot-suggestion:ID -->
    {{Winellbot suggestion|id=ID|status=pending|...}}
    ... section, word diff, preview, citation, quote, checks, notice ...
    <!-- /winellbot-suggestion:ID -->

The markers let the writer find what is already posted (so a retry never posts
twice) and cut a rendered section into per-suggestion blocks; the template's
``status`` parameter is where a reviewer records accepted/rejected, and
:func:`parse_statuses` reads it back. Every piece of text that came from a web
page or a model passes through :mod:`winellbot.escape` before it is placed here.
"""
from __future__ import annotations

import difflib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import mwparserfromhell

from winellbot.article import ref_name
from winellbot.escape import check_proposed_wikitext, escape_param, escape_text
from winellbot.gates.copying import copied_prose
from winellbot.models import Citation, Suggestion
from winellbot.pipeline.pagetext import safe_text
from winellbot.search.urls import citation_url

TEMPLATE = "Winellbot suggestion"
SECTION_MARKER = "<!-- winellbot-section -->"
STATUSES = ("pending", "accepted", "rejected", "withdrawn")
_ALIASES = {
    "accept": "accepted", "done": "accepted", "yes": "accepted", "added": "accepted",
    "reject": "rejected", "declined": "rejected", "decline": "rejected", "no": "rejected",
    "not done": "rejected", "withdraw": "withdrawn",
}
_ID = r"[0-9a-f]{6,64}"
_START = re.compile(rf"<!-- winellbot-suggestion:({_ID}) -->")
_BLOCK = re.compile(rf"<!-- winellbot-suggestion:({_ID}) -->.*?<!-- /winellbot-suggestion:\1 -->\n?", re.S)
_TOKEN = re.compile(r"\s+|\w+|[^\w\s]")
_BOX = "border:1px solid #a2a9b1; padding:0.4em 0.8em; margin:0.3em 0; background:#f8f9fa;"


def marker(suggestion_id: str) -> str:
    """The hidden comment that opens a suggestion's block."""
    return f"<!-- winellbot-suggestion:{suggestion_id} -->"


def end_marker(suggestion_id: str) -> str:
    """The hidden comment that closes a suggestion's block."""
    return f"<!-- /winellbot-suggestion:{suggestion_id} -->"


@dataclass(frozen=True)
class Notes:
    """What the posting policy found out about a suggestion from the article, shown beside it.

    ``fact``: the new fact in one short line; ``may_replace``: an article sentence it may make
    out of date; ``also_reported``: other sources of the same fact; ``references``: the article's
    named references by name, so that a preview reusing one (``<ref name="x" />``) carries it;
    ``reviewer``: the user who approved it on the review page (the reviewed mode), named in the post;
    ``worded``: true when the fact line is that reviewer's wording (a revision: ``fact`` holds it);
    ``note``: the reviewer's own note, posted with it; ``section_chosen``: the reviewer chose the
    section (the bot's reason for its section is then left out); ``checked_on``: the approval's date.
    A post approved by a reviewer carries none of the bot's measurements (estimate, flags): those stay
    on the review page.
    """

    fact: str = ""
    may_replace: str = ""
    also_reported: tuple[Citation, ...] = ()
    references: Mapping[str, str] = field(default_factory=dict)
    reviewer: str = ""
    worded: bool = False
    note: str = ""
    section_chosen: bool = False
    checked_on: str = ""


def render_suggestion(s: Suggestion, *, bot_user: str, heading: str | None = None, notes: Notes | None = None,
                      style: str = "edit") -> str:
    """Wikitext for one suggestion, between its id markers, in the ``edit`` or ``fact`` style.

    ``heading``, when given, is a complete heading line (bot-made, e.g. for the
    queue) placed just inside the opening marker.
    """
    notes = notes or Notes()
    lines = [marker(s.id)] + ([heading] if heading else []) + [_box(s)]
    if style == "edit" and copied_prose(s):  # the source's words over the copying limit: never article text
        style = "fact"
        lines.append("''The proposed text would copy the source word for word, so none is proposed: the "
                     "fact and the source's own words are below.''")
    lines += _fact_lines(s, notes) if style == "fact" else _edit_lines(s, notes)
    why = (s.edit.reason if style == "edit" else "") or s.update.reason
    if notes.section_chosen:
        lines.append(f"'''Section:''' chosen by {_user_link(notes.reviewer)}, who checked it.")
    elif why and not notes.reviewer:  # a reviewer checked the section: the bot's reasons stay on the review page
        label = "Why this section" if style == "fact" else "Why"
        lines.append(f"'''{label}:''' {escape_text(in_words(why))}")
    if notes.reviewer:
        lines += _checked_lines(notes)
    elif s.findings:
        lines.append("'''Automated checks:'''")
        lines += [f"* {escape_text(f.gate)} ({escape_text(f.severity)}): {escape_text(f.message)}"
                  for f in s.findings]
    lines.append(_footer(bot_user, style, notes))
    lines.append(end_marker(s.id))
    # Blank lines: MediaWiki joins single-newline lines into one paragraph.
    return "\n\n".join(lines) + "\n"


# A placement's reason (winellbot.pipeline.placement): its evidence opens on the cosine, so a heading
# with brackets of its own ("Battle (27 December 2022)") stays whole.
_PLACED = re.compile(r"words best match section (?P<section>.+?) \((?P<evidence>cosine [^;]*)\)")
_BRINGS = re.compile(r"the sentence brings (?P<what>.+?) the article lacks")


def in_words(reason: str) -> str:
    """A pipeline's reason as a reviewer reads it: which section (the last placement it gives) and on
    what evidence, and what the fact brings, without the scores behind them ("cosine 0.54, meaning
    0.95"). A reason in other terms (a model's) is shown as it is."""
    # A line placed again (by meaning, by its last look) carries each placement: the last is the one posted.
    placements = list(_PLACED.finditer(reason))
    placed, brings = (placements[-1] if placements else None), _BRINGS.search(reason)
    if not placed:
        return reason
    evidence = placed.group("evidence")
    why = [f"its words are closest to those of the section \u201c{placed.group('section')}\u201d"]
    if "heading" in evidence:
        why.append("it shares words with that section's heading")
    if "around it in the source" in evidence:
        why.append("the source, around this sentence, retells a sentence of that section")
    if "meaning" in evidence:
        why.append("it is close in meaning to what that section says")
    if "dated apart from its years" in evidence:
        why.append("sections whose headings give other years than it names were left out")
    text = "; ".join(why)
    if brings:
        text += f". It brings {brings.group('what')} that the article does not have"
    return text[:1].upper() + text[1:] + "."


def _box(s: Suggestion) -> str:
    section = " › ".join(s.section_path) or "lead (introduction)"
    return (f"{{{{{TEMPLATE}|id={s.id}|status=pending|article={escape_param(s.article_title)}"
            f"|section={escape_param(section)}}}}}")


def _edit_lines(s: Suggestion, notes: Notes) -> list[str]:
    """The paragraph edit: word diff, preview, source, passage."""
    e = s.edit
    check = check_proposed_wikitext(e.new_paragraph, original=e.old_paragraph)
    section = " › ".join(s.section_path) or "lead (introduction)"
    where = ("as a new paragraph at the end of the section" if s.paragraph_index is None
             else f"in paragraph {s.paragraph_index + 1} of the section")
    lines = [
        f"'''Article:''' {_article_link(s.article_title)}{_revision_note(s)}",
        f"'''Section:''' {escape_text(section)}, {where}",
        "'''Proposed change''' (wikitext; <ins>inserted</ins> and <del>removed</del> words marked):",
        f'<div style="{_BOX} font-family:monospace; white-space:pre-wrap;">'
        f"{word_diff(e.old_paragraph, e.new_paragraph)}</div>",
        "'''How the new paragraph would read:'''",
        f'<div style="{_BOX}">{with_definitions(check.text, notes.references)}<references /></div>',
    ]
    if not check.ok:
        lines.append("'''Note:''' markup the bot does not trust was shown as plain text: "
                     + "; ".join(escape_text(p) for p in check.problems))
    lines += _stale_lines(notes)
    lines.append(f"'''Source:''' {render_citation(s)}{_also(notes)}")
    lines.append("'''Supporting passage from the source:'''")
    lines.append(f"<blockquote>{escape_text(s.update.quote)}</blockquote>")
    return lines


def _fact_lines(s: Suggestion, notes: Notes) -> list[str]:
    """The sourced fact: one line, the source's own words, the section and a ready citation."""

    section = " › ".join(s.section_path) or "lead (introduction)"
    return [
        f"'''New fact:''' {escape_text(notes.fact or s.update.text)}",
        f"'''Article:''' {_article_link(s.article_title)}{_revision_note(s)}; "
        f"'''suggested section:''' {escape_text(section)}",
        *_stale_lines(notes),
        "'''What the source says''' (its own words):",
        f"<blockquote>{escape_text(s.update.quote)}</blockquote>",
        f"'''Source:''' {render_citation(s)}{_also(notes)}",
        "'''Ready citation''' (to paste after the sentence you write):",
        f'<div style="{_BOX} font-family:monospace;">{escape_text(cite_news(s.edit.citation))}</div>',
    ]


def _stale_lines(notes: Notes) -> list[str]:
    if not notes.may_replace:
        return []
    return [f"'''May replace:''' \"{escape_text(notes.may_replace)}\" (this sentence of the article may be "
            "out of date if the new fact holds)"]


def _also(notes: Notes) -> str:
    if not notes.also_reported:
        return ""
    return "; also reported by " + "; ".join(render_citation_of(c) for c in notes.also_reported)


def _checked_lines(notes: Notes) -> list[str]:
    """Who checked it, and when: a person's name, never the bot's measurements."""
    on = f" on {escape_text(notes.checked_on)}" if notes.checked_on else ""
    if notes.worded:
        lines = [f"'''Worded and checked by:''' {_user_link(notes.reviewer)}{on}, on the bot's review page: "
                 "the fact line above is this editor's wording of what the source says."]
    else:
        lines = [f"'''Checked by:''' {_user_link(notes.reviewer)}, who approved it for posting here on the bot's "
                 f"review page{on}."]
    if notes.note:
        lines.append(f"'''Reviewer's note:''' {escape_text(notes.note)}")
    return lines


def _footer(bot_user: str, style: str, notes: Notes | None = None) -> str:
    """The box's last line: who found it, who worded it, what to do; dated (five tildes: the date alone)."""
    decide = ("To record your decision, set <code>status=accepted</code> or <code>status=rejected</code> "
              "in the box above.")
    if notes is not None and notes.worded:
        return (f"''Found by a program, [[User:{bot_user}|{bot_user}]], in the source above; worded and checked by "
                f"{_user_link(notes.reviewer)}. {decide}'' ~~~~~")
    return _unworded_footer(bot_user, style, decide) + " ~~~~~"


def _unworded_footer(bot_user: str, style: str, decide: str) -> str:
    if style == "fact":
        return (f"''Found by a program, [[User:{bot_user}|{bot_user}]]; it proposes no wording for the article. "
                f"If the fact belongs there, write it in your own words with the citation above. {decide}''")
    return (f"''This suggestion was made by a program, [[User:{bot_user}|{bot_user}]], not written by a person. "
            f"Please read the source before changing the article. {decide}''")


def with_definitions(paragraph: str, references: Mapping[str, str]) -> str:
    """``paragraph`` with each reused named reference it does not define replaced by its definition.

    Shown on its own, a paragraph that reuses ``<ref name="x" />`` defined elsewhere in the
    article would render as a cite error; the definition comes from the article itself.
    """
    if not references or "<ref" not in paragraph.lower():
        return paragraph
    code = mwparserfromhell.parse(paragraph)
    refs = code.filter_tags(matches=lambda t: str(t.tag).strip().lower() == "ref")
    defined = {ref_name(t) for t in refs if not t.self_closing}
    for tag in refs:
        name = ref_name(tag)
        if tag.self_closing and name and name not in defined and name in references:
            code.replace(tag, references[name])
            defined.add(name)
    return str(code)


def render_section(suggestions: Sequence[Suggestion], *, bot_user: str, style: str = "edit",
                   notes: Mapping[str, Notes] | None = None) -> str:
    """The body of a talk-page section (the writer adds the heading): intro, suggestions, signature."""
    n = len(suggestions)
    what = (" Each gives a new fact, the source's own words and a citation; none proposes article text."
            if style == "fact" else "")
    intro = (f"{SECTION_MARKER}\n[[User:{bot_user}|{bot_user}]] is a program that looks for recent, sourced "
             f"facts that may belong in this article. It found {n} possible "
             f"update{'s' if n != 1 else ''} below.{what} Nothing has been changed in the article: "
             "each suggestion waits for an editor to check it and decide.\n")
    blocks = "".join(render_suggestion(s, bot_user=bot_user, style=style, notes=(notes or {}).get(s.id))
                     for s in suggestions)
    return intro + blocks + signature()


_FOUND = re.compile(r"It found \d+ possible updates? below\.")


def recount(section: str) -> str:
    """The bot's section with its intro's count made to match the suggestions it holds (a batch
    appended to the section adds some)."""
    n = len(_START.findall(section))
    return _FOUND.sub(f"It found {n} possible update{'s' if n != 1 else ''} below.", section, count=1)


def signature() -> str:
    """The bot signs its own sections; the tildes are the bot's, never from untrusted text."""
    return "Posted automatically for human review. ~~~~\n"


def render_queue_entry(s: Suggestion, *, bot_user: str, style: str = "edit", notes: Notes | None = None) -> str:
    """One entry of the bot's userspace queue: a level-2 heading naming the article, then the suggestion."""
    section = " › ".join(s.section_path) or "lead"
    heading = f"== {_article_link(s.article_title)}: {escape_text(section)} =="
    return render_suggestion(s, bot_user=bot_user, heading=heading, style=style, notes=notes)


def queue_index_intro(bot_user: str) -> str:
    """The opening of the queue's index page, which lists one page per article."""
    return (f"This is the review queue of [[User:{bot_user}|{bot_user}]], a program that proposes "
            "sourced updates for articles it watches. Articles whose talk pages opted in get their "
            "suggestions there; the others get them here, one page per article. Nothing is changed in "
            "any article: each suggestion waits for an editor to check it and decide.\n\n")


def queue_index_line(page_title: str, article_title: str) -> str:
    """One line of the queue's index: a link to an article's queue page."""
    return f"* [[{page_title}|{escape_text(article_title)}]]"


def default_section_title(date: str) -> str:
    """The heading text of a talk-page section posted on ``date`` (YYYY-MM-DD)."""
    return f"Update suggestions from winellbot ({escape_text(date)})"


def render_citation(s: Suggestion) -> str:
    """The citation as a safe external link followed by the work and date, all escaped."""
    return render_citation_of(s.edit.citation)


def render_citation_of(c: Citation) -> str:
    """A citation as a safe external link followed by the work and date, all escaped."""
    title = escape_text(c.title or c.url)
    url = safe_url(c.url)
    head = f"[{url} {title}]" if url else title
    extra = [escape_text(x) for x in (c.work, c.date) if x]
    return ", ".join([head, *extra])


def safe_url(url: str) -> str | None:
    """An http(s) URL that cannot end the bracketed link early or carry markup, or None."""
    return citation_url(url)


def word_diff(old: str, new: str) -> str:
    """Escaped ``new`` with <ins>/<del> around the words that changed from ``old``.

    Whitespace is shown as single spaces; the result is one line whose first
    character is neutralised, so it may start a line.
    """
    a, b = _TOKEN.findall(old), _TOKEN.findall(new)
    out = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if op == "equal":
            out.append(_frag(b[j1:j2]))
            continue
        if op in ("delete", "replace"):
            out.append(f"<del>{_frag(a[i1:i2])}</del>")
        if op in ("insert", "replace"):
            out.append(f"<ins>{_frag(b[j1:j2])}</ins>")
    text = "".join(out)
    if text[:1] and text[0] in "*#:;=- !":  # fragments keep their first character; this one may start a line
        text = f"&#{ord(text[0])};{text[1:]}"
    return text


def _frag(tokens: list[str]) -> str:
    return escape_text("".join(tokens), strip=False)


def _article_link(title: str) -> str:
    if re.search(r"[\[\]{}<>|#~%&\n]", title) or not title.strip():
        return escape_text(title)
    return f"[[:{title.strip()}]]"


def _user_link(name: str) -> str:
    """A link to a user's page, or the name as plain text where it could carry markup."""
    if re.search(r"[\[\]{}<>|#~%&\n:/]", name) or not name.strip():
        return escape_text(name)
    return f"[[User:{name.strip()}|{escape_text(name.strip())}]]"


def _revision_note(s: Suggestion) -> str:
    return f" (checked at revision {s.revid})" if s.revid else ""


# -- reading back -----------------------------------------------------------

def present_ids(page_text: str) -> set[str]:
    """Ids already on a page, found by marker or by the template's id parameter."""
    return set(_START.findall(page_text)) | set(parse_statuses(page_text))


def split_blocks(body: str) -> tuple[str, list[tuple[str, str]], str]:
    """Cut rendered text into (text before, [(id, block)], text after) at the id markers."""
    matches = list(_BLOCK.finditer(body))
    if not matches:
        return body, [], ""
    blocks = [(m.group(1), m.group(0)) for m in matches]
    return body[:matches[0].start()], blocks, body[matches[-1].end():]


def anchor(suggestion_id: str) -> str:
    """The fragment that points at a suggestion's box (the template sets the id)."""
    return f"winellbot-{suggestion_id}"


def set_status(page_text: str, suggestion_id: str, status: str) -> tuple[str, str] | None:
    """``page_text`` with the status of suggestion ``suggestion_id`` set to ``status``.

    Returns (new text, the status it had, as read by :func:`parse_statuses`), or None when the
    page holds no box with that id. Only the first box's ``status`` parameter changes: every other
    character of the page, reviewers' replies included, stays as it was.
    """
    if status not in STATUSES:
        raise ValueError(f"unknown status {status!r}")
    code = mwparserfromhell.parse(page_text)
    for tpl in code.filter_templates():
        if _is_box(tpl) and str(tpl.get("id").value).strip().lower() == suggestion_id:
            before = parse_statuses(str(tpl))[suggestion_id]
            tpl.add("status", status, preserve_spacing=True)
            return str(code), before
    return None


def _is_box(tpl) -> bool:
    name = str(tpl.name).strip().replace("_", " ")
    if name.lower().startswith("template:"):
        name = name[len("template:"):].strip()
    return name[:1].upper() + name[1:] == TEMPLATE and tpl.has("id")


def parse_statuses(page_text: str) -> dict[str, str]:
    """Reviewers' verdicts: suggestion id -> one of :data:`STATUSES`.

    Reads every ``{{Winellbot suggestion}}`` on the page; the first template for
    an id wins (a later copy cannot override the original box). An unknown or
    empty status reads as ``pending``.
    """
    out: dict[str, str] = {}
    for tpl in mwparserfromhell.parse(page_text).filter_templates():
        if not _is_box(tpl):
            continue
        sid = str(tpl.get("id").value).strip().lower()
        if not re.fullmatch(_ID, sid) or sid in out:
            continue
        raw = str(tpl.get("status").value).strip().lower() if tpl.has("status") else ""
        raw = re.sub(r"\s+", " ", raw)
        status = _ALIASES.get(raw, raw)
        out[sid] = status if status in STATUSES else "pending"
    return out


def cite_news(c: Citation) -> str:
    """A ``<ref>{{cite news ...}}</ref>`` whose values cannot break out of the template."""
    def val(s: str) -> str:
        return safe_text(s).replace("=", "-")

    url = citation_url(c.url)
    cited = f"|url={url} " if url else ""  # no url rather than a broken one: the sources gate holds it
    return (f"<ref>{{{{cite news {cited}|title={val(c.title)} |work={val(c.work)} "
            f"|date={val(c.date)} |access-date={val(c.access_date)}}}}}</ref>")
