"""The bot: one cycle over the watched pages, in Pywikibot's order of steps.

    setup (shutoff check, run record)
    for each due page: init_page (read) -> skip_page -> treat (pipeline, gates, state, post)
    exit (counters, run record)

Errors about one page are caught, recorded in state and counted; the run goes on.
A shutoff stops the run at once. Posting is idempotent: a suggestion is marked
posted only after the wiki holds it, and the writer skips ids already on the page,
so a crash between the two never posts twice and loses nothing.
"""
from __future__ import annotations

import datetime as dt
import logging
import os
import threading
import time
from collections import Counter
from dataclasses import dataclass, field, replace

from winellbot.article import parse_article
from winellbot.errors import PostingRefused, ShutoffError, WinellbotError
from winellbot.models import Article, PipelineResult
from winellbot.state.db import State

log = logging.getLogger(__name__)


@dataclass
class CycleReport:
    run_id: int
    pages: list[str] = field(default_factory=list)
    counter: Counter = field(default_factory=Counter)
    written: list[str] = field(default_factory=list)  # titles of wiki pages the bot wrote
    results: dict[str, PipelineResult] = field(default_factory=dict)
    stopped: str = ""


class WinellBot:
    """Walks the due pages once. Collaborators are injected (see :mod:`winellbot.factory`)."""

    def __init__(self, *, state: State, reader, writer, pipeline, search, fetcher, gates,
                 settings, dry_run: bool = False) -> None:
        self.state = state
        self.reader = reader
        self.writer = writer
        self.pipeline = pipeline
        self.search = search
        self.fetcher = fetcher
        self.gates = gates
        self.settings = settings
        self.dry_run = dry_run

    # -- the cycle -------------------------------------------------------
    def run(self, titles: list[str] | None = None, *, force: bool = False,
            stop: threading.Event | None = None) -> CycleReport:
        run_id = self.state.start_run(self.settings.pipeline.backend)
        report = CycleReport(run_id)
        try:
            if not self.dry_run:
                self.writer.check_shutoff()
            if titles is None:
                titles = self.reader.watched_titles(self.settings.wiki.optin_template,
                                                    self.settings.wiki.watchlist_page or None, [])
            todo = self._due(titles, force)[: self.settings.schedule.max_pages_per_cycle]
            opted = self.reader.opted_in(todo) if todo else set()
            for title, wikitext, revid, timestamp in self.reader.read(todo):
                if stop is not None and stop.is_set():
                    report.stopped = "stop requested"
                    break
                self._page(report, title, wikitext, revid, timestamp, title in opted)
        except ShutoffError as exc:
            report.stopped = f"shutoff: {exc}"
            report.counter["shutoff"] += 1
            log.warning("stopping: %s", exc)
        finally:
            self.state.finish_run(run_id, "stopped" if report.stopped else "done",
                                  pages=len(report.pages), suggestions=report.counter["suggestions"],
                                  posted=report.counter["posted"], errors=report.counter["errors"])
        return report

    def _due(self, titles: list[str], force: bool) -> list[str]:
        if force:
            return list(titles)
        due = set(self.state.due_pages(titles))
        # A page edited since its last run is due again now: its text (and so what is new) changed.
        latest = self.reader.latest_revisions(titles)
        for title in titles:
            row = self.state.page(title)
            if row and title in latest and latest[title][0] != row.get("last_revid"):
                due.add(title)
        return [t for t in titles if t in due]

    def _page(self, report: CycleReport, title: str, wikitext: str, revid: int | None,
              timestamp: str | None, opted_in: bool) -> None:
        report.pages.append(title)
        try:
            article = parse_article(title, wikitext, revid=revid, timestamp=timestamp)
            result = self.treat(report.run_id, article)
            report.results[title] = result
            report.counter["suggestions"] += len(result.suggestions)
            report.counter["held"] += sum(1 for s in result.suggestions if s.blocked)
            if not self.dry_run:
                written = self.post(title, opted_in)
                if written:
                    report.written.append(written)
                    report.counter["posted"] += 1
        except ShutoffError:
            raise
        except PostingRefused as exc:
            report.counter["refused"] += 1
            self.state.record_error(report.run_id, title, "post", f"skipped: {exc}")
        except WinellbotError as exc:
            report.counter["errors"] += 1
            self.state.record_error(report.run_id, title, type(exc).__name__, str(exc))
            log.warning("%s: %s", title, exc)
            return
        self._reschedule(title, revid)

    def _reschedule(self, title: str, revid: int | None) -> None:
        now = dt.datetime.now(dt.timezone.utc).replace(microsecond=0)
        due = now + dt.timedelta(days=self.settings.schedule.recheck_days)
        self.state.touch_page(title, last_revid=revid, last_run=now.isoformat(), last_checked=now.isoformat(),
                              next_due=due.isoformat())

    # -- one page --------------------------------------------------------
    def treat(self, run_id: int, article: Article) -> PipelineResult:
        """Pipeline, then gates, then state: the same path as the backtest, plus recording."""
        from winellbot.factory import DatedSearch, since_for

        row = self.state.page(article.title) or {}
        search = DatedSearch(self.search, since_for(self.settings, row.get("last_checked")))
        result = self.pipeline.propose(article, search, self.fetcher)
        checked = self.gates.check(article, result.suggestions) if self.gates else result.suggestions
        result = replace(result, suggestions=tuple(checked))
        self.state.record_result(run_id, article.title, result)
        return result

    def post(self, title: str, opted_in: bool) -> str | None:
        """Post this page's pending suggestions; returns the title of the page written, if any."""
        pending = [row for row in self.state.suggestions(page=title, status="proposed")]
        if not pending:
            return None
        ids = [row["id"] for row in pending]
        if opted_in:
            outcome = self.writer.post_talk(title, pending)
        else:
            outcome = self.writer.post_queue(title, pending)
        _pause_for_crash_tests()
        if outcome.posted_ids or outcome.already_present_ids:
            self.state.record_post(list(outcome.posted_ids) + list(outcome.already_present_ids),
                                   outcome.target, outcome.revid, outcome.section_title)
        log.info("%s: %d posted to %s (%d already there, of %d)", title, len(outcome.posted_ids),
                 outcome.target, len(outcome.already_present_ids), len(ids))
        return outcome.target if outcome.posted_ids else None


def _pause_for_crash_tests() -> None:
    # The crash-safety test kills the process here, after a wiki write and before state records it.
    delay = os.environ.get("WINELLBOT_PAUSE_AFTER_WRITE")
    if delay:
        time.sleep(float(delay))
