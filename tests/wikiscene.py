"""A fictional town scene on the real local wiki, shared by the bot's wiki tests.

Two fresh articles (one opted in on its talk page, one on a watchlist page), a shutoff page that
says "run", two news documents per town written for the test, and settings for all of it. The
``scene`` fixture (conftest.py) builds one per test; :func:`run_cycle` runs the real bot on it.

The ``model_town`` fixture (conftest.py, :func:`make_town`) is one opted-in town of the same kind with the
OpenAI-compatible backend: :class:`TownModel` is its scripted model, served by ``scripted_openai``.
"""
from __future__ import annotations

import contextlib
import datetime as dt
import io
import json
import logging
import os
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from scripted_openai import Received, ScriptedOpenAI

from winellbot import commands, factory
from winellbot.config import Settings, dump_settings
from winellbot.errors import StateError
from winellbot.models import Citation, Document, Edit, Suggestion, Update
from winellbot.state.db import State

ARTICLE = """'''{name}''' is a fictional harbour town in the test county of Westmark.

== History ==
{name} was founded in 1802 as a fishing village. The harbour wall was built in 1850.

== Government ==
The town council has eleven members. The mayor is elected every four years.
"""

NEWS = [
    {"id": "n1", "url": "https://news.example.org/{slug}-mayor", "title": "{name} elects a new mayor",
     "published": "2026-03-02", "publisher": "Westmark Gazette",
     "text": "{name} elected Maria Olsen as its new mayor on 1 March 2026. The town council confirmed that "
             "Olsen won 62 percent of the vote in the mayoral election. Olsen previously led the harbour board."},
    {"id": "n2", "url": "https://news.example.org/{slug}-harbour", "title": "{name} harbour wall repaired",
     "published": "2026-04-10", "publisher": "Coast Weekly",
     "text": "The harbour wall of {name}, built in 1850, was repaired at a cost of 4.2 million euros in 2026. "
             "Engineers finished the repairs of the harbour wall in April 2026 after two years of work."},
]


def write_news(folder: Path, name: str) -> None:
    slug = name.lower().replace(" ", "-")
    docs = [{k: (v.format(name=name, slug=slug) if isinstance(v, str) else v) for k, v in d.items()}
            for d in NEWS]
    for d in docs:
        d["id"] = f"{slug}-{d['id']}"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "news.jsonl").write_text("\n".join(json.dumps(d) for d in docs), encoding="utf-8")


def settings_for(local_wiki, tmp_path: Path, watchlist: str, shutoff: str) -> Settings:
    creds = local_wiki.credentials
    s = Settings()
    s.wiki.api_url = local_wiki.api_url
    s.wiki.username = creds.bot_user
    s.wiki.bot_password_app = creds.bot_app
    s.wiki.watchlist_page = watchlist
    s.wiki.shutoff_page = shutoff
    s.wiki.put_throttle = 0.0
    s.search.corpus_dir = str(tmp_path / "news")
    s.search.window_days = 36500
    s.state.path = str(tmp_path / "state.sqlite")
    # The scene's towns differ only by a made-up name; the acceptability score's estimate moves with
    # it. These tests are about the wiki, so its bar is 0 (tests/test_acceptability.py tests the bar).
    s.pipeline.acceptability_threshold = 0.0
    # These tests are about posting as the bot did before the review page (tests/test_review_wiki.py
    # tests the reviewed mode, where nothing is posted before a reviewer approves it).
    s.review.mode = "direct"
    return s


