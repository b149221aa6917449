"""The state's database on a server (MariaDB, as ToolsDB is), with the part of sqlite-utils' API the
state uses, so that :class:`winellbot.state.db.State` and its callers read and write either engine
through the same calls.

SQLAlchemy Core, because it is the field's standard layer over both engines: one table definition
compiles to each engine's DDL (winellbot/state/schema.py), and its pool keeps the server's
connections alive (pre-ping, recycle) across the long waits of a bot's cycle; no ORM is used.

Contracts:

- SQL is written once, for both engines: ``?`` placeholders and double-quoted identifiers. Each
  connection runs in ANSI_QUOTES mode, UTC, utf8mb4; ``?`` becomes the driver's ``%s`` here.
- Outside :meth:`SqlDatabase.atomic` each statement commits on its own (as sqlite-utils does);
  inside it, every statement of the thread runs on one connection in one transaction, committed at
  the end or rolled back by an exception; a nested ``atomic`` is a savepoint.
- An error of the server or the driver is a :class:`ServerError` (a StateError) naming the database
  without its password; a duplicate key is a :class:`DuplicateKey`; a server that cannot be reached,
  dropped the connection or did not answer is a :class:`ServerGone` (a StorageError: the cycle stops).
- A server that accepts the connection and never answers is given up on: connecting, and each read
  and write of a statement, wait at most :data:`TIMEOUTS` (``connect_timeout``, ``read_timeout``,
  ``write_timeout`` in the URL's query override them); a lock waited for server-side (a named lock, a
  row's lock) is asked for in steps shorter than the read timeout; the server itself stops any one
  statement after :data:`STATEMENT_S` seconds (MariaDB's ``max_statement_time``).
- Rows are dicts (``query``, ``rows_where``) or tuples (``execute``); a ``sum`` the server returns
  as a decimal comes back as an int (or a float), as SQLite gives it.
"""
from __future__ import annotations

import contextlib
import decimal
import math
import secrets
import threading
import time
from collections.abc import Iterable, Iterator
from types import SimpleNamespace

import sqlalchemy as sa
from sqlite_utils.db import NotFoundError

from winellbot.errors import StateError, StorageError

# innodb_lock_wait_timeout: a row's lock (post claims take one) is waited for less long than a read;
# max_statement_time: the server gives up on any one statement after this many seconds (MariaDB's own
# deadline for a statement's work, which the client's per-read timeouts do not bound).
STATEMENT_S = 30
SESSION_SETUP = ("SET SESSION sql_mode = 'STRICT_TRANS_TABLES,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION,"
                 f"ANSI_QUOTES', time_zone = '+00:00', innodb_lock_wait_timeout = 15, "
                 f"max_statement_time = {STATEMENT_S}")
POOL_RECYCLE_S = 280  # below the shortest idle timeout a shared server is likely to set (ToolsDB's is minutes)
# Seconds PyMySQL waits to connect, and for each read and write of a statement (without them a
# server that accepts the connection and never answers holds a job forever).
TIMEOUTS = {"connect_timeout": 10, "read_timeout": 20, "write_timeout": 20}
LOCK_STEP_S = 5  # a named lock is asked for this long at a time: less than the read timeout
# The driver's codes for a server that cannot be reached, went away or did not answer in time.
GONE_CODES = frozenset({2002, 2003, 2006, 2013, 2055})


class ServerError(StateError):
    """The database server refused a statement or could not be reached."""


class DuplicateKey(ServerError):
    """A row with the same unique key is there already."""


class ServerGone(ServerError, StorageError):
    """The server cannot be reached, dropped the connection, or did not answer within the timeouts."""


def hidden(url: str) -> str:
    """The URL as it may be shown: its password replaced by ``***``."""
    return sa.make_url(url).render_as_string(hide_password=True)


def _driver_sql(sql: str) -> str:
    """``?`` placeholders outside quotes become ``%s``; a literal ``%`` is doubled for the driver."""
    out, quote = [], None
    for ch in sql:
        if quote:
            quote = None if ch == quote else quote
            out.append("%%" if ch == "%" else ch)
        elif ch in "'\"`":
            quote = ch
            out.append(ch)
        else:
            out.append("%s" if ch == "?" else "%%" if ch == "%" else ch)
    return "".join(out)


