"""`winellbot backtest --backend openai --judge model` through the CLI, with a scripted model server.

The task is hand-made and fictional (``write_ferry_task`` in ``tests/bench_tasks.py``: the bench format,
one article, two documents); the server answers every pipeline stage and the paper's judge, so the
whole command runs offline.
"""
from __future__ import annotations

import json
import re

import pytest
from bench_tasks import ATOMS, FACT, HELD, NIGHT, write_ferry_task
from mariadb import PASSWORD, mariadb, mariadb_url  # noqa: F401 - the fixtures
from scripted_openai import Received, ScriptedOpenAI
from wikiscene import configured_state

from winellbot.cli import main
from winellbot.config import Settings, dump_settings, load_settings
from winellbot.state.db import State


def model(req: Received) -> str:
    text = req.text
    if req.stage == "criteria":
        return json.dumps({"sections": [{"section": "History", "criteria": "Openings and milestones."},
                                        {"section": "Services", "criteria": "Routes and timetables."}]})
    if req.stage == "navigator" and "Write the next search query" in text:
        n = text.split("Queries already tried:")[1].split("Updates already kept:")[0].count("\n- ")
        return json.dumps({"query": ["Brindle Ferry night service", "Brindle Ferry harbour"][min(n, 1)]
                           + (f" {n}" if n > 1 else ""), "reason": "next"})
    if req.stage == "navigator":
        return json.dumps({"choice": 1, "reason": "top result"})
    if req.stage == "extractor":
        if NIGHT["url"] not in text:
            return json.dumps({"updates": []})
        return json.dumps({"updates": [{"fact": FACT, "section": "Services", "event_date": "2025-05-03",
                                        "quote": "Brindle Ferry began a night service to Oskar Island on 3 May 2025, "
                                                 "the operator said. Two crossings a night will run",
                                        "reason": "a new route"}]})
    if req.stage == "aggregator":
        return json.dumps({"action": "add", "reason": "a new route", "importance": 4})
    if req.stage == "editor":
        paragraph = text.split("Original paragraph:\n")[1].split("\n\nNews:")[0].strip()
        return f"{paragraph} {FACT}"
    if req.stage == "judge" and "atomic facts" in text:
        return json.dumps({"facts": ATOMS})
    if req.stage == "judge":
        paragraph = text.split("Paragraph:\n")[-1]
        return json.dumps({"judgments": [{"element": a, "thought": "compared",
                                          "mentioned": "night crossings" in paragraph} for a in ATOMS]})
    raise AssertionError(f"unexpected stage {req.stage!r}")


