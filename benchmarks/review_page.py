"""The review page under load: a queue of N suggestions, three reviewers deciding at once on the same
items, and the job that posts what they approve, against a real local wiki.

Creates a throwaway MediaWiki with ``--articles`` fictional articles, each opted in on its talk page,
three reviewer accounts, and a state holding ``--items`` suggestions for them (recorded as the bot
records what its gates passed, each with an estimate). Starts the review page (``winellbot review
serve``, in a process of its own as an operator runs it) and ``winellbot run --approved-only`` (its poll
every 2 s). Then three reviewers, each logged in with the wiki's own login, take ``--decisions`` turns: read
the queue page, then open one of the queue's first few items, which all three see, and decide on it, so
their decisions overlap (a third revised in the reviewer's words, the rest approve, reject with a reason,
skip, "I added it myself", drawn with a fixed seed; one revision in ten carries markup the page must
refuse; a tenth of the decisions taken are undone at once). When all are done and the poster has posted
every approval and withdrawn every undone post, it stops the poster and the servers (on every way out:
an exception, SIGTERM, SIGINT) and prints one JSON object:

``items``; ``p95_queue_ms``, ``p95_decide_ms`` and ``p95_revise_ms`` (the server's own time for the queue
page, a decision and a revision's submit, from its ``Server-Timing`` header) with ``median_*`` and the
wall times ``p95_*_wall_ms`` seen by the reviewers; ``decisions`` (sent), ``taken`` and ``refused``
(another reviewer was first, or the page refused the wording); ``approved``; ``revisions`` (taken);
``revisions_posted`` and ``revisions_refused_at_write`` (the writer's checks sent it back); ``undone``;
``posts`` (suggestions on the wiki's talk pages); ``duplicate_posts`` (an id more than once
on a page, or posted more than once in the state); ``unapproved_posts`` (an id on the wiki, not
withdrawn, without a live approval); ``refused_revisions_posted`` (a refused wording on the wiki);
``undone_posts_left`` (an undone approval's box on the wiki not withdrawn); ``seconds_to_post`` (the
longest wait from the last decision to the poster's last post or withdrawal); settings.

    .venv/bin/python benchmarks/review_page.py [--items 10000] [--articles 200] [--decisions 60] [--seed 1]
"""
from __future__ import annotations

import argparse
import html
import json
import os
import random
import re
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import requests
from winellbot.config import Settings, dump_settings
from winellbot.localwiki import LocalWiki, free_port, serving
from winellbot.processes import Children, stopping_on_signals
from winellbot.models import Citation, Document, Edit, PipelineResult, Suggestion, Update
from winellbot.review.inputs import wiki_name
from winellbot.state.db import Measured, State
from winellbot.state.reviews import ReviewStore
from winellbot.state.revisions import RevisionStore
from winellbot.wiki.render import parse_statuses

REVIEWERS = ("Bench Reviewer A", "Bench Reviewer B", "Bench Reviewer C")
PASSWORD = "Bench-review-pass-2026"
SECTIONS = (("History",), ("Economy",), ("Government",))
MARK = re.compile(r"<!-- winellbot-suggestion:([0-9a-f]+) -->")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--items", type=int, default=10_000)
    p.add_argument("--articles", type=int, default=200)
    p.add_argument("--decisions", type=int, default=60, help="decisions per reviewer")
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args(argv)
    # A stop signal unwinds like Ctrl-C: the wiki, the page and the poster are stopped on every way out.
    with stopping_on_signals(), tempfile.TemporaryDirectory(prefix="winellbot-review-bench-") as scratch, \
            serving(Path(scratch) / "wiki") as wiki:
        print(json.dumps(_bench(args, wiki, Path(scratch)), indent=2))
    return 0


