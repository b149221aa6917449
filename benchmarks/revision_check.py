"""How many API requests does checking 1,000 watched articles for new revisions cost?

Creates a throwaway local MediaWiki, imports N pages with importDump.php, logs in as the bot, then asks
:meth:`WikiReader.latest_revisions` for all of them: on a fresh site object (cold: includes Pywikibot's
one-time siteinfo requests), again (warm: what every later check costs), and warm with 50 titles per
request (an account without ``apihighlimits``). Requests are counted two ways: a counting hook around
Pywikibot's HTTP call, and the ``php -S`` access log. Goal: at most 25 requests for 1,000 pages.

    .venv/bin/python benchmarks/revision_check.py [--pages 1000] [--keep DIR]
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

GOAL = 25


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=1000, help="number of pages to import (default 1000)")
    parser.add_argument("--keep", type=Path, help="create the wiki here and keep it (default: a temp dir)")
    args = parser.parse_args(argv)

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from winellbot.wiki.site import prepare_pywikibot

    scratch = Path(tempfile.mkdtemp(prefix="winellbot-bench-"))
    prepare_pywikibot(scratch / "pywikibot")  # before anything imports pywikibot
    from winellbot.localwiki import serving
    from winellbot.processes import stopping_on_signals

    started = time.perf_counter()
    try:  # the wiki is stopped however it ends (Ctrl-C and SIGTERM too)
        with stopping_on_signals(), serving(args.keep or scratch / "wiki", templates=False) as wiki:
            return _measure(wiki, args.pages, started)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)  # --keep puts the wiki elsewhere


def _measure(wiki, pages: int, started: float) -> int:
    from winellbot.wiki.reader import WikiReader
    from winellbot.wiki.site import connect

    titles = [f"Benchmark article {n:04d}" for n in range(pages)]
    wiki.import_pages({title: f"Article {n}. Text.<ref>source {n}</ref>\n{{{{Reflist}}}}"
                       for n, title in enumerate(titles)}, link_updates=False)
    print(f"set-up: wiki created and {pages} pages imported in {time.perf_counter() - started:.1f} s")

    creds = wiki.credentials
    bot = connect(wiki.api_url, creds.bot_user, creds.bot_password, app=creds.bot_app, throttle=0)
    ok = _report("bot, cold", wiki, WikiReader(bot), titles)
    ok = _report("bot, warm", wiki, WikiReader(bot), titles) and ok
    _report("bot, warm, 50 per request", wiki, WikiReader(bot, title_batch=50), titles)
    print(f"goal: <= {GOAL} requests for the bot -> {'met' if ok else 'MISSED'}")
    return 0 if ok else 1


def _report(label: str, wiki, reader, titles: list[str]) -> bool:
    from counting import CountingHTTP, api_lines

    limit = reader.title_batch or reader.site.maxlimit
    log = wiki.directory / "server.log"
    log_before = api_lines(log)
    with CountingHTTP() as counter:
        begin = time.perf_counter()
        revisions = reader.latest_revisions(titles)
        seconds = time.perf_counter() - begin
    time.sleep(0.2)  # let php -S flush its access log
    logged = api_lines(log) - log_before
    print(f"{label}: {len(revisions)}/{len(titles)} revisions, {counter.count} requests "
          f"(server log: {logged}), {limit} titles per request, {seconds:.2f} s")
    return len(revisions) == len(titles) and counter.count <= GOAL


if __name__ == "__main__":
    sys.exit(main())
