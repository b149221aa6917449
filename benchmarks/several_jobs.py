"""Several `winellbot once` jobs on one MariaDB state, against a real local wiki.

Creates a throwaway MediaWiki with two sets of P fictional towns, each set on a watchlist of its own
(the bot posts to their queue pages), news for every town dated today, and a MariaDB server of its
own (tests/mariadb.py: Debian's mariadb-server, run unprivileged). Then, through the real CLI:

1. one job over the first set, on a database of its own: the baseline, in pages per second;
2. N jobs started together over the second set, on one database; with ``--kill K``, K times, once
   some job holds leases (it is into its cycle) and 0 to 3 s later, a random job is killed with
   SIGKILL and a new one started in its place. When
   all have ended, pages a killed job left under its lease are taken by one more job once the leases
   have run out (``WINELLBOT_LEASE_SECONDS``, 20 s here when killing).

It prints one JSON object: ``pages_done`` (second set, in the end), ``seconds`` (step 2 until every job
ended), ``pages_per_second`` (the pages done in those seconds: not those taken after the leases ran out), ``speedup`` (against the baseline), ``posts``, ``duplicate_posts`` (a
suggestion id more than once on the wiki), ``pages_done_twice`` (pages treated by more than one job
that finished, over those treated), ``caps_exceeded`` (posts beyond the daily or weekly caps),
``lost_pages`` (pages of the second set never treated), and the settings used (``throttle``:
``[wiki] put_throttle``).

    .venv/bin/python benchmarks/several_jobs.py [--jobs 3] [--pages 30] [--kill 0] [--daily-cap 10000]
"""
from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from crash_safety import ARTICLE, NEWS  # the same fictional towns and news

ROOT = Path(__file__).resolve().parents[1]
KILL_LEASE_SECONDS = 20


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=3)
    parser.add_argument("--pages", type=int, default=30)
    parser.add_argument("--kill", type=int, default=0)
    parser.add_argument("--daily-cap", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=32)
    args = parser.parse_args(argv)
    sys.path[:0] = [str(ROOT), str(ROOT / "tests")]
    from mariadb import MariaDB

    from winellbot.localwiki import LocalWiki
    from winellbot.wiki.site import prepare_pywikibot

    scratch = Path(tempfile.mkdtemp(prefix="winellbot-jobs-"))
    prepare_pywikibot(scratch / "pywikibot")
    wiki, server = LocalWiki(scratch / "wiki"), MariaDB(scratch / "mariadb")
    (scratch / "mariadb").mkdir()
    try:
        wiki.create()
        wiki.start()
        server.start()
        wiki.install_templates()
        print(json.dumps(_run(wiki, server, scratch, args)))
        return 0
    finally:
        server.stop()
        wiki.stop()
        shutil.rmtree(scratch, ignore_errors=True)


def _setup(wiki, server, scratch: Path, args) -> dict:
    from winellbot.config import Settings, dump_settings

    bot, today, year = wiki.credentials.bot_user, time.strftime("%Y-%m-%d"), time.strftime("%Y")
    sets = {"solo": [f"Solotown {n:03d}" for n in range(args.pages)],
            "team": [f"Teamtown {n:03d}" for n in range(args.pages)]}
    content = {name: ARTICLE.format(name=name) for names in sets.values() for name in names}
    content.update({f"User:{bot}/Watchlist-{key}": "\n".join(f"* [[{n}]]" for n in names) for key, names in sets.items()})
    content[f"User:{bot}/Shutoff"] = "run"
    wiki.import_pages(content)
    (scratch / "news").mkdir()
    with (scratch / "news" / "news.jsonl").open("w", encoding="utf-8") as fh:
        for name in sets["solo"] + sets["team"]:
            slug = name.lower().replace(" ", "-")
            for key, title, text in NEWS:
                fh.write(json.dumps({"id": f"{slug}-{key}", "url": f"https://news.example.org/{slug}/{key}",
                                     "title": title.format(name=name), "published": today,
                                     "publisher": "Westmark Gazette (fictional)",
                                     "text": text.format(name=name, year=year)}) + "\n")
    out = {"sets": sets}
    for key in sets:
        s = Settings()
        s.wiki.api_url, s.wiki.username, s.wiki.bot_password_app = wiki.api_url, bot, wiki.credentials.bot_app
        s.wiki.watchlist_page, s.wiki.shutoff_page = f"User:{bot}/Watchlist-{key}", f"User:{bot}/Shutoff"
        s.wiki.put_throttle, s.wiki.max_wait = 0.0, 30.0
        s.posting.max_per_page_per_week, s.posting.max_per_wiki_per_day = 100, args.daily_cap
        s.search.corpus_dir, s.search.window_days = str(scratch / "news"), 30
        s.state.path, s.state.url = str(scratch / f"{key}.sqlite"), server.new_database()
        config = scratch / f"{key}.toml"
        config.write_text(dump_settings(s), encoding="utf-8")
        out[key] = {"config": config, "url": s.state.url, "queue": s.wiki.queue, "settings": s}
    return out


