"""Crash safety on a real local wiki: random SIGKILLs during `once`, and two jobs started together.

Creates a throwaway MediaWiki with N fictional towns (half opted in on their talk pages, half on
the bot's watchlist) and news for each, dated today so every run finds it again. Then, through
the real CLI (`python -m winellbot.cli once --force`):

1. K times: start `once`, and once its cycle has begun (its run is in the state) kill it with SIGKILL
   at a random moment of the cycle; then run it to the end twice;
2. M times: start two `once` together on the same state; one must run, the other refuse cleanly.

It reports duplicate suggestion ids on the wiki (an id in more than one box), suggestions lost
(found but neither posted on the wiki nor held back by a gate or the posting policy), crashes (an
exit that is neither success nor the clean refusal, or a traceback), and SQLite's integrity check.
Posting caps are raised so that everything found is posted.

    .venv/bin/python benchmarks/crash_safety.py [--pages 40] [--kills 20] [--pairs 10] [--seed 14]
"""
from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ARTICLE = """'''{name}''' is a fictional harbour town in the county of Westmark.

== History ==
{name} was founded in 1802 as a fishing village. The harbour wall was built in 1850.

== Government ==
The town council has eleven members. The mayor is elected every four years.

== Transport ==
A bus service links {name} with the county town.
"""
NEWS = [
    ("mayor", "{name} elects a new mayor", "{name} elected Maria Olsen as its new mayor on 1 March {year}. The town "
     "council confirmed that Olsen won 62 percent of the vote. Olsen previously led the harbour board of {name}."),
    ("harbour", "{name} harbour wall repaired", "The harbour wall of {name}, built in 1850, was repaired at a cost of "
     "4.2 million euros in {year}. Engineers finished the repairs in April {year} after two years of work."),
    ("ferry", "Ferry returns to {name}", "A ferry service between {name} and the island of Skerrow began on 2 May "
     "{year}. The crossing takes forty minutes and runs four times a day, the operator of the {name} ferry said."),
    ("school", "{name} opens new school", "A new primary school opened in {name} on 7 September {year} with places "
     "for 210 pupils. The school in {name} cost 9 million euros and replaces two older buildings."),
]

# A new fact per town before each killed run, so that every run has something to post.
TOPICS = ("library", "museum", "footbridge", "park", "covered market", "sports hall", "clinic", "fire station",
          "swimming pool", "cinema", "bus station", "marina", "lighthouse museum", "concert hall", "skate park",
          "youth centre", "botanic garden", "aquarium", "ice rink", "observatory", "art gallery", "velodrome")


