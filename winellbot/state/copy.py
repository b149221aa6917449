"""A SQLite state copied into an empty MariaDB database (``winellbot state copy``).

Contracts of :func:`copy_state`:

- The SQLite file is only read. The copy holds the file's job lock throughout (no job starts
  meanwhile) and refuses while a job holds it, since that job's rows would change under the copy.
- A file that is not a winellbot state (an empty file, another program's database) or that does not
  read whole (SQLite's ``quick_check``) is refused in one line: nothing is copied, nothing reported as copied.
- A file of an older schema is copied to a temporary file, which is migrated forward and read
  instead (the file itself never changes); a file of a newer winellbot is refused.
- The target is refused, before anything is written to it, when any of its tables other than
  ``_migrations`` holds a row. It is then migrated to the latest schema, and the columns the file
  has beyond the schema (added by ``alter=True`` writes) are added to it.
- A value too long for a key column of the target is reported, row by row, before any row is written.
- A source's text the bot did not read (over the reading cap: winellbot/text.py) is copied as the bot
  keeps such a text now: none of it, the reason in ``error`` (the report counts them). A row larger than
  the server takes in one statement (its ``max_allowed_packet``) stops the copy with one line naming the
  row, and nothing is copied; rows go in statements of at most a quarter of that size.
- Every table, parents first, is copied in batches inside one transaction, with its keys and ids
  as they are (SQLite's ``rowid`` goes into the target's ``rowid`` column where there is one); the
  server's auto-increment counters continue after the largest id. Each table's count is checked
  against the file's in that transaction, which a mismatch rolls back: a copy that stops halfway
  leaves the target without rows, and can simply be run again.
- Messages name the target with its password hidden.
"""
from __future__ import annotations

import contextlib
import sqlite3
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import sqlalchemy as sa

from winellbot.errors import ConfigError, NoStateYet, StateError, StorageError
from winellbot.state.db import State
from winellbot.state.lock import JobLock, holder
from winellbot.state.migrations import MIGRATIONS
from winellbot.state.schema import Schema
from winellbot.state.sqldb import SqlDatabase, hidden
from winellbot.text import kept_text

# Parents before the rows that name them (the schema declares no foreign keys; this order would keep
# a copy valid if it did). Tables not named here follow in alphabetical order.
ORDER = ("runs", "pages", "sources", "updates", "steps", "decisions", "suggestions", "gate_results", "posts",
         "post_claims", "post_caps", "review_pages", "outcomes", "verdicts", "outcome_pages", "llm_calls",
         "llm_cache", "errors")
BATCH_ROWS = 500
BATCH_BYTES = 4_000_000  # at most; and at most a quarter of the server's max_allowed_packet
PACKET_MARGIN = 65_536  # a statement's own text beside one row's values
SHOWN_TOO_LONG = 5


@dataclass
class CopyReport:
    """What was copied: each table's rows, in the order copied."""

    source: str
    target: str
    tables: list[tuple[str, int]] = field(default_factory=list)
    seconds: float = 0.0
    unread_texts: int = 0  # sources' texts the bot never read, not copied (see the module docstring)

    @property
    def rows(self) -> int:
        return sum(n for _, n in self.tables)


@dataclass
class _Table:
    name: str
    columns: list[str]  # the file's columns, as read and written
    rowid: bool  # SQLite's rowid is carried into the target's rowid column


def copy_state(path: str | Path, url: str) -> CopyReport:
    """Copy the SQLite state at ``path`` into the empty MariaDB database at ``url`` (see the module docstring)."""
    _check_url(url)
    if not Path(path).is_file():
        raise StateError(f"no state database at {path}")
    who = holder(path)
    if who:
        raise StateError(f"a winellbot job (pid {who.get('pid')} on {who.get('host')}, {who.get('command')}, started "
                         f"{who.get('started')}) holds the state {path}: stop it before copying, since its rows "
                         "would change under the copy")
    started = time.monotonic()
    with JobLock(path), _readable(path) as source:
        _refuse_rows(url)
        target = State(url=url)
        try:
            tables = _plan(source, target)
            report = CopyReport(str(path), target.path)
            report.tables = _copy(source, target, tables, report)
        finally:
            target.db.close()
    report.seconds = time.monotonic() - started
    return report


