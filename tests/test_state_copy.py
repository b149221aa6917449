"""`winellbot state copy`: a SQLite state copied into a real MariaDB server (tests/mariadb.py), and
source URLs longer than a MariaDB key on the server (migration 009)."""
from __future__ import annotations

import dataclasses
import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest
from mariadb import PASSWORD, mariadb, mariadb_url  # noqa: F401 - the fixtures
from wikiscene import fact_suggestion

from winellbot.errors import ConfigError, StateError
from winellbot.models import Decision, GateFinding, NavigationStep, PipelineResult, SearchResult
from winellbot.state.copy import ORDER, copy_state
from winellbot.state.db import State
from winellbot.state.lock import JobLock
from winellbot.state.migrations import MIGRATIONS
from winellbot.state.outcomes import OutcomeStore
from winellbot.state.posts import PostClaims
from winellbot.state.schema import Schema
from winellbot.state.sqldb import SqlDatabase

LONG_URL = "https://news.example/" + "long-path/" * 198  # 2,001 characters: longer than a MariaDB key (768)
FILLED_ROWS = 31  # the rows filled_state leaves, all tables together


def filled_state(path: Path) -> State:
    """A SQLite state with rows in every table a cycle writes, a long source URL among them."""
    state = State(path)
    facts = [fact_suggestion("Town", f"A bridge opened in {2020 + i}.") for i in range(4)]
    held = dataclasses.replace(fact_suggestion("Village", "A mill closed in 2024."),
                               findings=(GateFinding("support", "block", "2024 not in source"),))
    for i in range(3):
        run = state.start_run("offline")
        state.touch_page(f"Page {i}", opted_in=i % 2, last_revid=100 + i, next_due="2030-01-01T00:00:00+00:00")
        state.record_llm_call(run_id=run, stage="editor", backend="openai", prompt_tokens=10 * i, seconds=0.25 * i,
                              extra_note=f"call {i}")  # a column beyond the schema (alter=True)
        state.finish_run(run, pages=i)
    gone = fact_suggestion("Town", "A ferry stopped in 2019.")  # deleted below: the ids keep a gap
    state.record_result(run, "Town", PipelineResult((gone,)))
    result = PipelineResult(tuple(facts) + (held,), decisions=(Decision("add", facts[0].update, "new"),),
                            steps=(NavigationStep("town bridge", SearchResult(LONG_URL, "t"), "best"),),
                            errors=("fetch failed: x",))
    state.record_result(run, "Town", result)
    state.record_post([facts[0].id, facts[1].id], "Talk:Town", 42, "Suggested updates",
                      links={facts[0].id: "https://wiki/x"})
    state.record_post([facts[2].id], "Talk:Town", 43, "Suggested updates")
    state.saw_target("Talk:Town", 43)
    state.record_source(LONG_URL, title="Long", status="ok", text="Text " * 100, final_url=LONG_URL)
    state.record_source("https://news.example/short", title="Short", status="error", error="404")
    state.mark_hostile("https://news.example/short", "ignore all previous instructions")
    state.cache_put("key-1", "a reply")
    store = OutcomeStore(state)
    store.track([{"suggestion_id": facts[0].id, "page": "Town", "names": json.dumps(["Bridge"])}])
    store.adopt(facts[0].id, {"adopted_revid": 44, "adopted_how": "exact", "adoption_days": 1.5})
    store.record_verdict({"suggestion_id": facts[1].id, "target": "Talk:Town", "revid": 45, "status": "accepted",
                          "set_by": "Reviewer", "trusted": 1})
    store.saw_page("Town", 44)
    PostClaims(state, "job-a").claim("Town", [facts[3].id], per_page_week=5, per_wiki_day=5)
    state.record_error(run, "Town", "post", "a refused write")
    state.db.execute("delete from suggestions where id = ?", [gone.id])
    state.db.execute("delete from llm_calls where id = 2")
    state.db.conn.commit()
    return state


