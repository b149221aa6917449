"""Reviewed before posted: the review queue and reviewers' decisions, in the state (migration 010).

A suggestion the gates pass is ``proposed``: it waits in the queue, best estimate first
(:meth:`ReviewStore.rescore` re-orders it after a refit), at most ``depth`` per article at once.

A reviewer's decision is one row of ``reviews`` (who, when, which suggestion, the verdict, the
rubric's reasons, the section it was moved to) written in the transaction that moves the
suggestion on, and only if the suggestion is still where the decision found it: of two reviewers
deciding at once, or a double click, one decision counts and the other is told who was first.

====================  ===============================  ======================================
verdict               from                             to
====================  ===============================  ======================================
``approve``           proposed                         approved (the bot's writer posts it)
``adopted``           proposed                         accepted ("I added it myself")
``reject``            proposed                         rejected (with the rubric's reasons)
``revise``            proposed                         approved in the reviewer's words (state/revisions.py)
``skip``              proposed                         proposed (this reviewer is not shown it again)
====================  ===============================  ======================================

:meth:`ReviewStore.undo` takes a reviewer's last decision back (back to the queue, or ``withdrawing``
once posted); the decision stays, marked undone, and only decisions not undone count as approvals.

The web page only writes here; the bot's writer posts an ``approved`` suggestion once, naming its reviewer.
"""
from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from winellbot import clock
from winellbot.state.revisions import RevisionStore

VERDICTS = ("approve", "revise", "adopted", "reject", "skip")
APPROVALS = ("approve", "revise")  # the verdicts that send a suggestion to the wiki
# The rubric's errors (../shared/bench/verdicts.md), which a reject may name.
REASONS = ("not_new", "insignificant", "off_topic", "unsupported", "wrong_section", "subjective", "unclear",
           "furniture", "too_long", "other")
_TO = {"approve": "approved", "revise": "approved", "adopted": "accepted", "reject": "rejected", "skip": "proposed"}
MAX_NOTE = 500  # characters of a reviewer's note
MAX_TEXT = 2000  # characters of a reviewer's wording (the page's checks say why in words before this)
# What the queue can list: "open" is what waits for a decision.
STATUS_FILTERS = {"open": "proposed", "approved": "approved", "posted": "posted", "accepted": "accepted",
                  "rejected": "rejected", "held": "held"}


def migrate_010(schema) -> None:
    """Migration 010_review (``schema``: a :class:`winellbot.state.schema.Schema`)."""
    schema.add_column("suggestions", "estimate", float)
    schema.add_column("suggestions", "features", str)
    schema.add_column("suggestions", "wiki", str)
    schema.create("reviews", {"id": int, "suggestion_id": str, "page": str, "wiki": str, "reviewer": str,
                              "decided_at": str, "verdict": str, "reasons": str, "section_from": str,
                              "section_to": str}, pk="id")
    schema.create_index("reviews", ["suggestion_id"])
    schema.create_index("reviews", ["reviewer", "verdict"])
    schema.create_index("suggestions", ["status", "estimate"])
    schema.create_index("suggestions", ["status", "page"])
    schema.create_index("suggestions", ["wiki"])


class DecisionError(ValueError):
    """A decision that cannot be taken as given (an unknown verdict or reason, no reviewer)."""


@dataclass(frozen=True)
class Decision:
    """One reviewer's decision on one suggestion. ``section``: for ``approve`` and ``revise``, the
    section (path) it is to be posted under instead of the bot's; ``reasons``: for ``reject``, codes of
    :data:`REASONS`; ``text``: for ``revise``, the reviewer's wording (checked by the page before);
    ``note``: the reviewer's own words (posted with a revision; kept with any decision);
    ``started_from``: for ``revise``, where the wording began ("bot", or "passage" for a sentence of the
    source's passage)."""

    suggestion_id: str
    reviewer: str
    verdict: str
    reasons: tuple[str, ...] = ()
    section: tuple[str, ...] | None = None
    text: str | None = None
    note: str = ""
    started_from: str = "bot"

    def check(self) -> None:
        if self.verdict not in VERDICTS:
            raise DecisionError(f"unknown verdict {self.verdict!r} (one of {', '.join(VERDICTS)})")
        unknown = [r for r in self.reasons if r not in REASONS]
        if unknown:
            raise DecisionError(f"unknown reason(s) {', '.join(unknown)} (of {', '.join(REASONS)})")
        if not self.reviewer.strip():
            raise DecisionError("a decision needs the reviewer's name")
        if self.section is not None and self.verdict not in APPROVALS:
            raise DecisionError("only an approval moves a suggestion to another section")
        if (self.text is not None) != (self.verdict == "revise") or (self.text is not None and not self.text.strip()):
            raise DecisionError("a revision, and only a revision, carries the reviewer's wording")
        if len(self.note) > MAX_NOTE or len(self.text or "") > MAX_TEXT:
            raise DecisionError(f"a note holds at most {MAX_NOTE} characters, a wording at most {MAX_TEXT}")
        if self.started_from not in ("bot", "passage"):
            raise DecisionError("a revision starts from the bot's line or the source's passage")