def _bench(args, wiki: LocalWiki, scratch: Path) -> dict:
    settings = _settings(wiki, scratch)
    titles = [f"Benchtown {i:04d}" for i in range(args.articles)]
    _wiki_pages(wiki, settings, titles)
    state = State(settings.state.path)
    _queue(state, titles, args.items, random.Random(args.seed), wiki_name(wiki.api_url))
    config = scratch / "winellbot.toml"
    config.write_text(dump_settings(settings), encoding="utf-8")
    env = {**os.environ, "WINELLBOT_BOT_PASSWORD": wiki.credentials.bot_password,
           "WINELLBOT_REVIEW_SECRET_KEY": "bench-" + "k" * 26}
    port, cli = free_port(), [sys.executable, "-m", "winellbot.cli"]
    with Children() as children, open(scratch / "jobs.log", "wb") as log:
        children.start([*cli, "run", "--approved-only", "--config", str(config)], env=env, stdout=log, stderr=log)
        children.start([*cli, "review", "serve", "--config", str(config), "--port", str(port)], env=env, stdout=log,
                       stderr=log)
        url = f"http://127.0.0.1:{port}"
        _wait_answers(f"{url}/login")
        times: dict[str, list[tuple[float, float]]] = {"queue": [], "decide": [], "revise": []}
        outcomes: list[tuple[str, str, bool]] = []
        threads = [threading.Thread(target=_reviewer, args=(url, name, args.decisions, args.seed + i, times, outcomes))
                   for i, name in enumerate(REVIEWERS)]
        [t.start() for t in threads]
        [t.join() for t in threads]
        last_approval = time.time()
        waited = _drain(state, timeout_s=600)
    return _figures(args, state, wiki, titles, times, outcomes, waited - last_approval)


def _wait_answers(url: str, timeout_s: float = 120) -> None:
    deadline = time.time() + timeout_s
    while True:
        try:
            requests.get(url, timeout=5)
            return
        except requests.RequestException:
            if time.time() > deadline:
                raise
            time.sleep(0.3)


def _settings(wiki: LocalWiki, scratch: Path) -> Settings:
    s = Settings()
    creds = wiki.credentials
    s.wiki.api_url, s.wiki.username, s.wiki.bot_password_app = wiki.api_url, creds.bot_user, creds.bot_app
    s.wiki.shutoff_page, s.wiki.put_throttle = f"User:{creds.bot_user}/Shutoff", 0.0
    s.state.path = str(scratch / "state.sqlite")
    s.review.poll_seconds = 2.0
    # The page's speed is measured here, not the caps: every approval may be posted.
    s.posting.max_per_page_per_week, s.posting.max_per_wiki_per_day = 100, 10_000
    s.wiki.new_section_interval_days = 0
    return s


def _wiki_pages(wiki: LocalWiki, settings: Settings, titles: list[str]) -> None:
    pages = {settings.wiki.shutoff_page: "run"}
    for t in titles:
        pages[t] = f"'''{t}''' is a fictional town.\n\n== History ==\nFounded in 1802.\n\n== Economy ==\nFishing.\n"
        pages[f"Talk:{t}"] = "{{Winellbot}}\n"
    wiki.import_pages(pages, summary="review page benchmark: fictional towns")
    for name in REVIEWERS:
        wiki.create_user(name, PASSWORD)


def _queue(state: State, titles: list[str], items: int, rng: random.Random, wiki: str) -> None:
    """``items`` suggestions spread over ``titles``, recorded as the bot records them (one result per article),
    for ``wiki`` (the local wiki's name, as the bot and the page name it)."""
    run = state.start_run("offline")
    per = {t: [] for t in titles}
    for i in range(items):
        title = titles[i % len(titles)]
        fact = f"{title} opened its {i}th public building in {1900 + i % 126}, at a cost of {i * 7 % 997} thousand euros."
        url = f"https://news.example.org/{i}"
        doc = Document("d", url, f"Report {i}", f"Earlier. {fact} Later.", publisher="Bench Gazette")
        section = SECTIONS[i % len(SECTIONS)]
        per[title].append(Suggestion(title, 1, section, None, Edit("", fact, fact, Citation(url, f"Report {i}")),
                                     Update(fact, section, fact, doc, reason="the sentence brings figures")))
    for title, made in per.items():
        measured = {s.id: Measured(round(rng.random(), 4), {"words": rng.random()}, wiki) for s in made}
        state.record_result(run, title, PipelineResult(suggestions=tuple(made)), measured)
    state.finish_run(run)


