"""The cycle's outcome check: which posted facts entered their articles, and which expired.

:class:`OutcomeCheck` runs once a cycle, after the change check. The articles holding tracked
suggestions whose latest revision the bot has already read cost nothing; the others are read in one
batch (up to the site's title limit per request, 500 for a bot) and each tracked fact is read
against the article's new text (:class:`winellbot.outcomes.adoption.AdoptionReader`):

* newly found: adopted at that revision, with the time since the post. The revision is the first
  one the bot read that carries the fact; it is the exact revision that added it when it is the
  only edit since the bot's last read (``adopted_exact``), otherwise it may be a later one;
* found before and gone now: the adoption was reverted and no longer counts;
* a fact neither adopted nor decided by a trusted reviewer ``expire_days`` after its post expires,
  and is no longer watched.
"""
from __future__ import annotations

import datetime as dt
from collections import defaultdict
from dataclasses import dataclass, field

from winellbot import clock
from winellbot.outcomes.adoption import AdoptionReader
from winellbot.state.outcomes import OutcomeStore


@dataclass
class OutcomeReport:
    """What one check did."""

    watched_pages: int = 0
    changed_pages: int = 0
    adopted: list[str] = field(default_factory=list)
    reverted: list[str] = field(default_factory=list)
    expired: list[str] = field(default_factory=list)


class OutcomeCheck:
    """Reads the articles of tracked suggestions that changed, and records adoptions and expiries."""

    def __init__(self, state, reader, *, expire_days: float = 60.0, now: dt.datetime | None = None) -> None:
        self.store = OutcomeStore(state)
        self.reader = reader
        self.expire_days = expire_days
        self.now = now

    def check(self, latest: dict[str, tuple[int, str]] | None = None) -> OutcomeReport:
        """``latest``: the change check's ``{title: (revid, timestamp)}``; articles it lacks are asked
        for (batched). Returns what changed."""
        now = (self.now or clock.now()).replace(microsecond=0)
        report = OutcomeReport()
        watched = self.store.watched()
        report.expired = self._expire(watched, now)
        live = [r for r in watched if r["suggestion_id"] not in set(report.expired)]
        by_page: dict[str, list[dict]] = defaultdict(list)
        for row in live:
            by_page[row["page"]].append(row)
        report.watched_pages = len(by_page)
        if not by_page:
            return report
        latest = dict(latest or {})
        missing = [t for t in by_page if t not in latest]
        if missing:
            latest.update(self.reader.latest_revisions(missing))
        seen = self.store.seen_revids(by_page)
        changed = [t for t, rows in by_page.items()
                   if t in latest and latest[t][0] != seen.get(t, min(r["baseline_revid"] or 0 for r in rows))]
        report.changed_pages = len(changed)
        adoption = AdoptionReader()
        for rev in self.reader.revisions(changed, batch=self.reader.title_batch or self.reader.site.maxlimit):
            rows = by_page[rev.title]
            exact = rev.parentid == seen.get(rev.title, min(r["baseline_revid"] or 0 for r in rows))
            found = adoption.read(rev.title, rev.text, rows)
            for row in rows:
                self._record(row, found.get(row["suggestion_id"]), rev, exact, report)
            self.store.saw_page(rev.title, rev.revid)
        return report

    def _record(self, row: dict, found, rev, exact: bool, report: OutcomeReport) -> None:
        sid = row["suggestion_id"]
        if found is not None and row["adopted_revid"] is None:
            posted = dt.datetime.fromisoformat(row["posted_at"])
            at = dt.datetime.fromisoformat(rev.timestamp.replace("Z", "+00:00"))
            self.store.adopt(sid, {
                "adopted_revid": rev.revid, "adopted_at": rev.timestamp, "adopted_how": found.how,
                "adopted_source": found.source, "adopted_sentence": found.sentence,
                "adopted_paragraph": found.paragraph, "adopted_section": " > ".join(found.section),
                "adoption_days": round(max(0.0, (at - posted).total_seconds() / 86400), 4),
                "adopted_exact": int(exact)})
            report.adopted.append(sid)
        elif found is None and row["adopted_revid"] is not None:
            self.store.revert(sid, rev.revid, rev.timestamp)
            report.reverted.append(sid)

    def _expire(self, watched: list[dict], now: dt.datetime) -> list[str]:
        limit = now - dt.timedelta(days=self.expire_days)
        decided = self.store.decided()
        due = [r["suggestion_id"] for r in watched
               if r["adopted_revid"] is None and r["suggestion_id"] not in decided
               and dt.datetime.fromisoformat(r["posted_at"]) <= limit]
        if due:
            self.store.expire(due, now.isoformat())
        return due
