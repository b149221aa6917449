"""Child processes that must not outlive whoever started them: servers and jobs.

The local wiki's ``php -S`` (with the workers it forks), the tests' MariaDB server, the llama.cpp
server and the bot jobs a benchmark starts each run in a session of their own
(``start_new_session=True``): a Ctrl-C at the terminal reaches only their owner, which stops them
in order, and each one, with whatever it forks, is one process group, which :func:`stop_group`
stops as a whole (SIGTERM, then SIGKILL to what is left).

Their owner stops them in ``finally`` blocks and context managers. Python runs those on a normal
exit, on an exception and on Ctrl-C, but not on SIGTERM (``timeout``, ``kill``) or SIGHUP, which end
the process at once. :func:`on_stop_signals` makes SIGTERM, SIGHUP and SIGINT raise :class:`Stopped`
(a KeyboardInterrupt: pytest ends its session on one and tears its fixtures down), so every way out
stops the children; further stop signals are ignored while that happens. A SIGKILL runs nothing.
"""
from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)


class Stopped(KeyboardInterrupt):
    """A stop signal arrived (``signum``); raised in the main thread like Ctrl-C's KeyboardInterrupt."""

    def __init__(self, signum: int) -> None:
        super().__init__(f"stopped by {signal.Signals(signum).name}")
        self.signum = signum


def _raise_stopped(signum: int, frame) -> None:
    for sig in STOP_SIGNALS:  # the way out runs once: a second signal (timeout sends two) changes nothing
        signal.signal(sig, signal.SIG_IGN)
    raise Stopped(signum)


def on_stop_signals() -> dict[int, object]:
    """From now on a stop signal raises :class:`Stopped` in the main thread; returns the handlers it
    replaced (give them to :func:`restore`). Outside the main thread nothing is changed."""
    if threading.current_thread() is not threading.main_thread():
        return {}
    return {sig: signal.signal(sig, _raise_stopped) for sig in STOP_SIGNALS}


def restore(previous: dict[int, object]) -> None:
    for sig, handler in previous.items():
        signal.signal(sig, handler)


@contextlib.contextmanager
def stopping_on_signals() -> Iterator[None]:
    """For a script's main: within, a stop signal unwinds like Ctrl-C (see :func:`on_stop_signals`);
    out of it, the script exits with 128 + the signal's number, as a process ended by it would."""
    previous = on_stop_signals()
    try:
        yield
    except Stopped as stop:
        raise SystemExit(128 + stop.signum) from None
    finally:
        restore(previous)


def members(pgid: int) -> list[int]:
    """The processes of the group ``pgid`` still running (zombies, which have ended, left out)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()  # after "pid (comm) ": state, ppid, pgrp ...
        if int(fields[2]) == pgid and fields[0] != "Z":
            found.append(int(entry.name))
    return found


def stop_group(pid: int | None, *, process: subprocess.Popen | None = None, timeout: float = 10.0) -> bool:
    """Stop the process group that ``pid`` leads (started with ``start_new_session=True``) with all it
    forked: SIGTERM to the group, SIGKILL to what is left of it after ``timeout`` seconds. ``process``:
    the Popen of ``pid`` when it is this process's child (it is reaped). Returns whether any of the
    group was running."""
    if pid is None or not _left(pid, process):  # nothing of it runs (its number may be another's by now)
        return False
    running = _signal_group(pid, signal.SIGTERM)
    for sig, wait in ((signal.SIGKILL, timeout), (None, 5.0)):
        deadline = time.monotonic() + wait
        while _left(pid, process) and time.monotonic() < deadline:
            time.sleep(0.05)
        if sig is not None and _left(pid, process):
            _signal_group(pid, sig)
    if process is not None:
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=1)
    return running


def _signal_group(pgid: int, sig: int) -> bool:
    try:
        os.killpg(pgid, sig)
        return True
    except (ProcessLookupError, PermissionError):
        return False


def _left(pgid: int, process: subprocess.Popen | None) -> bool:
    if process is not None:
        process.poll()  # reaps the leader once it has ended
    return bool(members(pgid))


class Children:
    """Processes started by :meth:`start`, each in a session of its own; :meth:`stop` (and leaving
    the ``with`` block, however it is left) stops every one still running, with all it forked."""

    def __init__(self, timeout: float = 10.0) -> None:
        self.timeout = timeout
        self.started: list[subprocess.Popen] = []

    def start(self, cmd: list[str], **popen) -> subprocess.Popen:
        process = subprocess.Popen(cmd, start_new_session=True, **popen)
        self.started.append(process)
        return process

    def stop(self) -> None:
        for process in self.started:
            stop_group(process.pid, process=process, timeout=self.timeout)

    def __enter__(self) -> Children:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