@pytest.fixture
def bench(tmp_path, monkeypatch):
    monkeypatch.delenv("WINELLBOT_OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    write_ferry_task(tmp_path / "tasks")
    with ScriptedOpenAI(model) as server:
        s = Settings()
        s.llm.base_url = server.base_url
        s.llm.model = "scripted"
        s.llm.stage_models = {"judge": "scripted-judge"}
        s.state.path = str(tmp_path / "state.sqlite")
        # These tests are about the back-test's model calls and judge; the acceptability bar is tested in
        # tests/test_acceptability.py and holds the ferry's fact (its estimate is under the bar).
        s.pipeline.acceptability_threshold = 0.0
        (tmp_path / "c.toml").write_text(dump_settings(s), encoding="utf-8")
        yield {"tmp": tmp_path, "server": server, "config": str(tmp_path / "c.toml"), "state": s.state.path, "settings": s}


def figures_from(out: str) -> dict:
    return json.loads(out[re.search(r"^\{", out, re.MULTILINE).start():])


def backtest(bench, *extra: str) -> int:
    tmp = bench["tmp"]
    return main(["backtest", str(tmp / "tasks"), "--output", str(tmp / "out.jsonl"), "--config", bench["config"],
                 "--no-progress", *extra])


def test_backtest_with_the_agent_and_the_model_judge(bench, capsys):
    server = bench["server"]
    assert backtest(bench, "--backend", "openai", "--judge", "model") == 0
    out = capsys.readouterr().out
    figures = figures_from(out)
    assert (figures["c_soft"], figures["c_hard"], figures["s_acc"]) == (1.0, 1.0, 1.0)
    assert "gates: 1 suggestion(s) checked; stopped: none" in out
    lines = [json.loads(x) for x in (bench["tmp"] / "out.jsonl").read_text().splitlines()]
    assert [(x["task"], x["section_path"], x["documents"]) for x in lines] == [("brindle", ["Services"], ["d1"])]
    assert FACT in lines[0]["text"]
    stages = server.stages()
    assert {"criteria", "navigator", "extractor", "aggregator", "editor", "judge"} <= set(stages)
    assert {r.body["model"] for r in server.requests if r.stage == "judge"} == {"scripted-judge"}
    pipeline_text = "\n".join(r.text for r in server.requests if r.stage != "judge")
    assert HELD not in pipeline_text and "distractor" not in pipeline_text  # scoring data stays out

    state = configured_state(bench["settings"])
    [run] = list(state.db["runs"].rows)
    assert (run["backend"], run["status"]) == ("backtest:openai:model", "done")
    calls = list(state.db["llm_calls"].rows_where("run_id = ?", [run["id"]]))
    assert len(calls) == len(server.requests) and all(c["prompt_tokens"] > 0 for c in calls)

    asked = len(server.requests)
    assert backtest(bench, "--backend", "openai", "--judge", "model") == 0
    assert figures_from(capsys.readouterr().out)["c_hard"] == 1.0
    assert len(server.requests) == asked, "a re-run on the same tasks is served from the cache"


def test_on_a_mariadb_state_the_backtest_records_its_calls_there_and_a_rerun_is_served_from_them(mariadb_url,
                                                                                                tmp_path, monkeypatch):
    monkeypatch.delenv("WINELLBOT_OPENAI_API_KEY", raising=False)
    write_ferry_task(tmp_path / "tasks")
    with ScriptedOpenAI(model) as server:
        s = Settings()
        s.llm.base_url, s.llm.model = server.base_url, "scripted"
        s.state.path, s.state.url = str(tmp_path / "state.sqlite"), mariadb_url
        (tmp_path / "c.toml").write_text(dump_settings(s), encoding="utf-8")
        bench = {"tmp": tmp_path, "config": str(tmp_path / "c.toml")}
        assert backtest(bench, "--backend", "openai") == 0
        asked = len(server.requests)
        assert backtest(bench, "--backend", "openai") == 0
        assert len(server.requests) == asked, "a re-run on the same tasks is served from the server's cache"
    state = State(url=mariadb_url)
    assert [r["backend"] for r in state.db["runs"].rows] == ["backtest:openai:lexical"] * 2
    assert state.db["llm_calls"].count_where("cached = 0") == asked
    assert state.db["llm_calls"].count_where("cached = 1") == asked  # the re-run's calls, each from the cache
    assert not (tmp_path / "state.sqlite").exists()


@pytest.mark.sqlite_state  # sets WINELLBOT_STATE_URL itself, to a database of its own
def test_the_state_url_may_come_from_the_environment_and_is_never_written_into_a_config_file(mariadb_url,
                                                                                           tmp_path, monkeypatch):
    """WINELLBOT_STATE_URL (a URL with a password belongs in `toolforge envvars`, as the other secrets do) is
    the state when [state] url is empty: the command's runs and calls land in that database, no SQLite file."""
    monkeypatch.delenv("WINELLBOT_OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("WINELLBOT_STATE_URL", mariadb_url)
    write_ferry_task(tmp_path / "tasks")
    with ScriptedOpenAI(model) as server:
        s = Settings()
        s.llm.base_url, s.llm.model = server.base_url, "scripted"
        s.state.path = str(tmp_path / "state.sqlite")
        (tmp_path / "c.toml").write_text(dump_settings(s), encoding="utf-8")
        bench = {"tmp": tmp_path, "config": str(tmp_path / "c.toml")}
        assert backtest(bench, "--backend", "openai") == 0
        asked = len(server.requests)
    state = State(url=mariadb_url)
    assert [r["backend"] for r in state.db["runs"].rows] == ["backtest:openai:lexical"]
    assert state.db["llm_calls"].count_where("cached = 0") == asked > 0
    assert not (tmp_path / "state.sqlite").exists()
    loaded = load_settings(tmp_path / "c.toml")
    assert loaded.state.url == "" and loaded.state.server_url == mariadb_url
    assert mariadb_url not in dump_settings(loaded) and PASSWORD not in dump_settings(loaded)
    loaded.state.url = "mysql+pymysql://other@host/db"  # [state] url, when set, wins over the environment
    assert loaded.state.server_url == "mysql+pymysql://other@host/db"


def test_lexical_judge_asks_no_model_and_model_judge_scores_the_offline_pipeline(bench, capsys):
    server = bench["server"]
    assert backtest(bench, "--backend", "openai", "--judge", "lexical") == 0
    capsys.readouterr()
    assert "judge" not in server.stages()
    asked = len(server.requests)
    assert backtest(bench, "--backend", "offline", "--judge", "model") == 0
    capsys.readouterr()
    assert server.stages()[asked:] and set(server.stages()[asked:]) == {"judge"}


def test_model_judge_without_a_reachable_model_config_is_a_clean_error(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("WINELLBOT_OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    write_ferry_task(tmp_path / "tasks")
    s = Settings()
    s.state.path = str(tmp_path / "state.sqlite")
    (tmp_path / "c.toml").write_text(dump_settings(s), encoding="utf-8")  # api.openai.com, no key
    code = main(["backtest", str(tmp_path / "tasks"), "--output", str(tmp_path / "o.jsonl"), "--config",
                 str(tmp_path / "c.toml"), "--judge", "model", "--no-progress"])
    assert code == 1
    assert "needs WINELLBOT_OPENAI_API_KEY" in capsys.readouterr().err
