"""Pages claimed with leases, so that several jobs can share one state on MariaDB.

A job claims a batch of due pages, works through it, then claims the next. The claim of a page is
one conditional UPDATE of its ``pages`` row, atomic on the server: it succeeds only if no other
job holds a lease on the page that has not expired, and the page's ``last_run`` is still what the
job saw when it decided the page was due (a job that finished the page in between changed it, so
the page is not done twice). A lease lasts :data:`LEASE_SECONDS` by the database server's clock,
not the job's (a job whose clock runs fast would otherwise hold pages for ever, or take others');
a thread renews the job's leases and its run's heartbeat every third of that while the job works;
each page's lease is released when the page is done, and all of them when the cycle ends. A job
that dies renews nothing: after its leases expire another job takes its pages, and its run,
whose heartbeat stopped, is marked killed by the next job that starts (:func:`mark_stale_runs`).

SQLite keeps the single-job lock (winellbot/state/lock.py) and needs no lease: the bot claims only
on a state on a server.
"""
from __future__ import annotations

import logging
import os
import secrets
import socket
import threading
from collections.abc import Iterable, Iterator

from winellbot import clock
from winellbot.errors import StateError

log = logging.getLogger(__name__)

# WINELLBOT_LEASE_SECONDS shortens it for the tests and benchmarks that kill jobs and wait for their leases.
LEASE_SECONDS = float(os.environ.get("WINELLBOT_LEASE_SECONDS") or 600.0)
BATCH_PAGES = 5  # pages claimed at a time: small, so that the jobs share the due pages out evenly
# The database's clock, in seconds since 1970 (UTC).
NOW = {"mysql": "unix_timestamp(now(6))", "sqlite": "((julianday('now') - 2440587.5) * 86400.0)"}


class LeaseLost(StateError):
    """This job's lease on a page ran out and another job may be treating the page."""


def job_name() -> str:
    """This job's name in the leases: host, pid and a random part (a pid is reused)."""
    return f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(3)}"


class Leases:
    """The leases of one job (``holder``) on ``state``'s pages."""

    def __init__(self, state, holder: str | None = None, seconds: float = LEASE_SECONDS) -> None:
        self.state, self.db = state, state.db
        self.holder = holder or job_name()
        self.seconds = seconds
        self.now = NOW[state.engine]
        self.run_id: int | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def last_runs(self, titles: Iterable[str]) -> dict[str, str | None]:
        """Each title's ``last_run`` now (None: never run): what :meth:`claim` compares against."""
        titles = list(titles)
        seen: dict[str, str | None] = dict.fromkeys(titles)
        for start in range(0, len(titles), 500):
            part = titles[start:start + 500]
            rows = self.db.query(f"select title, last_run from pages where title in ({','.join('?' * len(part))})", part)
            seen.update({r["title"]: r["last_run"] for r in rows})
        return seen

    def claim(self, titles: list[str], seen: dict[str, str | None], limit: int = BATCH_PAGES) -> tuple[list[str], int]:
        """Claim up to ``limit`` of ``titles``, in order; returns the claimed titles and how many of
        ``titles`` were tried (the rest are still to try)."""
        claimed, tried = [], 0
        for title in titles:
            if len(claimed) >= limit:
                break
            tried += 1
            self.db["pages"].insert({"title": title}, pk="title", ignore=True)
            before = seen.get(title)
            res = self.db.execute(
                f"update pages set lease_holder = ?, lease_expires = {self.now} + ? where title = ? and "
                f"(lease_holder is null or lease_holder = ? or lease_expires < {self.now}) and "
                "(last_run = ? or (last_run is null and ? is null))",
                [self.holder, self.seconds, title, self.holder, before, before])
            if res.rowcount == 1:
                claimed.append(title)
        return claimed, tried

    def holds(self, title: str) -> bool:
        """Whether this job's lease on ``title`` is still in force."""
        return bool(self.db.execute(f"select count(*) from pages where title = ? and lease_holder = ? and "
                                    f"lease_expires >= {self.now}", [title, self.holder]).fetchone()[0])

    def renew(self) -> int:
        """Extend every lease this job holds, and its run's heartbeat; returns how many leases."""
        res = self.db.execute(f"update pages set lease_expires = {self.now} + ? where lease_holder = ?",
                              [self.seconds, self.holder])
        if self.run_id is not None:
            self.db.execute(f"update runs set job = ?, heartbeat = {self.now} where id = ?", [self.holder, self.run_id])
        return res.rowcount

    def release(self, titles: Iterable[str] | None = None) -> None:
        """Give up the leases on ``titles`` (all of this job's when None)."""
        if titles is None:
            self.db.execute("update pages set lease_holder = null, lease_expires = null where lease_holder = ?",
                            [self.holder])
            return
        for title in titles:
            self.db.execute("update pages set lease_holder = null, lease_expires = null where title = ? and "
                            "lease_holder = ?", [title, self.holder])

    def batches(self, titles: list[str], seen: dict[str, str | None]) -> Iterator[list[str]]:
        """The pages of ``titles`` this job gets, a claimed batch at a time, until none is left to try."""
        rest = list(titles)
        while rest:
            claimed, tried = self.claim(rest, seen)
            rest = rest[tried:]
            if claimed:
                yield claimed

    # -- the renewing thread -------------------------------------------------------------------------
    def start(self, run_id: int | None = None) -> Leases:
        """Give the run its first heartbeat and renew every third of the lease time until :meth:`close`."""
        self.run_id = run_id
        self._stop.clear()
        self.renew()
        self._thread = threading.Thread(target=self._keep, name="winellbot-leases", daemon=True)
        self._thread.start()
        return self

    def __enter__(self) -> Leases:
        return self.start(self.run_id)

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop renewing and release every lease this job holds."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        try:
            self.release()
        except Exception as err:  # noqa: BLE001 - the leases expire by themselves
            log.warning("the leases of %s were not released (they expire by themselves): %s", self.holder, err)

    def _keep(self) -> None:
        while not self._stop.wait(self.seconds / 3):
            try:
                self.renew()
            except Exception as err:  # noqa: BLE001 - a server away for a moment: try again later
                log.warning("renewing the leases of %s failed: %s", self.holder, err)


def mark_stale_runs(state, stale_after: float = LEASE_SECONDS) -> list[int]:
    """Runs still marked running whose job's heartbeat stopped ``stale_after`` seconds ago (or that
    never had one, started that long ago): that job was killed. Marks them so; returns their ids."""
    now = NOW[state.engine]
    rows = state.db.query(f"select id, heartbeat, started from runs where status = 'running' and "
                          f"coalesce(heartbeat, 0) < {now} - ?", [stale_after])
    ids = [r["id"] for r in rows if r["heartbeat"] is not None or _older_than(r["started"], stale_after)]
    finished = clock.stamp()
    for run_id in ids:
        state.db.execute("update runs set status = 'killed', finished = ? where id = ? and status = 'running'",
                         [finished, run_id])
    return ids


def _older_than(started: str | None, seconds: float) -> bool:
    if not started:
        return True
    return (clock.now() - clock.parse(started)).total_seconds() > seconds