def _check_url(url: str) -> None:
    try:
        backend = sa.make_url(url).get_backend_name()
    except sa.exc.ArgumentError:
        backend = ""
    if backend != "mysql":
        raise ConfigError("state copy: the target must be a MariaDB URL, mysql+pymysql://USER:PASSWORD@HOST/DATABASE "
                          "(or with ?read_default_file=~/replica.my.cnf)")


@contextlib.contextmanager
def _readable(path: str | Path) -> Iterator[sqlite3.Connection]:
    """A connection to the state at ``path`` in the latest schema: the file's own, read-only, inside one
    read transaction; or, for a file of an older schema, a migrated copy of it that no one else writes.
    A file that is not a state, or does not read whole, is refused."""
    try:
        state = State(path, readonly=True)
    except NoStateYet as exc:
        raise StorageError(f"{path} holds no winellbot state (no tables: an empty file?); nothing was copied") from exc
    conn: sqlite3.Connection = state.db.conn
    try:
        _check_whole(path, conn)
        have = {r[0] for r in conn.execute("select name from _migrations")}
        known = [name for name, _ in MIGRATIONS]
        newer = sorted(have - set(known))
        if newer:
            raise StateError(f"the state {path} was made by a newer winellbot (migrations {', '.join(newer)}); "
                             "copy it with that version")
        if set(known) <= have:
            conn.execute("begin")
            yield conn
            return
        with tempfile.TemporaryDirectory(prefix="winellbot-copy-") as folder:
            older = Path(folder) / "state.sqlite"
            with contextlib.closing(sqlite3.connect(older)) as plain:
                conn.backup(plain)
            migrated = State(older)  # brought forward here; the file at path is left as it was
            try:
                yield migrated.db.conn
            finally:
                migrated.db.conn.close()
    finally:
        conn.close()


def _check_whole(path: str | Path, conn: sqlite3.Connection) -> None:
    """Refuse a file that does not read whole (SQLite's quick check of every page, index and row)."""
    try:
        found = [line for r in conn.execute("pragma quick_check(5)") for line in r[0].splitlines() if line.strip()]
    except StorageError as exc:
        raise StorageError(f"{exc}; nothing was copied") from exc
    if found != ["ok"]:
        raise StorageError(f"the state {path} is damaged ({'; '.join(found)}): restore it from a backup; nothing was "
                           "copied")


def _refuse_rows(url: str) -> None:
    """Refuse a target that holds any row outside ``_migrations``, before anything is written to it."""
    db = SqlDatabase(url)
    try:
        full = {t: n for t in db.table_names() if t != "_migrations" and (n := db[t].count)}
    finally:
        db.close()
    if full:
        held = ", ".join(f"{t} {n}" for t, n in sorted(full.items()))
        raise StateError(f"the database {hidden(url)} already holds rows ({held}): state copy writes only into a "
                         "database without rows; nothing was copied")


def _plan(source: sqlite3.Connection, target: State) -> list[_Table]:
    """The tables to copy, parents first; adds to the target the columns only the file has, and
    refuses values too long for the target's key columns."""
    names = [r[0] for r in source.execute("select name from sqlite_master where type = 'table' and name not like "
                                          "'sqlite_%' and name != '_migrations'")]
    unknown = sorted(set(names) - set(target.db.table_names()))
    if unknown:
        raise StateError(f"the state has tables this winellbot does not know ({', '.join(unknown)}); "
                         "nothing was copied")
    names.sort(key=lambda n: (ORDER.index(n) if n in ORDER else len(ORDER), n))
    tables, too_long = [], []
    for name in names:
        info = source.execute(f'pragma table_info("{name}")').fetchall()  # (cid, name, type, notnull, default, pk)
        have = {c.name for c in target.db[name].columns}
        table = _Table(name, [c[1] for c in info], "rowid" in have and "rowid" not in {c[1] for c in info})
        too_long += _too_long(source, target, table)
        tables.append((table, [(c[1], c[2]) for c in info if c[1] not in have]))
    if too_long:
        shown = "; ".join(too_long[:SHOWN_TOO_LONG]) + ("; ..." if len(too_long) > SHOWN_TOO_LONG else "")
        raise StateError(f"{len(too_long)} value(s) are longer than the server's key columns allow: {shown}; "
                         "nothing was copied")
    schema = Schema(target.db)
    for table, missing in tables:
        for column, declared in missing:
            schema.add_column(table.name, column, _kind(declared))
    return [table for table, _ in tables]


