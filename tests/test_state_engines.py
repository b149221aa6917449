"""The state on its two engines: SQLite (the default) and a real MariaDB server (tests/mariadb.py)."""
from __future__ import annotations

import dataclasses
import datetime as dt
import json
import threading
import time

import pymysql
import pytest
from mariadb import PASSWORD, USER, mariadb, mariadb_url  # noqa: F401 - the fixtures

from winellbot.commands import dry_run_copy, open_state, state_summary
from winellbot.config import Settings
from winellbot.errors import NoStateYet, StateError
from winellbot.models import (Citation, Decision, Document, Edit, GateFinding, NavigationStep, PipelineResult,
                              SearchResult, Suggestion, Update)
from winellbot.state.db import MIGRATIONS, State
from winellbot.state.leases import LEASE_SECONDS
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


# -- the state's contracts (those of tests/test_state.py that hold for any engine), on each engine -------
def suggestion(text="The bridge opened in 2026.", findings=()) -> Suggestion:
    d = Document("d1", "https://news.example/bridge", "Bridge opens", "The bridge opened in 2026.")
    u = Update(text, ("History",), text, d, score=1.0)
    e = Edit("Old paragraph.", "Old paragraph. " + text, text, Citation(d.url, d.title))
    return Suggestion("Town", 7, ("History",), 0, e, u, findings)


@pytest.fixture(params=["sqlite", "mariadb"])
def engine(request) -> str:
    return request.param


@pytest.fixture
def state_on(engine, request, tmp_path):
    """``state_on(name="")``: a State on the test's engine. "" is a new database each time; a name
    opens the same database again (a SQLite file in tmp_path, or a MariaDB database)."""
    urls: dict[str, str] = {}
    server = request.getfixturevalue("mariadb") if engine == "mariadb" else None

    def open_state(name: str = "", **options) -> State:
        if server is None:
            return State(tmp_path / f"{name}.sqlite" if name else ":memory:", **options)
        key = name or f":memory:{len(urls)}"
        if key not in urls:
            urls[key] = server.new_database()
        return State(url=urls[key], **options)

    yield open_state
    for url in urls.values():
        server.drop_database(url)


def test_migrations_apply_once_and_are_recorded(state_on, engine):
    first = state_on("s")
    assert first.version == MIGRATIONS[-1][0] and first.engine == {"sqlite": "sqlite", "mariadb": "mysql"}[engine]
    assert first.migrate() == []  # nothing left to apply
    again = state_on("s")
    assert again.version == first.version and again.migrate() == []
    assert {"pages", "runs", "sources", "updates", "suggestions", "posts"} <= set(again.db.table_names())
    assert [r["name"] for r in again.db["_migrations"].rows_where(order_by="name")] == [n for n, _ in MIGRATIONS]


def test_record_result_stores_decisions_steps_and_suggestions(state_on):
    state = state_on()
    run = state.start_run("offline")
    s = suggestion()
    result = PipelineResult(
        suggestions=(s,),
        decisions=(Decision("add", s.update, "new fact"), Decision("ignore", s.update, "duplicate")),
        steps=(NavigationStep("town bridge", SearchResult(s.update.document.url, "t"), "best match"),),
        errors=("fetch failed: x",),
    )
    state.record_result(run, "Town", result)
    assert [r["action"] for r in state.db["decisions"].rows_where(order_by="id")] == ["add", "ignore"]
    assert next(state.db["steps"].rows)["chosen_url"] == s.update.document.url
    row = state.suggestion(s.id)
    assert row["status"] == "proposed" and row["section"] == "History"
    assert state.db["errors"].count == 1 and state.count_errors(run) == 1


def test_a_held_suggestion_keeps_its_findings_and_a_proposed_one_its_lifecycle(state_on):
    state = state_on()
    held = suggestion(text="Held fact of 2026.", findings=(GateFinding("support", "block", "number 2026 not in source"),))
    s = suggestion()
    state.record_result(state.start_run("offline"), "Town", PipelineResult((held, s)))
    assert state.suggestion(held.id)["status"] == "held"
    assert next(state.db["gate_results"].rows)["message"] == "number 2026 not in source"
    state.set_status(s.id, "rejected", "not notable")
    state.record_result(state.start_run("offline"), "Town", PipelineResult((s,)))
    assert state.suggestion(s.id)["status"] == "rejected" and state.db["suggestions"].count == 2
    assert [r["id"] for r in state.suggestions(page="Town")] == [held.id, s.id]
    assert state.suggestions_by_id_prefix(s.id[:6])[0]["id"] == s.id