def _reviewer(url: str, name: str, turns: int, seed: int, times: dict, outcomes: list) -> None:
    rng, http = random.Random(seed), requests.Session()
    csrf = _call(http, "GET", f"{url}/login").text
    csrf = re.search(r'name="csrf" value="([^"]+)"', csrf).group(1)
    _call(http, "POST", f"{url}/login/local", csrf=csrf, username=name, password=PASSWORD)
    for _ in range(turns):
        page = _call(http, "GET", f"{url}/queue")
        times["queue"].append(_timed(page))
        ids = re.findall(r'href="/s/([0-9a-f]+)"', page.text)[:4]  # the top of the queue, which all three see
        sid = rng.choice(ids)
        item = _call(http, "GET", f"{url}/s/{sid}").text
        csrf = re.search(r'name="csrf" value="([^"]+)"', item).group(1)  # the logged-in session's token
        verdict = rng.choices(["approve", "revise", "reject", "skip", "adopted"], weights=[2, 3, 2, 1, 1])[0]
        data = {"csrf": csrf, "verdict": verdict} | ({"reasons": "not_new"} if verdict == "reject" else {})
        hostile = verdict == "revise" and rng.random() < 0.1
        if verdict == "revise":
            data |= {"text": _reworded(item, hostile), "note": "bench"}
        answer = _call(http, "POST", f"{url}/s/{sid}/decide", **data)
        times["revise" if verdict == "revise" else "decide"].append(_timed(answer))
        said = _call(http, "GET", f"{url}/queue").text  # the flash says whether it counted
        taken = answer.status_code == 303 and "Not recorded" not in said
        undone = taken and verdict != "skip" and rng.random() < 0.1 and _undo(http, url, said)
        outcomes.append((sid, verdict, taken, hostile, undone))


def _reworded(item_html: str, hostile: bool) -> str:
    """A reviewer's wording of the item's line (this benchmark's facts), or one the page must refuse."""
    line = html.unescape(re.search(r'<textarea name="text" id="text"[^>]*>([^<]*)</textarea>', item_html).group(1))
    m = re.match(r"(.+) opened its (\d+)th public building in (\d+), at a cost of (\d+) thousand euros\.", line)
    if hostile:
        return f"{line} [[Category:Spam]] {{{{subst:Delete}}}}"
    if not m:
        return line
    title, _, year, cost = m.groups()
    return f"In {year}, {title} opened a public building at a cost of {cost} thousand euros."


def _undo(http: requests.Session, url: str, page: str) -> bool:
    found = re.search(r'<form class="inline" method="post" action="/undo" id="undo">\s*<input type="hidden" '
                      r'name="csrf" value="([^"]+)">\s*<input type="hidden" name="review_id" value="(\d+)">', page)
    if not found:
        return False
    r = _call(http, "POST", f"{url}/undo", csrf=found.group(1), review_id=found.group(2))
    return r.status_code == 303 and "Not undone" not in _call(http, "GET", f"{url}/queue").text


def _call(http: requests.Session, method: str, url: str, **data) -> requests.Response:
    """One request, no redirect followed; the Secure session cookie is sent over http as a browser does
    to 127.0.0.1."""
    started = time.perf_counter()
    r = http.request(method, url, data=data or None, allow_redirects=False, timeout=120)
    r.wall_ms = (time.perf_counter() - started) * 1000
    for cookie in http.cookies:
        cookie.secure = False
    return r