def _add_news(news: Path, names: list[str], k: int) -> None:
    topic, year = TOPICS[k % len(TOPICS)], time.strftime("%Y")
    with (news / "news.jsonl").open("a", encoding="utf-8") as fh:
        for n, name in enumerate(names):
            slug = name.lower().replace(" ", "-")
            fh.write(json.dumps({
                "id": f"{slug}-round{k}", "url": f"https://news.example.org/{slug}/round-{k}",
                "title": f"{name} opens a new {topic}", "published": time.strftime("%Y-%m-%d"),
                "publisher": "Westmark Gazette (fictional)",
                "text": f"A new {topic} opened in {name} on {1 + k % 28} June {year}, the town council of {name} said. "
                        f"The {topic} cost {3 + k + n % 7} million euros and employs {10 + 3 * k} people."}) + "\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=40)
    parser.add_argument("--kills", type=int, default=20)
    parser.add_argument("--pairs", type=int, default=10)
    parser.add_argument("--seed", type=int, default=14)
    args = parser.parse_args(argv)
    root = Path(__file__).resolve().parents[1]
    sys.path.insert(0, str(root))
    from winellbot.wiki.site import prepare_pywikibot

    scratch = Path(tempfile.mkdtemp(prefix="winellbot-crash-"))
    prepare_pywikibot(scratch / "pywikibot")
    from winellbot.localwiki import serving
    from winellbot.processes import Children, stopping_on_signals

    try:  # the jobs, then the wiki, are stopped however it ends (Ctrl-C and SIGTERM too)
        with stopping_on_signals(), serving(scratch / "wiki") as wiki, Children() as jobs:
            return _run(wiki, scratch, root, args, jobs)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _setup(wiki, scratch: Path, pages: int) -> tuple[Path, list[str], dict]:
    from winellbot.config import Settings, dump_settings

    creds = wiki.credentials
    bot = creds.bot_user
    names = [f"Crashtown {n:03d}" for n in range(pages)]
    opted, listed = names[: pages // 2], names[pages // 2:]
    year = time.strftime("%Y")
    today = time.strftime("%Y-%m-%d")
    content = {name: ARTICLE.format(name=name) for name in names}
    content.update({f"Talk:{name}": "{{Winellbot}}\nEarlier talk." for name in opted})
    content[f"User:{bot}/Watchlist"] = "\n".join(f"* [[{name}]]" for name in listed)
    content[f"User:{bot}/Shutoff"] = "run"
    wiki.import_pages(content)
    news = scratch / "news"
    news.mkdir()
    with (news / "news.jsonl").open("w", encoding="utf-8") as fh:
        for name in names:
            slug = name.lower().replace(" ", "-")
            for key, title, text in NEWS:
                fh.write(json.dumps({"id": f"{slug}-{key}", "url": f"https://news.example.org/{slug}/{key}",
                                     "title": title.format(name=name), "published": today,
                                     "publisher": "Westmark Gazette (fictional)",
                                     "text": text.format(name=name, year=year)}) + "\n")
    s = Settings()
    s.review.mode = "direct"  # posts as the bot did before the review page: what this measures
    s.wiki.api_url, s.wiki.username, s.wiki.bot_password_app = wiki.api_url, bot, creds.bot_app
    s.wiki.watchlist_page, s.wiki.shutoff_page = f"User:{bot}/Watchlist", f"User:{bot}/Shutoff"
    s.wiki.put_throttle, s.wiki.max_wait = 0.0, 30.0
    s.posting.max_per_page_per_week, s.posting.max_per_wiki_per_day = 100, 10000
    s.search.corpus_dir, s.search.window_days = str(news), 30
    s.state.path = str(scratch / "state.sqlite")
    config = scratch / "winellbot.toml"
    config.write_text(dump_settings(s), encoding="utf-8")
    targets = {name: f"Talk:{name}" for name in opted} | {name: f"{s.wiki.queue}/{name}" for name in listed}
    return config, names, targets


def _run(wiki, scratch: Path, root: Path, args, jobs) -> int:
    rng = random.Random(args.seed)
    config, names, targets = _setup(wiki, scratch, args.pages)
    env = dict(os.environ, WINELLBOT_BOT_PASSWORD=wiki.credentials.bot_password, PYTHONUNBUFFERED="1")
    cmd = [sys.executable, "-m", "winellbot.cli", "once", "--force", "--config", str(config)]
    crashes: list[str] = []

    def start():
        return jobs.start(cmd, cwd=root, env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)

    def finish(proc, refusal_ok: bool = False) -> str:
        out, err = proc.communicate(timeout=900)
        refused = proc.returncode == 1 and "refusing to start a second one" in err
        if "Traceback" in out + err or not (proc.returncode == 0 or (refusal_ok and refused)):
            crashes.append(f"exit {proc.returncode}: {err.strip()[-300:]}")
        return "refused" if refused else "ran"

    state_path = str(Path(config).parent / "state.sqlite")

    def runs() -> int:
        if not os.path.exists(state_path):
            return 0
        try:
            with sqlite3.connect(f"file:{state_path}?mode=ro", uri=True, timeout=30) as db:
                return db.execute("select count(*) from runs").fetchone()[0]
        except sqlite3.OperationalError:  # the job is creating the state right now
            return 0

    def cycle_started(proc, before: int) -> float:
        """Wait until the job has begun its cycle (its run is in the state); returns when."""
        while proc.poll() is None and runs() == before:
            time.sleep(0.05)
        return time.monotonic()

    began = time.monotonic()
    proc = start()
    started = cycle_started(proc, 0)
    finish(proc)  # one whole cycle, to learn how long one takes
    cycle = time.monotonic() - started
    print(f"set-up: {args.pages} towns; one whole cycle takes {cycle:.1f} s after the job starts it")
    killed_at: list[float] = []
    bound, k = cycle, 0
    while len(killed_at) < args.kills and k < 3 * args.kills:
        _add_news(Path(config).parent / "news", names, k)
        k += 1
        proc = start()
        started = cycle_started(proc, runs())
        moment = rng.uniform(0.0, bound)  # anywhere in the cycle: reading, the pipeline, posting
        while proc.poll() is None and time.monotonic() - started < moment:
            time.sleep(0.02)
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            killed_at.append(round(moment, 1))
        else:  # it finished first: later cycles are about this long
            bound = time.monotonic() - started
        proc.wait()
    for _ in range(2):
        finish(start())
    print(f"{len(killed_at)} SIGKILLs during the cycle, at {sorted(killed_at)} s into it; then 2 whole runs")
    outcomes: Counter = Counter()
    for _ in range(args.pairs):
        pair = [start(), start()]
        outcomes[" + ".join(sorted(finish(p, refusal_ok=True) for p in pair))] += 1
    print(f"{args.pairs} pairs of jobs started together: " + ", ".join(f"{k} {n}" for k, n in outcomes.items()))
    return _report(wiki, config, targets, crashes, time.monotonic() - began)


def _report(wiki, config: Path, targets: dict, crashes: list[str], seconds: float) -> int:
    import pywikibot

    from winellbot.config import load_settings
    from winellbot.wiki.render import _START
    from winellbot.wiki.site import connect

    s = load_settings(config)
    creds = wiki.credentials
    site = connect(wiki.api_url, creds.bot_user, creds.bot_password, app=creds.bot_app, throttle=0)
    on_wiki: Counter = Counter()
    for target in set(targets.values()):
        page = pywikibot.Page(site, target)
        if page.exists():
            on_wiki.update(_START.findall(page.text))
    duplicates = sum(n - 1 for n in on_wiki.values() if n > 1)
    db = sqlite3.connect(s.state.path)
    rows = db.execute("select id, status from suggestions").fetchall()
    posted = {sid for sid, status in rows if status in ("posted", "accepted", "rejected", "withdrawn")}
    lost = [sid for sid, status in rows if status == "proposed"] + [sid for sid in posted if sid not in on_wiki]
    integrity = db.execute("PRAGMA integrity_check").fetchone()[0]
    killed = db.execute("select count(*) from runs where status = 'killed'").fetchone()[0]
    print(f"suggestions found {len(rows)}, posted {len(posted)}, ids on the wiki {len(on_wiki)} "
          f"on {len(set(targets.values()))} pages")
    print(f"duplicate ids on the wiki: {duplicates}")
    print(f"suggestions lost: {len(lost)}")
    print(f"crashes: {len(crashes)}" + "".join(f"\n  {c}" for c in crashes[:5]))
    print(f"runs marked killed: {killed}")
    print(f"PRAGMA integrity_check: {integrity}")
    print(f"took {seconds:.0f} s")
    ok = duplicates == 0 and not lost and not crashes and integrity == "ok" and len(on_wiki) > 0
    print("result: " + ("all held" if ok else "FAILED"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
