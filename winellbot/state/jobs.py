"""The jobs sharing a state on a database server: each job's sign of life, and what ``health`` reads of them.

A job is one ``winellbot run``, ``once`` or ``article --post`` process. ``runs.job`` names it by
host, pid and a random part that each cycle's leases draw anew (leases.py), so here a job is its
``host:pid``. During a cycle the leases renew the run's heartbeat (the server's clock, in seconds
since 1970); :class:`JobBeat` keeps it going for the job's whole life, between the cycles of a
continuous job too, on the latest run the job made, and clears it when the job ends, so a job that
ended is told from one that died. A heartbeat is fresh for :data:`LEASE_SECONDS`: a run still
"running" whose heartbeat is older is one the next job to start marks killed (mark_stale_runs), and
:func:`jobs_now` reports it as stopped. Nothing here is used on SQLite, where one job at a time
holds the state's lock (lock.py).
"""
from __future__ import annotations

import datetime as dt
import logging
import threading
from dataclasses import dataclass, field

from winellbot.state.leases import LEASE_SECONDS, NOW, job_name

log = logging.getLogger(__name__)


def process_of(job: str | None) -> str:
    """``host:pid`` of a job name ``host:pid:random`` (the random part changes every cycle)."""
    return job.rsplit(":", 1)[0] if job and job.count(":") >= 2 else job or "(unnamed)"


class JobBeat:
    """Renews the heartbeat of this process's latest run every ``seconds`` until :meth:`close`."""

    def __init__(self, state, seconds: float = LEASE_SECONDS / 3) -> None:
        self.state, self.seconds = state, seconds
        self.prefix = process_of(job_name()) + ":"
        self.after = 0  # runs made before this job started are another's (a pid is reused)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def latest(self) -> int | None:
        """The id of the latest run this job made (None before its first cycle named it)."""
        row = self.state.db.execute("select id from runs where id > ? and substr(job, 1, ?) = ? order by id desc "
                                    "limit 1", [self.after, len(self.prefix), self.prefix]).fetchone()
        return row[0] if row else None

    def beat(self) -> int | None:
        run_id = self.latest()
        if run_id is not None:
            self.state.db.execute(f"update runs set heartbeat = {NOW[self.state.engine]} where id = ?", [run_id])
        return run_id

    def start(self) -> JobBeat:
        self.after = self.state.db.execute("select coalesce(max(id), 0) from runs").fetchone()[0]
        self._stop.clear()
        self._thread = threading.Thread(target=self._keep, name="winellbot-jobbeat", daemon=True)
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop, and clear the heartbeat of the job's latest run if it finished: this job ended."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        try:
            run_id = self.latest()
            if run_id is not None:
                self.state.db.execute("update runs set heartbeat = null where id = ? and status <> 'running'", [run_id])
        except Exception as err:  # noqa: BLE001 - the heartbeat then goes stale by itself
            log.warning("the heartbeat of %s was not cleared (it goes stale by itself): %s", self.prefix, err)

    def __enter__(self) -> JobBeat:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _keep(self) -> None:
        while not self._stop.wait(self.seconds):
            try:
                self.beat()
            except Exception as err:  # noqa: BLE001 - a server away for a moment: try again later
                log.warning("the heartbeat of %s failed: %s", self.prefix, err)


@dataclass
class Job:
    """One job as the state shows it now: its run (its latest, or one whose heartbeat stopped)."""

    name: str  # host:pid
    run: dict
    beat_age: float | None  # seconds since the run's heartbeat, by the server's clock; None: none
    live: bool  # its heartbeat is fresh
    leases: list[tuple[str, float]] = field(default_factory=list)  # (title, expires) held by the run's job

    @property
    def in_cycle(self) -> bool:
        return self.run["status"] == "running"


def jobs_now(state, stale_after: float = LEASE_SECONDS) -> tuple[float, list[Job]]:
    """The server's clock now, and the jobs: each job whose latest run has a fresh heartbeat (live),
    and each run still "running" whose heartbeat stopped (not live; mark_stale_runs would mark it)."""
    db = state.db
    now = float(db.execute(f"select {NOW[state.engine]}").fetchone()[0])
    rows = list(db.query("select id, started, finished, status, job, heartbeat from runs where status = 'running' "
                         "or heartbeat >= ? order by id", [now - stale_after]))
    leases: dict[str, list[tuple[str, float]]] = {}
    for r in db.query("select lease_holder, title, lease_expires from pages where lease_holder is not null "
                      "order by title"):
        leases.setdefault(r["lease_holder"], []).append((r["title"], float(r["lease_expires"] or 0)))
    ages = {r["id"]: _age(r, now) for r in rows}
    live = {r["id"] for r in rows if ages[r["id"]] <= stale_after}
    latest = {process_of(r["job"]): r["id"] for r in rows if r["id"] in live}  # rows go by id: the last wins
    found = []
    for r in rows:
        if latest.get(process_of(r["job"])) == r["id"] or (r["id"] not in live and r["status"] == "running"):
            age = None if r["heartbeat"] is None else ages[r["id"]]
            found.append(Job(process_of(r["job"]), r, age, r["id"] in live, leases.get(r["job"] or "", [])))
    return now, found


def _age(run: dict, now: float) -> float:
    """Seconds since the run's heartbeat; without one (a run just started, or never renewed), since it started."""
    if run["heartbeat"] is not None:
        return now - float(run["heartbeat"])
    try:
        return now - dt.datetime.fromisoformat(run["started"]).timestamp()
    except (TypeError, ValueError):
        return float("inf")


def latest_run(state, host: str | None = None) -> dict | None:
    """The latest run of any job, or of the jobs on ``host``."""
    if host is None:
        rows = list(state.db.query("select * from runs order by id desc limit 1"))
    else:
        prefix = host + ":"
        rows = list(state.db.query("select * from runs where substr(job, 1, ?) = ? order by id desc limit 1",
                                   [len(prefix), prefix]))
    return rows[0] if rows else None