def test_record_post_marks_posted_counts_it_and_unknown_status_is_refused(state_on):
    state = state_on()
    s = suggestion()
    state.record_result(state.start_run("offline"), "Town", PipelineResult((s,)))
    state.record_post([s.id], "Talk:Town", 42, "Suggested updates")
    assert state.suggestion(s.id)["status"] == "posted"
    assert state.posts("Talk:Town")[0]["revid"] == 42
    assert state.count_posts("2000-01-01", page="Town") == 1 and state.count_posts("2000-01-01", page="Else") == 0
    with pytest.raises(StateError):
        state.set_status(s.id, "maybe")


def test_a_failing_write_leaves_nothing_half_done(state_on):
    state = state_on()
    bad = PipelineResult((suggestion(), "not a suggestion"))  # the second item breaks mid-transaction
    with pytest.raises(Exception):
        state.record_result(state.start_run("offline"), "Town", bad)
    assert state.db["suggestions"].count == 0
    with pytest.raises(RuntimeError), state.db.atomic():  # a nested block rolls back to its savepoint
        state.touch_page("Inside")
        raise RuntimeError("boom")
    with state.db.atomic():
        state.touch_page("Kept")
        with pytest.raises(RuntimeError), state.db.atomic():
            state.touch_page("Dropped")
            raise RuntimeError("boom")
    assert state.page("Inside") is None and state.page("Dropped") is None and state.page("Kept")


def test_due_pages_and_a_clock_that_ran_fast(state_on):
    state = state_on()
    state.touch_page("A", next_due="2999-01-01T00:00:00+00:00")
    state.touch_page("B", next_due="2000-01-01T00:00:00+00:00")
    assert state.due_pages(["A", "B", "C"]) == ["B", "C"]
    assert state.due_pages(["A", "B", "C"], horizon_days=7) == ["A", "B", "C"]  # 2999 was written by a fast clock
    s = suggestion()
    state.record_result(state.start_run("offline"), "Town", PipelineResult((s,)))
    ahead = (dt.datetime.now(dt.timezone.utc) + dt.timedelta(days=400)).replace(microsecond=0).isoformat()
    state.record_post([s.id], "Talk:Town", 42, "Suggested updates")
    state.db["posts"].update(state.posts()[0]["id"], {"posted_at": ahead})
    week_ago = (dt.datetime.now(dt.timezone.utc) - dt.timedelta(days=7)).isoformat()
    assert state.count_posts(week_ago, page="Town") == 1  # the future-dated post counts as posted now
    assert state.count_posts(week_ago, page="Else") == 0
    state.touch_page("A", last_run=ahead, next_due=(dt.datetime.now(dt.timezone.utc) + dt.timedelta(days=3)).isoformat())
    assert state.due_pages(["A", "B"]) == ["A", "B"], "a page last run in the future is due"


def test_pending_suggestions_are_rebuilt_from_state_with_their_id_and_reason(state_on):
    s = suggestion(findings=(GateFinding("style", "flag", "relative time: 'recently'"),))
    loop_update = dataclasses.replace(s.update, section_path=("Transport",), reason="words best match Transport")
    final = dataclasses.replace(s, update=dataclasses.replace(s.update, reason="words best match History"))
    state_on("s").record_result(1, "Town", PipelineResult((final,), decisions=(Decision("add", loop_update, "new"),)))
    [again] = state_on("s").pending("Town")  # a new connection, as after a crash
    assert again.id == s.id and again.edit == s.edit and again.findings == s.findings
    assert again.update.reason == "words best match History" and again.section_path == ("History",)
    older = state_on("s")
    older.db["updates"].update(loop_update.key, {"reason": "placed by words"})
    older.db["suggestions"].update(s.id, {"update_reason": None})  # as a row of an older version
    assert older.pending("Town")[0].update.reason == "placed by words"


