"""A state that is not what it should be: a damaged, empty or read-only SQLite file, a database server that never
answers. Every command says so in one line naming the file (or server) and what to do, exits non-zero, and never
writes to the wiki what it could not record."""
from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from storage_faults import damage, read_only
from wikiscene import cli, configured_state, run_cycle
from winellbot.cli import main
from winellbot.config import dump_settings
from winellbot.state.db import State


def _state_with_rows(path: Path) -> Path:
    state = State(path)
    run = state.start_run("offline")
    for i in range(300):
        state.touch_page(f"Town {i}", last_revid=i)
        state.record_error(run, f"Town {i}", "test", "a message long enough to fill some pages " * 5)
    state.finish_run(run)
    state.db.conn.close()
    return path


def _config(tmp_path: Path, state: Path, extra: str = "") -> str:
    path = tmp_path / "winellbot.toml"
    path.write_text(f'[state]\npath = "{state}"\n{extra}', encoding="utf-8")
    return str(path)


def _one_line(capsys) -> str:
    """The one line a command printed (Pywikibot's "Logging in to ..." notice aside)."""
    out, err = capsys.readouterr()
    lines = [line for line in (out + err).splitlines() if line.strip() and not line.startswith("Logging in to ")]
    assert len(lines) == 1, lines
    return lines[0]


@pytest.mark.sqlite_state
@pytest.mark.parametrize("command", [["status"], ["status", "--json"], ["posted"], ["health"]])
def test_a_damaged_state_is_one_line_naming_the_file_in_every_command_that_reads_it(tmp_path, capsys, command):
    path = _state_with_rows(tmp_path / "state.sqlite")
    damage(path)
    assert main([*command, "--config", _config(tmp_path, path)]) == 1
    line = _one_line(capsys)
    assert str(path) in line and "malformed" in line and "restore it from a backup" in line, line


@pytest.mark.sqlite_state
@pytest.mark.parametrize("command", [["status"], ["posted"], ["health", "--job", "scheduled"]])
def test_an_empty_state_file_is_one_line_saying_no_state_is_there_yet(tmp_path, capsys, command):
    path = tmp_path / "state.sqlite"
    path.touch()
    assert main([*command, "--config", _config(tmp_path, path)]) == 1
    line = _one_line(capsys)
    assert f"no state in {path} yet" in line and "no such table" not in line, line
    assert path.stat().st_size == 0, "reading it wrote nothing"


@pytest.mark.sqlite_state
def test_a_sqlite_file_of_something_else_is_not_taken_for_a_state(tmp_path, capsys):
    import sqlite3

    path = tmp_path / "other.sqlite"
    with sqlite3.connect(path) as db:
        db.execute("create table photos (id integer primary key, name text)")
    assert main(["status", "--config", _config(tmp_path, path)]) == 1
    assert "is not a winellbot state" in _one_line(capsys)


# -- against the real local wiki: a job, a dry run and withdraw ----------------------------------------------

def _winellbot(config: str, *args: str) -> subprocess.CompletedProcess:
    """The CLI in a process of its own: Pywikibot chooses its folder (the state's) when it is first imported."""
    return subprocess.run([sys.executable, "-m", "winellbot.cli", *args, "--config", config],
                          capture_output=True, text=True, timeout=300)


def _said(done) -> list[str]:
    """What the command printed, less Pywikibot's "Logging in to ..." notice."""
    return [line for line in (done.stdout + done.stderr).splitlines()
            if line.strip() and not line.startswith("Logging in to ")]


def _revision(wiki, title: str) -> int:
    page = wiki.admin()._get(action="query", prop="revisions", titles=title, rvprop="ids", formatversion="2")
    return page["query"]["pages"][0].get("revisions", [{}])[0].get("revid", 0)


def _scene_config(scene, tmp_path: Path) -> str:
    path = tmp_path / "winellbot.toml"
    path.write_text(dump_settings(scene["settings"]), encoding="utf-8")
    return str(path)


