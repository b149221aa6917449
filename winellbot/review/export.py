"""``winellbot review export``: reviewers' revisions as edit data (``winellbot-revision/1`` JSONL).

A revision is a reviewer's rewording of the bot's line (:mod:`winellbot.state.revisions`). Each line
of the export is one revision with what an editor model learns from (the bot's line, the reviewer's
text, the paragraph before and the source's passage) and what its reuse owes under the wiki's
licence (``attribution``): the reviewer is the author of the text; the wiki and the link of the
revision that published it (the post's permanent link) say where it was published; the bot's line
is the bot's own output, credited to the bot's account.

Which revisions: by default those a reviewer stands by, ``posted`` (on the wiki) and ``approved``
(waiting for the writer, no link yet); ``include_all`` adds ``undone`` (taken back by the reviewer)
and ``refused`` (stopped by the writer's checks, never published), each with its status and
finding, for a reader who wants to study them. Training data wants only the first two.
"""
from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from winellbot.commands import open_state
from winellbot.operations import _since
from winellbot.outcomes.decisions import words_changed
from winellbot.state.revisions import RevisionStore

FORMAT = "winellbot-revision/1"
STOOD_BY = ("posted", "approved")  # exported by default: the revisions a reviewer stands by
LICENCE = "CC BY-SA 4.0"  # the text licence of Wikimedia's wikis (a posted revision is published under it)
PASSAGE_CHARS = 700  # of the source around the quoted words, as the review page shows it


@dataclass(frozen=True)
class ExportOptions:
    """``since``: a date (YYYY-MM-DD) or stamp, revisions recorded on or after it; ``include_all``:
    undone and refused ones too; ``bot_user``: the bot's account (the author of its lines);
    ``licence``: the wiki's text licence named in each attribution."""

    bot_user: str
    since: str | None = None
    include_all: bool = False
    licence: str = LICENCE


def passage(text: str | None, quote: str, width: int = PASSAGE_CHARS) -> str:
    """The source's text around ``quote`` (about ``width`` characters, whole), or the quote alone when
    the text is not kept or does not hold it."""
    if not text or not quote:
        return quote or ""
    at = text.find(quote[:80])
    if at < 0:
        return quote
    start = max(0, at - max(0, width - len(quote)) // 2)
    return text[start:start + max(width, len(quote))].strip()


def _path(section: str | None) -> list[str]:
    return [p for p in (section or "").split(" > ") if p]


def attribution(row: dict, options: ExportOptions) -> dict:
    """What reusing ``row``'s text owes: its author, the wiki, the link of the revision that published it
    (None until posted), the licence, and the credit line in words."""
    where = f" on {row['wiki']}" if row.get("wiki") else ""
    link = row.get("post_url") or None
    credit = (f"Wording by {row['reviewer']}{where} ({options.licence}"
              + (f", {link})" if link else ", not published on the wiki yet)")
              + f"; the line it rewords by the bot {options.bot_user}")
    return {"author": row["reviewer"], "author_page": f"User:{row['reviewer']}", "wiki": row.get("wiki") or "",
            "link": link, "published": bool(link), "licence": options.licence,
            "bot_line_by": f"User:{options.bot_user}", "credit": credit}


def record(row: dict, options: ExportOptions, source_text: str | None = None) -> dict:
    """One revision (a row of :meth:`winellbot.state.revisions.RevisionStore.export`) as an export line."""
    citation = json.loads(row.get("citation") or "{}")
    quote = row.get("quote") or ""
    moved = row.get("section_to") is not None and row["section_to"] != row.get("section_from")
    return {
        "format": FORMAT, "id": f"revision-{row['id']}", "suggestion": row["suggestion_id"],
        "status": row["status"], "finding": row.get("finding"),
        "article": row["page"], "wiki": row.get("wiki") or "",
        "section_from": _path(row.get("section_from")),
        "section_to": _path(row["section_to"]) if moved else _path(row.get("section_from")),
        "moved": moved,
        "bot_text": row.get("bot_text") or "", "text": row["text"], "note": row.get("note") or "",
        "started_from": row.get("started_from") or "bot",
        "words_changed": round(words_changed(row.get("bot_text") or "", row["text"]), 3),
        "reviewer": row["reviewer"], "revised_at": row["revised_at"], "post_url": row.get("post_url"),
        "paragraph_before": row.get("old_paragraph") or "",
        "bot_paragraph_after": row.get("new_paragraph") or "", "bot_added_text": row.get("added_text") or "",
        "source": {"url": row.get("source_url") or citation.get("url") or "", "title": citation.get("title") or "",
                   "citation": citation, "quote": quote, "passage": passage(source_text, quote)},
        "attribution": attribution(row, options),
    }


class RevisionExport:
    """The export lines of a :class:`winellbot.state.db.State`'s revisions, oldest first."""

    def __init__(self, state) -> None:
        self.state = state

    def records(self, options: ExportOptions) -> Iterator[dict]:
        if "revisions" not in self.state.db.table_names():
            return  # a state from before migration 011: no revisions
        texts: dict[str, str | None] = {}
        for row in RevisionStore(self.state).export(since=options.since):
            if not options.include_all and row["status"] not in STOOD_BY:
                continue
            url = row.get("source_url") or ""
            if url not in texts:
                texts[url] = (self.state.source(url) or {}).get("text") if url else None
            yield record(row, options, texts[url])


def run_export(args, settings) -> int:
    """The command: write the export to ``args.output`` ('-': standard output); say how many, and which."""
    options = ExportOptions(bot_user=settings.wiki.username, since=_since(args.since) if args.since else None,
                            include_all=args.include_all, licence=args.licence)
    state = open_state(settings, readonly=True)
    records = RevisionExport(state).records(options)
    if args.output == "-":
        _write(records, sys.stdout)
        return 0
    path = Path(args.output)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as handle:
        n = _write(records, handle)
    which = "every status" if args.include_all else "posted and approved"
    print(f"wrote {n} revision(s) ({which}) to {path}")
    return 0


def _write(records, handle) -> int:
    n = 0
    for r in records:
        handle.write(json.dumps(r, ensure_ascii=False) + "\n")
        n += 1
    return n
