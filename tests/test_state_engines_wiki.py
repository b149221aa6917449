"""The bot's commands against the real local wiki with the state on MariaDB (tests/mariadb.py)."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

from mariadb import mariadb, mariadb_url  # noqa: F401 - the fixtures
from wikiscene import cli, held_jobs, release_when_arrived, warm_embeddings

from winellbot.cli import main
from winellbot.config import dump_settings
from winellbot.state.db import State


def _config(settings, tmp_path) -> str:
    path = tmp_path / "winellbot.toml"
    path.write_text(dump_settings(settings), encoding="utf-8")
    return str(path)


def test_once_status_posted_and_a_dry_run_with_the_state_on_mariadb(scene, mariadb_url, tmp_path, capsys):
    s = scene["settings"]
    s.state.url = mariadb_url
    config = _config(s, tmp_path)
    assert main(["once", "--force", "--config", config, f"-page:{scene['opted']}", f"-page:{scene['listed']}"]) == 0
    assert not (tmp_path / "state.sqlite").exists(), "nothing went to the SQLite file"
    state = State(url=mariadb_url)
    posted = state.suggestions(status="posted")
    assert {r["page"] for r in posted} == {scene["opted"], scene["listed"]}
    capsys.readouterr()
    assert main(["status", "--config", config, "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["by_status"]["posted"] == len(posted) and info["runs"][0]["status"] == "done"
    assert main(["status", "--config", config]) == 0
    out = capsys.readouterr().out
    assert "state: mysql+pymysql://winellbot:***@" in out and "test-password" not in out
    assert main(["posted", "--config", config, "--json"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert {r["id"] for r in rows} == {r["id"] for r in posted} and all("oldid=" in r["url"] for r in rows)
    runs = state.db["runs"].count
    assert main(["once", "--force", "--dry-run", "--config", config, f"-page:{scene['opted']}"]) == 0
    assert state.db["runs"].count == runs + 1 and state.latest_run()["status"] == "dry-run"
    assert {r["id"] for r in state.suggestions(status="posted")} == {r["id"] for r in posted}


def test_sigkill_while_posting_never_posts_twice_and_loses_nothing_on_mariadb(scene, site, mariadb_url, tmp_path):
    """tests/test_bot_wiki.py's crash test with the state on MariaDB: killed right after its first wiki
    write, before the state records it, the next run posts everything once."""
    import pywikibot

    s = scene["settings"]
    s.state.url = mariadb_url
    config = _config(s, tmp_path)
    env = dict(os.environ, WINELLBOT_PAUSE_AFTER_WRITE="60", PYTHONUNBUFFERED="1")
    cmd = [sys.executable, "-m", "winellbot.cli", "once", "--force", "--config", config,
           f"-page:{scene['opted']}", f"-page:{scene['listed']}"]
    warm_embeddings(s, [scene["opted"], scene["listed"]])  # the killed job loads no sentence model
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    talk = pywikibot.Page(site, f"Talk:{scene['opted']}")
    deadline = time.time() + 120
    while time.time() < deadline and proc.poll() is None:
        talk = pywikibot.Page(site, talk.title())
        if "winellbot-suggestion" in talk.text:
            break
        time.sleep(0.3)
    assert proc.poll() is None, proc.stdout.read().decode()
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    state = State(url=mariadb_url)
    found = {row["id"] for row in state.suggestions(status="proposed")}
    assert found and not state.suggestions(status="posted"), "killed before state recorded the post"
    held = [r["title"] for r in state.db["pages"].rows_where("lease_holder is not null")]
    assert scene["opted"] in held, "the killed job's lease is still on its page"
    # the next runs need no process of their own: the CLI in this one (without the pause)
    again = ["once", "--force", f"-page:{scene['opted']}", f"-page:{scene['listed']}"]
    early = cli(config, *again)
    assert early.returncode == 0 and not state.suggestions(status="posted"), "the page is left to its lease"
    # As after the lease time (winellbot/state/leases.py): the killed job renews neither its leases nor its heartbeat.
    state.db.execute("update pages set lease_expires = lease_expires - 3600")
    state.db.execute("update runs set heartbeat = heartbeat - 3600 where status = 'running'")

    done = cli(config, *again)
    assert done.returncode == 0, done.stdout + done.stderr
    texts = pywikibot.Page(site, talk.title()).text + pywikibot.Page(site, f"{s.wiki.queue}/{scene['listed']}").text
    posted = {row["id"] for row in state.suggestions(status="posted")}
    assert found <= posted, "everything found before the crash was posted after it"
    for sid in posted:
        assert texts.count(f"<!-- winellbot-suggestion:{sid} -->") == 1, sid
    assert [r["status"] for r in state.db["runs"].rows_where(order_by="id")] == ["killed", "done", "done"]
    assert state.db["pages"].count_where("lease_holder is not null") == 0, "every lease released"


def test_two_jobs_at_once_on_one_database_treat_each_page_once_and_post_each_suggestion_once(
        scene, site, mariadb_url, tmp_path):
    """Two `once` jobs started together on the same MariaDB state: no job lock refuses the second;
    between them each page is treated once (leases), and every suggestion is on the wiki once."""
    import pywikibot

    s = scene["settings"]
    s.state.url = mariadb_url
    config = _config(s, tmp_path)
    State(url=mariadb_url)  # the schema made once, as by the first job on a new database
    warm_embeddings(s, [scene["opted"], scene["listed"]])  # the jobs load no sentence model
    cmd = [sys.executable, "-m", "winellbot.cli", "once", "--force", "--config", config,
           f"-page:{scene['opted']}", f"-page:{scene['listed']}"]
    jobs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) for _ in range(2)]
    outs = [job.communicate(timeout=300)[0] for job in jobs]
    assert [job.returncode for job in jobs] == [0, 0], outs
    state = State(url=mariadb_url)
    runs = list(state.db["runs"].rows_where(order_by="id"))
    assert [r["status"] for r in runs] == ["done", "done"] and len({r["job"] for r in runs}) == 2
    assert sum(r["pages"] for r in runs) == 2, "each page treated by one job"
    posted = {row["id"] for row in state.suggestions(status="posted")}
    texts = (pywikibot.Page(site, f"Talk:{scene['opted']}").text
             + pywikibot.Page(site, f"{s.wiki.queue}/{scene['listed']}").text)
    assert posted and len(state.posts()) == len(posted)
    for sid in posted:
        assert texts.count(f"<!-- winellbot-suggestion:{sid} -->") == 1, sid


def test_two_jobs_posting_at_once_hold_the_daily_cap_together(scene, site, mariadb_url, tmp_path):
    """Each job treats one of the two pages; both plan their posts (each sees nothing posted today) and are held
    there until both have, then post: with a cap of one suggestion a day on the wiki, one suggestion reaches it."""
    import pywikibot

    s = scene["settings"]
    s.state.url = mariadb_url
    s.posting.max_per_wiki_per_day = 1
    config = _config(s, tmp_path)
    State(url=mariadb_url)
    warm_embeddings(s, [scene["opted"], scene["listed"]])  # the jobs load no sentence model
    held = tmp_path / "held"
    jobs = held_jobs(held, "WINELLBOT_PAUSE_BEFORE_POST",
                     [["once", "--force", "--config", config, f"-page:{page}"] for page in (scene["opted"], scene["listed"])],
                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    together = release_when_arrived(held, jobs)
    outs = [job.communicate(timeout=300)[0] for job in jobs]
    assert [job.returncode for job in jobs] == [0, 0], outs
    assert together == 2, "both jobs planned their posts before either posted"
    state = State(url=mariadb_url)
    assert [r["pages"] for r in state.db["runs"].rows_where(order_by="id")] == [1, 1], "the jobs ran side by side"
    texts = (pywikibot.Page(site, f"Talk:{scene['opted']}").text
             + pywikibot.Page(site, f"{s.wiki.queue}/{scene['listed']}").text)
    assert texts.count("<!-- winellbot-suggestion:") == 1 and len(state.posts()) == 1
    assert len(state.suggestions(status="proposed")) >= 1, "the other waits for a later cycle"


def test_a_30_mb_source_on_mariadb_is_a_counted_skip_and_is_not_stored_whole(scene, mariadb_url, tmp_path, capsys):
    """A document of 30 MB in the corpus (over the server's max_allowed_packet, 16 MiB): the bot does not read it
    (over the reading cap), keeps none of its text, and counts the skip among the cycle's errors and skips."""
    from pathlib import Path

    s = scene["settings"]
    s.state.url = mariadb_url
    huge = {"id": "huge", "url": "https://news.example.org/huge", "title": f"{scene['opted']} harbour news",
            "published": "2026-05-01", "publisher": "Huge Gazette",
            "text": f"{scene['opted']} elected a mayor and repaired its harbour wall. " * 500_000}
    assert len(huge["text"]) > 30_000_000
    with (Path(s.search.corpus_dir) / "news.jsonl").open("a", encoding="utf-8") as fh:
        fh.write("\n" + json.dumps(huge))
    config = _config(s, tmp_path)
    assert main(["once", "--force", "--config", config, f"-page:{scene['opted']}"]) == 0
    report = capsys.readouterr().out.strip().splitlines()[-1]
    state = State(url=mariadb_url)
    source = state.source(huge["url"])
    assert source["text"] is None and "over the cap" in source["error"], source["error"]
    errors = list(state.db["errors"].rows)
    assert [e["stage"] for e in errors] == ["pipeline"], errors  # no "internal" or server error
    assert errors[0]["message"].startswith(f"source not read: {huge['url']}: ")
    run = state.latest_run()
    assert run["status"] == "done" and run["errors"] == 1 and run["posted"] == 1
    assert "1 error(s) or skip(s) recorded" in report, report
