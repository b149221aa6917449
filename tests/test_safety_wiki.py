"""What an operator can throw at the bot, through the real CLI against the real local wiki.

Title spellings and redirects, talk pages and the bot's own pages given as articles, dry runs
before a real run, and two jobs on one state. News documents are written for the tests (fictional).
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
import time

import pytest
import wikiscene
from wikiscene import Done, configured_state

from winellbot.config import dump_settings

_ID_LINE = "  ["


def cli(scene, *args: str) -> Done:
    """The real CLI (``winellbot.cli.main``) in this process, as an operator would type it."""
    return wikiscene.cli(scene["config"], *args)


@pytest.fixture
def town(scene, tmp_path):
    """The scene with its settings written to a config file for the CLI."""
    config = tmp_path / "winellbot.toml"
    config.write_text(dump_settings(scene["settings"]), encoding="utf-8")
    return {**scene, "config": config}


def error_lines(err: str) -> list[str]:
    """What the command said on stderr, less Pywikibot's own "Logging in to ..." notice."""
    return [line for line in err.splitlines() if line.strip() and not line.startswith("Logging in to ")]


def printed_ids(out: str) -> list[str]:
    """Suggestion ids in the order `winellbot article` printed them."""
    return [line.rsplit("[", 1)[1].rstrip("]") for line in out.splitlines() if line.startswith("== ")]


def ids_on(site, title: str) -> list[str]:
    import pywikibot

    from winellbot.wiki.render import _START

    page = pywikibot.Page(site, title)
    return _START.findall(page.text) if page.exists() else []


def test_three_spellings_and_a_redirect_give_one_set_of_suggestions_posted_once(town, site, local_wiki):
    title = town["opted"]
    redirect = f"{title} (alias)"
    local_wiki.edit(redirect, f"#REDIRECT [[{title}]]")
    spellings = [title, title[0].lower() + title[1:], title.replace(" ", "_"), redirect]
    seen = []
    for spelling in spellings:
        done = cli(town, "article", spelling, "--post")
        assert done.returncode == 0, done.stdout + done.stderr
        seen.append(printed_ids(done.stdout))
    # Later runs look only at news since the page's last check: they find nothing new, and above
    # all no second set under other ids.
    assert seen[0] and all(set(ids) <= set(seen[0]) for ids in seen), seen
    on_talk = ids_on(site, f"Talk:{title}")
    assert sorted(on_talk) == sorted(seen[0]), "each suggestion posted exactly once"
    state = configured_state(town["settings"])
    assert {row["page"] for row in state.suggestions()} == {title}
    assert state.db["pages"].count == 1


@pytest.mark.parametrize("given, problem", [
    ("Talk:{opted}", "is a talk page, not an article; give the article's title ('{opted}')"),
    ("User:{bot}/Queue/{opted}", "is one of the bot's own pages"),
    ("{opted} that does not exist", "there is no page '{opted} that does not exist' on the wiki"),
    ("Template:Winellbot", "is not an article (namespace 'Template')"),
    ("Special:RecentChanges", "is a special page, not an article"),
])
def test_what_is_not_an_article_gets_one_line_and_no_post(town, site, given, problem):
    given = given.format(**town)
    done = cli(town, "article", given, "--post")
    assert done.returncode == 1
    [line] = error_lines(done.stderr)
    assert line.startswith("winellbot: error: ") and problem.format(**town) in line, done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    import pywikibot

    assert not pywikibot.Page(site, f"{town['settings'].wiki.queue}/{given}").exists()
    assert not ids_on(site, f"Talk:{town['opted']}")


