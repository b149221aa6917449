"""The state on its two engines: SQLite (the default) and a real MariaDB server (tests/mariadb.py)."""
from __future__ import annotations

import inspect
import json
import threading

import pymysql
import pytest
import test_state
from mariadb import PASSWORD, USER, mariadb, mariadb_url  # noqa: F401 - the fixtures

from winellbot.commands import state_summary
from winellbot.errors import StateError
from winellbot.state.db import State
from winellbot.state.outcomes import OutcomeStore


def test_the_test_server_is_a_real_mariadb_with_a_user_of_its_own(mariadb, mariadb_url):
    """The fixture's server runs unprivileged on its own socket and port, and the test user may use
    its database (utf8mb4, binary collation: "Town" and "town" are two titles, as on the wiki)."""
    database = mariadb_url.rsplit("/", 1)[1]
    conn = pymysql.connect(host="127.0.0.1", port=mariadb.port, user=USER, password=PASSWORD,
                           database=database, autocommit=True)
    with conn, conn.cursor() as cur:
        cur.execute("select version(), current_user()")
        version, user = cur.fetchone()
        assert "MariaDB" in version and user.startswith(USER + "@")
        cur.execute("create table t (title varchar(255) primary key)")
        cur.execute("insert into t values ('Town'), ('town'), ('Zürich ✓')")
        cur.execute("select title from t order by title")
        assert [r[0] for r in cur.fetchall()] == ["Town", "Zürich ✓", "town"]
    assert mariadb.socket.exists() and mariadb.process.poll() is None


# -- the state's own tests (tests/test_state.py), on each engine ------------------------------------
SQLITE_FILE_ONLY = {"test_a_corrupt_file_gives_a_clear_state_error", "test_a_damaged_file_read_only_is_one_line_naming_it",
                    "test_read_only_opens_beside_a_writer_in_rollback_journal_mode_never_see_a_torn_file"}
STATE_TESTS = [f for name, f in vars(test_state).items()
               if name.startswith("test_") and callable(f) and name not in SQLITE_FILE_ONLY]


@pytest.fixture(params=["sqlite", "mariadb"])
def engine(request) -> str:
    return request.param


@pytest.fixture
def state_on(engine, request):
    """``state_on(path=":memory:", **options)``: a State on the test's engine. On MariaDB each
    ":memory:" is a new database and each file path names one database, opened again by the same path."""
    if engine == "sqlite":
        yield State
        return
    server = request.getfixturevalue("mariadb")
    urls: dict[str, str] = {}

    def open_state(path=":memory:", **options):
        key = str(path)
        if key == ":memory:" or key not in urls:
            key = key if key != ":memory:" else f":memory:{len(urls)}"
            urls[key] = server.new_database()
        options.pop("journal_mode", None)
        return State(url=urls[key], **options)

    open_state.urls = urls
    yield open_state
    for url in urls.values():
        server.drop_database(url)


@pytest.mark.parametrize("test", STATE_TESTS, ids=lambda f: f.__name__)
def test_the_state_tests_pass_on_both_engines(test, state_on, monkeypatch, tmp_path):
    monkeypatch.setattr(test_state, "State", state_on)
    wanted = inspect.signature(test).parameters
    test(**{k: v for k, v in {"tmp_path": tmp_path, "monkeypatch": monkeypatch}.items() if k in wanted})
    assert state_on is State or state_on.urls  # on MariaDB, the test opened its states there


# -- MariaDB's own contracts ------------------------------------------------------------------------
def test_on_mariadb_the_schema_is_innodb_utf8mb4_binary_and_keys_are_varchar(mariadb_url):
    state = State(url=mariadb_url)
    rows = state.db.query("select table_name, engine, table_collation from information_schema.tables "
                          "where table_schema = database()")
    tables = {r["table_name"]: (r["engine"], r["table_collation"]) for r in rows}
    assert set(tables) >= {"pages", "suggestions", "posts", "outcomes", "verdicts", "_migrations"}
    assert set(tables.values()) == {("InnoDB", "utf8mb4_bin")}
    columns = {c.name: c.type for c in state.db["suggestions"].columns}
    assert columns["id"] == "varchar" and columns["old_paragraph"] == "longtext" and "rowid" in columns
    assert {c.name: c.type for c in state.db["updates"].columns}["score"] == "double"
    state.touch_page("Town", next_due="2999-01-01T00:00:00+00:00")
    state.touch_page("town")  # another title: the binary collation tells them apart
    assert state.due_pages(["Town", "town"]) == ["town"]