@dataclass(frozen=True)
class Decided:
    """What :meth:`ReviewStore.decide` did: ``taken`` false when the suggestion had moved on already
    (``why`` says who decided first), ``status`` the suggestion's status now."""

    taken: bool
    status: str
    why: str = ""


@dataclass(frozen=True)
class QueueFilter:
    """Which suggestions a queue lists: by wiki, article, section (a prefix of the path) and status."""

    wiki: str = ""
    page: str = ""
    section: str = ""
    status: str = "open"

    def where(self) -> tuple[list[str], list]:
        if self.status not in STATUS_FILTERS:
            raise DecisionError(f"unknown status {self.status!r} (one of {', '.join(STATUS_FILTERS)})")
        where, args = ["s.status = ?"], [STATUS_FILTERS[self.status]]
        for column, value in (("wiki", self.wiki), ("page", self.page)):
            if value:
                where.append(f"s.{column} = ?"), args.append(value)
        if self.section:
            where.append("(s.section = ? or substr(s.section, 1, ?) = ?)")
            args += [self.section, len(self.section) + 3, self.section + " > "]
        return where, args


_LISTED = ("s.id, s.page, s.wiki, s.section, s.status, s.status_reason, s.estimate, s.update_text, s.url, "
           "s.created, s.updated")