def test_the_model_cache_sources_and_runs(state_on, engine):
    state = state_on()
    state.cache_put("k", "one")
    state.cache_put("k", "two")
    assert state.cache_get("k") == "two" and state.cache_get("nothing") is None
    state.record_source("https://news.example/a", title="A", status="ok")
    state.mark_hostile("https://news.example/a", "ignore all previous instructions")
    assert state.source("https://news.example/a")["hostile"].startswith("ignore") and state.source("x") is None
    run = state.start_run("offline")
    state.record_llm_call(run_id=run, stage="editor", backend="openai", new_field="kept")  # a new column
    assert [c["new_field"] for c in state.db["llm_calls"].rows] == ["kept"]
    if engine == "mariadb":  # other jobs may be running: only a run whose heartbeat stopped was killed
        assert state.mark_interrupted() == []
        state.db["runs"].update(run, {"heartbeat": time.time() - LEASE_SECONDS - 5})
    assert state.mark_interrupted() == [run] and state.latest_run()["status"] == "killed"
    state.finish_run(state.start_run("offline"), pages=3)
    assert state.latest_run()["pages"] == 3 and state.counts()["runs"] == 2


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
    made = [suggestion(text=f"Fact {c} happened in 2026.") for c in "zyxwvu"]
    state.record_result(state.start_run("offline"), "Town", PipelineResult(tuple(made)))
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
    assert state.version == MIGRATIONS[-1][0]
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
    assert sorted(names) == [name for name, _ in MIGRATIONS]


def test_on_mariadb_a_dry_run_works_on_an_sqlite_copy_and_keeps_only_its_cost(mariadb_url):
    state = State(url=mariadb_url)
    s = suggestion()
    state.record_result(state.start_run("offline"), "Town", PipelineResult((s,)))
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


def test_a_dry_runs_model_calls_are_kept_with_the_columns_the_state_lacks_yet(state_on):
    """The model client records columns beyond the schema (outcome, attempt: alter=True). Kept from a dry run
    into a state that lacked them, on MariaDB the ALTER TABLE inside keep_dry_run's transaction committed it
    and the next savepoint failed ("SAVEPOINT ... does not exist"): the cost was not kept and a later real run
    asked the model again."""
    state = state_on()
    dry = state.snapshot()
    run = dry.start_run("openai")
    dry.record_llm_call(run_id=run, stage="editor", backend="openai", model="m", request_hash="h",
                        prompt_tokens=12, completion_tokens=3, cached=0, seconds=0.1, outcome="parsed", attempt=1)
    dry.cache_put("k", "a reply")
    kept = state.keep_dry_run(dry, run)
    [call] = state.db["llm_calls"].rows_where("run_id = ?", [kept])
    assert (call["prompt_tokens"], call["outcome"], call["attempt"]) == (12, "parsed", 1)
    assert state.db["runs"].get(kept)["status"] == "dry-run" and state.cache_get("k") == "a reply"


def test_on_mariadb_a_dry_run_before_any_job_works_on_an_empty_copy_as_on_a_missing_file(mariadb_url, tmp_path):
    """A dry run (`article` without --post, `once --dry-run`, -simulate) on a database no job has made the state
    in yet failed with "no state in the database"; on SQLite, before the file exists, it works on an empty copy."""
    s = Settings()
    s.state.path, s.state.url = str(tmp_path / "state.sqlite"), mariadb_url
    dry = dry_run_copy(s)
    assert dry.engine == "sqlite" and not dry.suggestions() and not list(dry.db["runs"].rows)
    with pytest.raises(NoStateYet, match="no state in the database"):  # what status says there, as before
        open_state(s, readonly=True)
    assert not (tmp_path / "state.sqlite").exists()


def test_the_status_summary_and_the_outcome_store_read_the_same_on_both_engines(state_on):
    state = state_on()
    s = suggestion()
    run = state.start_run("offline")
    state.record_result(run, "Town", PipelineResult((s,)))
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
    assert summary["by_status"] == {"posted": 1} and summary["schema"] == MIGRATIONS[-1][0]
    assert state.posted()[0]["url"] == "https://wiki/x" and state.review_targets() == {"Talk:Town": None}


def test_on_mariadb_the_server_bounds_every_statement_of_the_states_sessions(mariadb_url):
    """MariaDB's own deadline for a statement's work (max_statement_time), which the client's per-read
    timeouts do not give: set on every connection the state opens."""
    from winellbot.state.sqldb import STATEMENT_S

    state = State(url=mariadb_url)
    assert float(state.db.execute("select @@max_statement_time").fetchone()[0]) == STATEMENT_S
