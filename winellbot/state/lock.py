"""One job at a time on a state file.

A job that writes the state (``run``, ``once``, ``article --post``, the demo) holds an exclusive
``flock`` on ``STATE.lock`` for as long as it runs, and writes its pid, host and start time into
the file so that a second job can say who holds it. The kernel drops the lock when the process
ends, however it ends, so a lock left by a killed job is simply taken over; the file still holds
the dead job's details, which the next job reports. ``flock`` works on NFS (Linux emulates it with
POSIX locks), where Toolforge keeps its tools' files.
"""
from __future__ import annotations

import fcntl
import json
import logging
import os
import socket
import sys
from pathlib import Path

from winellbot import clock
from winellbot.errors import StateError, StorageError

log = logging.getLogger(__name__)


class StateLocked(StateError):
    """Another job holds the state."""


class JobLock:
    """The lock of the state database at ``state_path``; use as a context manager."""

    def __init__(self, state_path: str | os.PathLike[str]) -> None:
        self.path = Path(f"{state_path}.lock")
        self.taken_over: dict | None = None  # details of a killed job whose lock was taken over
        self._fd: int | None = None

    def acquire(self) -> JobLock:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        except OSError as exc:  # a read-only folder or file, a path that is not a folder
            raise StorageError(f"cannot take the job lock of the state {self.path.with_suffix('')}: {exc}: give the "
                               "user the bot runs as write access to the state's folder") from exc
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _read(fd)
            os.close(fd)
            who = (f"pid {holder.get('pid')} on {holder.get('host')}, started {holder.get('started')}"
                   if holder else "another process")
            raise StateLocked(f"another winellbot job ({who}) is using the state {self.path.with_suffix('')}; "
                              "refusing to start a second one") from None
        self.taken_over = _read(fd) or None  # a clean release empties the file
        if self.taken_over:
            log.warning("took over the state lock left by pid %s (that job was killed)", self.taken_over.get("pid"))
        _write(fd, json.dumps({"pid": os.getpid(), "host": socket.gethostname(), "command": " ".join(sys.argv[:3]),
                               "started": clock.stamp()}))
        self._fd = fd
        return self

    def release(self) -> None:
        if self._fd is None:
            return
        _write(self._fd, "")
        fcntl.flock(self._fd, fcntl.LOCK_UN)
        os.close(self._fd)
        self._fd = None

    def __enter__(self) -> JobLock:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()


def holder(state_path: str | os.PathLike[str]) -> dict | None:
    """The details of the job that holds the state's lock now, or None when no job does.

    Probes with a non-blocking lock that it drops at once (the health check uses this).
    """
    path = Path(f"{state_path}.lock")
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return _read(fd) or {"pid": "?"}
    else:
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)


def _read(fd: int) -> dict:
    os.lseek(fd, 0, os.SEEK_SET)
    raw = os.read(fd, 4096).decode("utf-8", errors="replace").strip()
    try:
        return json.loads(raw) if raw else {}
    except ValueError:
        return {"pid": "?", "host": "?", "started": raw[:40]}


def _write(fd: int, text: str) -> None:
    os.ftruncate(fd, 0)
    os.lseek(fd, 0, os.SEEK_SET)
    os.write(fd, text.encode("utf-8"))
    os.fsync(fd)
