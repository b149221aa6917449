"""The whole bot against a real local MediaWiki: one cycle, safety switches, and crash safety.

News documents are written here for the test (fictional); the pipeline is the offline one.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from wikiscene import (after_a_killed_job, configured_state, for_a_job_to_kill, in_process, run_cycle,
                       warm_embeddings)

from winellbot.config import dump_settings


def test_one_cycle_posts_to_talk_and_queue_and_never_edits_articles(scene, site):
    import pywikibot

    s = scene["settings"]
    report, state, bot = run_cycle(s, [scene["opted"], scene["listed"]])
    assert report.counter["errors"] == 0, state.db["errors"].rows
    talk = pywikibot.Page(site, f"Talk:{scene['opted']}")
    queue = pywikibot.Page(site, f"{s.wiki.queue}/{scene['listed']}")
    assert "Maria Olsen" in talk.text and "Earlier talk." in talk.text
    assert "Maria Olsen" in queue.text
    assert "<ref>" not in talk.text.split("Earlier talk.")[0]
    for title in (scene["opted"], scene["listed"]):
        users = {r.user for r in pywikibot.Page(site, title).revisions()}
        assert scene["bot"] not in users, f"the bot edited the article {title}"
    posted = state.suggestions(status="posted")
    assert posted and all(row["id"] in (talk.text + queue.text) for row in posted)
    # a second cycle finds the same facts and posts nothing twice
    report2, state2, _ = run_cycle(s, [scene["opted"], scene["listed"]])
    talk2 = pywikibot.Page(site, f"Talk:{scene['opted']}")
    for row in posted:
        assert talk2.text.count(f"<!-- winellbot-suggestion:{row['id']} -->") <= 1
    assert talk2.latest_revision_id == talk.latest_revision_id


def test_shutoff_page_stops_the_bot_before_any_write(scene, site):
    import pywikibot

    scene["wiki"].edit(scene["settings"].wiki.shutoff, "stop: under review")
    report, state, _ = run_cycle(scene["settings"], [scene["opted"]])
    assert report.stopped.startswith("shutoff")
    assert not pywikibot.Page(site, f"Talk:{scene['opted']}").text.count("winellbot-suggestion")


def test_nobots_on_the_talk_page_is_a_recorded_skip(scene, site):
    import pywikibot

    scene["wiki"].edit(f"Talk:{scene['opted']}", "{{Winellbot}}\n{{nobots}}\n")
    report, state, _ = run_cycle(scene["settings"], [scene["opted"]])
    assert report.counter["refused"] == 1
    assert "winellbot-suggestion" not in pywikibot.Page(site, f"Talk:{scene['opted']}").text
    assert state.suggestions(page=scene["opted"], status="proposed"), "the suggestions are kept for later"
    assert any("nobots" in e["message"] or "bots" in e["message"] for e in state.db["errors"].rows)


def test_dry_run_writes_nothing_but_records_the_suggestions(scene, site):
    import pywikibot

    report, state, _ = run_cycle(scene["settings"], [scene["opted"]], dry_run=True)
    assert report.counter["suggestions"] >= 1
    assert "winellbot-suggestion" not in pywikibot.Page(site, f"Talk:{scene['opted']}").text


def test_reviewer_verdicts_flow_back_into_state(scene, site):
    import pywikibot

    s = scene["settings"]
    _, state, _ = run_cycle(s, [scene["opted"]])
    talk = pywikibot.Page(site, f"Talk:{scene['opted']}")
    [first, *_] = state.suggestions(page=scene["opted"], status="posted")
    scene["wiki"].edit(talk.title(), talk.text.replace(f"id={first['id']}|status=pending",
                                                        f"id={first['id']}|status=rejected"))
    _, state, _ = run_cycle(s, [scene["opted"]])
    assert state.suggestion(first["id"])["status"] == "rejected"


def test_sigkill_while_posting_never_posts_twice_and_loses_nothing(scene, site, tmp_path):
    """Kill the bot right after its first wiki write (before state records it), then run it again: nothing
    is lost or posted twice, and the killed job's run is marked killed at the next start."""
    import pywikibot

    s = scene["settings"]
    config = tmp_path / "winellbot.toml"
    config.write_text(dump_settings(s), encoding="utf-8")
    env = for_a_job_to_kill(dict(os.environ, WINELLBOT_PAUSE_AFTER_WRITE="60", PYTHONUNBUFFERED="1"))
    args = ["once", "--force", "--config", str(config), f"-page:{scene['opted']}", f"-page:{scene['listed']}"]
    warm_embeddings(s, [scene["opted"], scene["listed"]])  # the killed job loads no sentence model
    proc = subprocess.Popen([sys.executable, "-m", "winellbot.cli", *args], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT)
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
    state = configured_state(s)
    found = {row["id"] for row in state.suggestions(status="proposed")}
    assert found and not state.suggestions(status="posted"), "killed before state recorded the post"
    assert [r["status"] for r in state.db["runs"].rows] == ["running"]

    done = after_a_killed_job(s, *args)
    assert done.returncode == 0, done.stdout + done.stderr
    state = configured_state(s)
    texts = pywikibot.Page(site, talk.title()).text + pywikibot.Page(site, f"{s.wiki.queue}/{scene['listed']}").text
    posted = {row["id"] for row in state.suggestions(status="posted")}
    assert found <= posted, "everything found before the crash was posted after it"
    for sid in posted:  # including what the second run found for the page it had not reached
        assert texts.count(f"<!-- winellbot-suggestion:{sid} -->") == 1, sid
    status = in_process("status", "--config", str(config))
    assert "run 1: " in status.stdout and " killed " in status.stdout, status.stdout
    assert "run 2: " in status.stdout and " done " in status.stdout