@pytest.mark.sqlite_state
@pytest.mark.parametrize("what", ["file", "folder"])
def test_a_state_that_cannot_be_written_stops_a_job_in_one_line_before_the_wiki_is_touched(scene, tmp_path, what):
    config = _scene_config(scene, tmp_path)
    path = Path(scene["settings"].state.path)
    _state_with_rows(path)
    talk = f"Talk:{scene['opted']}"
    before = _revision(scene["wiki"], talk)
    # A read-only folder is also Pywikibot's (the state's): only a process of its own reads its folder anew.
    run = cli if what == "file" else _winellbot
    with read_only(path if what == "file" else path.parent):
        done = run(config, "once", "--force", f"-page:{scene['opted']}")
        dry = run(config, "once", "--force", "--dry-run", f"-page:{scene['opted']}")
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    [line] = _said(done)
    assert line.startswith("winellbot: error: ") and str(path) in line and "write access" in line, line
    assert _revision(scene["wiki"], talk) == before, "nothing was posted that the state could not record"
    assert "Traceback" not in dry.stderr, dry.stderr
    if what == "file":  # a dry run writes only its cost, which it says it could not keep; it shows what a run would
        assert dry.returncode == 0 and "suggestion(s)" in dry.stdout and "were not kept" in dry.stderr
    else:  # Pywikibot keeps its files in the state's folder
        [line] = _said(dry)
        assert dry.returncode == 1 and str(path.parent) in line and "write access" in line, line
    assert _revision(scene["wiki"], talk) == before


@pytest.mark.sqlite_state
@pytest.mark.parametrize("dry_run", [False, True])
def test_a_damaged_state_stops_a_job_and_its_dry_run_in_one_line(scene, tmp_path, dry_run):
    config = _scene_config(scene, tmp_path)
    path = Path(scene["settings"].state.path)
    damage(_state_with_rows(path))
    talk = f"Talk:{scene['opted']}"
    before = _revision(scene["wiki"], talk)
    done = cli(config, "once", "--force", *(["--dry-run"] if dry_run else []), f"-page:{scene['opted']}")
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    [line] = _said(done)
    assert str(path) in line and "malformed" in line and "restore it from a backup" in line, line
    assert _revision(scene["wiki"], talk) == before


@pytest.mark.sqlite_state
def test_an_empty_state_file_becomes_a_new_state_for_a_job_and_its_dry_run(scene, tmp_path):
    config = _scene_config(scene, tmp_path)
    path = Path(scene["settings"].state.path)
    path.touch()
    dry = cli(config, "once", "--force", "--dry-run", f"-page:{scene['opted']}")
    assert dry.returncode == 0 and "Traceback" not in dry.stderr, dry.stderr
    assert "suggestion(s)" in dry.stdout
    done = cli(config, "once", "--force", f"-page:{scene['opted']}")
    assert done.returncode == 0 and "1 page(s) posted" in done.stdout, done.stdout + done.stderr


@pytest.mark.sqlite_state
def test_withdraw_on_a_state_that_cannot_be_written_refuses_before_the_wiki_is_touched(scene, tmp_path, capsys):
    _, state, _ = run_cycle(scene["settings"], [scene["opted"]])
    [first, *_] = state.suggestions(page=scene["opted"], status="posted")
    state.db.conn.close()
    config = _scene_config(scene, tmp_path)
    talk = f"Talk:{scene['opted']}"
    before = _revision(scene["wiki"], talk)
    path = Path(scene["settings"].state.path)
    with read_only(path):
        assert main(["withdraw", first["id"], "--config", config]) == 1
    line = _one_line(capsys)
    assert str(path) in line and "write access" in line, line
    assert _revision(scene["wiki"], talk) == before, "the wiki says nothing the state does not"
    assert configured_state(scene["settings"]).suggestion(first["id"])["status"] == "posted"
    # Writable again, the same command withdraws it on both.
    assert main(["withdraw", first["id"], "--config", config]) == 0
    assert "withdrawn on Talk:" in capsys.readouterr().out
    assert _revision(scene["wiki"], talk) != before
    assert configured_state(scene["settings"]).suggestion(first["id"])["status"] == "withdrawn"


# -- a database server that accepts the connection and never answers -------------------------------------------