def test_on_mariadb_suggestions_keep_the_order_they_were_made_in(mariadb_url):
    state = State(url=mariadb_url)
    made = [test_state.suggestion(text=f"Fact {c} happened in 2026.") for c in "zyxwvu"]
    state.record_result(state.start_run("offline"), "Town", test_state.PipelineResult(tuple(made)))
    assert [r["id"] for r in state.suggestions(page="Town")] == [s.id for s in made]


def test_on_mariadb_a_state_no_job_made_yet_reads_as_a_clear_error_and_a_wrong_password_hides_itself(
        mariadb, mariadb_url):
    with pytest.raises(StateError, match="no state in the database"):
        State(url=mariadb_url, readonly=True)
    wrong = mariadb_url.replace(PASSWORD, "not-the-password")
    with pytest.raises(StateError, match="cannot open state database .*Access denied") as caught:
        State(url=wrong)
    assert "not-the-password" not in str(caught.value) and "***" in str(caught.value)


def test_on_mariadb_the_credentials_can_come_from_an_option_file_as_toolforge_gives_them(mariadb, mariadb_url,
                                                                                          tmp_path):
    cnf = tmp_path / "replica.my.cnf"
    cnf.write_text(f"[client]\nuser = '{USER}'\npassword = '{PASSWORD}'\n", encoding="utf-8")
    database = mariadb_url.rsplit("/", 1)[1]
    state = State(url=f"mysql+pymysql://127.0.0.1:{mariadb.port}/{database}?read_default_file={cnf}")
    assert state.version == test_state.MIGRATIONS[-1][0]
    assert PASSWORD not in state.path


def test_on_mariadb_jobs_opening_a_new_database_together_migrate_it_once(mariadb_url):
    opened, errors = [], []

    def open_one():
        try:
            opened.append(State(url=mariadb_url))
        except Exception as exc:  # noqa: BLE001 - the finding
            errors.append(exc)

    threads = [threading.Thread(target=open_one) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == [] and len(opened) == 4
    names = [r["name"] for r in opened[0].db["_migrations"].rows]
    assert sorted(names) == [name for name, _ in test_state.MIGRATIONS]


def test_on_mariadb_a_dry_run_works_on_an_sqlite_copy_and_keeps_only_its_cost(mariadb_url):
    state = State(url=mariadb_url)
    s = test_state.suggestion()
    state.record_result(state.start_run("offline"), "Town", test_state.PipelineResult((s,)))
    dry = state.snapshot()
    assert dry.engine == "sqlite" and dry.suggestion(s.id)["status"] == "proposed"
    run = dry.start_run("offline")
    dry.set_status(s.id, "posted")
    dry.record_llm_call(run_id=run, stage="editor", backend="openai", prompt_tokens=12)
    dry.cache_put("k", "a reply")
    kept = state.keep_dry_run(dry, run)
    assert state.suggestion(s.id)["status"] == "proposed", "the dry run changed nothing a real run decides on"
    assert state.db["runs"].get(kept)["status"] == "dry-run" and state.cache_get("k") == "a reply"
    assert [c["prompt_tokens"] for c in state.db["llm_calls"].rows_where("run_id = ?", [kept])] == [12]


def test_the_status_summary_and_the_outcome_store_read_the_same_on_both_engines(state_on):
    state = state_on()
    s = test_state.suggestion()
    run = state.start_run("offline")
    state.record_result(run, "Town", test_state.PipelineResult((s,)))
    state.record_llm_call(run_id=run, stage="editor", backend="openai", prompt_tokens=7, completion_tokens=3)
    state.record_post([s.id], "Talk:Town", 42, "Suggested updates", links={s.id: "https://wiki/x"})
    store = OutcomeStore(state)
    assert store.track([{"suggestion_id": s.id, "page": "Town", "names": json.dumps(["Bridge"])}]) == 1
    store.adopt(s.id, {"adopted_revid": 43, "adopted_how": "exact"})
    store.record_verdict({"suggestion_id": s.id, "target": "Talk:Town", "revid": 44, "status": "accepted",
                          "set_by": "Reviewer", "trusted": 1})
    assert store.decided() == {s.id}
    [watched] = store.watched()
    assert watched["names"] == ["Bridge"] and watched["adopted_revid"] == 43
    [row] = store.history()
    assert row["verdict"] == "accepted" and row["adopted_how"] == "exact" and row["gates"] == []
    summary = state_summary(state)
    assert summary["tokens"] == {"prompt": 7, "completion": 3, "calls": 1, "cached": 0}
    assert json.dumps(summary["tokens"]) == '{"prompt": 7, "completion": 3, "calls": 1, "cached": 0}'
    assert summary["by_status"] == {"posted": 1} and summary["schema"] == test_state.MIGRATIONS[-1][0]
    assert state.posted()[0]["url"] == "https://wiki/x" and state.review_targets() == {"Talk:Town": None}
