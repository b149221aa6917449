"""The bot's state: SQLite through sqlite-utils (the default), or MariaDB (``[state] url``).

On MariaDB the database object is a :class:`winellbot.state.sqldb.SqlDatabase`, which answers the
sqlite-utils calls made here through SQLAlchemy Core (why that layer: see that module), so every
method below runs its same SQL on either engine. SQLAlchemy is imported only for MariaDB or to
apply a migration: an up-to-date SQLite state opens as fast as before (``winellbot health`` runs
every 10 s). Schema changes are named migrations (winellbot/state/migrations.py) applied in order
and recorded in ``_migrations``; a database made by an older version is brought forward on open.
Every write of the pipeline's output happens in one transaction, so a crash leaves either all of a
page's findings or none.
"""
from __future__ import annotations

import dataclasses
import datetime as dt
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import sqlite_utils

from winellbot import clock
from winellbot.errors import NoStateYet, StateError, StorageError
from winellbot.models import Citation, Document, Edit, GateFinding, PipelineResult, Suggestion, Update
from winellbot.state.leases import mark_stale_runs
from winellbot.state.migrations import MIGRATIONS
from winellbot.state.posts import close_claims
from winellbot.state.storage import StateDatabase, connect, failure

BUSY_TIMEOUT_MS = 30_000  # a reader (status) or a dry run waits this long for a writer
# Filesystems where several machines share the file: SQLite's WAL needs shared memory
# between all its users, which these cannot give (Toolforge's home is NFS).
NETWORK_FILESYSTEMS = frozenset({"nfs", "nfs4", "cifs", "smb3", "smbfs", "ncpfs", "afs", "ceph", "glusterfs",
                                 "fuse.glusterfs", "fuse.sshfs", "fuse.s3fs", "9p", "lustre", "gpfs", "beegfs",
                                 "fuse.cephfs", "virtiofs"})
SUGGESTION_STATUSES = ("proposed", "approved", "held", "posted", "accepted", "rejected", "withdrawing", "withdrawn")


@dataclass(frozen=True)
class Measured:
    """What the bot measured of a new suggestion, kept for the review queue (state/reviews.py): the
    acceptability estimate, the measurements it was made from, and the wiki the suggestion is for."""

    estimate: float | None = None
    features: dict | None = None
    wiki: str = ""


def now() -> str:
    return clock.stamp()


