"""Reviewed before posted: the review queue and reviewers' decisions, in the state (migration 010).

A suggestion the gates pass is ``proposed``: it waits in the queue. The queue is ordered by the
acceptability estimate kept with each suggestion (``suggestions.estimate``, from the measurements
in ``suggestions.features``, so a refitted model re-orders it: :meth:`ReviewStore.rescore`), and
shows at most ``depth`` open suggestions per article at once, the best first.

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
``skip``              proposed                         proposed (this reviewer is not shown it again)
====================  ===============================  ======================================

The web page only writes here; the wiki is written by the bot (:meth:`winellbot.bot.WinellBot.post`),
which posts an ``approved`` suggestion once (the writer skips an id already on the page, and the
state records the post), naming the reviewer who approved it (:meth:`ReviewStore.approvals`).
"""
from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from winellbot import clock

VERDICTS = ("approve", "adopted", "reject", "skip")
# The rubric's errors (../shared/bench/verdicts.md), which a reject may name.
REASONS = ("not_new", "insignificant", "off_topic", "unsupported", "wrong_section", "subjective", "unclear",
           "furniture", "too_long")
_TO = {"approve": "approved", "adopted": "accepted", "reject": "rejected", "skip": "proposed"}
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
    """One reviewer's decision on one suggestion. ``section``: for ``approve``, the section (path) it
    is to be posted under instead of the bot's; ``reasons``: for ``reject``, codes of :data:`REASONS`."""

    suggestion_id: str
    reviewer: str
    verdict: str
    reasons: tuple[str, ...] = ()
    section: tuple[str, ...] | None = None

    def check(self) -> None:
        if self.verdict not in VERDICTS:
            raise DecisionError(f"unknown verdict {self.verdict!r} (one of {', '.join(VERDICTS)})")
        unknown = [r for r in self.reasons if r not in REASONS]
        if unknown:
            raise DecisionError(f"unknown reason(s) {', '.join(unknown)} (of {', '.join(REASONS)})")
        if not self.reviewer.strip():
            raise DecisionError("a decision needs the reviewer's name")
        if self.section is not None and self.verdict != "approve":
            raise DecisionError("only an approval moves a suggestion to another section")


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
                              "and r.reviewer = ? and r.verdict = 'skip')")
            args.append(reviewer)
        return self.db.execute(f"select coalesce(sum(case when n < ? then n else ? end), 0) from (select count(*) n "
                               f"from suggestions s where {' and '.join(conditions)} group by s.page) c",
                               [depth, depth, *args]).fetchone()[0]

    def _skipped(self, reviewer: str) -> set[str]:
        if not reviewer:
            return set()
        rows = self.db.execute("select suggestion_id from reviews where reviewer = ? and verdict = 'skip'", [reviewer])
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
        (``proposed``); else nothing is written and the answer says who decided first."""
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
                self.db["reviews"].insert({
                    "suggestion_id": d.suggestion_id, "page": row["page"], "wiki": row.get("wiki") or "",
                    "reviewer": d.reviewer, "decided_at": clock.stamp(), "verdict": d.verdict,
                    "reasons": ",".join(d.reasons), "section_from": row["section"] or "", "section_to": section_to})
        if moved == 1:
            return Decided(True, _TO[d.verdict])
        now_row = self.state.suggestion(d.suggestion_id) or row
        return Decided(False, now_row["status"], self._first(d.suggestion_id, now_row))

    def _first(self, suggestion_id: str, row: dict) -> str:
        done = [r for r in self.decisions(suggestion_id) if r["verdict"] != "skip"]
        if done:
            last = done[-1]
            return f"already {row['status']}: {last['verdict']} by {last['reviewer']} at {last['decided_at']}"
        return f"already {row['status']}" + (f" ({row['status_reason']})" if row.get("status_reason") else "")

    # -- for the bot's writer ----------------------------------------------------------------------
    def approvals(self, ids: Iterable[str]) -> dict[str, str]:
        """Suggestion id -> the reviewer whose approval is recorded for it (ids without one are left out)."""
        ids = list(ids)
        if not ids:
            return {}
        marks = ",".join("?" * len(ids))
        rows = self.db.execute(f"select suggestion_id, reviewer from reviews where verdict = 'approve' "
                               f"and suggestion_id in ({marks}) order by id", ids).fetchall()
        return {sid: who for sid, who in rows}

    def approved_pages(self) -> list[str]:
        """Articles holding approved suggestions not posted yet, oldest approval first."""
        rows = self.db.execute("select s.page, min(r.id) from suggestions s join reviews r on r.suggestion_id = s.id "
                               "and r.verdict = 'approve' where s.status = 'approved' group by s.page "
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
        (approve or adopted: useful; reject: not), for ``winellbot fit acceptability --from-state``."""
        sql = ("select r.suggestion_id, r.page, r.verdict, r.reasons, r.reviewer, r.decided_at, s.features "
               "from reviews r join suggestions s on s.id = r.suggestion_id where r.verdict != 'skip' "
               "and r.id = (select max(id) from reviews x where x.suggestion_id = r.suggestion_id "
               "and x.verdict != 'skip') and s.features is not null order by r.id")
        return [dict(r) for r in self.db.query(sql)]


def _status_reason(d: Decision) -> str:
    if d.verdict == "approve":
        moved = f", into the section {' > '.join(d.section)}" if d.section is not None else ""
        return f"approved by {d.reviewer} on the review page{moved}"
    if d.verdict == "adopted":
        return f"added to the article by {d.reviewer} (review page)"
    if d.verdict == "reject":
        return f"rejected by {d.reviewer} on the review page" + (f" ({', '.join(d.reasons)})" if d.reasons else "")
    return ""