def make_scene(local_wiki, make_page, tmp_path: Path) -> dict:
    """Two fresh articles: one opted in on its talk page, one only on the watchlist."""
    bot = local_wiki.credentials.bot_user
    opted = make_page.title("Optedtown")
    listed = make_page.title("Listedtown")
    local_wiki.edit(opted, ARTICLE.format(name=opted))
    local_wiki.edit(f"Talk:{opted}", "{{Winellbot}}\nEarlier talk.")
    local_wiki.edit(listed, ARTICLE.format(name=listed))
    watchlist = f"User:{bot}/Watchlist-{make_page.title('w').replace(' ', '')}"
    local_wiki.edit(watchlist, f"* [[{listed}]]\n")
    shutoff = f"User:{bot}/Shutoff-{make_page.title('s').replace(' ', '')}"
    local_wiki.edit(shutoff, "run")
    write_news(tmp_path / "news", opted)
    with (tmp_path / "news" / "news.jsonl").open("a", encoding="utf-8") as fh:
        write_news(tmp_path / "news2", listed)
        fh.write("\n" + (tmp_path / "news2" / "news.jsonl").read_text(encoding="utf-8"))
    settings = settings_for(local_wiki, tmp_path, watchlist, shutoff)
    return {"opted": opted, "listed": listed, "settings": settings, "wiki": local_wiki, "bot": bot}


def configured_state(settings: Settings, *, readonly: bool = False) -> State:
    """The state the settings name, as the bot opens it: the SQLite file at ``[state] path``, or the MariaDB
    database of ``[state] url`` / ``WINELLBOT_STATE_URL`` (``WINELLBOT_TEST_ENGINE=mariadb``, tests/conftest.py)."""
    return commands.open_state(settings, readonly=readonly)


def recorded(settings: Settings, **where) -> list[dict]:
    """The suggestions a job running beside the test has recorded so far (``State.suggestions(**where)``);
    none while its state does not exist yet or is still being created."""
    try:
        state = configured_state(settings, readonly=True)
        try:
            return state.suggestions(**where)
        finally:
            state.db.close()
    except (StateError, sqlite3.Error):
        return []


KILLED_LEASE_S = 8.0


def for_a_job_to_kill(env: dict) -> dict:
    """``env`` for a job the test kills and the job started after it: on a database server a killed job's pages
    stay leased, and its run looks alive, until its lease runs out (10 minutes by default); here 8 s."""
    return {**env, "WINELLBOT_LEASE_SECONDS": str(KILLED_LEASE_S)}


def wait_out_a_killed_job(settings: Settings) -> None:
    """On a database server: until the killed job's leases and heartbeat ran out (SQLite's lock went with it)."""
    if settings.state.server_url:
        time.sleep(KILLED_LEASE_S + 1)


@dataclass
class Done:
    """What a command ended with: its exit code and what it printed."""
    returncode: int
    stdout: str
    stderr: str


def in_process(*argv: str) -> Done:
    """The real CLI (``winellbot.cli.main(argv)``) in the test's process, as an operator would type it: for a
    command whose process proves nothing more than its exit code and output (the pipeline's models load once).
    ``stdout`` and ``stderr`` hold what a fresh process would print: on stderr the command's own lines,
    Pywikibot's output (it writes to ``sys.stderr``) and the log's warnings and errors (``logs.configure``'s
    stderr handler, which pytest's own root handlers make a no-op here). Pywikibot's process-wide settings,
    which the command sets from its config, are put back afterwards."""
    from winellbot.cli import main

    out, err = io.StringIO(), io.StringIO()
    handler = logging.StreamHandler(err)
    handler.setLevel(logging.WARNING)
    handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        with pywikibot_settings_kept(), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(list(argv))
    finally:
        root.removeHandler(handler)
    return Done(code, out.getvalue(), err.getvalue())


def cli(config, *args: str) -> Done:
    """``winellbot ARGS --config CONFIG`` in this process (:func:`in_process`)."""
    return in_process(*args, "--config", str(config))


def after_a_killed_job(settings: Settings, *argv: str) -> Done:
    """The job started after a killed one (``winellbot *argv``), once the killed job's leases ran out. On SQLite
    (the killed job's lock went with its process) in the test's process; on a database server in a process of its
    own with the killed job's short lease (:func:`for_a_job_to_kill`), which the bot reads when it is imported."""
    wait_out_a_killed_job(settings)
    if not settings.state.server_url:
        return in_process(*argv)
    done = subprocess.run([sys.executable, "-m", "winellbot.cli", *argv], env=for_a_job_to_kill(dict(os.environ)),
                          capture_output=True, text=True, timeout=300)
    return Done(done.returncode, done.stdout, done.stderr)