class State:
    """The one place state is read and written.

    ``url`` (``mysql+pymysql://user:password@host/database``) puts the state on MariaDB; without
    it the state is the SQLite file at ``path``. ``readonly`` opens an existing database for
    reading only (``winellbot status``): nothing is created or migrated. ``journal_mode`` (SQLite)
    is "auto" (WAL on a local disk, DELETE on a network filesystem, where WAL's shared memory does
    not work), or a mode SQLite knows.
    """

    def __init__(self, path: str | Path = ":memory:", *, readonly: bool = False,
                 journal_mode: str = "auto", url: str | None = None) -> None:
        if url:
            self._open_server(url, readonly)
            return
        self.path, self.engine = str(path), "sqlite"
        memory = self.path == ":memory:"
        try:
            if readonly:
                self.db = sqlite_utils.Database(_connect_readonly(self.path))
                self._check_made()
                return
            if not memory:
                Path(path).parent.mkdir(parents=True, exist_ok=True)
                if not Path(path).exists():
                    # A new file has every migration to apply: SQLAlchemy (about 0.4 s) is loaded before the
                    # file appears, so that a reader finds it without its tables only for moments.
                    # lazy: SQLAlchemy is for new files and servers only (see the module docstring)
                    import winellbot.state.schema  # noqa: F401
            # One connection, used by whichever thread runs the job's work (a running job's cycles and its
            # posts of approved suggestions run in the scheduler's threads, one at a time: scheduler.py).
            self.db = StateDatabase(None if memory else connect(self.path, check_same_thread=False), memory=memory)
            self.db.conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            if not memory:
                mode = journal_mode_for(self.path) if journal_mode == "auto" else journal_mode
                # The mode is kept in the file; changing it needs the database to itself, so only
                # the first opener (or a move to another filesystem) changes it.
                if self.db.execute("PRAGMA journal_mode").fetchone()[0] != mode:
                    self.db.execute(f"PRAGMA journal_mode={mode}")
            self.migrate()
        except StorageError as exc:  # the file's own error, worded by the connection (state/storage.py)
            raise failure(self.path, exc.__cause__ or exc, opening=True) from exc
        except StateError:
            raise
        except Exception as exc:  # sqlite3.DatabaseError and friends, OSError of the folder
            raise failure(self.path, exc, opening=True) from exc

    def _check_made(self) -> None:
        """A read-only open finds a winellbot state: its ``_migrations`` table, and it reads (a damaged file fails here)."""
        tables = self.db.table_names()
        if "_migrations" in tables:
            return
        if tables:
            raise StorageError(f"the state database {self.path} is not a winellbot state (it has tables, but not "
                               "_migrations): check [state] path")
        raise NoStateYet(f"no state in {self.path} yet: the file holds no tables (an empty file, or one a first job "
                         "is making now; the next job makes the state in it)")

    def _open_server(self, url: str, readonly: bool) -> None:
        """Open the state on a database server; SQLAlchemy's errors become one StateError line."""
        # lazy: SQLAlchemy takes about 0.4 s to import; only a state on a server needs it
        from winellbot.state.sqldb import SqlDatabase, hidden

        self.path, self.engine = hidden(url), "mysql"
        try:
            self.db = SqlDatabase(url)
            made = "_migrations" in self.db.table_names()
            if not readonly:
                with self.db.named_lock("migrate"):  # jobs starting together migrate one after another
                    self.migrate()
        except Exception as exc:  # the server's errors (ServerError), SQLAlchemy's on a malformed URL
            why = str(exc).split(": ", 1)[-1] if isinstance(exc, StateError) else str(exc).splitlines()[0]
            kind = StorageError if isinstance(exc, StorageError) else StateError
            raise kind(f"cannot open state database {self.path}: {why}") from exc
        if readonly and not made:
            raise NoStateYet(f"no state in the database {self.path} (no job has run with this configuration yet)")

    def snapshot(self) -> State:
        """An in-memory SQLite copy of this state: a dry run works on it and leaves the real one as it was.
        A damaged page copied with the file fails on the copy as on the file, naming the file."""
        copy = State.__new__(State)
        copy.path, copy.engine = ":memory:", "sqlite"
        copy.db = sqlite_utils.Database(connect(getattr(self.db.conn, "state_path", self.path), ":memory:"))
        if self.engine == "sqlite":
            self.db.conn.backup(copy.db.conn)
            copy.migrate()  # a file copied while its first job was still creating its tables
            return copy
        copy.migrate()
        for table in self.db.table_names():
            columns = {c.name for c in self.db[table].columns}
            rows = [{k: v for k, v in r.items() if k != "rowid"}  # rowid: SQLite's own, in the order inserted
                    for r in self.db[table].rows_where(order_by='"rowid"' if "rowid" in columns else None)]
            if rows and table != "_migrations":
                copy.db[table].insert_all(rows, alter=True)
        return copy

    def keep_dry_run(self, dry: State, run_id: int) -> int | None:
        """Keep the record of a dry run on ``dry`` (a :meth:`snapshot`): its run, marked "dry-run", its
        errors, its model calls and the model replies it cached (a later real run asking the same gets
        the same answer, so it posts what the dry run showed). Nothing that a later run decides on
        (suggestions, decisions, the pages' schedule) is kept. Returns the run's id here."""
        rows = list(dry.db["runs"].rows_where("id = ?", [run_id]))
        if not rows:
            return None
        calls = [{**c, "id": None} for c in dry.db["llm_calls"].rows_where("run_id = ?", [run_id])]
        if calls:
            # The columns the calls have beyond the schema (alter=True writes: outcome, attempt) are added
            # before the transaction: on MariaDB an ALTER TABLE commits the open one (its savepoints gone).
            self.db["llm_calls"].add_missing_columns(calls)
        with self.db.atomic():
            kept = self.db["runs"].insert({**rows[0], "id": None, "status": "dry-run"}).last_pk
            if calls:
                self.db["llm_calls"].insert_all([{**c, "run_id": kept} for c in calls])
            errors = [{**e, "id": None, "run_id": kept} for e in dry.db["errors"].rows_where("run_id = ?", [run_id])]
            if errors:
                self.db["errors"].insert_all(errors)
            cached = list(dry.db["llm_cache"].rows_where("created >= ?", [rows[0]["started"]]))
            if cached:
                self.db["llm_cache"].insert_all(cached, pk="key", ignore=True)
        return kept

    # -- schema ----------------------------------------------------------
    def migrate(self) -> list[str]:
        """Apply the migrations this database lacks, in order; returns their names."""
        tables = self.db.table_names()
        done = {r["name"] for r in self.db["_migrations"].rows} if "_migrations" in tables else set()
        pending = [(name, fn) for name, fn in MIGRATIONS if name not in done]
        if not pending:
            return []
        # lazy: SQLAlchemy takes about 0.4 s to import; an up-to-date SQLite state never needs it
        from winellbot.state.schema import Schema

        schema = Schema(self.db)
        schema.create("_migrations", {"name": str, "applied_at": str}, pk="name")
        for name, fn in pending:
            with self.db.atomic():
                fn(schema)
                self.db["_migrations"].insert({"name": name, "applied_at": now()}, pk="name", ignore=True)
        return [name for name, _ in pending]

    @property
    def version(self) -> str:
        names = sorted(r["name"] for r in self.db["_migrations"].rows)
        return names[-1] if names else ""

    # -- runs ------------------------------------------------------------
    def start_run(self, backend: str) -> int:
        with self.db.atomic():
            return self.db["runs"].insert({"started": now(), "status": "running", "backend": backend}).last_pk

    def latest_run(self) -> dict | None:
        rows = list(self.db["runs"].rows_where(order_by="id desc", limit=1))
        return rows[0] if rows else None

    def mark_interrupted(self) -> list[int]:
        """Runs of killed jobs, marked so; returns their ids. On SQLite (called under the job lock,
        so no other job runs) every run still marked running; on a server, where other jobs may be
        running, those whose job stopped giving its heartbeat (winellbot/state/leases.py)."""
        if self.engine != "sqlite":
            return mark_stale_runs(self)
        ids = [r["id"] for r in self.db["runs"].rows_where("status = ?", ["running"])]
        with self.db.atomic():
            for run_id in ids:
                self.db["runs"].update(run_id, {"status": "killed", "finished": now()})
        return ids

    def finish_run(self, run_id: int, status: str = "done", **counts: int) -> None:
        with self.db.atomic():
            self.db["runs"].update(run_id, {"finished": now(), "status": status, **counts})

    # -- pages -----------------------------------------------------------
    def page(self, title: str) -> dict | None:
        rows = list(self.db["pages"].rows_where("title = ?", [title]))
        return rows[0] if rows else None

    def touch_page(self, title: str, **fields) -> None:
        with self.db.atomic():
            self.db["pages"].upsert({"title": title, **fields}, pk="title", alter=True)

    def due_pages(self, titles: Iterable[str], at: str | None = None, horizon_days: float | None = None) -> list[str]:
        """Titles never run or whose ``next_due`` has passed, in the order given. With
        ``horizon_days`` (the recheck period), a ``next_due`` further ahead than that, or a page whose
        last run is dated after ``at``, was written by a clock that ran fast: the page is due now, not
        after the clock has caught up."""
        at = at or now()
        latest = None
        if horizon_days is not None:
            latest = (clock.parse(at) + dt.timedelta(days=horizon_days + 1)).isoformat()
        out = []
        for title in titles:
            row = self.page(title) or {}
            due = row.get("next_due")
            if not due or due <= at or (latest is not None and due > latest) \
                    or clock.is_ahead(row.get("last_run"), clock.parse(at)):
                out.append(title)
        return out

    # -- pipeline output ---------------------------------------------------
    def record_result(self, run_id: int, page: str, result: PipelineResult,
                      measured: Mapping[str, Measured] | None = None) -> None:
        """Store decisions, navigation steps, kept updates and new suggestions in one transaction;
        ``measured`` gives new suggestions (by id) their estimate, measurements and wiki."""
        with self.db.atomic():
            for step in result.steps:
                self.db["steps"].insert({"run_id": run_id, "page": page, "query": step.query,
                                         "chosen_url": step.chosen.url if step.chosen else None,
                                         "reason": step.reason})
            for d in result.decisions:
                self.db["decisions"].insert({"run_id": run_id, "page": page, "update_key": d.update.key,
                                             "action": d.action, "reason": d.reason, "replaces": d.replaces,
                                             "created": now()})
                if d.action != "ignore":
                    u = d.update
                    self.db["updates"].upsert({"key": u.key, "run_id": run_id, "page": page,
                                               "section": " > ".join(u.section_path), "text": u.text,
                                               "quote": u.quote, "url": u.document.url,
                                               "event_date": u.event_date, "score": u.score,
                                               "reason": u.reason}, pk="key")
            for s in result.suggestions:
                self._insert_suggestion(run_id, s, (measured or {}).get(s.id))
            for message in result.errors:
                self._error(run_id, page, "pipeline", message)

    def _insert_suggestion(self, run_id: int, s: Suggestion, m: Measured | None = None) -> None:
        if self.db["suggestions"].count_where("id = ?", [s.id]):
            return  # proposed before: its lifecycle (posted, rejected ...) is kept as it is
        e = s.edit
        m = m or Measured()
        self.db["suggestions"].insert({
            "id": s.id, "run_id": run_id, "page": s.article_title, "revid": s.revid,
            "section": " > ".join(s.section_path), "paragraph_index": s.paragraph_index,
            "old_paragraph": e.old_paragraph, "new_paragraph": e.new_paragraph,
            "added_text": e.added_text, "update_text": s.update.text, "update_reason": s.update.reason,
            "quoted": int(e.quoted),
            "citation": json.dumps(e.citation.__dict__),
            "quote": s.update.quote, "url": s.update.document.url,
            "status": "held" if s.blocked else "proposed", "created": now(), "updated": now(),
            "estimate": m.estimate, "features": json.dumps(m.features) if m.features is not None else None,
            "wiki": m.wiki or None,
        })
        self._insert_findings(s.id, s.findings)

    def _insert_findings(self, suggestion_id: str, findings: Iterable[GateFinding]) -> None:
        for f in findings:
            self.db["gate_results"].insert({"suggestion_id": suggestion_id, "gate": f.gate,
                                            "severity": f.severity, "message": f.message, "created": now()})

    def suggestion(self, suggestion_id: str) -> dict | None:
        rows = list(self.db["suggestions"].rows_where("id = ?", [suggestion_id]))
        return rows[0] if rows else None

    def suggestions_by_id_prefix(self, prefix: str) -> list[dict]:
        return list(self.db["suggestions"].rows_where("substr(id, 1, ?) = ?", [len(prefix), prefix]))

    def suggestions(self, page: str | None = None, status: str | None = None) -> list[dict]:
        where, args = [], []
        if page is not None:
            where.append("page = ?"), args.append(page)
        if status is not None:
            where.append("status = ?"), args.append(status)
        return list(self.db["suggestions"].rows_where(" and ".join(where) or None, args, order_by="created, rowid"))

    def wikis(self, ids: Iterable[str]) -> dict[str, str]:
        """The wiki each of the suggestions ``ids`` was recorded for ("" where none was)."""
        ids = list(ids)
        if not ids:
            return {}
        rows = self.db.execute(f"select id, wiki from suggestions where id in ({','.join('?' * len(ids))})", ids)
        return {sid: wiki or "" for sid, wiki in rows.fetchall()}

    def pages_with(self, status: str, wiki: str) -> set[str]:
        """The pages holding a suggestion in ``status`` recorded for ``wiki`` or for none."""
        rows = self.db.execute("select distinct page from suggestions where status = ? and "
                               "(wiki is null or wiki = '' or wiki = ?)", [status, wiki])
        return {r[0] for r in rows.fetchall()}

    def pending(self, page: str) -> list[Suggestion]:
        """This page's suggestions waiting to be posted, rebuilt from state (a crash loses none)."""
        return [self.load_suggestion(row) for row in self.suggestions(page=page, status="proposed")]

    def load_suggestion(self, row: dict) -> Suggestion:
        citation = Citation(**json.loads(row["citation"] or "{}"))
        document = Document(id="", url=row["url"] or citation.url, title=citation.title, text="",
                            published=citation.date or None, publisher=citation.work or None)
        path = tuple(p for p in (row["section"] or "").split(" > ") if p)
        update = Update(row["update_text"], path, row["quote"] or "", document, reason=row.get("update_reason") or "")
        if not update.reason:  # a row from before migration 005: the loop's record of the update
            kept = list(self.db["updates"].rows_where('"key" = ?', [update.key], select="reason"))
            if kept and kept[0]["reason"]:
                update = dataclasses.replace(update, reason=kept[0]["reason"])
        edit = Edit(row["old_paragraph"] or "", row["new_paragraph"] or "", row["added_text"] or "", citation,
                    quoted=bool(row["quoted"]))
        findings = tuple(GateFinding(r["gate"], r["severity"], r["message"])
                         for r in self.db["gate_results"].rows_where("suggestion_id = ?", [row["id"]], order_by="id"))
        s = Suggestion(row["page"], row["revid"], path, row["paragraph_index"], edit, update, findings)
        return _with_id(s, row["id"])

    def set_status(self, suggestion_id: str, status: str, reason: str = "") -> None:
        if status not in SUGGESTION_STATUSES:
            raise StateError(f"unknown suggestion status {status!r}")
        with self.db.atomic():
            self.db["suggestions"].update(suggestion_id, {"status": status, "status_reason": reason,
                                                          "updated": now()})

    def record_post(self, suggestion_ids: Iterable[str], target: str, revid: int | None, section_title: str,
                    links: dict[str, str] | None = None) -> None:
        """Mark suggestions posted on ``target``; ``links`` holds each one's permanent link. On a
        server their post claims (state/posts.py) close in the same transaction."""
        suggestion_ids = list(suggestion_ids)
        with self.db.atomic():
            for sid in suggestion_ids:
                self.db["posts"].insert({"suggestion_id": sid, "target": target, "revid": revid,
                                         "section_title": section_title, "posted_at": now(),
                                         "url": (links or {}).get(sid)})
                self.db["suggestions"].update(sid, {"status": "posted", "updated": now()})
            if self.engine != "sqlite":
                close_claims(self.db, suggestion_ids)

    def count_posts(self, since: str, page: str | None = None) -> int:
        """Suggestions posted since ``since`` (an ISO time), on the wiki or for one article. A post dated
        after now was recorded by a clock that ran fast: it counts as posted now (winellbot/clock.py)."""
        sql = "select count(*) from posts p join suggestions s on s.id = p.suggestion_id where p.posted_at >= ?"
        args = [since] + ([page] if page is not None else [])
        return self.db.execute(sql + (" and s.page = ?" if page is not None else ""), args).fetchone()[0]

    def posted(self, page: str | None = None, since: str | None = None) -> list[dict]:
        """Every posted suggestion (whatever its status now) with its latest post, oldest first."""
        where, args = ["p.id = (select max(id) from posts where suggestion_id = s.id)"], []
        if page is not None:
            where.append("s.page = ?"), args.append(page)
        if since is not None:
            where.append("p.posted_at >= ?"), args.append(since)
        sql = ("select s.id, s.page, s.section, s.status, s.status_reason, s.url as source, p.target, "
               "p.revid, p.section_title, p.posted_at, p.url from suggestions s join posts p "
               f"on p.suggestion_id = s.id where {' and '.join(where)} order by p.posted_at, p.id")
        return [dict(r) for r in self.db.query(sql, args)]

    def review_targets(self) -> dict[str, int | None]:
        """Pages holding posted suggestions that await a verdict -> the revision last read there."""
        rows = self.db.query(
            "select distinct p.target, r.seen_revid from posts p join suggestions s on s.id = p.suggestion_id "
            "left join review_pages r on r.target = p.target where s.status = 'posted' order by p.target")
        return {r["target"]: r["seen_revid"] for r in rows}

    def saw_target(self, target: str, revid: int) -> None:
        with self.db.atomic():
            self.db["review_pages"].upsert({"target": target, "seen_revid": revid, "checked": now()}, pk="target")

    def posts(self, target: str | None = None) -> list[dict]:
        return list(self.db["posts"].rows_where("target = ?" if target else None, [target] if target else []))

    # -- models, sources, errors -----------------------------------------
    def record_llm_call(self, **fields) -> None:
        with self.db.atomic():
            self.db["llm_calls"].insert({"created": now(), **fields}, alter=True)

    def cache_get(self, key: str) -> str | None:
        rows = list(self.db["llm_cache"].rows_where('"key" = ?', [key]))
        return rows[0]["reply"] if rows else None

    def cache_put(self, key: str, reply: str) -> None:
        with self.db.atomic():
            self.db["llm_cache"].upsert({"key": key, "reply": reply, "created": now()}, pk="key")

    def record_source(self, url: str, **fields) -> None:
        with self.db.atomic():
            self.db["sources"].upsert({"url": url, "fetched_at": now(), **fields}, pk="url", alter=True)

    def mark_hostile(self, url: str, reason: str) -> None:
        """Record that the source at ``url`` addressed an AI or the reader with instructions."""
        with self.db.atomic():
            self.db["sources"].upsert({"url": url, "hostile": reason[:500]}, pk="url")

    def source(self, url: str) -> dict | None:
        rows = list(self.db["sources"].rows_where("url = ?", [url]))
        return rows[0] if rows else None

    def count_errors(self, run_id: int) -> int:
        """How many errors and skips were recorded for the run (every stage: pipeline, post, corpus ...)."""
        return self.db.execute("select count(*) from errors where run_id = ?", [run_id]).fetchone()[0]

    def record_error(self, run_id: int | None, page: str | None, stage: str, message: str) -> None:
        with self.db.atomic():
            self._error(run_id, page, stage, message)

    def _error(self, run_id, page, stage, message) -> None:
        self.db["errors"].insert({"run_id": run_id, "page": page, "stage": stage,
                                  "message": str(message)[:2000], "created": now()})

    def counts(self) -> dict[str, int]:
        return {name: self.db[name].count for name in self.db.table_names() if not name.startswith("_")}


