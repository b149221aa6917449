"""Editor examples from reviewers' revisions (the JSONL of ``winellbot review export``).

A reviewer who rewords the bot's line before approving it makes the pair the editor is trained on
from edit history: the paragraph as it stood, the source, and the paragraph with a person's
sentence added. Each revision becomes one ``winell-editor/1`` example:

* ``original``: the paragraph before, as plain sentences (as :mod:`winellbot.editor.cited` makes
  them); ``target``: the same sentences with the reviewer's text where the bot's line went;
* a revision posted under another section than the bot's paragraph (``moved``), or one without a
  paragraph (the ``fact`` style), has no paragraph to go in: ``original`` is empty and the target is
  the reviewer's text alone, under the section the reviewer chose;
* ``source``: the source's passage around the quoted words (the quote alone where the bot kept no text).

Only revisions a reviewer stands by are examples (``posted``, ``approved``); undone and refused ones
in a file exported with ``--all`` are counted as skipped. Every example keeps the revision's
attribution (``meta.attribution``: the reviewer, the wiki, the post's link, the licence), which the
text's reuse owes under the wiki's licence.
"""
from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from winellbot.editor.cited import paragraph_sentences
from winellbot.editor.examples import EditorExample, Source
from winellbot.errors import TaskError

FORMAT = "winellbot-revision/1"
TRAINED_ON = ("posted", "approved")


def _sentences(wikitext: str) -> list[str]:
    return [text for text, _ in paragraph_sentences(wikitext or "", {})]


def with_revision(before: str, bot_after: str, text: str) -> tuple[str, str]:
    """(original, target) as plain sentences: the paragraph ``before`` with ``text`` in place of what the
    bot's paragraph ``bot_after`` inserted (at the first sentence where the two differ)."""
    old, new = _sentences(before), _sentences(bot_after)
    at = 0
    while at < len(old) and at < len(new) and old[at] == new[at]:
        at += 1
    sentence = " ".join(text.split())
    return " ".join(old), " ".join(old[:at] + [sentence] + old[at:])


def example_of(r: dict) -> EditorExample:
    """One export line as an example (the caller has checked its status)."""
    source = r.get("source") or {}
    fits = r.get("paragraph_before") and not r.get("moved")
    original, target = (with_revision(r["paragraph_before"], r.get("bot_paragraph_after") or "", r["text"])
                        if fits else ("", " ".join(r["text"].split())))
    section = tuple(r.get("section_to") or r.get("section_from") or ())
    meta = {"article": r["article"], "kind": "revision", "revision": r["id"], "suggestion": r.get("suggestion"),
            "status": r["status"], "reviewer": r["reviewer"], "revised_at": r.get("revised_at"),
            "post_url": r.get("post_url"), "wiki": r.get("wiki") or "", "bot_text": r.get("bot_text") or "",
            "words_changed": r.get("words_changed"), "note": r.get("note") or "",
            "paragraph": "the paragraph before" if fits else "none (the reviewer's text alone)",
            "attribution": r["attribution"]}
    return EditorExample(r["id"], r["article"], section, original,
                         Source(source.get("url") or "", source.get("title") or "",
                                source.get("passage") or source.get("quote") or ""), target, meta)


def examples_from_revisions(path: str | Path, skipped: Counter | None = None) -> list[EditorExample]:
    """The examples of an export file; a line that is not an export line is a :class:`TaskError`
    naming the file and line."""
    skipped = skipped if skipped is not None else Counter()
    out = []
    with Path(path).open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                r = json.loads(line)
            except ValueError as exc:
                raise TaskError(f"{path}:{number}: not JSON: {exc}") from exc
            if not isinstance(r, dict) or r.get("format") != FORMAT or not isinstance(r.get("attribution"), dict):
                raise TaskError(f"{path}:{number}: not a {FORMAT} line (write one with `winellbot review export`)")
            if r.get("status") not in TRAINED_ON:
                skipped[f"revision {r.get('status')}: not trained on"] += 1
            elif not (r.get("text") or "").strip():
                skipped["revision without text"] += 1
            else:
                out.append(example_of(r))
    return out
