"""The backtest runs the pipeline the bot runs: one table of defaults, one builder."""
import dataclasses
import re

from bench_tasks import write_bridge_task

from winellbot import commands, factory
from winellbot.bench.cli import pipeline_factory
from winellbot.cli import main
from winellbot.config import load_settings
from winellbot.state.db import State


def settings_of(obj, depth=0):
    """Every stage's class and plain-valued attributes, recursively: what makes two pipelines the same."""
    if isinstance(obj, (str, int, float, bool, type(None))):
        return obj
    if isinstance(obj, (tuple, list)):
        return [settings_of(x, depth + 1) for x in obj]
    if isinstance(obj, dict):
        return {k: settings_of(v, depth + 1) for k, v in obj.items()}
    if depth > 6 or not hasattr(obj, "__dict__"):
        return type(obj).__name__
    fields = vars(obj) if not dataclasses.is_dataclass(obj) else {f.name: getattr(obj, f.name)
                                                                    for f in dataclasses.fields(obj)}
    return {"class": type(obj).__name__,
            **{k: settings_of(v, depth + 1) for k, v in sorted(fields.items()) if not callable(v)}}


def bot_pipeline(settings, tmp_path):
    """The pipeline ``winellbot once`` runs (the wiki connection is not part of it)."""
    state = State(tmp_path / "state.sqlite")
    return commands.build_bot(settings, state, wiki=factory.Wiki(None, None, None)).pipeline


def test_the_backtest_and_once_build_identical_pipelines(tmp_path):
    settings = load_settings(overrides={})
    bot = settings_of(bot_pipeline(settings, tmp_path))
    backtest = settings_of(pipeline_factory(settings)())
    assert bot == backtest
    loop = bot["loop"]
    assert (loop["max_iterations"], loop["max_empty"]) == (settings.pipeline.offline_max_iterations,
                                                           settings.pipeline.offline_max_empty)
    assert bot["max_suggestions"] == factory.CANDIDATES * settings.pipeline.max_suggestions


def test_a_config_file_moves_both_alike(tmp_path):
    config = tmp_path / "c.toml"
    config.write_text("[pipeline]\noffline_max_iterations = 3\noffline_max_empty = 1\nmax_suggestions = 2\n")
    settings = load_settings(config)
    bot = settings_of(bot_pipeline(settings, tmp_path))
    assert bot == settings_of(pipeline_factory(settings)())
    assert (bot["loop"]["max_iterations"], bot["loop"]["max_empty"], bot["max_suggestions"]) == (3, 1, 4)


def test_a_backtest_only_setting_is_a_flag_the_report_prints(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("WINELLBOT_CONFIG", raising=False)
    (tmp_path / "tasks").mkdir()
    write_bridge_task(tmp_path / "tasks" / "t.json")
    args = ["backtest", str(tmp_path / "tasks"), "--output", str(tmp_path / "o.jsonl"), "--no-progress"]
    assert main(args + ["--report", str(tmp_path / "r")]) == 0
    out = capsys.readouterr().out
    assert "configuration: the embedded defaults" in out
    assert "backtest-only settings: none (as deployed)" in out
    assert main(args + ["--set", "pipeline.offline_max_iterations=1", "--report", str(tmp_path / "r")]) == 0
    out = capsys.readouterr().out
    assert re.search(r"backtest-only settings: pipeline\.offline_max_iterations = 1\b", out)
    assert "pipeline.offline_max_iterations = 1 (default 40)" in out
    assert "pipeline.offline_max_iterations = 1" in (tmp_path / "r" / "report.md").read_text()
