"""A full disk never leaves the wiki ahead of the state, on the real local wiki with a real full file system
(a small tmpfs holding the state and Pywikibot's files, tests/storage_faults.py): a post is made only when
its record can be written, one saved and then not recorded is recorded at the next start with the revision
that added it, and a full disk under Pywikibot's own files is one line."""
from __future__ import annotations

import os
import subprocess
import sys
import threading

import pytest
from storage_faults import fill, small_disk
from wikiscene import configured_state, held_at, in_process

from winellbot.config import dump_settings

pytestmark = pytest.mark.sqlite_state  # the SQLite file's disk; a MariaDB state lives on its server's

MARK = "<!-- winellbot-suggestion:"


def said(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.strip() and not line.startswith("Logging in to ")]


def once(config, page: str, env: dict | None = None, **kwargs):
    return subprocess.Popen([sys.executable, "-m", "winellbot.cli", "once", f"-page:{page}", "--config", str(config)],
                            env={**os.environ, **(env or {})}, text=True, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, **kwargs)


def on_disk(scene, tmp_path, size_mb: int, margin_mb: float):
    """The scene's state (and Pywikibot's folder beside it) on a disk of ``size_mb`` MB; its config file."""
    disk = tmp_path / "disk"
    mounted = small_disk(disk, size_mb)
    mounted.__enter__()
    s = scene["settings"]
    s.state.path = str(disk / "state.sqlite")
    s.state.min_free_mb = margin_mb
    config = tmp_path / "winellbot.toml"
    config.write_text(dump_settings(s), encoding="utf-8")
    return disk, config, mounted


def talk(site, title: str):
    import pywikibot

    return pywikibot.Page(site, f"Talk:{title}")


def test_a_post_is_not_made_when_the_state_has_no_room_to_record_it(scene, site, tmp_path):
    disk, config, mounted = on_disk(scene, tmp_path, 24, margin_mb=6)
    try:
        fill(disk, leave_mb=4)  # room for the cycle's records, less than the margin kept for a post's
        done = in_process("once", f"-page:{scene['opted']}", "--config", str(config))
        assert done.returncode == 1, done.stdout + done.stderr
        [line] = said(done.stderr)
        assert "nothing posted to the wiki: the state's disk" in line and "less than the 6 MB" in line, line
        assert "Traceback" not in done.stdout + done.stderr
        page = talk(site, scene["opted"])
        assert MARK not in page.text
    finally:
        mounted.__exit__(None, None, None)


def test_a_post_saved_and_then_not_recorded_is_recorded_at_the_next_start_with_its_revision(scene, site, tmp_path,
                                                                                            monkeypatch):
    disk, config, mounted = on_disk(scene, tmp_path, 24, margin_mb=1)
    try:
        reached, go_on = held_at(monkeypatch, "WINELLBOT_PAUSE_AFTER_WRITE")
        ended = {}
        job = threading.Thread(target=lambda: ended.setdefault(
            "done", in_process("once", f"-page:{scene['opted']}", "--config", str(config))))
        job.start()
        try:
            assert reached.wait(240), "the job never saved its post"
            page = talk(site, scene["opted"])
            assert MARK in page.get(force=True)
            filler = fill(disk)  # the disk fills up between the wiki's save and the state's record
        finally:
            go_on.set()
            job.join(120)
        done = ended["done"]
        assert done.returncode == 1, done.stdout + done.stderr
        [line] = said(done.stderr)
        assert "state.sqlite failed: database or disk is full: its disk is full" in line, line
        assert "Traceback" not in done.stdout + done.stderr
        filler.unlink()
        state = configured_state(scene["settings"])
        posted_ids = [sid for sid in state.suggestions(page=scene["opted"]) if MARK + sid["id"] in page.get(force=True)]
        assert posted_ids and all(r["status"] != "posted" for r in posted_ids)  # the wiki ahead, for now
        state.db.close()

        again = in_process("once", f"-page:{scene['opted']}", "--config", str(config))
        assert again.returncode == 0, again.stdout + again.stderr
        text = page.get(force=True)
        adding = next(r.revid for r in page.revisions(content=True) if MARK in (r.text or "")
                      and all(MARK + s["id"] in r.text for s in posted_ids)
                      and r.revid == min(x.revid for x in page.revisions(content=True) if MARK in (x.text or "")))
        state = configured_state(scene["settings"])
        for row in posted_ids:
            assert text.count(f"{MARK}{row['id']} -->") == 1  # never twice
            assert state.suggestion(row["id"])["status"] == "posted"
            [post] = [p for p in state.posted(page=scene["opted"]) if p["id"] == row["id"]]
            assert post["revid"] == adding and post["target"] == page.title(), post
        assert not list(state.db["post_intents"].rows)
    finally:
        mounted.__exit__(None, None, None)


def test_a_full_disk_under_pywikibots_files_when_a_job_starts_is_one_line(scene, site, tmp_path):
    """Pywikibot keeps its cookie jar, throttle file and API cache beside the state: a full disk there
    is the one line every storage failure gets, not Pywikibot's traceback."""
    s = scene["settings"]
    config = tmp_path / "winellbot.toml"
    config.write_text(dump_settings(s), encoding="utf-8")
    folder = tmp_path / "pywikibot"  # the folder the job gives Pywikibot (beside the state)
    with small_disk(folder, 1):
        (folder / "user-config.py").write_text("# written by the test\n")
        os.chmod(folder / "user-config.py", 0o600)
        fill(folder)
        proc = once(config, scene["opted"])
        out, err = proc.communicate(timeout=300)
    assert proc.returncode == 1, out + err
    assert "Traceback" not in out + err, err
    [line] = said(err)
    assert "Pywikibot's files beside the state" in line and "disk is full" in line, line
    assert MARK not in talk(site, scene["opted"]).text


def test_an_announced_post_whose_page_cannot_be_read_is_one_recorded_error_and_the_cycle_goes_on(scene, site):
    """The talk page of an announced post now redirects out of its namespace: nothing there can be found; the
    announcement is dropped with a recorded error, and the cycle treats its pages as always."""
    from wikiscene import run_cycle

    from winellbot.state.intents import PostIntents

    scene["wiki"].edit(f"Talk:{scene['opted']}", "#REDIRECT [[Somewhere else]]")
    state = configured_state(scene["settings"])
    PostIntents(state).announce(scene["opted"], ["0123456789abcdef"])
    state.db.close()
    report, state, _ = run_cycle(scene["settings"], [scene["listed"]])
    assert report.pages == [scene["listed"]] and not report.stopped and report.counter["posted"] == 1
    [error] = [e for e in state.db["errors"].rows if e["page"] == scene["opted"]]
    assert error["stage"] == "post" and error["message"].startswith("a post announced and not recorded was not found")
    assert not list(state.db["post_intents"].rows)