def _with_id(s: Suggestion, stored_id: str) -> Suggestion:
    # The id is derived from the article, source URL and update text, all stored, so a rebuilt
    # suggestion has the same id; a mismatch means the row was edited by hand.
    if s.id != stored_id:
        raise StateError(f"suggestion {stored_id} does not match its stored fields")
    return s


def filesystem_type(path: str | Path, mounts: str | None = None) -> str:
    """The type of the filesystem holding ``path``, from ``mounts`` (the text of /proc/mounts,
    read when not given); "" where that is unknown."""
    target = str(Path(path).resolve())
    if mounts is None:
        try:
            mounts = Path("/proc/mounts").read_text(encoding="utf-8")
        except OSError:
            return ""
    best, kind = "", ""
    for line in mounts.splitlines():
        parts = line.split()
        if len(parts) < 3:
            continue
        point = parts[1].replace("\\040", " ")
        inside = target == point or target.startswith(point.rstrip("/") + "/")
        if inside and len(point) > len(best):
            best, kind = point, parts[2]
    return kind


def journal_mode_for(path: str | Path, mounts: str | None = None) -> str:
    """WAL on a local disk; DELETE (the rollback journal) on a network filesystem."""
    kind = filesystem_type(Path(path).parent, mounts)
    return "delete" if kind in NETWORK_FILESYSTEMS or kind.startswith("nfs") else "wal"


def _wal_file(path: str) -> bool:
    """Whether the database file's header says WAL mode (its read and write versions are 2)."""
    try:
        with open(path, "rb") as fh:
            header = fh.read(20)
    except OSError:
        return False
    return len(header) == 20 and header[18] == 2 and header[19] == 2


def _connect_readonly(path: str):
    """A read-only connection that creates no file. A database in WAL mode with no write-ahead log
    beside it has no writer (a writer keeps the log open) and is opened as immutable, since SQLite
    could not read it otherwise without creating the log's index; with a log, SQLite reads it with
    the log. A database with a rollback journal (the mode used on NFS) is never opened as
    immutable: a writer may be changing it, and only SQLite's locks keep a read whole (issue 30: one
    read in 12,238 saw "database disk image is malformed" beside a writer)."""
    from urllib.parse import quote

    if not Path(path).is_file():
        raise StateError(f"no state database at {path} (no job has run with this configuration yet)")
    immutable = "&immutable=1" if _wal_file(path) and not Path(path + "-wal").exists() else ""
    return connect(path, f"file:{quote(str(Path(path).resolve()))}?mode=ro{immutable}", uri=True,
                   timeout=BUSY_TIMEOUT_MS / 1000)
