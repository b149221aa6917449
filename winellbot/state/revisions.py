"""Reviewers' revisions and undos, in the state (migration 011).

A reviewer may reword a suggestion before approving it (verdict ``revise``): the decision is a row
of ``reviews`` as any other, and the wording is a row of ``revisions`` beside it: the bot's line, the
reviewer's text, the sections from and to, the note, who, when, and once posted the permanent link
of the post. The bot's own fields (its line, the quote, the citation, the id) never change: a
revision is applied when the post is rendered (:func:`winellbot.wiki.render.Notes`), so the state
keeps both, and :meth:`RevisionStore.export` hands the pairs on as edit data.

A revision's life:

==============  ==========================================================================
``approved``    recorded with its approval; the bot's writer checks it again and posts it
``posted``      on the wiki (``post_url``: the revision that added it)
``refused``     the writer's checks found a problem (``finding``): back in the queue, never posted
``undone``      its reviewer took the decision back (:meth:`winellbot.state.reviews.ReviewStore.undo`)
==============  ==========================================================================
"""
from __future__ import annotations

from collections.abc import Iterable

from winellbot import clock

REVISION_STATUSES = ("approved", "posted", "refused", "undone")


def migrate_011(schema) -> None:
    """Migration 011_revisions (``schema``: a :class:`winellbot.state.schema.Schema`)."""
    schema.add_column("reviews", "note", str)
    schema.add_column("reviews", "undone_at", str)
    schema.add_column("reviews", "undone_by", str)
    schema.create("revisions", {"id": int, "review_id": int, "suggestion_id": str, "page": str, "wiki": str,
                                "reviewer": str, "revised_at": str, "bot_text": str, "text": str,
                                "section_from": str, "section_to": str, "note": str, "started_from": str,
                                "status": str, "finding": str, "post_url": str}, pk="id")
    schema.create_index("revisions", ["suggestion_id"])
    schema.create_index("revisions", ["reviewer", "revised_at"])
    schema.create_index("reviews", ["reviewer", "undone_at"])


class RevisionStore:
    """The ``revisions`` of a :class:`winellbot.state.db.State` (either engine)."""

    def __init__(self, state) -> None:
        self.state = state
        self.db = state.db

    def add(self, *, review_id: int, row: dict, reviewer: str, text: str, section_to: str | None, note: str,
            started_from: str) -> None:
        """Inside the decision's transaction: the revision of suggestion ``row`` approved by ``review_id``."""
        self.db["revisions"].insert({
            "review_id": review_id, "suggestion_id": row["id"], "page": row["page"], "wiki": row.get("wiki") or "",
            "reviewer": reviewer, "revised_at": clock.stamp(), "bot_text": row.get("update_text") or "",
            "text": text, "section_from": row.get("section") or "", "section_to": section_to,
            "note": note, "started_from": started_from, "status": "approved", "finding": None, "post_url": None})

    def live(self, ids: Iterable[str]) -> dict[str, dict]:
        """Suggestion id -> its revision waiting to be posted (status ``approved``), for the writer."""
        ids = list(ids)
        if not ids:
            return {}
        marks = ",".join("?" * len(ids))
        rows = self.db.query(f"select * from revisions where status = 'approved' and suggestion_id in ({marks}) "
                             "order by id", ids)
        return {r["suggestion_id"]: dict(r) for r in rows}

    def of(self, suggestion_id: str) -> list[dict]:
        """Every revision of one suggestion, oldest first."""
        return [dict(r) for r in self.db["revisions"].rows_where("suggestion_id = ?", [suggestion_id], order_by="id")]

    def set_status(self, suggestion_id: str, status: str, *, finding: str | None = None,
                   post_url: str | None = None, current: str = "approved") -> int:
        """Move the suggestion's revisions in ``current`` to ``status`` (a finding or a post's link kept)."""
        if status not in REVISION_STATUSES:
            raise ValueError(f"unknown revision status {status!r}")
        sets, args = ["status = ?"], [status]
        if finding is not None:
            sets.append("finding = ?"), args.append(finding)
        if post_url is not None:
            sets.append("post_url = ?"), args.append(post_url)
        return self.db.execute(f"update revisions set {', '.join(sets)} where suggestion_id = ? and status = ?",
                               [*args, suggestion_id, current]).rowcount

    def rows(self, *, since: str | None = None) -> list[dict]:
        """Every revision (any status) recorded on or after ``since`` (a date or a stamp), oldest first."""
        where, args = ("revised_at >= ?", [since]) if since else (None, [])
        return [dict(r) for r in self.db["revisions"].rows_where(where, args, order_by="id")]

    def posted_since(self) -> int:
        """Revisions still ``approved`` whose suggestion the state now records as posted (a post recorded at
        a later start, after a crash): ``posted``, with the post's link. Returns how many."""
        rows = self.db.query("select v.suggestion_id, p.url from revisions v join posts p on p.suggestion_id = "
                             "v.suggestion_id where v.status = 'approved' and p.posted_at >= v.revised_at "
                             "and p.id = (select max(id) from posts where suggestion_id = v.suggestion_id)")
        done = 0
        with self.db.atomic():
            for r in list(rows):
                done += self.set_status(r["suggestion_id"], "posted", post_url=r["url"] or "")
        return done

    def export(self, *, since: str | None = None) -> list[dict]:
        """Every revision (undone and refused ones too, with their status), oldest first, with what
        the bot's line came from: the article, the section and the source's citation."""
        where, args = ("where v.revised_at >= ?", [since]) if since else ("", [])
        sql = ("select v.*, s.quote, s.citation, s.url as source_url, s.old_paragraph, s.new_paragraph, "
               f"s.added_text from revisions v join suggestions s on s.id = v.suggestion_id {where} order by v.id")
        return [dict(r) for r in self.db.query(sql, args)]