def _too_long(source: sqlite3.Connection, target: State, table: _Table) -> list[str]:
    """The file's values in ``table`` longer than the target's varchar columns hold, described."""
    limits = target.db.execute(
        "select column_name, character_maximum_length from information_schema.columns where table_schema = "
        "database() and table_name = ? and data_type = 'varchar'", [table.name]).rows
    found = []
    for column, limit in limits:
        if column not in table.columns:
            continue
        for rowid, length in source.execute(f'select rowid, length("{column}") from "{table.name}" where '
                                            f'length("{column}") > ? order by rowid', [limit]):
            found.append(f"{table.name}.{column} of row {rowid} has {length} characters (at most {limit})")
    return found


def _kind(declared: str) -> type:
    declared = declared.upper()
    if "INT" in declared:
        return int
    return float if any(k in declared for k in ("REAL", "FLOA", "DOUB")) else str


def _copy(source: sqlite3.Connection, target: State, tables: list[_Table],
          report: CopyReport) -> list[tuple[str, int]]:
    """Every table's rows in one transaction, each count checked before the commit."""
    packet = int(target.db.execute("select @@max_allowed_packet").fetchone()[0])
    limit = min(BATCH_BYTES, packet // 4)
    copied = []
    with target.db.atomic():
        for table in tables:
            columns = (["rowid"] if table.rowid else []) + table.columns
            select = ", ".join(f'"{c}"' for c in columns)
            rows = source.execute(f'select {select} from "{table.name}" order by rowid')
            rows = _kept(table, columns, rows, report) if table.name == "sources" else rows
            written = sum(_insert(target.db, table.name, columns, batch)
                          for batch in _batches(table.name, columns[0], rows, limit, packet - PACKET_MARGIN))
            expected = source.execute(f'select count(*) from "{table.name}"').fetchone()[0]
            landed = target.db[table.name].count
            if not written == expected == landed:
                raise StateError(f"{table.name}: {expected} rows in the file, {written} written, {landed} in the "
                                 "database; the copy was rolled back")
            copied.append((table.name, landed))
    return copied


def _kept(table: _Table, columns: list[str], rows: Iterator[tuple], report: CopyReport) -> Iterator[tuple]:
    """The rows of ``sources`` with a text the bot did not read as the bot keeps it now (winellbot/text.py)."""
    if "text" not in columns or "error" not in columns:
        yield from rows
        return
    at, why_at = columns.index("text"), columns.index("error")
    for row in rows:
        text, why = kept_text(row[at]) if isinstance(row[at], str) else (row[at], None)
        if why:
            report.unread_texts += 1
            row = tuple(text if i == at else (v or why) if i == why_at else v for i, v in enumerate(row))
        yield row


def _size(row: tuple) -> int:
    """The bytes ``row`` takes in a statement (its text as UTF-8; a number as its digits)."""
    return sum(len(v.encode("utf-8")) if isinstance(v, str) else len(v) if isinstance(v, bytes) else 24 for v in row)


def _batches(table: str, key: str, rows: Iterator[tuple], limit: int, most: int) -> Iterator[list[tuple]]:
    """``rows`` in batches of at most :data:`BATCH_ROWS` and ``limit`` bytes; a row over ``most`` bytes (what
    the server takes in one statement) stops the copy."""
    batch, size = [], 0
    for row in rows:
        n = _size(row)
        if n > most:
            raise StateError(f"{table}: the row whose {key} is {str(row[0])[:100]!r} holds {n:,} bytes, more than the "
                             "server takes in one statement "
                             f"(its max_allowed_packet, {most + PACKET_MARGIN:,} bytes): raise it on the server, or "
                             "remove the row from the file; nothing was copied")
        if batch and (len(batch) >= BATCH_ROWS or size + n > limit):
            yield batch
            batch, size = [], 0
        batch.append(row)
        size += n
    if batch:
        yield batch


def _insert(db, table: str, columns: list[str], rows: list[tuple]) -> int:
    one = "(" + ", ".join("?" * len(columns)) + ")"
    names = ", ".join(f'"{c}"' for c in columns)
    db.execute(f'insert into "{table}" ({names}) values ' + ", ".join([one] * len(rows)), [v for r in rows for v in r])
    return len(rows)