def held_at(monkeypatch, variable: str):
    """A job in the test's process (a thread) held at its first test pause ``variable`` (bot._pause_for_tests)
    until the test lets it go: returns the events ``(reached, go_on)``, set when the job got there and by the
    test to let it go on. Each pause also sleeps as ``variable`` says (0.1 s), as in a job of its own process."""
    reached, go_on = threading.Event(), threading.Event()

    def hold() -> None:
        reached.set()
        go_on.wait(120)

    monkeypatch.setenv(variable, "0.1")
    at_first_pause(monkeypatch, variable, hold)
    return reached, go_on


HELD_JOB = Path(__file__).resolve().parent / "held_job.py"


def held_jobs(folder: Path, variable: str, argvs, **popen) -> list[subprocess.Popen]:
    """``winellbot ARGV`` for each of ``argvs``, each in a process of its own held at its first pause ``variable``
    until :func:`release_when_arrived` lets them go (tests/held_job.py); ``popen``: subprocess.Popen's arguments."""
    folder.mkdir(parents=True, exist_ok=True)
    return [subprocess.Popen([sys.executable, str(HELD_JOB), str(folder), variable, *argv], **popen)
            for argv in argvs]


def release_when_arrived(folder: Path, jobs: list[subprocess.Popen], timeout: float = 240) -> int:
    """Lets the :func:`held_jobs` go once every one of them is held at its pause, or has ended (one with nothing
    to post never pauses), or after ``timeout`` seconds; returns how many were held there together."""
    deadline = time.monotonic() + timeout
    arrived = 0
    while time.monotonic() < deadline:
        arrived = len(list(folder.glob("arrived-*")))
        if arrived + sum(job.poll() is not None for job in jobs) >= len(jobs):
            break
        time.sleep(0.05)
    (folder / "go").touch()
    return arrived


def run_cycle(settings: Settings, titles, dry_run: bool = False):
    state = configured_state(settings)
    bot = commands.build_bot(settings, state, dry_run=dry_run,
                             wiki=factory.build_wiki(settings, Path(settings.state.path).parent))
    return bot.run(titles, force=True), state, bot


def warm_embeddings(settings: Settings, titles) -> None:
    """The sentence vectors a cycle over ``titles`` computes, put in the embedding cache of ``settings`` (the file
    beside ``[state] path`` unless ``[pipeline] embedding_cache`` names one), where a job started afterwards on
    these settings reads them (the cache jobs on one state share): that job's cycle loads no sentence model. The
    cycle runs here, as a dry run on a state of its own (in memory): nothing reaches the wiki or the settings' state."""
    import copy

    warm = copy.deepcopy(settings)
    warm.pipeline.embedding_cache = str(settings.pipeline.embedding_cache_path(settings.state.path))
    bot = commands.build_bot(warm, State(), dry_run=True,
                             wiki=factory.build_wiki(warm, Path(settings.state.path).parent))
    bot.run(titles, force=True)


_PYWIKIBOT_SETTINGS = ("max_retries", "retry_wait", "retry_max", "socket_timeout", "put_throttle", "minthrottle",
                       "write_maxlag", "simulate")


@contextlib.contextmanager
def pywikibot_settings_kept() -> Iterator[None]:
    """Pywikibot's retry, timeout, throttle and simulate settings and its HTTP session (with the per-request
    deadline winellbot.wiki.site.configure gives it) as they were before the block."""
    import pywikibot
    from pywikibot.comms import http

    kept = {name: getattr(pywikibot.config, name) for name in _PYWIKIBOT_SETTINGS}
    session, seconds = http.session, getattr(http.session, "seconds", None)
    try:
        yield
    finally:
        for name, value in kept.items():
            setattr(pywikibot.config, name, value)
        http.session = session
        if seconds is not None:
            session.seconds = seconds