def test_a_kill_between_the_queue_post_and_its_listing_is_repaired_by_the_next_run(scene, site, tmp_path):
    """Issue 30: after kills while posting, queue pages were never listed on the queue index."""
    import pywikibot

    s = scene["settings"]
    config = tmp_path / "winellbot.toml"
    config.write_text(dump_settings(s), encoding="utf-8")
    env = for_a_job_to_kill(dict(os.environ, WINELLBOT_PAUSE_AFTER_WRITE="60", PYTHONUNBUFFERED="1"))
    args = ["once", "--force", "--config", str(config), f"-page:{scene['listed']}"]
    queue = f"{s.wiki.queue}/{scene['listed']}"
    warm_embeddings(s, [scene["listed"]])  # the killed job loads no sentence model
    proc = subprocess.Popen([sys.executable, "-m", "winellbot.cli", *args], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT)
    deadline = time.time() + 120
    while time.time() < deadline and proc.poll() is None and not pywikibot.Page(site, queue).exists():
        time.sleep(0.3)
    assert proc.poll() is None, proc.stdout.read().decode()
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    index = pywikibot.Page(site, s.wiki.queue)
    assert not index.exists() or queue not in index.get(force=True), "killed before the listing"
    done = after_a_killed_job(s, *args)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"[[{queue}" in pywikibot.Page(site, s.wiki.queue).get(force=True)


def test_pywikibot_simulate_writes_nothing_and_keeps_suggestions_pending(scene, site, tmp_path):
    """`-simulate` (Pywikibot's global) is a dry run for the state too, in a running job (`run -simulate`, a process
    of its own, stopped by SIGTERM after its first cycle) as in one cycle (`once -simulate`, in this process, whose
    Pywikibot settings `in_process` puts back, so the real run after it writes):
    nothing found or scheduled is kept, so the next real run does everything a real run does; each run is kept,
    marked, as a dry run's is (issues 30 and 45). `run -simulate` worked on the real state: its cycles marked the
    pages checked (and kept what they found) though nothing was posted, so the next real run passed them over."""
    import pywikibot

    s = scene["settings"]
    config = tmp_path / "winellbot.toml"
    config.write_text(dump_settings(s), encoding="utf-8")
    pages = [f"-page:{scene['opted']}", f"-page:{scene['listed']}"]

    def kept_nothing(runs: list[str]) -> None:
        assert "winellbot-suggestion" not in pywikibot.Page(site, f"Talk:{scene['opted']}").text
        assert not pywikibot.Page(site, f"{s.wiki.queue}/{scene['listed']}").exists()
        state = configured_state(s)
        assert not state.suggestions() and not list(state.db["pages"].rows)
        assert [r["status"] for r in state.db["runs"].rows] == runs

    warm_embeddings(s, [scene["opted"], scene["listed"]])  # the `run -simulate` job loads no sentence model
    job = subprocess.Popen([sys.executable, "-m", "winellbot.cli", "run", "--config", str(config), *pages,
                            "-simulate"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        end = time.monotonic() + 240
        while time.monotonic() < end and job.poll() is None:
            if configured_state(s).db["runs"].count_where("status = 'dry-run'"):
                break  # the first cycle ended and its run was kept
            time.sleep(0.05)
    finally:
        job.send_signal(signal.SIGTERM)
        out, err = job.communicate(timeout=120)
    assert "Traceback" not in err and "page(s)" in out, out + err
    kept_nothing(["dry-run"])

    done = in_process("once", "--config", str(config), *pages, "-simulate")
    assert done.returncode == 0, done.stdout + done.stderr
    kept_nothing(["dry-run", "dry-run"])
    real = in_process("once", "--config", str(config), *pages)
    assert real.returncode == 0, real.stdout + real.stderr
    assert "winellbot-suggestion" in pywikibot.Page(site, f"Talk:{scene['opted']}").text


def test_pages_that_are_not_articles_are_each_said_and_recorded_not_passed_over(scene, tmp_path, capsys):
    """Issue 45: `once -page:` a talk page, a user page or Special:Random ended "0 page(s)" with nothing said.
    The CLI in this process: what it says and records is the same, and the pipeline's models are loaded once."""
    from winellbot.cli import main

    s = scene["settings"]
    config = tmp_path / "winellbot.toml"
    config.write_text(dump_settings(s), encoding="utf-8")
    given = [f"Talk:{scene['opted']}", f"User:{scene['bot']}/Notes", "Special:Random", scene["opted"]]
    code = main(["once", "--force", "--config", str(config), *(f"-page:{t}" for t in given)])
    out, err = capsys.readouterr()
    assert code == 0, out + err
    said = [line for line in out.splitlines() if line.startswith("not treated: ")]
    assert said == [f"not treated: 'Talk:{scene['opted']}' is a talk page, not an article; give the article's "
                    f"title ({scene['opted']!r})",
                    f"not treated: 'User:{scene['bot']}/Notes' is one of the bot's own pages, not an article",
                    "not treated: 'Special:Random' is a special page, not an article"], out
    assert "1 page(s)" in out.splitlines()[-1] and "3 error(s) or skip(s) recorded" in out
    recorded = [e["page"] for e in configured_state(s).db["errors"].rows_where("stage = 'title'")]
    assert recorded == given[:3]
