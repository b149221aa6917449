"""`winellbot run`: the long-running scheduler (APScheduler 3.x).

One job runs a cycle over the due pages every ``schedule.interval_minutes``. A second, when given
(``poll``: posting what reviewers approved, every ``review.poll_seconds``), runs between cycles:
the two never run at once (a poll that finds a cycle running is skipped; the cycle posts what was
approved itself). Jobs never overlap (``max_instances=1``) and a missed start is coalesced into one.
SIGTERM and SIGINT (how Toolforge's jobs framework stops a continuous job) let the
cycle in progress finish its current page, then the scheduler shuts down cleanly.
"""
from __future__ import annotations

import logging
import signal
import threading
from collections.abc import Callable

log = logging.getLogger(__name__)


class CycleScheduler:
    def __init__(self, cycle: Callable[[threading.Event], object] | None, *, interval_minutes: float,
                 run_at_start: bool = True, poll: Callable[[threading.Event], object] | None = None,
                 poll_seconds: float = 20.0) -> None:
        self.cycle = cycle
        self.interval_minutes = interval_minutes
        self.run_at_start = run_at_start
        self.poll = poll
        self.poll_seconds = poll_seconds
        self.stop_event = threading.Event()
        self._busy = threading.Lock()  # a cycle or a poll, never both
        self._scheduler = None

    def _job(self) -> None:
        if self.stop_event.is_set():
            return
        with self._busy:
            try:
                self.cycle(self.stop_event)
            except Exception:  # one failed cycle must not end a continuous job
                log.exception("cycle failed; the next one runs on schedule")

    def _poll(self) -> None:
        if self.stop_event.is_set() or not self._busy.acquire(blocking=False):
            return  # a cycle is running: it posts what was approved itself
        try:
            self.poll(self.stop_event)
        except Exception:  # a failed poll must not end a continuous job
            log.exception("posting approved suggestions failed; the next poll tries again")
        finally:
            self._busy.release()

    def request_stop(self, signum: int | None = None, _frame=None) -> None:
        log.info("stop requested (signal %s); finishing the current page", signum)
        # Only set the flag here: serve() shuts the scheduler down from the main loop, waiting for
        # the worker thread, which checks the flag between pages.
        self.stop_event.set()

    def serve(self) -> None:
        """Block until SIGTERM/SIGINT; run cycles on schedule meanwhile."""
        import datetime as dt

        from apscheduler.schedulers.background import BackgroundScheduler

        self._scheduler = BackgroundScheduler(job_defaults={"coalesce": True, "max_instances": 1})
        first = dt.datetime.now() if self.run_at_start else None
        if self.cycle is not None:  # None: only the poll (``winellbot run --approved-only``)
            self._scheduler.add_job(self._job, "interval", minutes=self.interval_minutes,
                                    next_run_time=first, id="cycle", replace_existing=True)
        if self.poll is not None:
            self._scheduler.add_job(self._poll, "interval", seconds=self.poll_seconds, id="approved",
                                    replace_existing=True)
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, self.request_stop)
        self._scheduler.start()
        while not self.stop_event.wait(1.0):
            pass
        self._scheduler.shutdown(wait=True)
        log.info("scheduler stopped")