def test_dry_runs_change_nothing_and_show_what_the_real_run_posts(town, site, local_wiki):
    """Dry run, dry run, real run on one town; a real run alone on its twin: the same outcome."""
    one, twin = town["opted"], town["listed"]
    local_wiki.edit(f"Talk:{twin}", "{{Winellbot}}\nEarlier talk.")  # both opted in, alike
    dry = [cli(town, "article", one) for _ in range(2)]
    assert all(d.returncode == 0 for d in dry), dry[0].stderr

    def decided() -> dict:
        """Everything in the state that a later run decides on (not the dry runs' cost records)."""
        state = configured_state(town["settings"])
        return {t: list(state.db[t].rows) for t in state.db.table_names()
                if t not in ("runs", "llm_calls", "llm_cache", "_migrations")}

    assert not any(decided().values()), "a dry run records nothing a later run reads"
    assert printed_ids(dry[0].stdout) and printed_ids(dry[0].stdout) == printed_ids(dry[1].stdout)
    again = cli(town, "once", "--dry-run", f"-page:{one}")
    assert again.returncode == 0 and "1 page(s)" in again.stdout, again.stdout + again.stderr
    assert not any(decided().values())
    assert [r["status"] for r in configured_state(town["settings"]).db["runs"].rows] == ["dry-run"] * 3
    real = cli(town, "article", one, "--post")
    alone = cli(town, "article", twin, "--post")
    assert real.returncode == 0 and alone.returncode == 0, real.stderr + alone.stderr
    assert printed_ids(real.stdout) == printed_ids(dry[0].stdout)
    assert sorted(ids_on(site, f"Talk:{one}")) == sorted(printed_ids(dry[0].stdout))

    def shown(out: str, name: str) -> list[str]:
        # the acceptability estimate moves with the towns' made-up names (their digits are figures)
        slug = name.lower().replace(" ", "-")
        return [re.sub(r"uses it: [0-9.]+", "uses it: N", line.replace(name, "TOWN").replace(slug, "town"))
                for line in out.splitlines() if not line.startswith(("== ", "run "))]

    assert shown(real.stdout, one) == shown(alone.stdout, twin)
    state = configured_state(town["settings"])
    assert [r["status"] for r in state.suggestions(page=one)] == [r["status"] for r in state.suggestions(page=twin)]
    assert {r["status"] for r in state.suggestions(page=one)} <= {"posted", "held"}


def test_dry_runs_beside_a_real_job_neither_crash_nor_stop_it(town, site):
    """Issue 30: beside a real job, dry runs crashed with "database is locked" and the real job died
    in record_result or finish_run, leaving its run "running". The real job is a process of its own (SQLite's
    locks are between processes); dry runs follow one another in the test's process from the job's start to
    its end (three at least), so they meet each of its writes."""
    env = {**os.environ, "WINELLBOT_PAUSE_AFTER_WRITE": "2"}
    real = subprocess.Popen([sys.executable, "-m", "winellbot.cli", "once", "--force", f"-page:{town['opted']}",
                             f"-page:{town['listed']}", "--config", str(town["config"])], env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    dry, deadline = [], time.monotonic() + 300
    try:
        while (real.poll() is None and time.monotonic() < deadline) or len(dry) < 3:
            dry.append(cli(town, "article", town["listed"]))
    finally:
        out, err = real.communicate(timeout=300)
    assert real.returncode == 0, out + err
    assert all(d.returncode == 0 for d in dry), [d.stderr for d in dry]
    # a dry run whose cost records could not be kept under load says so in a warning, never a traceback
    assert not any("Traceback" in d.stderr for d in dry) and "locked" not in err
    runs = list(configured_state(town["settings"]).db["runs"].rows)
    assert [r["status"] for r in runs if r["status"] != "dry-run"] == ["done"]


@pytest.mark.sqlite_state  # the SQLite file's lock; on MariaDB several jobs share the state (test_state_engines_wiki.py)
def test_two_jobs_on_one_state_one_refuses_cleanly(town, site, tmp_path):
    """Two jobs started at once on one state: the one that took the lock waits at its first post until the other
    has ended (tests/held_job.py), so they overlap however the machine schedules them; the other refuses."""
    args = ["once", f"-page:{town['opted']}", f"-page:{town['listed']}", "--config", str(town["config"])]
    wikiscene.warm_embeddings(town["settings"], [town["opted"], town["listed"]])  # the jobs load no sentence model
    hold = tmp_path / "hold"
    procs = wikiscene.held_jobs(hold, "WINELLBOT_PAUSE_BEFORE_POST", [args, args], text=True,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert wikiscene.release_when_arrived(hold, procs) == 1
    outs = [(p.wait(timeout=300), *p.communicate()) for p in procs]
    codes = sorted(code for code, _, _ in outs)
    assert codes == [0, 1], outs
    refused = next(err for code, _, err in outs if code == 1)
    assert "refusing to start a second one" in refused and len(error_lines(refused)) == 1
    assert all("Traceback" not in out + err for _, out, err in outs)
    texts = ids_on(site, f"Talk:{town['opted']}") + ids_on(site, f"{town['settings'].wiki.queue}/{town['listed']}")
    assert texts and len(texts) == len(set(texts))