def _plain(value):
    if isinstance(value, decimal.Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    return value


class Result:
    """A statement's rows, read whole before its connection went back to the pool."""

    def __init__(self, rows: list[tuple], keys: list[str], lastrowid: int | None, rowcount: int) -> None:
        self.rows, self.keys, self.lastrowid, self.rowcount = rows, keys, lastrowid, rowcount
        self._at = 0

    def fetchone(self) -> tuple | None:
        if self._at >= len(self.rows):
            return None
        self._at += 1
        return self.rows[self._at - 1]

    def fetchall(self) -> list[tuple]:
        rest, self._at = self.rows[self._at:], len(self.rows)
        return rest

    def __iter__(self) -> Iterator[tuple]:
        return iter(self.fetchall())


class SqlDatabase:
    """A database on a server at ``url`` (``mysql+pymysql://user:password@host/name``)."""

    engine_name = "mysql"

    def __init__(self, url: str) -> None:
        self.url = url
        given = sa.make_url(url).query
        timeouts = {k: v for k, v in TIMEOUTS.items() if k not in given}
        self.engine = sa.create_engine(
            url, pool_pre_ping=True, pool_recycle=POOL_RECYCLE_S, isolation_level="AUTOCOMMIT",
            connect_args={"charset": "utf8mb4", "init_command": SESSION_SETUP, **timeouts})
        self._local = threading.local()

    # -- connections and transactions ----------------------------------------------------------
    @property
    def conn(self) -> SqlDatabase:
        """Stands in for sqlite-utils' connection where callers only close it."""
        return self

    def close(self) -> None:
        self.engine.dispose()

    @contextlib.contextmanager
    def _connection(self) -> Iterator[sa.Connection]:
        held = getattr(self._local, "conn", None)
        if held is not None:
            yield held
            return
        with self._errors(), self.engine.connect() as conn:
            yield conn

    @contextlib.contextmanager
    def _errors(self) -> Iterator[None]:
        try:
            yield
        except sa.exc.DBAPIError as exc:
            code = exc.orig.args[0] if exc.orig is not None and exc.orig.args else None
            if code in GONE_CODES:
                raise ServerGone(f"the state database {hidden(self.url)}: {exc.orig}: check that the server is up "
                                 "and reachable, and run again") from exc
            kind = DuplicateKey if code == 1062 else ServerError
            raise kind(f"the state database {hidden(self.url)}: {exc.orig or exc}") from exc

    @contextlib.contextmanager
    def atomic(self) -> Iterator[SqlDatabase]:
        held = getattr(self._local, "conn", None)
        if held is not None:
            savepoint = f"sp_{secrets.token_hex(8)}"
            held.exec_driver_sql(f"SAVEPOINT {savepoint}")
            try:
                yield self
            except BaseException:
                held.exec_driver_sql(f"ROLLBACK TO SAVEPOINT {savepoint}")
                raise
            held.exec_driver_sql(f"RELEASE SAVEPOINT {savepoint}")
            return
        with self._errors(), self.engine.connect() as conn:
            conn.exec_driver_sql("START TRANSACTION")
            self._local.conn = conn
            try:
                yield self
            except BaseException:
                conn.exec_driver_sql("ROLLBACK")
                raise
            else:
                conn.exec_driver_sql("COMMIT")
            finally:
                self._local.conn = None

    @contextlib.contextmanager
    def named_lock(self, name: str, timeout_s: int = 120) -> Iterator[None]:
        """Hold the server's named lock ``name`` (per database) on a connection of its own, waiting
        up to ``timeout_s`` (asked for :data:`LOCK_STEP_S` at a time, each wait shorter than a read's
        timeout); released at the end, or by the server when the connection drops."""
        with self._errors(), self.engine.connect() as conn:
            deadline = time.monotonic() + timeout_s
            while True:
                step = max(0, min(LOCK_STEP_S, math.ceil(deadline - time.monotonic())))
                got = conn.exec_driver_sql("select get_lock(concat(database(), '.', %s), %s)", (name, step)).scalar()
                if got == 1:
                    break
                if time.monotonic() >= deadline:
                    raise TimeoutError(f"the database's lock {name!r} was not free within {timeout_s} s")
            try:
                yield
            finally:
                conn.exec_driver_sql("select release_lock(concat(database(), '.', %s))", (name,))

    # -- statements ------------------------------------------------------------------------------
    def execute(self, sql: str, params: Iterable | None = None) -> Result:
        if isinstance(params, dict):
            raise TypeError("named parameters are not supported: use ? placeholders")
        with self._connection() as conn, self._errors():
            res = conn.exec_driver_sql(_driver_sql(sql), tuple(params or ()))
            if res.returns_rows:
                keys = list(res.keys())
                rows = [tuple(_plain(v) for v in row) for row in res.fetchall()]
            else:
                keys, rows = [], []
            return Result(rows, keys, res.lastrowid, res.rowcount)

    def query(self, sql: str, params: Iterable | None = None) -> Iterator[dict]:
        res = self.execute(sql, params)
        return (dict(zip(res.keys, row)) for row in res.rows)

    def table_names(self) -> list[str]:
        return [r[0] for r in self.execute("select table_name from information_schema.tables "
                                           "where table_schema = database() order by table_name").rows]

    def __getitem__(self, name: str) -> SqlTable:
        return SqlTable(self, name)


class SqlTable:
    """One table, with the sqlite-utils ``Table`` calls the state makes."""

    def __init__(self, db: SqlDatabase, name: str) -> None:
        self.db, self.name = db, name
        self.last_pk = None

    @property
    def _q(self) -> str:
        return f'"{self.name}"'

    @property
    def columns(self) -> list[SimpleNamespace]:
        rows = self.db.execute("select column_name, data_type from information_schema.columns where table_schema "
                               "= database() and table_name = ? order by ordinal_position", [self.name]).rows
        return [SimpleNamespace(name=r[0], type=r[1]) for r in rows]

    @property
    def pks(self) -> list[str]:
        rows = self.db.execute("select column_name from information_schema.key_column_usage where table_schema = "
                               "database() and table_name = ? and constraint_name = 'PRIMARY' order by "
                               "ordinal_position", [self.name]).rows
        return [r[0] for r in rows]

    def exists(self) -> bool:
        return self.name in self.db.table_names()

    # -- reading -----------------------------------------------------------------------------------
    def rows_where(self, where: str | None = None, where_args: Iterable | None = None, order_by: str | None = None,
                   select: str = "*", limit: int | None = None, offset: int | None = None) -> Iterator[dict]:
        sql = f"select {select} from {self._q}" + (f" where {where}" if where else "")
        sql += (f" order by {order_by}" if order_by else "") + (f" limit {int(limit)}" if limit is not None else "")
        sql += f" offset {int(offset)}" if offset is not None else ""
        return self.db.query(sql, where_args)

    @property
    def rows(self) -> Iterator[dict]:
        return self.rows_where()

    def count_where(self, where: str | None = None, where_args: Iterable | None = None) -> int:
        sql = f"select count(*) from {self._q}" + (f" where {where}" if where else "")
        return self.db.execute(sql, where_args).fetchone()[0]

    @property
    def count(self) -> int:
        return self.count_where()

    def get(self, pk_value) -> dict:
        [pk] = self.pks
        rows = list(self.rows_where(f'"{pk}" = ?', [pk_value]))
        if not rows:
            raise NotFoundError(pk_value)
        return rows[0]

    # -- writing -----------------------------------------------------------------------------------
    def insert(self, record: dict, pk=None, *, ignore: bool = False, alter: bool = False, **_) -> SqlTable:
        """Insert one row; ``ignore`` leaves an existing row with the same key as it is."""
        if alter:
            self._add_missing_columns([record])
        cols = list(record)
        sql = (f"insert into {self._q} ({', '.join(f'{chr(34)}{c}{chr(34)}' for c in cols)}) "
               f"values ({', '.join('?' * len(cols))})")
        if ignore:
            first = (pk if isinstance(pk, str) else None) or self.pks[0]
            sql += f' on duplicate key update "{first}" = "{first}"'
        res = self.db.execute(sql, [record[c] for c in cols])
        key = pk if isinstance(pk, str) else None
        self.last_pk = record.get(key) if key and record.get(key) is not None else res.lastrowid
        return self

    def insert_all(self, records: Iterable[dict], pk=None, *, ignore: bool = False, alter: bool = False,
                   **_) -> SqlTable:
        records = list(records)
        if alter:
            self._add_missing_columns(records)
        with self.db.atomic():
            for record in records:
                self.insert(record, pk, ignore=ignore)
        return self

    def upsert(self, record: dict, pk=None, *, alter: bool = False, **_) -> SqlTable:
        """Insert the row, or update the given columns of the row with the same key."""
        if alter:
            self._add_missing_columns([record])
        cols = list(record)
        key = pk if isinstance(pk, str) else self.pks[0]
        rest = [c for c in cols if c != key] or [key]
        sql = (f"insert into {self._q} ({', '.join(f'{chr(34)}{c}{chr(34)}' for c in cols)}) "
               f"values ({', '.join('?' * len(cols))}) on duplicate key update "
               + ", ".join(f'"{c}" = values("{c}")' for c in rest))
        self.db.execute(sql, [record[c] for c in cols])
        self.last_pk = record.get(key)
        return self

    def update(self, pk_value, updates: dict | None = None, *, alter: bool = False, **_) -> SqlTable:
        """Set ``updates`` on the row whose key is ``pk_value``; NotFoundError when there is none."""
        [pk] = self.pks
        updates = updates or {}
        if alter:
            self._add_missing_columns([updates])
        if updates:
            sets = ", ".join(f'"{c}" = ?' for c in updates)
            res = self.db.execute(f'update {self._q} set {sets} where "{pk}" = ?', [*updates.values(), pk_value])
            if res.rowcount:
                self.last_pk = pk_value
                return self
        self.get(pk_value)  # raises NotFoundError
        self.last_pk = pk_value
        return self

    def add_missing_columns(self, records: list[dict]) -> SqlTable:
        """Add the columns ``records`` have and the table lacks (as sqlite-utils' method of that name). An ALTER
        TABLE commits the transaction open on its connection: call it before one, never inside."""
        self._add_missing_columns(records)
        return self

    def _add_missing_columns(self, records: list[dict]) -> None:
        have = {c.name for c in self.columns}
        for record in records:
            for name, value in record.items():
                if name in have:
                    continue
                kind = "BIGINT" if isinstance(value, (bool, int)) else "DOUBLE" if isinstance(value, float) else "LONGTEXT"
                self.db.execute(f'alter table {self._q} add column "{name}" {kind}')
                have.add(name)
