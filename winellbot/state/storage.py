"""The state's SQLite file, opened so that a failure of the file is one line: which file, what happened, what to do.

Every connection the state makes to its file (:func:`connect`) is a :class:`StateConnection`. An
error of the file itself, raised by any statement, row read, commit or backup of that connection, is
a :class:`winellbot.errors.StorageError` naming the file and what to do: a damaged file or one that
is not a database, a file or folder the bot may not write, a full or failing disk, a file another
process held for longer than the busy timeout. The other errors of SQLite (a statement's own, some of
which sqlite-utils catches and handles itself) are left as they are.

:func:`failure` words the same line for an error raised while the file is opened.
"""
from __future__ import annotations

import contextlib
import errno
import sqlite3
from collections.abc import Iterator

import sqlite_utils

from winellbot.errors import StorageError

DAMAGED = "the file is damaged: restore it from a backup, or move it aside and the next run starts a new state"
NOT_WRITABLE = ("the bot cannot write it: give the user the bot runs as write access to the file and to its folder "
                "(SQLite writes its journal beside it)")
# SQLite's primary result codes (https://sqlite.org/rescode.html) that mean the file cannot be used.
ADVICE = {
    "SQLITE_CORRUPT": DAMAGED,
    "SQLITE_NOTADB": DAMAGED,
    "SQLITE_READONLY": NOT_WRITABLE,
    "SQLITE_PERM": NOT_WRITABLE,
    "SQLITE_CANTOPEN": "it cannot be opened: check that its folder exists and that the bot may write the file and "
                       "the folder",
    "SQLITE_FULL": "its disk is full: free space there, then run again",
    "SQLITE_IOERR": "its disk failed to read or write it: check the disk and its free space, then run again",
    "SQLITE_BUSY": "another process held it for longer than the busy timeout (30 s): see which one (a second job, a "
                   "copy, a backup) and run again when it is done",
}


def advice(exc: BaseException) -> str:
    """What to do about ``exc``, an error of the state's file; "" when it is not one."""
    if isinstance(exc, OSError):
        return "check that the path is right and that the bot may read and write its folder"
    name = getattr(exc, "sqlite_errorname", "") or ""
    kind = "_".join(name.split("_")[:2])
    if kind == "SQLITE_BUSY" and "locked" not in str(exc):
        return ""  # "statements in progress": a use of the connection, handled where it happens
    return ADVICE.get(kind, "")


def failure(path: str, exc: BaseException, *, opening: bool = False) -> StorageError:
    """One line for ``exc``, an error of the state's file at ``path``."""
    what = f"cannot open state database {path}" if opening else f"the state database {path} failed"
    return StorageError(f"{what}: {exc}: {advice(exc) or DAMAGED}")


# The errors of a file the bot keeps beside the state (Pywikibot's cookie jar, throttle file, API cache).
FILE_ERRNOS = {errno.ENOSPC: "its disk is full: free space there, then run again",
               errno.EDQUOT: "the disk quota is spent: free space there, then run again",
               errno.EROFS: NOT_WRITABLE, errno.EACCES: NOT_WRITABLE, errno.EPERM: NOT_WRITABLE,
               errno.EIO: "its disk failed to read or write it: check the disk and its free space, then run again"}


def file_failure(exc: BaseException, what: str, folder: str = "") -> StorageError | None:
    """One line for ``exc`` when it is an error of a file of ``what`` (e.g. "Pywikibot's files beside the
    state", in ``folder``) such as a full disk; None for any other error (a network error is an OSError too)."""
    if not isinstance(exc, OSError) or isinstance(exc, ConnectionError) or exc.errno not in FILE_ERRNOS:
        return None
    where = getattr(exc, "filename", None) or folder
    where = f" ({where})" if where else ""
    return StorageError(f"{what}{where} could not be written: {exc.strerror or exc}: {FILE_ERRNOS[exc.errno]}")


class _Guard:
    """Turns the file's errors into :func:`failure`'s line for the connection at ``path``."""

    def __init__(self, path: str) -> None:
        self.path = path

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind, exc, tb) -> bool:
        if isinstance(exc, sqlite3.Error) and advice(exc):
            raise failure(self.path, exc) from exc
        return False


class StateCursor(sqlite3.Cursor):
    """A cursor of a :class:`StateConnection`: its errors of the file are StorageErrors."""

    def _guard(self) -> _Guard:
        return _Guard(self.connection.state_path)

    def execute(self, sql, parameters=(), /):
        with self._guard():
            return super().execute(sql, parameters)

    def executemany(self, sql, seq_of_parameters, /):
        with self._guard():
            return super().executemany(sql, seq_of_parameters)

    def executescript(self, sql_script, /):
        with self._guard():
            return super().executescript(sql_script)

    def fetchone(self):
        with self._guard():
            return super().fetchone()

    def fetchmany(self, size: int = 1):
        with self._guard():
            return super().fetchmany(size)

    def fetchall(self):
        with self._guard():
            return super().fetchall()

    def __next__(self):
        with self._guard():
            return super().__next__()


class StateConnection(sqlite3.Connection):
    """A connection to the state's file whose errors of the file are StorageErrors naming it."""

    state_path = ":memory:"

    def cursor(self, factory=StateCursor):
        return super().cursor(factory)

    def execute(self, sql, parameters=(), /):
        return self.cursor().execute(sql, parameters)

    def executemany(self, sql, seq_of_parameters, /):
        return self.cursor().executemany(sql, seq_of_parameters)

    def executescript(self, sql_script, /):
        return self.cursor().executescript(sql_script)

    def commit(self) -> None:
        with _Guard(self.state_path):
            super().commit()

    def rollback(self) -> None:
        with _Guard(self.state_path):
            super().rollback()

    def backup(self, target, **kwargs) -> None:
        with _Guard(self.state_path):
            super().backup(target, **kwargs)


class StateDatabase(sqlite_utils.Database):
    """sqlite-utils' ``Database`` whose outermost :meth:`atomic` takes the file's write lock as it begins.

    A transaction begun with a plain ``BEGIN`` that reads, then writes, fails at its first write, at
    once and whatever the busy timeout, if another process wrote in between (SQLite's
    ``SQLITE_BUSY_SNAPSHOT``: a real job died so beside dry runs keeping their cost). ``BEGIN
    IMMEDIATE`` waits for the lock instead, up to the busy timeout, and then holds it to the end.
    A nested ``atomic`` is a savepoint, as in sqlite-utils.
    """

    @contextlib.contextmanager
    def atomic(self) -> Iterator[StateDatabase]:
        if self.conn.in_transaction:
            with super().atomic():
                yield self
            return
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            yield self
        except BaseException:
            self.conn.rollback()
            raise
        try:
            self.conn.execute("COMMIT")
        except BaseException:
            self.conn.rollback()
            raise


def connect(path: str, database: str | None = None, **kwargs) -> StateConnection:
    """A :class:`StateConnection` to the state at ``path`` (``database``: what to open instead, a URI)."""
    conn = sqlite3.connect(database or path, factory=StateConnection, **kwargs)
    conn.state_path = path
    return conn
