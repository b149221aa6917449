"""The CLI: parser, documented commands, clean errors, status over a state file."""
import gc
import json
import re
from pathlib import Path

import pytest
from wikiscene import configured_state

from winellbot.cli import build_parser, command, main
from winellbot.config import load_settings
from winellbot.models import Citation, Document, Edit, PipelineResult, Suggestion, Update
from winellbot.state.db import State

ROOT = Path(__file__).resolve().parents[1]
# The README and the pages it leads to (docs/*.md): a command is documented when one of them names it.
DOCS = "\n".join(p.read_text(encoding="utf-8") for p in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))])


def commands() -> list[str]:
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    return sorted(sub.choices)


def test_every_command_is_documented_in_the_readme_or_docs():
    assert {"run", "once", "article", "status", "demo", "backtest"} <= set(commands())
    for name in commands():
        assert re.search(rf"winellbot[^\n]*\b{name}\b", DOCS), f"`winellbot {name}` missing from README.md and docs/*.md"


def test_bad_config_is_a_clean_error_with_exit_code_1(tmp_path, capsys):
    bad = tmp_path / "c.toml"
    bad.write_text("[nope]\nx = 1\n")
    assert main(["status", "--config", str(bad)]) == 1
    assert "unknown config section" in capsys.readouterr().err


def test_the_program_returns_mains_code_and_leaves_its_objects_out_of_the_last_collection(tmp_path, monkeypatch,
                                                                                           capsys):
    """`winellbot` and `python -m winellbot.cli` run :func:`command`: main's exit code, then the objects made so far
    frozen (gc.freeze), so the interpreter's exit does not traverse them; main alone leaves the collector alone."""
    bad = tmp_path / "bad.toml"
    bad.write_text("[schedule]\ninterval_minutes = 'often'\n", encoding="utf-8")
    monkeypatch.setattr("sys.argv", ["winellbot", "status", "--config", str(bad)])
    assert gc.get_freeze_count() == 0
    try:
        assert main() == 1 and gc.get_freeze_count() == 0
        assert command() == 1 and gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()
    assert capsys.readouterr().err.count("winellbot: error:") == 2


def test_status_reports_what_the_state_holds(tmp_path, capsys):
    db = tmp_path / "state.sqlite"
    cfg = tmp_path / "c.toml"
    cfg.write_text(f'[state]\npath = "{db}"\n')
    d = Document("d1", "https://news.example/a", "A", "x")
    s = Suggestion("Town", 1, ("History",), 0, Edit("a", "a b", "b", Citation(d.url, "A")), Update("b", ("History",), "b", d))
    state = configured_state(load_settings(cfg))
    state.record_result(state.start_run("offline"), "Town", PipelineResult((s,)))
    assert main(["status", "--config", str(cfg)]) == 0
    out = capsys.readouterr().out
    assert "suggestions by status: proposed 1" in out
    assert main(["status", "--config", str(cfg), "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["by_status"] == {"proposed": 1}
    assert info["runs"][0]["backend"] == "offline"


def test_stray_positional_arguments_are_refused(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["once", "surprise"])
    assert exc.value.code == 2


@pytest.mark.sqlite_state  # the SQLite file: none is created, nothing is written beside it
def test_status_without_a_state_creates_nothing_and_says_why(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("WINELLBOT_CONFIG", raising=False)
    assert main(["status"]) == 1
    err = capsys.readouterr().err
    assert "no state database at winellbot.sqlite" in err and err.count("\n") == 1
    assert list(tmp_path.iterdir()) == []


@pytest.mark.sqlite_state  # the SQLite file: none is created, nothing is written beside it
def test_status_reads_a_state_without_writing_to_its_folder(tmp_path, capsys):
    db = tmp_path / "state.sqlite"
    writer = State(db)
    writer.start_run("offline")
    writer.db.conn.close()  # as after a job: no write-ahead log left beside the database
    cfg = tmp_path / "c.toml"
    cfg.write_text(f'[state]\npath = "{db}"\n')
    before = sorted(p.name for p in tmp_path.iterdir())
    assert main(["status", "--config", str(cfg)]) == 0
    assert "run 1:" in capsys.readouterr().out
    assert sorted(p.name for p in tmp_path.iterdir()) == before


@pytest.mark.parametrize("text, message", [
    ('[wiki]\nqueue_mode = "multi"\n', 'wiki.queue_mode must be one of "per-article", "single"'),
    ("[schedule]\ninterval_minutes = -5\n", "schedule.interval_minutes must be greater than 0"),
])
def test_config_outside_its_domain_is_one_line_from_the_cli(tmp_path, capsys, text, message):
    cfg = tmp_path / "c.toml"
    cfg.write_text(text)
    assert main(["once", "--config", str(cfg)]) == 1
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.toml"]


@pytest.mark.parametrize("kind, message", [
    ("folder", "is a folder: name the TOML file in it"),
    ("binary", "is not UTF-8 text (a binary file?)"),
    ("sqlite url", "state.url must name a MariaDB database, mysql+pymysql://USER:PASSWORD@HOST/DATABASE; got a URL "
                   "of sqlite scheme; for a SQLite state set [state] path instead"),
])
def test_a_config_that_is_not_a_config_is_one_line_in_every_command(tmp_path, capsys, kind, message):
    if kind == "folder":
        cfg = tmp_path / "configs"
        cfg.mkdir()
    else:
        cfg = tmp_path / "c.toml"
        if kind == "binary":
            cfg.write_bytes(bytes(range(256)) * 8)
        else:
            cfg.write_text(f'[state]\nurl = "sqlite:///{tmp_path / "s.sqlite"}"\n')
    for command in (["status"], ["once"], ["posted"], ["health"], ["state", "copy"]):
        assert main([*command, "--config", str(cfg)]) == 1
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and message in err, (command, err)
        assert str(cfg) in err or kind == "sqlite url", err


def test_a_sqlite_url_in_the_environment_is_refused_too(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("WINELLBOT_STATE_URL", f"sqlite:///{tmp_path / 's.sqlite'}")
    assert main(["status"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "WINELLBOT_STATE_URL must name a MariaDB database" in err, err
    assert str(tmp_path) not in err, "the URL itself (which may hold a password) is not shown"


def test_a_reader_that_stops_reading_ends_the_command_quietly(tmp_path):
    """`winellbot status | head -1`: the pipe's reader goes away; no traceback, the shell's code for it."""
    import os
    import subprocess
    import sys

    State(tmp_path / "state.sqlite")
    cfg = tmp_path / "c.toml"
    cfg.write_text(f'[state]\npath = "{tmp_path / "state.sqlite"}"\n')
    read, write = os.pipe()
    os.close(read)  # the reader is gone before the first line is written
    try:
        done = subprocess.run([sys.executable, "-m", "winellbot.cli", "status", "--config", str(cfg)], stdout=write,
                              stderr=subprocess.PIPE, text=True, timeout=120)
    finally:
        os.close(write)
    assert (done.returncode, done.stderr) == (141, "")