def at_first_pause(monkeypatch, variable: str, act: Callable[[], None]) -> list[int]:
    """In this process, the bot calls ``act`` at its first test pause ``variable`` (bot._pause_for_tests, which
    still pauses as usual), and nothing more at the others; returns a list with one item per pause ``variable``
    the bot came to."""
    from winellbot import bot

    calls: list[int] = []
    pause = bot._pause_for_tests

    def acting(name: str) -> None:
        pause(name)
        if name == variable:
            calls.append(1)
            if len(calls) == 1:
                act()

    monkeypatch.setattr(bot, "_pause_for_tests", acting)
    return calls


def before_the_first_post(monkeypatch, act: Callable[[], None]) -> list[int]:
    """:func:`at_first_pause` at ``WINELLBOT_PAUSE_BEFORE_POST`` (a page's suggestions are in state, nothing is
    read for its post yet): the fault tests act there (delete the article, stop the wiki)."""
    return at_first_pause(monkeypatch, "WINELLBOT_PAUSE_BEFORE_POST", act)


def page_text(site, title: str) -> str:
    """A page's wikitext as the wiki holds it now ("" when it does not exist)."""
    import pywikibot

    page = pywikibot.Page(site, title)
    return page.text if page.exists() else ""


def fact_suggestion(article: str, fact: str = "A bridge opened in 2024.") -> Suggestion:
    """One small suggestion for ``article`` (for writer tests that only need something to post)."""
    doc = Document(id="d", url="https://news.example/fact", title="News", text=fact)
    edit = Edit("Old.", f"Old. {fact}", fact, Citation(doc.url, "News"))
    return Suggestion(article, 1, ("History",), 0, edit, Update(fact, ("History",), "", doc))


# -- one town with a scripted model, for the commands on the OpenAI-compatible backend --------------

HISTORY = "{name} was founded in 1802 as a fishing village. The harbour wall was built in 1850."
GOVERNMENT = "The town council has eleven members. The mayor is elected every four years."


def news(name: str, slug: str, published: str) -> list[dict]:
    return [
        {"id": f"{slug}-mayor", "url": f"https://news.example.org/{slug}-mayor", "published": published,
         "title": f"{name} elects a new mayor", "publisher": "Westmark Gazette",
         "text": f"{name} elected Maria Olsen as its new mayor on 1 March 2026. The town council confirmed "
                 "that Olsen won 62 percent of the vote in the mayoral election. Olsen previously led the "
                 "harbour board."},
        {"id": f"{slug}-harbour", "url": f"https://news.example.org/{slug}-harbour", "published": published,
         "title": f"{name} harbour wall repaired", "publisher": "Coast Weekly",
         "text": f"The harbour wall of {name}, built in 1850, was repaired at a cost of 4.2 million euros in "
                 "2026. Engineers finished the repairs in April 2026 after two years of work."},
    ]


