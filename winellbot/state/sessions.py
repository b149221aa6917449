"""The review page's sessions, kept in the state so that the server can end them (migration 012).

A reviewer's login starts a session: a random token goes into the page's signed cookie, and its
SHA-256 (never the token itself: a copy of the state logs no one in) is a row of ``review_sessions``
with the reviewer, when it started, when it was last used, and when the reviewer's standing on the
wiki was last read. Every request of a logged-in reviewer is checked against that row
(:meth:`SessionStore.check`): a session ended (logout, a block, a lost right), idle longer than
``idle_s`` or older than ``absolute_s`` logs no one in, whatever the cookie says. Times are seconds
since 1970 of this machine; the same on SQLite and MariaDB, and every process of the page sees the
same rows.
"""
from __future__ import annotations

import hashlib
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass

TOUCH_S = 60.0  # a session's last use is written at most this often (not at every request)


def migrate_012(schema) -> None:
    """Migration 012_review_sessions (``schema``: a :class:`winellbot.state.schema.Schema`)."""
    schema.create("review_sessions", {"id": str, "reviewer": str, "started": float, "seen": float,
                                      "standing_read": float, "ended": float, "ended_why": str}, pk="id")
    schema.create_index("review_sessions", ["reviewer"])


@dataclass(frozen=True)
class Checked:
    """What :meth:`SessionStore.check` found: ``live`` or not (``why`` says why not), and when the
    reviewer's standing was last read (seconds since 1970)."""

    live: bool
    why: str = ""
    standing_read: float = 0.0


def _key(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "replace")).hexdigest()


class SessionStore:
    """The sessions of a :class:`winellbot.state.db.State` (either engine), with their timeouts."""

    def __init__(self, state, *, idle_s: float, absolute_s: float, now: Callable[[], float] = time.time) -> None:
        self.db = state.db
        self.idle_s, self.absolute_s, self.now = idle_s, absolute_s, now

    def start(self, reviewer: str) -> str:
        """A new session for ``reviewer``, whose standing was just read; returns its token."""
        token, at = secrets.token_urlsafe(32), self.now()
        self._write("insert into review_sessions (id, reviewer, started, seen, standing_read) values (?, ?, ?, ?, ?)",
                    [_key(token), reviewer, at, at, at])
        return token

    def check(self, token: str, reviewer: str) -> Checked:
        """Whether the session ``token`` of ``reviewer`` is live now; a live one is marked used (at
        most every :data:`TOUCH_S`), one found past a timeout is ended."""
        if not token:
            return Checked(False, "no session")
        row = self.db.execute("select reviewer, started, seen, standing_read, ended, ended_why from review_sessions "
                              "where id = ?", [_key(token)]).fetchone()
        if row is None or row[0] != reviewer:
            return Checked(False, "the session is not known to the server")
        who, started, seen, standing_read, ended, ended_why = row
        if ended is not None:
            return Checked(False, f"the session ended ({ended_why or 'ended'})")
        now = self.now()
        why = ""
        if now - started > self.absolute_s:
            why = f"the session reached its longest life ({self.absolute_s / 3600:g} h)"
        elif now - seen > self.idle_s:
            why = f"the session was idle longer than {self.idle_s / 60:g} min"
        if why:
            self.end(token, why)
            return Checked(False, why)
        if now - seen >= TOUCH_S:
            self._write("update review_sessions set seen = ? where id = ? and ended is null", [now, _key(token)])
        return Checked(True, standing_read=standing_read or 0.0)

    def standing_read(self, token: str) -> None:
        """Record that the session's reviewer was found in good standing just now."""
        self._write("update review_sessions set standing_read = ? where id = ?", [self.now(), _key(token)])

    def end(self, token: str, why: str) -> None:
        """End one session (a logout, a timeout)."""
        self._write("update review_sessions set ended = ?, ended_why = ? where id = ? and ended is null",
                    [self.now(), why, _key(token)])

    def end_reviewer(self, reviewer: str, why: str) -> int:
        """End every live session of ``reviewer`` (a block, a lost right); returns how many."""
        return self._write("update review_sessions set ended = ?, ended_why = ? where reviewer = ? "
                           "and ended is null", [self.now(), why, reviewer])

    def _write(self, sql: str, args: list) -> int:
        with self.db.atomic():
            return self.db.execute(sql, args).rowcount
