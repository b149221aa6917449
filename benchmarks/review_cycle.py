"""How many API requests does a whole cycle over 1,000 watched pages cost when nothing is new?

Creates a throwaway local MediaWiki with N articles on the bot's watchlist, each with one posted
suggestion on its queue page (imported with importDump.php), and a state that knows all of it:
every article checked at its latest revision, every queue page read at its latest revision. Then
the real bot (``commands.build_bot``, offline pipeline) runs cycles and the requests are counted
(a hook around Pywikibot's HTTP call, and the ``php -S`` access log):

1. nothing new: no article edited, no verdict given (goal: at most 25 requests for 1,000 pages;
   reading each queue page alone cost 1,032 before verdicts were read in batches);
2. reviewers gave a verdict on every queue page: the verdicts are read in batches and all land.

    .venv/bin/python benchmarks/review_cycle.py [--pages 1000]
"""
from __future__ import annotations

import argparse
import datetime as dt
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

GOAL = 25


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=1000)
    args = parser.parse_args(argv)

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from winellbot.wiki.site import prepare_pywikibot

    scratch = Path(tempfile.mkdtemp(prefix="winellbot-review-"))
    prepare_pywikibot(scratch / "pywikibot")  # before anything imports pywikibot
    from winellbot.localwiki import serving
    from winellbot.processes import stopping_on_signals

    try:  # the wiki is stopped however it ends (Ctrl-C and SIGTERM too)
        with stopping_on_signals(), serving(scratch / "wiki", templates=False) as wiki:
            r = measure(wiki, scratch, args.pages)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    ok = r["quiet_requests"] <= GOAL and r["quiet_clean"] and r["accepted"] == args.pages
    print(f"goal: <= {GOAL} requests for a cycle with nothing new -> {'met' if ok else 'MISSED'}")
    return 0 if ok else 1


def _suggestion(title: str, n: int):
    from winellbot.models import Citation, Document, Edit, Suggestion, Update

    fact = f"The harbour of {title} reopened in 2026 after repairs."
    doc = Document(f"d{n}", f"https://news.example.org/{n}", f"News {n}", fact, "2026-01-01", "Gazette")
    edit = Edit("Old text.", f"Old text. {fact}", fact, Citation(doc.url, doc.title, "Gazette", "2026-01-01"))
    return Suggestion(title, 1, ("History",), 0, edit, Update(fact, ("History",), fact, doc))


def measure(wiki, scratch: Path, pages: int) -> dict:
    """Set up ``pages`` watched pages with a posted suggestion each on the running ``wiki``, run the
    two cycles and return their figures (requests of the quiet cycle, verdicts read into state)."""
    from counting import CountingHTTP, api_lines

    from winellbot import commands, factory
    from winellbot.config import Settings
    from winellbot.models import PipelineResult
    from winellbot.state.db import State
    from winellbot.wiki.render import render_queue_entry

    creds = wiki.credentials
    s = Settings()
    s.review.mode = "direct"  # posts as the bot did before the review page: what this measures
    s.wiki.api_url, s.wiki.username, s.wiki.bot_password_app = wiki.api_url, creds.bot_user, creds.bot_app
    s.wiki.watchlist_page, s.wiki.put_throttle = f"User:{creds.bot_user}/Watchlist", 0.0
    s.search.corpus_dir = str(scratch / "news")
    (scratch / "news").mkdir()
    s.state.path = str(scratch / "state.sqlite")
    os.environ["WINELLBOT_BOT_PASSWORD"] = creds.bot_password

    titles = [f"Harbour town {n:04d}" for n in range(pages)]
    found = [_suggestion(t, n) for n, t in enumerate(titles)]
    queue = {t: f"{s.wiki.queue}/{t}" for t in titles}
    started = time.perf_counter()
    content = {t: f"'''{t}''' is a town.\n\n== History ==\nOld text.\n" for t in titles}
    content.update({queue[x.article_title]: render_queue_entry(x, bot_user=creds.bot_user) for x in found})
    content[s.wiki.watchlist_page] = "\n".join(f"* [[{t}]]" for t in titles)
    content[s.wiki.shutoff] = "run"
    wiki.import_pages(content, link_updates=False)
    print(f"set-up: {pages} articles and {pages} queue pages imported in {time.perf_counter() - started:.1f} s")

    state = State(s.state.path)
    wiki_parts = factory.build_wiki(s, scratch)
    latest = wiki_parts.reader.latest_revisions(titles + list(queue.values()))
    run_id = state.start_run("offline")
    for x in found:
        state.record_result(run_id, x.article_title, PipelineResult((x,)))
        state.record_post([x.id], queue[x.article_title], latest[queue[x.article_title]][0], "")
        state.saw_target(queue[x.article_title], latest[queue[x.article_title]][0])
    state.finish_run(run_id)
    now = dt.datetime.now(dt.timezone.utc).replace(microsecond=0)
    for t in titles:  # checked now at the latest revision, due again in six days
        state.touch_page(t, last_revid=latest[t][0], last_checked=now.isoformat(),
                         next_due=(now + dt.timedelta(days=6)).isoformat())

    def cycle(label: str) -> tuple[int, object]:
        bot = commands.build_bot(s, state, wiki=wiki_parts)
        log_before = api_lines(wiki.directory / "server.log")
        with CountingHTTP() as counter:
            begin = time.perf_counter()
            report = bot.run()
            seconds = time.perf_counter() - begin
        time.sleep(0.2)  # let php -S flush its access log
        logged = api_lines(wiki.directory / "server.log") - log_before
        print(f"{label}: {len(report.pages)} page(s) treated, {counter.count} requests "
              f"(server log: {logged}), {seconds:.2f} s, errors {report.counter['errors']}")
        return counter.count, report

    quiet, report = cycle(f"cycle over {pages} watched pages, nothing new")
    clean = not report.pages and not report.counter["errors"]
    verdicts = {queue[x.article_title]: render_queue_entry(x, bot_user=creds.bot_user).replace(
        "status=pending", "status=accepted") for x in found}
    wiki.import_pages(verdicts, link_updates=False)
    _, report = cycle(f"cycle after a verdict on each of the {pages} queue pages")
    accepted = len(state.suggestions(status="accepted"))
    print(f"verdicts read into state: {accepted}/{pages}")
    return {"quiet_requests": quiet, "quiet_clean": clean, "accepted": accepted}


if __name__ == "__main__":
    sys.exit(main())