class ReviewStore:
    """The review queue and decisions of a :class:`winellbot.state.db.State` (either engine)."""

    def __init__(self, state) -> None:
        self.state = state
        self.db = state.db

    # -- the queue ---------------------------------------------------------------------------------
    def queue(self, where: QueueFilter = QueueFilter(), *, depth: int = 3, limit: int = 50, offset: int = 0,
              reviewer: str = "") -> list[dict]:
        """The suggestions ``where`` selects, best estimate first. Open ones: at most ``depth`` per
        article (its best), and none that ``reviewer`` skipped. Read best first in batches and stopped
        as soon as the page is full, so a long queue costs what its first pages cost."""
        conditions, args = where.where()
        sql = (f"select {_LISTED} from suggestions s where {' and '.join(conditions)} "
               "order by s.estimate desc, s.created, s.id limit ? offset ?")
        if where.status != "open":
            return [dict(r) for r in self.db.query(sql, [*args, limit, offset])]
        skipped = self._skipped(reviewer)
        shown: dict[str, int] = {}
        out: list[dict] = []
        batch, at = max(200, 4 * (limit + offset)), 0
        while len(out) < offset + limit:
            rows = [dict(r) for r in self.db.query(sql, [*args, batch, at])]
            for row in rows:
                if row["id"] in skipped or shown.get(row["page"], 0) >= depth:
                    continue
                shown[row["page"]] = shown.get(row["page"], 0) + 1
                out.append(row)
            if len(rows) < batch:
                break
            at += batch
        return out[offset:offset + limit]

    def count(self, where: QueueFilter = QueueFilter(), *, depth: int = 3, reviewer: str = "") -> int:
        """How many :meth:`queue` would list in all (open ones: at most ``depth`` per article; those
        ``reviewer`` skipped left out)."""
        conditions, args = where.where()
        if where.status != "open":
            return self.db.execute(f"select count(*) from suggestions s where {' and '.join(conditions)}",
                                   args).fetchone()[0]
        if reviewer:
            conditions.append("not exists (select 1 from reviews r where r.suggestion_id = s.id "
                              "and r.reviewer = ? and r.verdict = 'skip' and r.undone_at is null)")
            args.append(reviewer)
        return self.db.execute(f"select coalesce(sum(case when n < ? then n else ? end), 0) from (select count(*) n "
                               f"from suggestions s where {' and '.join(conditions)} group by s.page) c",
                               [depth, depth, *args]).fetchone()[0]

    def _skipped(self, reviewer: str) -> set[str]:
        if not reviewer:
            return set()
        rows = self.db.execute("select suggestion_id from reviews where reviewer = ? and verdict = 'skip' "
                               "and undone_at is null", [reviewer])
        return {r[0] for r in rows.fetchall()}

    def facets(self) -> dict[str, list[tuple[str, int]]]:
        """The wikis and statuses present, with counts, for the queue's filters."""
        out = {}
        for column in ("wiki", "status"):
            rows = self.db.execute(f"select coalesce({column}, ''), count(*) from suggestions "
                                   f"group by coalesce({column}, '') order by 2 desc").fetchall()
            out[column] = [(r[0], r[1]) for r in rows]
        return out

    def item(self, suggestion_id: str) -> dict | None:
        """One suggestion's row, with its decisions (oldest first) under ``reviews``."""
        row = self.state.suggestion(suggestion_id)
        if row is None:
            return None
        return {**row, "reviews": self.decisions(suggestion_id)}

    def decisions(self, suggestion_id: str | None = None, since: str | None = None) -> list[dict]:
        where, args = [], []
        if suggestion_id is not None:
            where.append("suggestion_id = ?"), args.append(suggestion_id)
        if since is not None:
            where.append("decided_at >= ?"), args.append(since)
        return [dict(r) for r in self.db["reviews"].rows_where(" and ".join(where) or None, args, order_by="id")]

    # -- deciding ----------------------------------------------------------------------------------
    def decide(self, d: Decision) -> Decided:
        """Record ``d`` and move the suggestion on, in one transaction, only while it is still open
        (``proposed``); else nothing is written and the answer says who decided first. A revision's
        wording is kept beside the decision (:class:`winellbot.state.revisions.RevisionStore`)."""
        d.check()
        row = self.state.suggestion(d.suggestion_id)
        if row is None:
            raise DecisionError(f"no suggestion {d.suggestion_id}")
        section_to = " > ".join(d.section) if d.section is not None else None
        reason = _status_reason(d)
        with self.db.atomic():
            if d.verdict == "skip":  # nothing moves: only this reviewer's queue changes
                moved = int(self.db["suggestions"].count_where("id = ? and status = 'proposed'", [d.suggestion_id]))
            else:
                moved = self.db.execute(
                    f"update suggestions set status = ?, status_reason = ?, updated = ?"
                    f"{', section = ?' if section_to is not None else ''} where id = ? and status = 'proposed'",
                    [_TO[d.verdict], reason, clock.stamp(), *([section_to] if section_to is not None else []),
                     d.suggestion_id]).rowcount
            if moved == 1:
                review_id = self.db["reviews"].insert({
                    "suggestion_id": d.suggestion_id, "page": row["page"], "wiki": row.get("wiki") or "",
                    "reviewer": d.reviewer, "decided_at": clock.stamp(), "verdict": d.verdict,
                    "reasons": ",".join(d.reasons), "section_from": row["section"] or "", "section_to": section_to,
                    "note": d.note or None}).last_pk
                if d.verdict == "revise":
                    RevisionStore(self.state).add(review_id=review_id, row=row, reviewer=d.reviewer, text=d.text,
                                                  section_to=section_to, note=d.note, started_from=d.started_from)
        if moved == 1:
            return Decided(True, _TO[d.verdict])
        now_row = self.state.suggestion(d.suggestion_id) or row
        return Decided(False, now_row["status"], self._first(d.suggestion_id, now_row))

    # -- taking a decision back --------------------------------------------------------------------
    def last_decision(self, reviewer: str) -> dict | None:
        """``reviewer``'s latest decision not undone (the one :meth:`undo` would take back), or None."""
        rows = self.db.query("select * from reviews where reviewer = ? and undone_at is null "
                             "and verdict != 'undo' order by id desc limit 1", [reviewer])
        return next((dict(r) for r in rows), None)

    def undo(self, reviewer: str, review_id: int) -> Decided:
        """Take back decision ``review_id``, which must be ``reviewer``'s latest not undone (so a double
        undo, or an undo of a page left open, takes nothing else back). In one transaction, only if the
        suggestion is still where that decision put it: not posted yet, it returns to the queue (to its
        section before the decision); posted, it becomes ``withdrawing`` and the bot withdraws the post."""
        last = self.last_decision(reviewer)
        if last is None or int(last["id"]) != int(review_id):
            return Decided(False, "", "nothing to undo: that decision is not your latest, or it was undone already")
        sid, verdict, stamp = last["suggestion_id"], last["verdict"], clock.stamp()
        why = f"undone by {reviewer} on the review page"
        with self.db.atomic():
            if verdict == "skip":
                moved, status = 1, "proposed"
            elif verdict in APPROVALS and self._status(sid) in ("posted", "withdrawing"):
                status = "withdrawing"
                moved = self.db.execute("update suggestions set status = 'withdrawing', status_reason = ?, updated = ? "
                                        "where id = ? and status = 'posted'", [why, stamp, sid]).rowcount
            else:
                status = "proposed"
                back = ", section = ?" if last.get("section_to") is not None else ""
                moved = self.db.execute(
                    f"update suggestions set status = 'proposed', status_reason = ?, updated = ?{back} "
                    "where id = ? and status = ?",
                    [f"returned to the queue: {why}", stamp, *([last["section_from"]] if back else []), sid,
                     _TO[verdict]]).rowcount
            if moved == 1:
                self.db.execute("update reviews set undone_at = ?, undone_by = ? where id = ? and undone_at is null",
                                [stamp, reviewer, last["id"]])
                for was in ("approved", "posted"):
                    RevisionStore(self.state).set_status(sid, "undone", current=was)
        if moved == 1:
            return Decided(True, status)
        return Decided(False, self._status(sid) or "", f"not undone: the suggestion is {self._status(sid)} now")

    def _status(self, suggestion_id: str) -> str | None:
        row = self.db.execute("select status from suggestions where id = ?", [suggestion_id]).fetchone()
        return row[0] if row else None

    def send_back(self, suggestion_id: str, finding: str) -> None:
        """A revision the writer's checks refused: back to the queue with the ``finding``, its approval
        taken back by the bot (so it is never posted as it stands), the revision marked refused."""
        stamp = clock.stamp()
        with self.db.atomic():
            self.db.execute("update suggestions set status = 'proposed', status_reason = ?, updated = ? "
                            "where id = ? and status = 'approved'",
                            [f"the reviewer's wording was not posted: {finding}", stamp, suggestion_id])
            self.db.execute("update reviews set undone_at = ?, undone_by = ? where suggestion_id = ? and "
                            "verdict = 'revise' and undone_at is null", [stamp, "winellbot (its checks)", suggestion_id])
            RevisionStore(self.state).set_status(suggestion_id, "refused", finding=finding)

    def skipped(self, reviewer: str) -> list[dict]:
        """The open suggestions ``reviewer`` skipped (decisions not undone), latest skip first."""
        sql = (f"select {_LISTED}, r.id as review_id from reviews r join suggestions s on s.id = r.suggestion_id "
               "where r.reviewer = ? and r.verdict = 'skip' and r.undone_at is null and s.status = 'proposed' "
               "order by r.id desc")
        return [dict(r) for r in self.db.query(sql, [reviewer])]

    def unskip(self, reviewer: str, review_id: int) -> bool:
        """Bring a skipped suggestion back into ``reviewer``'s queue; False when that skip was not theirs."""
        with self.db.atomic():
            return self.db.execute("update reviews set undone_at = ?, undone_by = ? where id = ? and reviewer = ? "
                                   "and verdict = 'skip' and undone_at is null",
                                   [clock.stamp(), reviewer, review_id, reviewer]).rowcount == 1

    def _first(self, suggestion_id: str, row: dict) -> str:
        done = [r for r in self.decisions(suggestion_id) if r["verdict"] != "skip" and not r.get("undone_at")]
        if done:
            last = done[-1]
            return f"already {row['status']}: {last['verdict']} by {last['reviewer']} at {last['decided_at']}"
        return f"already {row['status']}" + (f" ({row['status_reason']})" if row.get("status_reason") else "")

    # -- for the bot's writer ----------------------------------------------------------------------
    def approvals(self, ids: Iterable[str]) -> dict[str, str]:
        """Suggestion id -> the reviewer whose approval is recorded for it (ids without one, or whose
        approval was undone, are left out)."""
        return {sid: row["reviewer"] for sid, row in self.approval_rows(ids).items()}

    def approval_rows(self, ids: Iterable[str]) -> dict[str, dict]:
        """Suggestion id -> its approval (``reviews`` row, not undone), the latest where there are several."""
        ids = list(ids)
        if not ids:
            return {}
        marks = ",".join("?" * len(ids))
        rows = self.db.query(f"select * from reviews where verdict in ('approve', 'revise') "
                             f"and undone_at is null and suggestion_id in ({marks}) order by id", ids)
        return {r["suggestion_id"]: dict(r) for r in rows}

    def settle_posted(self, ids: Iterable[str] | None = None) -> list[str]:
        """After the writer recorded posts (``ids``; None: every posted suggestion): those whose approval
        was undone while the post was in flight, and not approved again since, become ``withdrawing`` (the
        writer withdraws them next); returns their ids. A post made without review (``review=no``) has no
        approval to lose."""
        if ids is None:
            ids = [r[0] for r in self.db.execute(
                "select distinct s.id from suggestions s join reviews r on r.suggestion_id = s.id "
                "where s.status = 'posted' and r.verdict in ('approve', 'revise') and r.undone_at is not null"
            ).fetchall()]
        ids = list(ids)
        approved = self.approvals(ids)
        undone = [sid for sid in ids if sid not in approved and self.db["reviews"].count_where(
            "suggestion_id = ? and verdict in ('approve', 'revise') and undone_at is not null", [sid])]
        with self.db.atomic():
            for sid in undone:
                self.db.execute("update suggestions set status = 'withdrawing', updated = ?, status_reason = "
                                "'its approval was undone while it was being posted' where id = ? "
                                "and status = 'posted'", [clock.stamp(), sid])
                RevisionStore(self.state).set_status(sid, "undone", current="posted")
        return undone

    def withdrawing(self) -> list[dict]:
        """Suggestions whose post the writer must withdraw (an undo after the post), with their latest
        post's page and who undid it."""
        sql = ("select s.id, s.page, s.status_reason, p.target, p.revid from suggestions s join posts p "
               "on p.suggestion_id = s.id where s.status = 'withdrawing' "
               "and p.id = (select max(id) from posts where suggestion_id = s.id) order by s.updated")
        return [dict(r) for r in self.db.query(sql)]

    def approved_pages(self) -> list[str]:
        """Articles holding approved suggestions not posted yet, oldest approval first."""
        rows = self.db.execute("select s.page, min(r.id) from suggestions s join reviews r on r.suggestion_id = s.id "
                               "and r.verdict in ('approve', 'revise') and r.undone_at is null where s.status = 'approved' group by s.page "
                               "order by 2").fetchall()
        return [r[0] for r in rows]

    # -- learning ----------------------------------------------------------------------------------
    def rescore(self, estimate: Callable[[dict], float]) -> int:
        """Re-estimate every open suggestion whose measurements were kept, with ``estimate``
        (a refitted model's); returns how many estimates changed."""
        changed = 0
        rows = list(self.db["suggestions"].rows_where("status = 'proposed' and features is not null",
                                                      select="id, features, estimate"))
        with self.db.atomic():
            for r in rows:
                try:
                    p = round(float(estimate(json.loads(r["features"]))), 6)
                except (KeyError, ValueError, TypeError):  # measured before the model's features existed
                    continue
                if r["estimate"] is None or abs(p - r["estimate"]) > 1e-6:
                    self.db.execute("update suggestions set estimate = ? where id = ?", [p, r["id"]])
                    changed += 1
        return changed

    def labelled(self) -> list[dict]:
        """Every decided suggestion with kept measurements, its latest decision that teaches
        (approve, revise or adopted: useful, a revision as the rubric's "revise"; reject: not), undone
        ones left out, for ``winellbot fit acceptability --from-state``."""
        sql = ("select r.suggestion_id, r.page, r.verdict, r.reasons, r.reviewer, r.decided_at, s.features "
               "from reviews r join suggestions s on s.id = r.suggestion_id where r.verdict != 'skip' "
               "and r.id = (select max(id) from reviews x where x.suggestion_id = r.suggestion_id "
               "and x.verdict != 'skip' and x.undone_at is null) and s.features is not null order by r.id")
        return [dict(r) for r in self.db.query(sql)]


def _status_reason(d: Decision) -> str:
    if d.verdict == "revise":
        moved = f", into the section {' > '.join(d.section)}" if d.section is not None else ""
        return f"reworded and approved by {d.reviewer} on the review page{moved}"
    if d.verdict == "approve":
        moved = f", into the section {' > '.join(d.section)}" if d.section is not None else ""
        return f"approved by {d.reviewer} on the review page{moved}"
    if d.verdict == "adopted":
        return f"added to the article by {d.reviewer} (review page)"
    if d.verdict == "reject":
        return f"rejected by {d.reviewer} on the review page" + (f" ({', '.join(d.reasons)})" if d.reasons else "")
    return ""
