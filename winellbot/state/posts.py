"""Posts claimed before the wiki write, so that several jobs on one state hold the posting caps together.

Before writing a page's suggestions, a job on a database server takes a claim on each
(``post_claims``, keyed by the suggestion: unique, so two jobs never both hold one) in a
transaction that first locks the one ``post_caps`` row, so claims are granted one job at a time.
In that transaction it counts what the caps have already spent: the posts recorded in the window
and the claims still open there (taken, not yet recorded: a write in flight, or one a killed job
left, which keeps counting until it leaves the window, or until the job that takes the page over
posts it). It grants only as many of the page's suggestions as both caps (per wiki in 24 hours,
per article in 7 days) leave room for. :meth:`winellbot.state.db.State.record_post` closes the
claims in the transaction that records the posts. A claim left open by another job is taken over
only by the job that now holds the page's lease (winellbot/state/leases.py); the talk page's own
text (the writer skips ids already there) keeps such a re-post from showing twice.

SQLite has one job at a time (the job lock) and the posting planner's count of the posts suffices.
"""
from __future__ import annotations

import datetime as dt

from winellbot import clock


class PostClaims:
    """The claims of one job (``holder``) on ``state``."""

    def __init__(self, state, holder: str) -> None:
        self.state, self.db, self.holder = state, state.db, holder

    def claim(self, page: str, ids: list[str], *, per_page_week: int, per_wiki_day: int,
              now: dt.datetime | None = None) -> list[str]:
        """Claim the first of ``ids`` (suggestions for ``page``) that the caps leave room for; returns them."""
        if not ids:
            return []
        now = (now or clock.now()).replace(microsecond=0)
        day = (now - dt.timedelta(days=1)).isoformat()
        week = (now - dt.timedelta(days=7)).isoformat()
        until = now.isoformat()
        self.db["post_caps"].insert({"name": "wiki"}, pk="name", ignore=True)
        with self.db.atomic():
            if self.state.engine != "sqlite":  # one job at a time past this line, until the commit
                self.db.execute("select name from post_caps where name = 'wiki' for update")
            spent_day = self._spent(day, None, ids)
            spent_week = self._spent(week, page, ids)
            room = max(0, min(per_wiki_day - spent_day, per_page_week - spent_week))
            granted = ids[:room]
            for sid in granted:
                self.db["post_claims"].upsert({"suggestion_id": sid, "page": page, "job": self.holder,
                                               "claimed_at": until, "done": 0}, pk="suggestion_id")
        return granted

    def _spent(self, since: str, page: str | None, ids: list[str]) -> int:
        """Posts recorded since ``since``, and claims open since then (``ids`` left out: they are the ones
        being claimed now), on the wiki or for one article. One dated after now (a clock that ran fast)
        counts as now (winellbot/clock.py)."""
        marks = ",".join("?" * len(ids))
        on_page = " and page = ?" if page is not None else ""
        posts = self.state.count_posts(since, page=page)
        open_claims = self.db.execute(
            f"select count(*) from post_claims where done = 0 and claimed_at >= ? "
            f"and suggestion_id not in ({marks}){on_page}",
            [since, *ids] + ([page] if page is not None else [])).fetchone()[0]
        return posts + open_claims

    def release(self, ids: list[str] | None = None) -> None:
        """Give up claims whose write did not happen (nothing was posted): they no longer count.
        None: every claim of this job still open (the cycle ended, by an exception too)."""
        if ids is None:
            self.db.execute("delete from post_claims where job = ? and done = 0", [self.holder])
            return
        for sid in ids:
            self.db.execute("delete from post_claims where suggestion_id = ? and job = ? and done = 0",
                            [sid, self.holder])


def close_claims(db, suggestion_ids: list[str]) -> None:
    """Inside the transaction that records the posts: their claims are done (the posts count now)."""
    for sid in suggestion_ids:
        db.execute("update post_claims set done = 1 where suggestion_id = ?", [sid])
