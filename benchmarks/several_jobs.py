"""Several `winellbot once` jobs on one MariaDB state, against a real local wiki.

Creates a throwaway MediaWiki with two sets of fictional towns (P, and S for the baseline), each set on
a watchlist of its own (the bot posts to their queue pages), news for every town dated today, and a
MariaDB server of its own (tests/mariadb.py: Debian's mariadb-server, run unprivileged). Then, through
the real CLI:

1. one job over the first set (S towns, P unless ``--solo-pages``), on a database of its own: the
   baseline, in pages per second;
2. N jobs started together over the second set (P towns), on one database; with ``--kill K``, K times,
   a job holding leases (into its cycle) is killed with SIGKILL and a new one started in its place: the
   k-th kill at a random moment of the k-th K-th of 85% of the time the jobs should take (the baseline's
   pace shared by N), once some job holds leases, 0 to 3 s later. When all have ended, pages a killed
   job left under its lease are taken by one more job once the leases have run out
   (``WINELLBOT_LEASE_SECONDS``, 20 s here when killing).

The waits of a real wiki and the web, which several jobs overlap, are set here, never in the bot:
``--throttle S`` is ``[wiki] put_throttle`` (Pywikibot's seconds between saves; Pywikibot multiplies it
by the number of its processes on the same wiki that share its configuration folder, as the jobs here
do, so the jobs together save about as often as one job); ``--web-latency MS`` serves the news over HTTP
from a SearXNG-shaped server in this process (``/search`` answers from the same towns' news, each story
is a page of its own that the bot fetches), each answer sent MS milliseconds after the request, with
``[search] backend = "searxng"``; without it the bot reads the news from a local corpus (no HTTP).
``--wiki-workers W`` serves the wiki with W ``php -S`` workers (``PHP_CLI_SERVER_WORKERS``, default 4,
as a real wiki answers several requests at once; 1: one request at a time, as before).

It prints one JSON object: ``pages_done`` (second set, in the end), ``seconds`` (step 2 until every job
ended), ``pages_per_second`` (the pages done in those seconds: not those taken after the leases ran
out), ``speedup`` (against the baseline's pages per second), ``posts``, ``duplicate_posts`` (a
suggestion id more than once on the wiki), ``pages_done_twice`` (pages treated by more than one job
that finished, over those treated), ``caps_exceeded`` (posts beyond the daily or weekly caps),
``lost_pages`` (pages of the second set never treated), ``pages_per_run`` (the pages each job that
finished treated), ``log_errors`` (lines of the jobs' logs, which hold warnings and errors, at level
ERROR or CRITICAL or tracebacks, with a few examples; and the warnings), ``solo_cpu_seconds`` and
``team_cpu_seconds`` (CPU time of the jobs' own processes in steps 1 and 2: the rest of each step's
time they waited or were kept from a core), ``machine`` (its cores, and how many were busy on average
in each step, counting every process: the jobs, the wiki, the database and anyone else's),
``web_requests`` (searches and fetches served, with ``--web-latency``), with ``--kill`` ``kills_at_seconds`` (into step 2) and ``pages_done_after_leases``,
and the settings used (``settings``).

    .venv/bin/python benchmarks/several_jobs.py [--jobs 3] [--pages 30] [--kill 0] [--daily-cap 10000]
        [--throttle 0] [--web-latency MS] [--wiki-workers 4] [--solo-pages S] [--logs DIR]
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from crash_safety import ARTICLE, NEWS  # the same fictional towns and news

ROOT = Path(__file__).resolve().parents[1]
KILL_LEASE_SECONDS = 20
PUBLISHER = "Westmark Gazette (fictional)"
ACCEPT_ALL = 0.0  # [pipeline] acceptability_threshold


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=3)
    parser.add_argument("--pages", type=int, default=30)
    parser.add_argument("--solo-pages", type=int, default=None, help="towns of the baseline (default: --pages)")
    parser.add_argument("--kill", type=int, default=0)
    parser.add_argument("--daily-cap", type=int, default=10_000)
    parser.add_argument("--throttle", type=float, default=0.0, help="[wiki] put_throttle, seconds")
    parser.add_argument("--web-latency", type=float, default=None,
                        help="serve the news over HTTP, each answer this many milliseconds late")
    parser.add_argument("--wiki-workers", type=int, default=4, help="php -S workers serving the wiki")
    parser.add_argument("--logs", default="", help="keep the jobs' logs in this folder")
    parser.add_argument("--keep", action="store_true", help="keep the scratch folder (wiki, databases)")
    parser.add_argument("--seed", type=int, default=32)
    args = parser.parse_args(argv)
    if args.solo_pages is None:
        args.solo_pages = args.pages
    sys.path[:0] = [str(ROOT), str(ROOT / "tests")]
    from mariadb import MariaDB

    from winellbot.localwiki import serving
    from winellbot.processes import Children, stopping_on_signals
    from winellbot.wiki.site import prepare_pywikibot

    scratch = Path(tempfile.mkdtemp(prefix="winellbot-jobs-"))
    prepare_pywikibot(scratch / "pywikibot")
    if args.wiki_workers > 1:  # php -S forks this many workers (PHP 7.4 and later, not on Windows)
        os.environ["PHP_CLI_SERVER_WORKERS"] = str(args.wiki_workers)
    server = MariaDB(scratch / "mariadb")
    (scratch / "mariadb").mkdir()
    web = NewsServer(args.web_latency or 0.0) if args.web_latency is not None else None
    # Whatever ends it (the end, an error, Ctrl-C, SIGTERM from timeout or kill), the jobs, then the web
    # server, MariaDB and the wiki (php -S and its workers) are stopped on the way out.
    try:
        with stopping_on_signals(), contextlib.ExitStack() as stack:
            wiki = stack.enter_context(serving(scratch / "wiki"))
            stack.callback(server.stop)
            server.start()
            if web:
                stack.enter_context(web.http)
            jobs = stack.enter_context(Children())
            print(json.dumps(_run(wiki, server, web, scratch, args, jobs)))
        return 0
    finally:
        if args.keep:
            print(f"kept {scratch} (the MariaDB server is stopped)", file=sys.stderr)
        else:
            shutil.rmtree(scratch, ignore_errors=True)


class NewsServer:
    """A news site and a SearXNG-shaped search over it, on 127.0.0.1: ``/search?q=..&format=json`` ranks
    the stories with the bot's own local corpus (BM25 over title and text) and answers SearXNG's JSON;
    ``/news/<town>/<story>`` is the story's HTML page. Every answer waits ``latency_ms`` first, in a
    thread of its own (as a remote site's answers overlap)."""

    def __init__(self, latency_ms: float) -> None:
        self.stories: dict[str, dict] = {}  # path -> story
        self.index_path: Path | None = None
        self.counts: Counter = Counter()
        self._local = threading.local()
        self._lock = threading.Lock()
        from search_http import LocalServer  # tests/search_http.py (on sys.path, as tests/mariadb.py is)

        self.http = LocalServer(self.answer, latency_s=latency_ms / 1000.0, keep_alive=True)
        self.url = self.http.url

    def load(self, stories: list[dict], index_path: Path) -> None:
        """``stories``: the corpus's documents, their ``url`` a path here (``/news/...``)."""
        from winellbot.search.corpus import LocalCorpus

        self.stories = {d["url"]: d for d in stories}
        self.index_path = index_path
        LocalCorpus(index_path).add([dict(d, url=self.url + d["url"]) for d in stories])

    def answer(self, path: str):
        """The reply to a request for ``path``: a :class:`search_http.Reply`."""
        from search_http import Reply, json_reply

        parts = urlsplit(path)
        if parts.path == "/search":
            with self._lock:
                self.counts["searches"] += 1
            corpus = getattr(self._local, "corpus", None)
            if corpus is None:  # one SQLite connection per serving thread
                from winellbot.search.corpus import LocalCorpus

                corpus = self._local.corpus = LocalCorpus(self.index_path)
            query = (parse_qs(parts.query).get("q") or [""])[0]
            results = [{"url": r.url, "title": r.title, "content": r.snippet, "engine": "westmark",
                        "publishedDate": f"{r.published}T08:00:00"} for r in corpus.search(query, limit=10)]
            return json_reply({"query": query, "results": results})
        story = self.stories.get(parts.path)
        if story is None:
            with self._lock:
                self.counts["not_found"] += 1
            return Reply(404, "not found", content_type="text/plain")
        with self._lock:
            self.counts["fetches"] += 1
        page = (f"<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{story['title']}</title>"
                f"<meta property=\"og:site_name\" content=\"{PUBLISHER}\">"
                f"<meta property=\"article:published_time\" content=\"{story['published']}T08:00:00\"></head>"
                f"<body><header><a href=\"/\">{PUBLISHER}</a></header><main><article><h1>{story['title']}</h1>"
                f"<p class=\"date\">{story['published']}</p><p>{story['text']}</p></article></main>"
                f"<footer>Westmark Gazette, a fictional newspaper.</footer></body></html>")
        return Reply(200, page)


def _setup(wiki, server, web, scratch: Path, args) -> dict:
    from winellbot.config import Settings, dump_settings

    bot, today, year = wiki.credentials.bot_user, time.strftime("%Y-%m-%d"), time.strftime("%Y")
    sets = {"solo": [f"Solotown {n:03d}" for n in range(args.solo_pages)],
            "team": [f"Teamtown {n:03d}" for n in range(args.pages)]}
    content = {name: ARTICLE.format(name=name) for names in sets.values() for name in names}
    content.update({f"User:{bot}/Watchlist-{key}": "\n".join(f"* [[{n}]]" for n in names) for key, names in sets.items()})
    content[f"User:{bot}/Shutoff"] = "run"
    wiki.import_pages(content)
    stories = []
    for name in sets["solo"] + sets["team"]:
        slug = name.lower().replace(" ", "-")
        for key, title, text in NEWS:
            url = f"/news/{slug}/{key}" if web else f"https://news.example.org/{slug}/{key}"
            stories.append({"id": f"{slug}-{key}", "url": url, "title": title.format(name=name),
                            "published": today, "publisher": PUBLISHER, "text": text.format(name=name, year=year)})
    (scratch / "news").mkdir()
    if web:
        web.load(stories, scratch / "news-index.sqlite")
    else:
        with (scratch / "news" / "news.jsonl").open("w", encoding="utf-8") as fh:
            fh.writelines(json.dumps(story) + "\n" for story in stories)
    out = {"sets": sets}
    for key in sets:
        s = Settings()
        s.review.mode = "direct"  # posts as the bot did before the review page: what this measures
        s.wiki.api_url, s.wiki.username, s.wiki.bot_password_app = wiki.api_url, bot, wiki.credentials.bot_app
        s.wiki.watchlist_page, s.wiki.shutoff_page = f"User:{bot}/Watchlist-{key}", f"User:{bot}/Shutoff"
        s.wiki.put_throttle, s.wiki.max_wait = args.throttle, 30.0
        s.schedule.max_pages_per_cycle = max(len(names) for names in sets.values())  # all in one cycle
        s.posting.max_per_page_per_week, s.posting.max_per_wiki_per_day = 100, args.daily_cap
        # Every suggestion the gates let through is posted: the acceptability score, whose bar the
        # fictional towns' lines (copied from their news) miss, holds nothing here, as in similar_towns.py.
        s.pipeline.acceptability_threshold = ACCEPT_ALL
        s.search.window_days = 30
        if web:
            s.search.backend, s.search.base_url, s.search.allow_private_urls = "searxng", web.url, True
        else:
            s.search.corpus_dir = str(scratch / "news")
        s.state.path, s.state.url = str(scratch / f"{key}.sqlite"), server.new_database()
        config = scratch / f"{key}.toml"
        config.write_text(dump_settings(s), encoding="utf-8")
        out[key] = {"config": config, "url": s.state.url, "queue": s.wiki.queue, "settings": s}
    return out


def _run(wiki, server, web, scratch: Path, args, children) -> dict:
    rng = random.Random(args.seed)
    setup = _setup(wiki, server, web, scratch, args)
    env = dict(os.environ, WINELLBOT_BOT_PASSWORD=wiki.credentials.bot_password, PYTHONUNBUFFERED="1")
    if args.kill:
        env["WINELLBOT_LEASE_SECONDS"] = str(KILL_LEASE_SECONDS)
    logs = Path(args.logs) if args.logs else scratch / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    started: list[Path] = []

    def start(key: str) -> subprocess.Popen:
        cmd = [sys.executable, "-m", "winellbot.cli", "once", "--config", str(setup[key]["config"])]
        log = logs / f"{len(started):02d}-{key}.log"
        started.append(log)
        with log.open("w") as fh:
            job = children.start(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=fh, text=True)
        job.log = log  # type: ignore[attr-defined]
        return job

    cpu, machine = _children_cpu(), _machine_cpu()
    began = time.monotonic()
    solo = start("solo")
    solo.wait(timeout=4 * 3600)
    if solo.returncode != 0:
        raise SystemExit(f"the single job failed: {solo.log.read_text()[-2000:]}")
    solo_seconds = time.monotonic() - began
    solo_cpu, cpu = _children_cpu() - cpu, _children_cpu()
    solo_busy, machine = _busy_cores(machine), _machine_cpu()
    solo_done = _done(setup["solo"]["url"], setup["sets"]["solo"])
    web_solo = dict(web.counts) if web else {}
    print(json.dumps({"solo_pages_done": solo_done, "solo_seconds": round(solo_seconds, 1),
                      "solo_cpu_seconds": round(solo_cpu, 1), "busy_cores_solo": solo_busy}), file=sys.stderr)

    began = time.monotonic()
    jobs = [start("team") for _ in range(args.jobs)]
    expected = solo_seconds / max(solo_done, 1) * args.pages / max(args.jobs, 1)
    kills = _kill(jobs, lambda: start("team"), setup["team"]["url"], args.kill, began, expected, rng)
    for job in jobs:
        job.wait(timeout=4 * 3600)
    failures = [j.log.read_text()[-300:] for j in jobs if j.returncode not in (0, -9)]
    seconds = time.monotonic() - began
    team_cpu, team_busy = _children_cpu() - cpu, _busy_cores(machine)
    in_time = _done(setup["team"]["url"], setup["sets"]["team"])  # the rate counts these only
    if args.kill:  # what the killed jobs held waits for their leases, then one more job takes it
        time.sleep(KILL_LEASE_SECONDS + 2)
        last = start("team")
        last.wait(timeout=4 * 3600)
        if last.returncode != 0:
            failures.append(last.log.read_text()[-300:])
    report = _report(wiki, setup, args, solo_done, solo_seconds, seconds, failures, in_time)
    if args.kill:
        report["kills_at_seconds"] = kills
        report["pages_done_after_leases"] = report["pages_done"] - in_time
    report["log_errors"] = _log_errors(started)
    # CPU seconds of the jobs (user and system, the jobs' own processes; not the wiki's or the database's)
    report["solo_cpu_seconds"], report["team_cpu_seconds"] = round(solo_cpu, 1), round(team_cpu, 1)
    # the machine's cores busy on average (every process: the jobs, the wiki, the database, and others')
    report["machine"] = {"cores": os.cpu_count(), "busy_cores_solo": solo_busy, "busy_cores_team": team_busy}
    if web:
        report["web_requests"] = {"solo": web_solo, "all": dict(web.counts)}
    return report


def _kill(jobs: list, start, url: str, times: int, began: float, expected: float, rng: random.Random) -> list[float]:
    """Kill ``times`` jobs with SIGKILL, each replaced in ``jobs`` by ``start()``; the seconds after
    ``began`` of each kill. The kills spread over the time the jobs should take (``expected``: the
    baseline's pace shared by N jobs): the k-th at a random moment of the k-th K-th of 85% of it, once
    some job holds leases (it is into its cycle), 0 to 3 s later; the victim is a job holding leases
    when there is one."""
    kills: list[float] = []
    for k in range(times):
        time.sleep(max(0.0, began + expected * 0.85 * (k + rng.random()) / times - time.monotonic()))
        _wait_for_leases(url, time.monotonic() + 120)
        time.sleep(rng.uniform(0.0, 3.0))
        running = [j for j in jobs if j.poll() is None]
        if not running:
            break
        holding = _lease_pids(url)
        victim = rng.choice([j for j in running if j.pid in holding] or running)
        kills.append(round(time.monotonic() - began, 1))
        victim.send_signal(signal.SIGKILL)
        victim.wait()
        jobs[jobs.index(victim)] = start()
    return kills


def _children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def _machine_cpu() -> tuple[int, int]:
    """(busy, all) jiffies of the whole machine so far, from /proc/stat."""
    try:
        fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    except (OSError, ValueError):
        return 0, 0
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)
    return sum(fields[:8]) - idle, sum(fields[:8])