def table_rows(db, table: str, columns: list[str], pk: str) -> list[dict]:
    """The table's rows as dicts of ``columns``, ordered by ``pk``."""
    names = ", ".join(f'"{c}"' for c in columns)
    return sorted((dict(r) for r in db.query(f'select {names} from "{table}"')), key=lambda r: r[pk])


def data_rows(url: str) -> dict[str, int]:
    """Rows in each table of the database at ``url`` other than ``_migrations``, those with rows only."""
    db = SqlDatabase(url)
    try:
        return {t: n for t in db.table_names() if t != "_migrations" and (n := db[t].count)}
    finally:
        db.close()


def file_digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_every_table_is_copied_row_for_row_with_its_ids_and_the_copy_is_a_working_state(tmp_path, mariadb_url):
    path = tmp_path / "state.sqlite"
    old = filled_state(path)
    report = copy_state(path, mariadb_url)
    tables = [t for t in old.db.table_names() if t != "_migrations"]
    assert sorted(name for name, _ in report.tables) == sorted(tables)
    assert [n for n, _ in report.tables] == sorted(tables, key=lambda n: (ORDER.index(n) if n in ORDER else 99, n))
    assert dict(report.tables) == {t: old.db[t].count for t in tables} and report.rows == FILLED_ROWS
    assert PASSWORD not in report.target and "***" in report.target
    new = State(url=mariadb_url)
    target_columns = {t: {c.name for c in new.db[t].columns} for t in tables}
    for table in tables:
        [pk] = old.db[table].pks
        carried = ["rowid"] if "rowid" in target_columns[table] and pk != "rowid" else []
        columns = [c.name for c in old.db[table].columns] + carried
        assert table_rows(new.db, table, columns, pk) == table_rows(old.db, table, columns, pk), table
    assert {"suggestions", "sources"} <= {t for t in tables if "rowid" in target_columns[t]}
    assert len(new.source(LONG_URL)["url"]) == len(LONG_URL) == 2001
    assert new.posted() == old.posted()
    assert [{k: v for k, v in r.items() if k != "rowid"} for r in new.suggestions()] == old.suggestions()
    assert new.count_posts("2000-01-01") == old.count_posts("2000-01-01") == 3
    assert new.cache_get("key-1") == "a reply" and new.review_targets() == old.review_targets()
    assert OutcomeStore(new).history() == OutcomeStore(old).history()
    largest = max(r["id"] for r in old.db["runs"].rows)
    assert [r["id"] for r in new.db["llm_calls"].rows_where(order_by="id")] == [1, 3]
    assert [r["rowid"] for r in new.suggestions()] == [2, 3, 4, 5, 6]
    assert new.start_run("offline") == largest + 1  # the server's counter continues after the copied ids
    assert new.db["posts"].insert({"suggestion_id": "x", "target": "t"}).last_pk == 4


def test_a_database_that_holds_rows_is_refused_and_left_as_it_was(tmp_path, mariadb_url):
    filled_state(tmp_path / "state.sqlite")
    target = State(url=mariadb_url)
    target.touch_page("Elsewhere")
    with pytest.raises(StateError, match=r"already holds rows \(pages 1\).*nothing was copied") as caught:
        copy_state(tmp_path / "state.sqlite", mariadb_url)
    assert PASSWORD not in str(caught.value)
    assert data_rows(mariadb_url) == {"pages": 1} and target.page("Elsewhere")


def test_the_copy_refuses_while_a_job_holds_the_state_and_holds_it_itself(tmp_path, mariadb_url):
    path = tmp_path / "state.sqlite"
    filled_state(path)
    with JobLock(path):
        with pytest.raises(StateError, match=r"a winellbot job \(pid \d+ .*stop it before copying"):
            copy_state(path, mariadb_url)
    assert data_rows(mariadb_url) == {}
    assert copy_state(path, mariadb_url).rows == FILLED_ROWS
    JobLock(path).acquire().release()  # the copy let go of the lock