class TownModel:
    """The scripted model: one answer per stage, chosen from what the request holds."""

    def __init__(self, name: str) -> None:
        # The news is dated today (see the model_town fixture) but tells of events in early 2026, which the
        # extractor would drop as older than the page's check window: the model gives no event dates.
        self.name = name
        self.mayor = {"fact": "Maria Olsen was elected mayor in March 2026 with 62 percent of the vote.",
                      "section": "Government", "event_date": None, "reason": "a new mayor",
                      "quote": f"{name} elected Maria Olsen as its new mayor on 1 March 2026. The town council "
                               "confirmed that Olsen won 62 percent of the vote"}
        self.harbour = {"fact": "The harbour wall was repaired in 2026 at a cost of 4.2 million euros.",
                        "section": "History", "event_date": None, "reason": "works on a landmark",
                        "quote": f"The harbour wall of {name}, built in 1850, was repaired at a cost of "
                                 "4.2 million euros in 2026"}

    def __call__(self, req: Received) -> str:
        text = req.text
        if req.stage == "criteria":
            return json.dumps({"sections": [
                {"section": "Lead", "criteria": "What the town is and where it lies."},
                {"section": "History", "criteria": "Founding, landmarks and works on them."},
                {"section": "Government", "criteria": "The council, the mayor and elections."}]})
        if req.stage == "navigator" and "Write the next search query" in text:
            tried = text.split("Queries already tried:")[1].split("Updates already kept:")[0]
            if "mayor election" not in tried:
                query = f"{self.name} mayor election"
            elif "harbour wall" not in tried:
                query = f"{self.name} harbour wall"
            else:
                query = f"{self.name} council news"
            return json.dumps({"query": query, "reason": "the next section's kind of news"})
        if req.stage == "navigator":
            return json.dumps({"choice": 1, "reason": "the top result fits the query"})
        if req.stage == "extractor":
            found = [u for u in (self.mayor, self.harbour) if u["quote"].split(",")[0][:40] in text]
            return json.dumps({"updates": found})
        if req.stage == "aggregator":
            return json.dumps({"action": "add", "reason": "new to the section", "importance": 4})
        if req.stage == "editor":
            if self.mayor["fact"] in text:
                return f"{GOVERNMENT} {self.mayor['fact']}"
            return f"{HISTORY.format(name=self.name)} {self.harbour['fact']}"
        if req.stage == "judge":
            update = self.mayor if self.mayor["fact"].split(" in ")[0] in text else self.harbour
            return json.dumps({"verdict": "supported", "quote": update["quote"], "reason": "stated"})
        raise AssertionError(f"unexpected stage {req.stage!r}")


def make_town(local_wiki, make_page, tmp_path: Path) -> dict:
    """The ``model_town`` fixture: an opted-in article, its news corpus, a started :class:`TownModel` server and a
    config pointing at both (``name``, ``docs``, ``server``, ``config``, ``state``, ``settings``); the caller stops the server."""
    name = make_page.title("Harbourtown")
    local_wiki.edit(name, ARTICLE.format(name=name))
    local_wiki.edit(f"Talk:{name}", "{{Winellbot}}\nEarlier talk.")
    bot = local_wiki.credentials.bot_user
    shutoff = f"User:{bot}/Shutoff-{make_page.title('s').replace(' ', '')}"
    local_wiki.edit(shutoff, "run")
    corpus = tmp_path / "news"
    corpus.mkdir()
    slug = name.lower().replace(" ", "-")
    # dated today (UTC, as the state's last check is): still new after the first run's check
    docs = news(name, slug, dt.datetime.now(dt.timezone.utc).date().isoformat())
    (corpus / "news.jsonl").write_text("\n".join(json.dumps(d) for d in docs), encoding="utf-8")
    server = ScriptedOpenAI(TownModel(name)).start()
    s = Settings()
    s.wiki.api_url = local_wiki.api_url
    s.wiki.username = bot
    s.wiki.bot_password_app = local_wiki.credentials.bot_app
    s.wiki.shutoff_page = shutoff
    s.wiki.put_throttle = 0.0
    s.pipeline.backend = "openai"
    s.llm.base_url = server.base_url
    s.llm.model = "scripted-small"
    s.llm.stage_models = {"criteria": "scripted-large"}
    s.search.backend = "corpus"
    s.search.corpus_dir = str(corpus)
    s.state.path = str(tmp_path / "state.sqlite")
    s.review.mode = "direct"  # posting as before the review page (tests/test_review_wiki.py: the reviewed mode)
    config = tmp_path / "winellbot.toml"
    config.write_text(dump_settings(s), encoding="utf-8")
    return {"name": name, "docs": docs, "server": server, "config": str(config), "state": s.state.path,
            "settings": s}