def _busy_cores(since: tuple[int, int]) -> float | None:
    busy, total = (now - then for now, then in zip(_machine_cpu(), since))
    return round(busy / total * (os.cpu_count() or 1), 2) if total > 0 else None


_ERROR_LINE = re.compile(r"\b(ERROR|CRITICAL)\b|^Traceback ")


def _log_errors(logs: list[Path]) -> dict:
    """Lines at level ERROR or CRITICAL, and tracebacks, in the jobs' logs: their count and a few."""
    read = [(log.name, line.strip()) for log in logs if log.exists()
            for line in log.read_text(errors="replace").splitlines()]
    lines = [f"{name}: {line}" for name, line in read if _ERROR_LINE.search(line)]
    warnings = [f"{name}: {line}" for name, line in read if "WARNING" in line]
    return {"count": len(lines), "examples": lines[:5], "warnings": len(warnings), "warning_examples": warnings[:3]}


def _wait_for_leases(url: str, deadline: float) -> None:
    """Until some job holds a lease on a page (it is past its start, into its cycle), or the deadline."""
    from winellbot.state.db import State

    while time.monotonic() < deadline:
        try:
            if State(url=url, readonly=True).db["pages"].count_where("lease_holder is not null"):
                return
        except Exception:  # noqa: BLE001 - no job has made the tables yet
            pass
        time.sleep(0.2)


