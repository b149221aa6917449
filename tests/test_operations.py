"""Operator commands against the real local wiki: `posted`, `withdraw`, and the rotating log file."""
from __future__ import annotations

import json
import logging

import requests

from wikiscene import configured_state, run_cycle
from winellbot import logs
from winellbot.cli import main
from winellbot.config import dump_settings


def _config(scene, tmp_path) -> str:
    path = tmp_path / "winellbot.toml"
    path.write_text(dump_settings(scene["settings"]), encoding="utf-8")
    return str(path)


def _talk(scene) -> str:
    return scene["wiki"].admin()._get(action="query", prop="revisions", titles=f"Talk:{scene['opted']}",
                                      rvprop="content", rvslots="main", formatversion="2",
                                      )["query"]["pages"][0]["revisions"][0]["slots"]["main"]["content"]


def test_posted_lists_page_section_status_and_a_permanent_link_to_the_box(scene, tmp_path, capsys):
    run_cycle(scene["settings"], [scene["opted"], scene["listed"]])
    config = _config(scene, tmp_path)
    assert main(["posted", "--config", config, "--json"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert {r["page"] for r in rows} == {scene["opted"], scene["listed"]}
    for r in rows:
        assert r["status"] == "posted" and r["section"] and r["target"]
        assert "oldid=" in r["url"] and r["url"].endswith(f"#winellbot-{r['id']}")
        html = requests.get(r["url"], timeout=30).text
        assert f'id="winellbot-{r["id"]}"' in html, "the link's anchor is the suggestion's box"
    assert main(["posted", "--config", config, "--page", scene["listed"]]) == 0
    out = capsys.readouterr().out
    assert scene["listed"] in out and scene["opted"] not in out
    assert main(["posted", "--config", config, "--since", "2999-01-01"]) == 0
    assert "no posted suggestions" in capsys.readouterr().out
    assert main(["posted", "--config", config, "--since", "yesterday"]) == 1


def test_withdraw_sets_the_status_on_the_wiki_and_in_state_and_leaves_reviewers_text_alone(scene, tmp_path, capsys):
    _, state, _ = run_cycle(scene["settings"], [scene["opted"]])
    config = _config(scene, tmp_path)
    first, second, *_ = state.suggestions(page=scene["opted"], status="posted")
    reply = "\n:I checked the source; this one looks wrong to me. ~~~~\n"
    before = _talk(scene).replace(f"<!-- /winellbot-suggestion:{first['id']} -->",
                                  f"<!-- /winellbot-suggestion:{first['id']} -->{reply}")
    before = before.replace(f"id={second['id']}|status=pending", f"id={second['id']}|status=accepted")
    scene["wiki"].edit(f"Talk:{scene['opted']}", before)
    before = _talk(scene)  # as saved (the signature expanded)

    assert main(["withdraw", first["id"][:8], "--config", config, "--reason", "wrong date"]) == 0
    after = _talk(scene)
    assert after == before.replace(f"id={first['id']}|status=pending", f"id={first['id']}|status=withdrawn")
    assert "this one looks wrong to me" in after
    row = configured_state(scene["settings"]).suggestion(first["id"])
    assert row["status"] == "withdrawn" and "wrong date" in row["status_reason"]
    assert "withdrawn on Talk:" in capsys.readouterr().out

    assert main(["withdraw", second["id"], "--config", config]) == 1, "a reviewer's verdict stands"
    assert "status=accepted" in capsys.readouterr().out and _talk(scene) == after
    assert main(["withdraw", second["id"], "--config", config, "--force"]) == 0
    assert f"id={second['id']}|status=withdrawn" in _talk(scene)
    assert main(["withdraw", second["id"], "--config", config]) == 0
    assert "already withdrawn" in capsys.readouterr().out

    assert main(["posted", "--config", config, "--json"]) == 0
    statuses = {json.loads(x)["id"]: json.loads(x)["status"] for x in capsys.readouterr().out.splitlines()}
    assert statuses[first["id"]] == statuses[second["id"]] == "withdrawn"
    assert main(["withdraw", "0123456789abcdef", "--config", config]) == 1


def test_log_file_option_logs_the_cycle_and_rotates(scene, tmp_path):
    config = _config(scene, tmp_path)
    log_file = tmp_path / "logs" / "winellbot.log"
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    try:
        assert main(["once", "--force", "--config", config, "--log-file", str(log_file),
                     f"-page:{scene['listed']}"]) == 0
        text = log_file.read_text(encoding="utf-8")
        assert f"{scene['listed']}: queue, " in text and " INFO winellbot.bot: " in text
        rotating = logs.add_file(tmp_path / "small.log", max_bytes=200, backup_count=2)
        for i in range(40):
            logging.getLogger("winellbot.test").warning("line %d of a log that outgrows its file", i)
        assert rotating.with_name("small.log.1").is_file() and rotating.with_name("small.log.2").is_file()
        assert not rotating.with_name("small.log.3").exists()
    finally:
        for h in [h for h in root.handlers if h not in handlers]:
            root.removeHandler(h)
            h.close()
        root.setLevel(level)


def test_the_user_page_names_the_operator_and_every_model_the_offline_backend_uses():
    """Issue 30: it said placement "is done by word statistics" and, without --operator, named nobody."""
    from winellbot.config import Settings
    from winellbot.wiki.userpage import render_user_page

    page = render_user_page(Settings(), operator="Ada")
    assert "run by [[User:Ada|Ada]]" in page
    for model in ("all-MiniLM-L6-v2", "all-mpnet-base-v2", "en_core_web_sm", "punctuation restorer", "py3langid",
                  "acceptability score"):
        assert model in page, model
    import subprocess
    import sys
    done = subprocess.run([sys.executable, "-m", "winellbot.cli", "userpage"], capture_output=True, text=True)
    assert done.returncode != 0 and "--operator" in done.stderr