def test_a_copy_that_fails_halfway_leaves_no_row_and_runs_again(tmp_path, mariadb_url):
    path = tmp_path / "state.sqlite"
    state = filled_state(path)
    # SQLite keeps text in an integer column; the server refuses it, in the last table copied
    state.db.execute("update errors set run_id = 'not a number'")
    state.db.conn.commit()
    with pytest.raises(StateError, match="Incorrect integer value"):
        copy_state(path, mariadb_url)
    assert data_rows(mariadb_url) == {}, "the rows of the tables copied before were rolled back"
    state.db.execute("update errors set run_id = 3")
    state.db.conn.commit()
    assert dict(copy_state(path, mariadb_url).tables)["errors"] == 2


def test_an_older_state_file_is_copied_in_the_latest_schema_and_stays_as_it_was(tmp_path, mariadb_url):
    path = tmp_path / "old.sqlite"
    old = State(path)
    old.db.execute("drop table post_claims")
    old.db.execute("drop table post_caps")
    old.db.execute("delete from _migrations where name >= '008'")
    old.db.conn.commit()
    old.touch_page("Town", last_revid=7)
    old.db.conn.close()
    before = file_digest(path)
    report = copy_state(path, mariadb_url)
    assert dict(report.tables)["pages"] == 1 and "post_claims" in dict(report.tables)
    assert file_digest(path) == before
    assert max(r[0] for r in State(path, readonly=True).db.execute("select name from _migrations")) < "008"
    assert State(url=mariadb_url).page("Town")["last_revid"] == 7


def test_a_state_file_of_a_newer_winellbot_is_refused(tmp_path, mariadb_url):
    path = tmp_path / "state.sqlite"
    State(path).db["_migrations"].insert({"name": "999_future", "applied_at": "2030-01-01"})
    with pytest.raises(StateError, match="made by a newer winellbot .*999_future"):
        copy_state(path, mariadb_url)
    assert data_rows(mariadb_url) == {}


def test_a_value_too_long_for_a_key_on_the_server_is_reported_and_nothing_is_copied(tmp_path, mariadb_url):
    path = tmp_path / "state.sqlite"
    state = filled_state(path)
    state.touch_page("T" * 1000)
    with pytest.raises(StateError, match=r"1 value\(s\) .*pages.title of row \d+ has 1000 characters \(at most 768\)"):
        copy_state(path, mariadb_url)
    assert data_rows(mariadb_url) == {}


def test_the_target_must_be_a_mariadb_url(tmp_path):
    State(tmp_path / "state.sqlite")
    with pytest.raises(ConfigError, match="must be a MariaDB URL"):
        copy_state(tmp_path / "state.sqlite", f"sqlite:///{tmp_path / 'other.sqlite'}")


def test_on_mariadb_a_source_url_of_2000_characters_is_a_key_in_a_new_database_and_a_migrated_one(mariadb_url):
    db = SqlDatabase(mariadb_url)
    schema = Schema(db)
    schema.create("_migrations", {"name": str, "applied_at": str}, pk="name")
    for name, migration in MIGRATIONS[:8]:  # a database as the version before migration 009 left it
        migration(schema)
        db["_migrations"].insert({"name": name, "applied_at": "2026-01-01"})
    db["sources"].insert({"url": "https://news.example/kept", "title": "Kept"})
    with pytest.raises(StateError, match="Data too long for column 'url'"):
        db["sources"].insert({"url": LONG_URL})
    db.close()
    state = State(url=mariadb_url)
    applied = {r["name"] for r in state.db["_migrations"].rows}
    assert "009_long_source_urls" in applied and state.version == MIGRATIONS[-1][0]
    assert state.source("https://news.example/kept")["title"] == "Kept"
    state.record_source(LONG_URL, title="Long", status="ok")
    state.mark_hostile(LONG_URL, "instructions")  # the same row, found by its whole URL
    state.record_source(LONG_URL[:-1] + "x", title="Other")  # the same first 2,000 characters: another row
    assert state.db["sources"].count == 3 and state.source(LONG_URL)["hostile"] == "instructions"
    assert set(next(state.db["sources"].rows)) == {c.name for c in State().db["sources"].columns}
    assert [r["url"] for r in state.db["sources"].rows_where(order_by='"rowid"')][0] == "https://news.example/kept"