# The commands' timeouts against a silent server (the URL's query sets PyMySQL's): the defaults
# (winellbot.state.sqldb.TIMEOUTS, 10 s to connect and 20 s for each read) give up within 30 s; these within 12 s.
SILENT_TIMEOUT_S = 2


class SilentServer:
    """A listening socket that accepts every connection and never sends a byte (a hung server); ``accepted``:
    when (time.monotonic()) each connection came; ``url`` sets the timeouts to :data:`SILENT_TIMEOUT_S`."""

    def __init__(self) -> None:
        self.socket = socket.socket()
        self.socket.bind(("127.0.0.1", 0))
        self.socket.listen(16)
        self.accepted: list[float] = []
        self._held: list = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                self._held.append(self.socket.accept())
            except OSError:
                return
            self.accepted.append(time.monotonic())

    @property
    def url(self) -> str:
        timeouts = "&".join(f"{name}={SILENT_TIMEOUT_S}"
                            for name in ("connect_timeout", "read_timeout", "write_timeout"))
        return f"mysql+pymysql://winellbot:secret@127.0.0.1:{self.socket.getsockname()[1]}/state?{timeouts}"


def test_a_database_url_without_timeouts_connects_with_the_default_ones_and_one_with_them_with_its_own(monkeypatch):
    import pymysql

    from winellbot.state.sqldb import TIMEOUTS, SqlDatabase

    asked: list[dict] = []

    def connect(*args, **kwargs):
        asked.append(kwargs)
        raise pymysql.err.OperationalError(2003, "not here")

    monkeypatch.setattr(pymysql, "connect", connect)
    for url in ("mysql+pymysql://u:p@127.0.0.1:9/state", SilentServer().url):
        with pytest.raises(Exception):
            SqlDatabase(url).engine.connect()
    default, given = ({k: a[k] for k in TIMEOUTS} for a in asked)
    assert default == TIMEOUTS == {"connect_timeout": 10, "read_timeout": 20, "write_timeout": 20}
    assert given == dict.fromkeys(TIMEOUTS, SILENT_TIMEOUT_S)


@pytest.mark.slow
def test_a_database_server_that_never_answers_is_one_line_within_30_s(tmp_path):
    """Each command, on a server of its own, gives up within its timeouts and 10 s of connecting (Python's
    start-up aside): 30 s at the default ones, 12 s at the :data:`SILENT_TIMEOUT_S` its URL sets."""
    source = _state_with_rows(tmp_path / "source.sqlite")
    config = _config(tmp_path, tmp_path / "state.sqlite")
    commands = {"state copy": ["state", "copy", "--from", str(source)], "health": ["health"], "once": ["once"]}
    servers = {name: SilentServer() for name in commands}
    ended: dict[str, tuple[float, str, str, int]] = {}

    def run(name: str) -> None:
        env = {**os.environ, "WINELLBOT_STATE_URL": servers[name].url, "WINELLBOT_BOT_PASSWORD": "x" * 32}
        try:
            done = subprocess.run([sys.executable, "-m", "winellbot.cli", *commands[name], "--config", config],
                                  env=env, capture_output=True, text=True, timeout=90)
        except subprocess.TimeoutExpired:  # killed: it would have waited for ever
            ended[name] = (time.monotonic(), "", "(still waiting after 90 s)", -9)
            return
        ended[name] = (time.monotonic(), done.stdout, done.stderr, done.returncode)

    threads = [threading.Thread(target=run, args=(name,)) for name in commands]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for server in servers.values():
        server.socket.close()
    assert set(ended) == set(commands)
    for name, (end, out, err, code) in ended.items():
        assert servers[name].accepted, f"{name} never connected"
        waited = end - servers[name].accepted[0]
        assert waited < SILENT_TIMEOUT_S + 10, f"{name}: {waited:.0f} s"
        lines = [line for line in (out + err).splitlines() if line.strip()]
        assert code == 1 and "Traceback" not in err, (name, err)
        assert len(lines) == 1 and "127.0.0.1" in lines[0] and "secret" not in lines[0], (name, lines)
        assert "timed out" in lines[0] and "check that the server is up" in lines[0], (name, lines)