def _timed(r: requests.Response) -> tuple[float, float]:
    server = float(re.search(r"dur=([\d.]+)", r.headers.get("Server-Timing", "dur=nan")).group(1))
    return server, r.wall_ms


def _drain(state: State, timeout_s: float) -> float:
    """Wait until no approved suggestion waits to be posted and no undone post to be withdrawn; returns when."""
    deadline = time.time() + timeout_s
    while time.time() < deadline and (ReviewStore(state).approved_pages() or ReviewStore(state).withdrawing()):
        time.sleep(0.5)
    return time.time()


def _figures(args, state, wiki, titles, times, outcomes, seconds_to_post) -> dict:
    on_wiki: list[str] = []
    statuses: dict[str, str] = {}
    texts = []
    for i in range(0, len(titles), 50):
        r = requests.get(wiki.api_url, params={"action": "query", "prop": "revisions", "rvprop": "content",
                                               "rvslots": "main", "format": "json", "formatversion": "2",
                                               "titles": "|".join(f"Talk:{t}" for t in titles[i:i + 50])}, timeout=60)
        for page in r.json()["query"]["pages"]:
            for rev in page.get("revisions", []):
                content = rev["slots"]["main"]["content"]
                on_wiki += MARK.findall(content)
                statuses |= parse_statuses(content)
                texts.append(content)
    store = ReviewStore(state)
    live = [sid for sid in set(on_wiki) if statuses.get(sid) != "withdrawn"]
    approvals = store.approvals(live)
    posted_twice = state.db.execute("select count(*) from (select suggestion_id from posts group by suggestion_id "
                                    "having count(*) > 1) x").fetchone()[0]
    undone = {r["suggestion_id"] for r in store.decisions() if r["undone_at"] and r["verdict"] in ("approve", "revise")}
    kept = RevisionStore(state).export()
    refused = [r for r in kept if r["status"] == "refused"]
    refused_posted = sum(any(r["text"] in t for t in texts) for r in refused) \
        + sum("[[Category:Spam]]" in t for t in texts)
    return {
        "items": args.items,
        **_p("queue", times["queue"]), **_p("decide", times["decide"]), **_p("revise", times["revise"]),
        "decisions": len(outcomes), "taken": sum(o[2] for o in outcomes),
        "refused": sum(not o[2] for o in outcomes),
        "approved": sum(1 for r in store.decisions() if r["verdict"] == "approve"),
        "revisions": sum(1 for r in store.decisions() if r["verdict"] == "revise"),
        "hostile_revisions_sent": sum(o[3] for o in outcomes),
        "revisions_posted": sum(r["status"] == "posted" for r in kept),
        "revisions_refused_at_write": len(refused),
        "undone": sum(o[4] for o in outcomes),
        "posts": len(set(on_wiki)), "duplicate_posts": len(on_wiki) - len(set(on_wiki)) + posted_twice,
        "unapproved_posts": len([sid for sid in live if sid not in approvals]),
        "refused_revisions_posted": refused_posted,
        "undone_posts_left": len([sid for sid in live if sid in undone and sid not in approvals]),
        "seconds_to_post": round(seconds_to_post, 1),
        "settings": {"articles": args.articles, "reviewers": len(REVIEWERS), "decisions_each": args.decisions,
                     "seed": args.seed, "poll_seconds": 2.0},
    }


def _p(name: str, pairs: list[tuple[float, float]]) -> dict:
    server, wall = [s for s, _ in pairs], [w for _, w in pairs]
    q = lambda xs: round(statistics.quantiles(xs, n=20)[-1], 1) if len(xs) > 1 else None  # noqa: E731
    if not server:
        return {f"p95_{name}_ms": None, f"median_{name}_ms": None, f"p95_{name}_wall_ms": None}
    return {f"p95_{name}_ms": q(server), f"median_{name}_ms": round(statistics.median(server), 1),
            f"p95_{name}_wall_ms": q(wall)}


if __name__ == "__main__":
    sys.exit(main())