def test_the_command_prints_each_tables_count_and_never_the_password(tmp_path, mariadb_url):
    path = tmp_path / "state.sqlite"
    filled_state(path)
    config = tmp_path / "c.toml"
    config.write_text(f'[state]\npath = "{path}"\n', encoding="utf-8")
    command = [str(Path(sys.executable).with_name("winellbot")), "state", "copy", "--config", str(config)]
    done = subprocess.run(command + ["--to", mariadb_url], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert any(line.split() == ["suggestions", "5", "rows"] for line in lines)
    assert lines[-1].startswith("copied ") and "every table's count matches" in lines[-1]
    assert PASSWORD not in done.stdout + done.stderr and "***" in lines[-1]
    config.write_text(f'[state]\npath = "{path}"\nurl = "{mariadb_url}"\n', encoding="utf-8")  # the URL from [state]
    again = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert again.returncode == 1 and again.stdout == ""
    assert "already holds rows" in again.stderr and PASSWORD not in again.stderr


@pytest.mark.parametrize("kind", ["empty", "damaged", "another program's"])
def test_a_source_that_is_not_a_whole_winellbot_state_is_one_error_and_nothing_is_copied(tmp_path, mariadb_url, kind):
    import sqlite3

    from storage_faults import damage

    path = tmp_path / "state.sqlite"
    if kind == "empty":
        path.touch()
    elif kind == "damaged":
        filled_state(path).db.conn.close()
        damage(path)
    else:
        with sqlite3.connect(path) as db:
            db.execute("create table photos (id integer primary key, name text)")
    config = tmp_path / "c.toml"
    config.write_text(f'[state]\npath = "{path}"\n', encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "winellbot.cli", "state", "copy", "--config", str(config), "--to",
                           mariadb_url], capture_output=True, text=True, timeout=120)
    assert done.returncode == 1 and done.stdout == "" and "Traceback" not in done.stderr, done.stderr
    [line] = done.stderr.splitlines()
    assert str(path) in line and ("nothing was copied" in line or "not a winellbot state" in line), line
    assert data_rows(mariadb_url) == {}


def test_a_source_text_of_30_mb_the_bot_never_read_is_copied_as_the_bot_keeps_it_now(tmp_path, mariadb_url):
    """A state written before the texts were capped holds a source's text of 30 MB, more than the server takes in
    one statement (max_allowed_packet, 16 MiB): the copy keeps none of it, says so, and copies everything else."""
    path = tmp_path / "state.sqlite"
    state = filled_state(path)
    huge = "A harbour wall was repaired. " * 1_100_000
    state.record_source("https://news.example/huge", title="Huge", status="corpus", text=huge)
    state.db.conn.close()
    report = copy_state(path, mariadb_url)
    assert report.unread_texts == 1 and dict(report.tables)["sources"] == 3
    row = State(url=mariadb_url).source("https://news.example/huge")
    assert row["text"] is None and row["title"] == "Huge" and "over the cap" in row["error"]
    assert State(url=mariadb_url).source(LONG_URL)["text"] == "Text " * 100, "a text the bot read is copied whole"


def test_a_row_larger_than_the_server_takes_is_one_error_naming_it_and_nothing_is_copied(tmp_path, mariadb_url):
    path = tmp_path / "state.sqlite"
    state = filled_state(path)
    state.cache_put("huge-reply", "x" * 17_000_000)  # over 16 MiB, and not a source's text
    state.db.conn.close()
    with pytest.raises(StateError, match="llm_cache: the row whose key is 'huge-reply' holds 17,0.* bytes, more than "
                                         "the server takes in one statement.*nothing was copied"):
        copy_state(path, mariadb_url)
    assert data_rows(mariadb_url) == {}
