"""The DDL of the state's migrations, for SQLite or MariaDB, written by SQLAlchemy Core.

A migration (winellbot/state/migrations.py) says what it wants in the terms sqlite-utils uses
(``create(name, {column: str | int | float}, pk=...)``, ``add_column``, ``create_index``); a
:class:`Schema` compiles that to the engine's own DDL and runs it on the state's database. Every
step is idempotent (``if not exists``, a column added only when missing), since MariaDB commits each
DDL statement on its own: a migration cut short there is finished by the next open.

Types on MariaDB: a string key is ``VARCHAR(768)`` (InnoDB's longest key, 3,072 bytes, in utf8mb4),
any other string ``LONGTEXT`` (indexed by its first 191 characters), an integer ``BIGINT``, a float
``DOUBLE``; tables are InnoDB, utf8mb4 with the binary collation (titles differ by case, as on the
wiki). On SQLite they are ``TEXT``, ``INTEGER`` (an integer key is the rowid) and ``FLOAT``, as
sqlite-utils made them. A MariaDB table made with ``rowid=True`` gets the ``rowid`` column SQLite
gives every table (the order rows were inserted in), for the queries that order by it. A key that
must hold longer text (:meth:`Schema.unbounded_key`) is ``LONGTEXT`` kept unique by its SHA-256.
"""
from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy.dialects import mysql, sqlite

KEY_CHARS = 768
INDEX_PREFIX_CHARS = 191
MYSQL_TABLE = {"mysql_engine": "InnoDB", "mysql_charset": "utf8mb4", "mysql_collate": "utf8mb4_bin"}
TEXT_TYPES = frozenset({"text", "tinytext", "mediumtext", "longtext"})


class Schema:
    """Runs DDL on ``db`` (a sqlite-utils ``Database`` or a :class:`winellbot.state.sqldb.SqlDatabase`)."""

    def __init__(self, db) -> None:
        self.db = db
        self.mysql = getattr(db, "engine_name", "sqlite") == "mysql"
        self.dialect = mysql.dialect() if self.mysql else sqlite.dialect()

    def _type(self, kind: type, key: bool) -> sa.types.TypeEngine:
        if kind is int:
            return sa.BigInteger() if self.mysql else sa.Integer()
        if kind is float:
            return mysql.DOUBLE() if self.mysql else sa.Float()
        if kind is str:
            return (sa.String(KEY_CHARS) if key else mysql.LONGTEXT()) if self.mysql else sa.Text()
        raise TypeError(f"no column type for {kind!r}")

    def _run(self, ddl) -> None:
        self.db.execute(str(ddl.compile(dialect=self.dialect)).strip())

    def create(self, name: str, columns: dict[str, type], pk: str, *, rowid: bool = False) -> None:
        """Create table ``name`` unless it exists; an integer ``pk`` numbers new rows itself."""
        cols = [sa.Column(c, self._type(kind, c == pk), primary_key=c == pk,
                          autoincrement=c == pk and kind is int) for c, kind in columns.items()]
        self._run(sa.schema.CreateTable(sa.Table(name, sa.MetaData(), *cols, **MYSQL_TABLE), if_not_exists=True))
        if rowid and self.mysql and "rowid" not in self._columns(name):
            self.db.execute(f'alter table "{name}" add column "rowid" BIGINT NOT NULL AUTO_INCREMENT UNIQUE')

    def add_column(self, table: str, name: str, kind: type) -> None:
        if name in self._columns(table):
            return
        q = self.dialect.identifier_preparer.quote
        column_type = self._type(kind, False).compile(dialect=self.dialect)
        self.db.execute(f"ALTER TABLE {q(table)} ADD COLUMN {q(name)} {column_type}")

    def create_index(self, table: str, columns: list[str]) -> None:
        """An index named as sqlite-utils names it (``idx_TABLE_COL_COL``)."""
        types = self._columns(table)
        cols = [sa.Column(c, sa.Text()) for c in columns]
        sa.Table(table, sa.MetaData(), *cols)
        prefix = {c: INDEX_PREFIX_CHARS for c in columns if types.get(c, "") in TEXT_TYPES} if self.mysql else {}
        index = sa.Index(f"idx_{table}_{'_'.join(columns)}", *cols, mysql_length=prefix)
        self._run(sa.schema.CreateIndex(index, if_not_exists=True))

    def unbounded_key(self, table: str, column: str) -> None:
        """Let the string key ``column`` of ``table`` hold text of any length (a long URL).

        On MariaDB, where a key holds at most :data:`KEY_CHARS` characters, the column becomes
        ``LONGTEXT``, unique by the SHA-256 of its value (a stored generated column
        ``{column}_sha256`` with a unique index, so ``on duplicate key update`` finds the row), read
        through a prefix index; the primary key becomes an auto-increment ``rowid`` (the order rows
        were inserted in). Both new columns are invisible: ``select *`` reads the columns SQLite
        has. One ``ALTER TABLE``, skipped once done. On SQLite, whose keys have no limit, nothing changes.
        """
        if not self.mysql or self._columns(table).get(column) in TEXT_TYPES:
            return
        self.db.execute(
            f'alter table "{table}" add column "rowid" BIGINT NOT NULL AUTO_INCREMENT INVISIBLE, '
            f'add column "{column}_sha256" BINARY(32) AS (unhex(sha2("{column}", 256))) PERSISTENT INVISIBLE, '
            f'modify "{column}" LONGTEXT NOT NULL, drop primary key, add primary key ("rowid"), '
            f'add unique key "uq_{table}_{column}" ("{column}_sha256")')
        self.create_index(table, [column])

    def _columns(self, table: str) -> dict[str, str]:
        """The table's columns and their types, lower case."""
        return {c.name: str(c.type).lower() for c in self.db[table].columns}