def _run(wiki, server, scratch: Path, args) -> dict:
    rng = random.Random(args.seed)
    setup = _setup(wiki, server, scratch, args)
    env = dict(os.environ, WINELLBOT_BOT_PASSWORD=wiki.credentials.bot_password, PYTHONUNBUFFERED="1")
    if args.kill:
        env["WINELLBOT_LEASE_SECONDS"] = str(KILL_LEASE_SECONDS)

    def start(key: str) -> subprocess.Popen:
        cmd = [sys.executable, "-m", "winellbot.cli", "once", "--config", str(setup[key]["config"])]
        return subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)

    began = time.monotonic()
    solo = start("solo")
    err = solo.communicate(timeout=3600)[1]
    if solo.returncode != 0:
        raise SystemExit(f"the single job failed: {err[-2000:]}")
    solo_seconds = time.monotonic() - began
    solo_done = _done(setup["solo"]["url"], setup["sets"]["solo"])

    began = time.monotonic()
    jobs = [start("team") for _ in range(args.jobs)]
    for _ in range(args.kill):
        _wait_for_leases(setup["team"]["url"], began + solo_seconds)  # mid-cycle: some job holds pages
        time.sleep(rng.uniform(0.0, 3.0))
        running = [j for j in jobs if j.poll() is None]
        if not running:
            break
        victim = rng.choice(running)
        victim.send_signal(signal.SIGKILL)
        victim.wait()
        jobs[jobs.index(victim)] = start("team")
    failures = [err[-300:] for j in jobs for err in [j.communicate(timeout=3600)[1]] if j.returncode not in (0, -9)]
    seconds = time.monotonic() - began
    in_time = _done(setup["team"]["url"], setup["sets"]["team"])  # the rate counts these only
    if args.kill:  # what the killed jobs held waits for their leases, then one more job takes it
        time.sleep(KILL_LEASE_SECONDS + 2)
        start("team").communicate(timeout=3600)
    return _report(wiki, setup, args, solo_done, solo_seconds, seconds, failures, in_time)


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
    return {"jobs": args.jobs, "pages": args.pages, "kill": args.kill, "throttle": team["settings"].wiki.put_throttle,
            "pages_done": done, "pages_done_in_seconds": in_time, "seconds": round(seconds, 1), "pages_per_second": round(rate, 3),
            "solo_pages_done": solo_done, "solo_seconds": round(solo_seconds, 1),
            "speedup": round(rate / solo_rate, 2) if solo_rate else None, "posts": len(posts),
            "duplicate_posts": sum(n - 1 for n in on_wiki.values() if n > 1),
            "pages_done_twice": max(0, sum(r["pages"] or 0 for r in finished) - done),
            "caps_exceeded": caps, "lost_pages": len(titles) - done, "runs": len(finished),
            "job_failures": failures}


if __name__ == "__main__":
    sys.exit(main())