def _lease_pids(url: str) -> set[int]:
    """The process ids of the jobs holding leases now (a holder is ``host:pid:random``)."""
    from winellbot.state.db import State

    try:
        rows = State(url=url, readonly=True).db.query("select distinct lease_holder from pages "
                                                      "where lease_holder is not null")
        return {int(r["lease_holder"].split(":")[1]) for r in rows}
    except Exception:  # noqa: BLE001 - no tables yet, or a holder of another shape
        return set()


def _done(url: str, titles: list[str]) -> int:
    from winellbot.state.db import State

    state = State(url=url, readonly=True)
    return sum(1 for t in titles if (state.page(t) or {}).get("last_run"))


def _report(wiki, setup, args, solo_done: int, solo_seconds: float, seconds: float, failures: list[str],
            in_time: int) -> dict:
    import pywikibot

    from winellbot.state.db import State
    from winellbot.wiki.site import connect

    team, titles = setup["team"], setup["sets"]["team"]
    state = State(url=team["url"], readonly=True)
    done = _done(team["url"], titles)
    finished = list(state.db["runs"].rows_where("status = 'done'"))
    creds = wiki.credentials
    site = connect(wiki.api_url, creds.bot_user, creds.bot_password, app=creds.bot_app, throttle=0)
    on_wiki: Counter = Counter()
    for title in titles:
        page = pywikibot.Page(site, f"{team['queue']}/{title}")
        if page.exists():
            on_wiki.update(re.findall(r"<!-- winellbot-suggestion:([0-9a-f]+) -->", page.text))
    posts = state.posts()
    per_page = Counter(state.suggestion(p["suggestion_id"])["page"] for p in posts)
    s = team["settings"].posting
    caps = max(0, len(posts) - s.max_per_wiki_per_day) + sum(max(0, n - s.max_per_page_per_week)
                                                             for n in per_page.values())
    rate, solo_rate = in_time / seconds, solo_done / solo_seconds
    settings = {"throttle": args.throttle, "web_latency_ms": args.web_latency,
                "search": "searxng over HTTP" if args.web_latency is not None else "local corpus",
                "wiki_workers": args.wiki_workers, "solo_pages": args.solo_pages, "daily_cap": args.daily_cap,
                "acceptability_threshold": ACCEPT_ALL,
                "lease_seconds": KILL_LEASE_SECONDS if args.kill else None, "seed": args.seed}
    return {"jobs": args.jobs, "pages": args.pages, "kill": args.kill, "throttle": args.throttle,
            "web_latency_ms": args.web_latency, "settings": settings,
            "pages_done": done, "pages_done_in_seconds": in_time, "seconds": round(seconds, 1),
            "pages_per_second": round(rate, 3), "solo_pages_done": solo_done, "solo_seconds": round(solo_seconds, 1),
            "solo_pages_per_second": round(solo_rate, 3),
            "speedup": round(rate / solo_rate, 2) if solo_rate else None, "posts": len(posts),
            "on_wiki": sum(on_wiki.values()), "duplicate_posts": sum(n - 1 for n in on_wiki.values() if n > 1),
            "pages_done_twice": max(0, sum(r["pages"] or 0 for r in finished) - done),
            "caps_exceeded": caps, "lost_pages": len(titles) - done, "runs": len(finished),
            "pages_per_run": sorted((r["pages"] or 0 for r in finished), reverse=True),
            "job_failures": failures}


if __name__ == "__main__":
    sys.exit(main())
