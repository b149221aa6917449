"""The bot: one cycle over the watched pages, in Pywikibot's order of steps.

    setup (shutoff check, run record)
    for each due page: init_page (read) -> skip_page -> treat (pipeline, gates, state, post)
    exit (counters, run record)

Errors about one page are caught, recorded in state and counted; the run goes on. A state that cannot
be read or written (a StorageError) ends the cycle with its one line.
A shutoff stops the run at once. So does a spent model token budget: the page being treated and
the pages after it are not rescheduled (they stay due, and the next cycle does them, with the
model calls already made served from the cache); the run record and ``status`` say so. Posting is idempotent: a suggestion is marked
posted only after the wiki holds it, and the writer skips ids already on the page,
so a crash between the two never posts twice and loses nothing. On a state on a database server
several jobs share the due pages: each claims a batch at a time with leases (winellbot/state/leases.py).
"""
from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import logging
import os
import threading
import time
from collections import Counter
from dataclasses import dataclass, field

from winellbot import clock
from winellbot.article import parse_article
from winellbot.errors import BudgetExceeded, PostingRefused, ShutoffError, StorageError, WikiDown, WinellbotError
from winellbot.gates.acceptability import features
from winellbot.models import Article, PipelineResult
from winellbot.outcomes.adoption import fingerprint
from winellbot.outcomes.tracker import OutcomeCheck
from winellbot.outcomes.verdicts import ReviewSync
from winellbot.pipeline.pipeline import propose_checked
from winellbot.posting import PostPlan, PostPlanner, resolve_style
from winellbot.review.outbox import Approved, Withdrawals
from winellbot.search.dated import DatedSearch, since_for
from winellbot.state.db import Measured, State
from winellbot.state.intents import LostPosts, PostIntents
from winellbot.state.leases import LEASE_SECONDS, LeaseLost, Leases
from winellbot.state.outcomes import OutcomeStore
from winellbot.state.posts import PostClaims
from winellbot.state.reviews import ReviewStore
from winellbot.text import kept_text
from winellbot.wiki import render
from winellbot.wiki.exclusion import exclusion

log = logging.getLogger(__name__)


@dataclass
class CycleReport:
    run_id: int
    pages: list[str] = field(default_factory=list)
    counter: Counter = field(default_factory=Counter)
    written: list[str] = field(default_factory=list)  # titles of wiki pages the bot wrote
    problems: dict[str, str] = field(default_factory=dict)  # title as given -> why it was not treated
    canonical: dict[str, str] = field(default_factory=dict)  # title as given -> the article's title
    results: dict[str, PipelineResult] = field(default_factory=dict)
    stopped: str = ""
    due: list[str] = field(default_factory=list)  # the pages this cycle set out to treat (or post to)


class WinellBot:
    """Walks the due pages once. Collaborators are injected (see :mod:`winellbot.factory`)."""

    def __init__(self, *, state: State, reader, writer, pipeline, search, fetcher, gates,
                 settings, dry_run: bool = False, clients: tuple = ()) -> None:
        self.state = state
        self.reader = reader
        self.writer = writer
        self.pipeline = pipeline
        self.search = search
        self.fetcher = fetcher
        self.gates = gates
        self.settings = settings
        self.dry_run = dry_run
        self.clients = clients  # model clients: told the run id, so their calls are recorded against it
        self.leases: Leases | None = None  # the pages this job claimed, on a state shared by several jobs
        self.approved_only = False  # this run only posts what reviewers approved (no search, no checks)
        self.recheck = None  # a RevisionCheck (gates/revision.py): a reviewer's wording checked again at the write

    # -- the cycle -------------------------------------------------------
    def run(self, titles: list[str] | None = None, *, force: bool = False,
            stop: threading.Event | None = None, approved_only: bool = False) -> CycleReport:
        """One cycle; ``approved_only``: only post what reviewers approved (a running job between its
        cycles), with the same run record, leases, claims and safety checks as a whole cycle."""
        self.approved_only = approved_only
        unreachable = self._agree_clock()
        run_id = self.state.start_run(self.settings.pipeline.backend)
        report = CycleReport(run_id)
        for client in self.clients:
            client.run_id = run_id
        status = "done"
        self.leases = self._claiming(run_id)
        try:
            if unreachable is not None:
                raise unreachable
            if not self.dry_run:
                self.record_lost_posts(report)
            self._record_input_problems(run_id)
            if not self.dry_run and not self.writer.shutoff_allows():
                raise ShutoffError(f"the shutoff page {self.settings.wiki.shutoff} does not say 'run'")
            self._cycle(report, titles, force, stop)
        except ShutoffError as exc:
            report.stopped = f"shutoff: {exc}"
            report.counter["shutoff"] += 1
            log.warning("stopping: %s", exc)
        except WikiDown as exc:
            # Every page would fail the same way: one line, recorded, and the cycle ends.
            status, report.stopped = "failed", str(exc)
            report.counter["errors"] += 1
            self.state.record_error(run_id, None, type(exc).__name__, str(exc))
            log.info("stopping: %s", exc)  # the caller reports it, once
        except StorageError:
            status = "failed"  # recorded if the state still takes it; the caller says why, once
            raise
        except BudgetExceeded as exc:
            left = len(report.due) - len(report.pages) + 1
            status = "budget spent"
            report.stopped = f"token budget spent: {exc}; {left} page(s) left due for the next cycle"
            self.state.record_error(run_id, report.pages[-1] if report.pages else None, "budget", report.stopped)
            log.warning("stopping: %s", report.stopped)
        finally:
            if self.leases is not None:  # what a refused or failed write left claimed is given up
                PostClaims(self.state, self.leases.holder).release()
                self.leases.close()
            # Every error or skip recorded in the cycle counts (a refused save, a pipeline error, a
            # corpus line), not only those that ended a page.
            report.counter["recorded"] = self.state.count_errors(run_id)
            self.state.finish_run(run_id, status if status != "done" or not report.stopped else "stopped",
                                  pages=len(report.pages), suggestions=report.counter["suggestions"],
                                  posted=report.counter["posted"], errors=report.counter["recorded"])
        return report

    def _agree_clock(self) -> WikiDown | None:
        """Set the bot's clock by the wiki's (winellbot/clock.py) before the cycle records anything. A
        wiki that does not answer: its error, which the cycle stops on (recorded in its run)."""
        try:
            clock.CLOCK.agree_with(self.reader.server_time())
        except WikiDown as exc:
            return exc
        except WinellbotError as exc:  # the clock stays as it was; the cycle meets what is wrong itself
            log.warning("the wiki's clock was not read (%s): the bot's records use this machine's", exc)
        return None

    def _cycle(self, report: CycleReport, titles: list[str] | None, force: bool,
               stop: threading.Event | None) -> None:
        """The pages' work: reviewers' verdicts and the queue's estimates brought up to date, the due
        pages treated and posted, then what reviewers approved on pages not due now is posted;
        ``approved_only``: only that last part."""
        self.withdraw_undone()  # posts recorded at this start (state/intents.py) settled too
        if self.approved_only:
            report.due = self._approved_pages()
            self._work(report, report.due, {}, stop)
            return
        if titles is None:
            titles = self.reader.watched_titles(self.settings.wiki.optin_template,
                                                self.settings.wiki.watchlist_page or None, [])
        titles = self._resolve(report, titles)
        self.sync_reviews()
        self.rescore_queue()
        seen = self.leases.last_runs(titles) if self.leases is not None else {}
        report.due = self._due(titles, force)[: self.settings.schedule.max_pages_per_cycle]
        self.check_outcomes(report)
        self._work(report, report.due, seen, stop)
        if not self.dry_run and not report.stopped:  # approved since, on pages not due now
            self.approved_only = True
            self._work(report, [t for t in self._approved_pages() if t not in report.pages], {}, stop)

    def _claiming(self, run_id: int) -> Leases | None:
        """On a database server several jobs share the state: this one claims its pages with leases,
        renewed from now on (state/leases.py). A dry run works on an SQLite copy and claims nothing."""
        if getattr(self.state, "engine", "sqlite") == "sqlite" or self.dry_run:
            return None
        return Leases(self.state).start(run_id)

    def _work(self, report: CycleReport, todo: list[str], seen: dict, stop: threading.Event | None) -> None:
        """Treat the due pages in order. With leases, a claimed batch at a time: a page another job
        holds, or treated since ``seen`` (each page's last run when this job found it due), is left to it."""
        batches = self.leases.batches(todo, seen) if self.leases is not None else iter([todo])
        for batch in batches:
            opted = self.reader.opted_in(batch) if batch else set()
            for title, wikitext, revid, timestamp in self.reader.read(batch):
                if stop is not None and stop.is_set():
                    report.stopped = "stop requested"
                    return
                self._page(report, title, wikitext, revid, timestamp, title in opted)
                if self.leases is not None:
                    self.leases.release([title])

    def _record_input_problems(self, run_id: int) -> None:
        """Corpus files, lines or documents that could not be read: recorded, skipped, never fatal."""
        for problem in getattr(self.search, "problems", ()):
            self.state.record_error(run_id, None, "corpus", problem)

    def _resolve(self, report: CycleReport, titles: list[str]) -> list[str]:
        """Canonical article titles (redirects followed, one per page); the rest recorded as problems."""
        if not titles:
            return []
        w = self.settings.wiki
        resolved = self.reader.resolve(titles, content_namespaces=w.content_namespaces, bot_user=w.username)
        out: list[str] = []
        for given, r in resolved.items():
            if not r.ok:
                report.problems[given] = r.problem
                report.counter["errors"] += 1
                self.state.record_error(report.run_id, given, "title", r.problem)
                continue
            report.canonical[given] = r.title
            if r.title not in out:
                out.append(r.title)
        return out

    def _due(self, titles: list[str], force: bool) -> list[str]:
        self._latest: dict | None = None
        if force:
            return list(titles)
        due = set(self.state.due_pages(titles, horizon_days=self.settings.schedule.recheck_days))
        # A page edited since its last run is due again now: its text (and so what is new) changed.
        latest = self.reader.latest_revisions(titles)
        self._latest = latest  # the outcome check reuses these: no request of its own for them
        for title in titles:
            row = self.state.page(title)
            if row and title in latest and latest[title][0] != row.get("last_revid"):
                due.add(title)
        return [t for t in titles if t in due]

    def _page(self, report: CycleReport, title: str, wikitext: str, revid: int | None,
              timestamp: str | None, opted_in: bool) -> None:
        """One page; whatever goes wrong with it is recorded against it and the cycle goes on."""
        report.pages.append(title)
        try:
            why = exclusion(wikitext, self.settings.wiki.username, self.settings.wiki.message_type)
            if why:
                raise PostingRefused(f"{title}: {why} (on the article)")
            article = parse_article(title, wikitext, revid=revid, timestamp=timestamp)
            if not self.approved_only:
                result = self.treat(report.run_id, article)
                report.results[title] = result
                report.counter["suggestions"] += len(result.suggestions)
                report.counter["held"] += sum(1 for s in result.suggestions if s.blocked)
            if not self.dry_run:
                if self.leases is not None and not self.leases.holds(title):
                    raise LeaseLost(f"{title}: this job's lease ran out; the page is left to the job that took it")
                written = self.post(article, opted_in, report)
                if written:
                    report.written.append(written)
                    report.counter["posted"] += 1
        except (ShutoffError, WikiDown, BudgetExceeded, StorageError):
            raise  # the cycle ends; a page the budget cut short is not rescheduled
        except PostingRefused as exc:
            report.counter["refused"] += 1
            self.state.record_error(report.run_id, title, "post", f"skipped: {exc}")
        except WinellbotError as exc:
            report.counter["errors"] += 1
            self.state.record_error(report.run_id, title, type(exc).__name__, str(exc))
            log.warning("%s: %s", title, exc)
            return
        except Exception as exc:  # a bug on one page must not cost the others their cycle
            report.counter["errors"] += 1
            self.state.record_error(report.run_id, title, "internal", f"{type(exc).__name__}: {exc}")
            log.exception("%s: internal error", title)
            return
        if not self.approved_only:  # a post of approved suggestions is not a check of the page
            self._reschedule(title, revid, opted_in)

    def _reschedule(self, title: str, revid: int | None, opted_in: bool) -> None:
        """The page checked now; whether it opted in is kept (the review page says where an approval goes)."""
        now = clock.now()
        due = now + dt.timedelta(days=self.settings.schedule.recheck_days)
        self.state.touch_page(title, last_revid=revid, last_run=now.isoformat(), last_checked=now.isoformat(),
                              next_due=due.isoformat(), opted_in=int(opted_in))

    # -- one page --------------------------------------------------------
    def treat(self, run_id: int, article: Article) -> PipelineResult:
        """Pipeline, then gates, then state: the same path as the backtest, plus recording."""

        row = self.state.page(article.title) or {}
        since = since_for(self.settings, row.get("last_checked"))
        result = propose_checked(self.pipeline, self.gates, article, DatedSearch(self.search, since), self.fetcher,
                                 limit=self.settings.pipeline.max_suggestions, since=since)
        self.state.record_result(run_id, article.title, result, self._measured(article, result))
        self.record_sources(result)
        return result

    def _measured(self, article: Article, result: PipelineResult) -> dict[str, Measured]:
        """Each suggestion's acceptability estimate and measurements, kept for the review queue."""
        wiki = self._wiki_name()
        out = {}
        for s in result.suggestions:
            if not s.blocked:
                out[s.id] = Measured(s.estimate, features(article, s), wiki)
        return out

    def _wiki_name(self) -> str:
        site = getattr(self.writer, "site", None)
        try:
            return site.hostname() if site is not None else ""
        except Exception:  # a site that cannot say its host name is recorded without one
            return ""

    def record_sources(self, result: PipelineResult) -> None:
        """Put every source the navigator chose to read in state, so each run's sources can be seen.

        A web fetcher records what it fetched itself (with its outcome); results that carried
        their document (the local corpus) are recorded here, once, with status ``corpus``: the text
        as the bot read it, none of a text it did not read (over the cap; ``error`` says why).
        """
        for step in result.steps:
            doc = step.chosen.document if step.chosen is not None else None
            if doc is None or not doc.url:
                continue
            text, why = kept_text(doc.text)
            self.state.record_source(doc.url, original_url=doc.url, title=doc.title, publisher=doc.publisher,
                                     published=doc.published, status="corpus", error=why,
                                     content_hash=hashlib.sha256(doc.text.encode("utf-8")).hexdigest(), text=text)

    def post(self, article: Article, opted_in: bool, report: CycleReport | None = None) -> str | None:
        """Post this page's pending suggestions; returns the title of the page written, if any.

        Pending suggestions come from state, not from this run, so those found by a run that
        crashed before posting are posted now; ids already on the target are skipped by the writer.
        The posting policy (:mod:`winellbot.posting`) first folds suggestions of the same fact
        into one and holds back what the caps do not allow yet.
        """

        title = article.title
        pending, approvals = self._postable(article, opted_in)
        pending = self._of_this_wiki(title, pending, report)
        if not pending:
            return None
        p = self.settings.posting
        plan = PostPlanner(self.state, max_per_page_per_week=p.max_per_page_per_week,
                           max_per_wiki_per_day=p.max_per_wiki_per_day).plan(article, pending)
        for sid, why in plan.merged.items():
            self.state.set_status(sid, "held", why)
        if report is not None:
            report.counter["merged"] += len(plan.merged)
        if plan.capped:
            log.info("%s: %d suggestion(s) wait for a later cycle: at most %s", title, len(plan.capped), plan.cap_reason)
            if report is not None:
                report.counter["capped"] += len(plan.capped)
        if not plan.post:
            return None
        _pause_for_tests("WINELLBOT_PAUSE_BEFORE_POST")
        plan = self._claim_posts(title, plan, report)
        if not plan.post:
            return None
        ids = [s.id for s in plan.post]
        intents = self._announce(title, ids, opted_in)  # the state can record the post, or nothing is saved
        outcome = self._write(article, plan, opted_in, approvals)
        if outcome is None:  # every one was undone or sent back just before the write: nothing was saved
            if intents is not None:
                intents.done(ids)
            if self.leases is not None:
                PostClaims(self.state, self.leases.holder).release(ids)
            return None
        _pause_for_tests("WINELLBOT_PAUSE_AFTER_WRITE")
        # Also when everything was there already: a job killed between the post and the listing left
        # the page unlisted (listing is idempotent).
        if not opted_in and (outcome.posted_ids or outcome.skipped_ids) \
                and self.settings.wiki.queue_mode == "per-article":
            self.writer.list_on_index(self.settings.wiki.queue, outcome.target, title)
        done = list(outcome.posted_ids) + list(outcome.skipped_ids)
        if self.leases is not None:  # a claim whose suggestion did not reach the wiki counts no more
            PostClaims(self.state, self.leases.holder).release([i for i in ids if i not in done or _simulating()])
        if _simulating():
            # Pywikibot's -simulate answered the save without writing: nothing is posted, so the
            # suggestions stay pending for a real run.
            log.info("%s: simulated post of %d suggestion(s) to %s", title, len(outcome.posted_ids), outcome.target)
            return None
        if done:
            links = {sid: self.writer.permalink(outcome.target, outcome.revid, sid) for sid in done}
            self.state.record_post(done, outcome.target, outcome.revid, outcome.section_title, links)
            self.withdraw_undone(done, links)
            self.track_outcomes(article, [s for s in plan.post if s.id in done])
        if intents is not None:
            intents.done(ids)
        log.info("%s: %s, %d posted to %s, %d already there", title, outcome.mode, len(outcome.posted_ids),
                 outcome.target, len(outcome.skipped_ids))
        return outcome.target if outcome.posted_ids else None

    def _announce(self, title: str, ids: list[str], opted_in: bool) -> PostIntents | None:
        """Announce the post to the state (winellbot/state/intents.py): a StorageError, before any save, when
        the state cannot take its record; None under -simulate (nothing will be saved)."""
        if _simulating():
            return None
        intents = PostIntents(self.state, margin_mb=self.settings.state.min_free_mb)
        intents.announce(title, ids, "" if opted_in else self.queue_page(title))
        return intents

    def record_lost_posts(self, report: CycleReport) -> int:
        """Before anything else in a cycle: the saves announced and never recorded (a full disk, a killed
        job) recorded, each with the revision that added it read from the wiki (state/intents.py)."""
        w = self.settings.wiki
        lost = LostPosts(self.state, self.writer, index=w.queue if w.queue_mode == "per-article" else "")
        recorded = lost.run(0 if self.leases is None else LEASE_SECONDS)
        for page, why in lost.problems:
            report.counter["errors"] += 1
            self.state.record_error(report.run_id, page, "post", why)
        report.counter["posted"] += recorded
        return recorded

    def _write(self, article: Article, plan: PostPlan, opted_in: bool, approvals: dict[str, str]):
        """Render ``plan``'s suggestions (each approved one naming its reviewer, a revision in its
        reviewer's words: :class:`winellbot.review.outbox.Approved`, read again now) and hand them to the
        writer: a talk-page section where the article opted in, else its queue page."""
        title, user, style = article.title, self.settings.wiki.username, self.style
        recheck = self.recheck

        def checked(s, text: str, note: str):  # the reviewer's wording, checked as any post against the article
            finding = recheck.check(article, s, text, note=note) if recheck is not None else None
            return finding.message if finding is not None else None

        ready = Approved(self.state, checked).prepare(plan.post, plan.notes, set(approvals))
        if not ready.post:
            return None
        ids = [s.id for s in ready.post]
        unreviewed = [i for i in ids if not ready.notes[i].reviewer]
        if opted_in:
            section = render.default_section_title(clock.today().isoformat())
            body = render.render_section(ready.post, bot_user=user, style=style, notes=ready.notes)
            return self.writer.post_talk_section(title, section, body, ids, unreviewed=unreviewed)
        body = "".join(render.render_queue_entry(s, bot_user=user, style=style, notes=ready.notes.get(s.id))
                       for s in ready.post)
        return self.writer.post_queue(self.queue_page(title), body, ids, article=title, unreviewed=unreviewed)

    def _postable(self, article: Article, opted_in: bool) -> tuple[list, dict[str, str]]:
        """The page's suggestions that may be posted now, and who approved each: in the direct mode every
        pending one; in the reviewed mode :meth:`winellbot.review.outbox.Approved.postable`."""
        if self.settings.review.mode == "direct":
            return [s for s in self.state.pending(article.title) if not s.blocked], {}
        return Approved(self.state).postable(article.title, opted_in, self._acceptability_gate(),
                                             self.writer.asks_unreviewed)

    def _of_this_wiki(self, title: str, suggestions: list, report: CycleReport | None) -> list:
        """Those of ``suggestions`` recorded for the wiki this bot writes (or for none: made before the state
        kept it); one recorded for another wiki is never posted here, a recorded skip (a bot edits only the
        wiki it was approved for; several wikis may share one state)."""
        here = self._wiki_name()
        wikis = self.state.wikis([s.id for s in suggestions])
        for sid, wiki in wikis.items():
            if wiki and wiki != here and report is not None:
                report.counter["refused"] += 1
                self.state.record_error(report.run_id, title, "post", f"skipped: suggestion {sid} is for {wiki}, "
                                        f"not {here or 'this wiki'}; not posted here")
        return [s for s in suggestions if not wikis.get(s.id) or wikis[s.id] == here]

    def _approved_pages(self) -> list[str]:
        """Articles with approved suggestions waiting to be posted (none in the direct mode)."""
        if self.settings.review.mode != "reviewed":
            return []
        ours = self.state.pages_with("approved", self._wiki_name())  # another wiki's are not this bot's to post
        pages = [p for p in ReviewStore(self.state).approved_pages() if p in ours]
        return pages[: self.settings.schedule.max_pages_per_cycle]

    def withdraw_undone(self, done: list[str] | None = None, links: dict[str, str] | None = None) -> int:
        """Settle the reviews of posts just recorded (``done``; None: any) and withdraw every post whose
        approval was undone (:class:`winellbot.review.outbox.Withdrawals`); nothing in a dry run."""
        if self.dry_run or _simulating() or self.settings.review.mode != "reviewed":
            return 0
        return Withdrawals(self.state, self.writer).run(done, links)

    def _claim_posts(self, title: str, plan: PostPlan, report: CycleReport | None) -> PostPlan:
        """With several jobs on the state, claim the planned posts first (state/posts.py): the caps
        count every job's posts and claims in one transaction; what they leave no room for waits."""
        if self.leases is None:
            return plan
        p = self.settings.posting
        granted = set(PostClaims(self.state, self.leases.holder).claim(
            title, [s.id for s in plan.post], per_page_week=p.max_per_page_per_week,
            per_wiki_day=p.max_per_wiki_per_day))
        waiting = len(plan.post) - len(granted)
        if waiting:
            log.info("%s: %d suggestion(s) wait for a later cycle: the caps, with other jobs' posts", title, waiting)
            if report is not None:
                report.counter["capped"] += waiting
        return dataclasses.replace(plan, post=tuple(s for s in plan.post if s.id in granted))

    @property
    def style(self) -> str:
        """``fact`` or ``edit``: the configured posting style, ``auto`` resolved for this wiki."""
        return resolve_style(self.settings.posting.style, self.writer.site.hostname())

    def queue_page(self, title: str) -> str:
        queue = self.settings.wiki.queue
        return f"{queue}/{title}" if self.settings.wiki.queue_mode == "per-article" else queue

    def sync_reviews(self) -> int:
        """Copy reviewers' verdicts (the status parameter, with its reason) from the wiki into state
        (:class:`winellbot.outcomes.verdicts.ReviewSync`); returns how many trusted ones changed a status."""
        return ReviewSync(self.state, self.reader, bot_user=self.settings.wiki.username,
                          trust_anonymous=self.settings.posting.trust_anonymous).sync()

    def rescore_queue(self) -> int:
        """Re-estimate the open suggestions with the acceptability model in use (a refit, e.g. from the
        review page's decisions, re-orders the queue); returns how many estimates changed."""
        gate = self._acceptability_gate()
        if gate is None or gate.model is None or self.settings.review.mode != "reviewed":
            return 0
        return ReviewStore(self.state).rescore(gate.model.estimate)

    def _acceptability_gate(self):
        """The gate chain's acceptability gate (its model orders the queue), or None without one."""
        return next((g for g in getattr(self.gates, "gates", ()) if g.name == "acceptability"), None)

    def check_outcomes(self, report: CycleReport | None = None):
        """Which posted facts entered their articles, or expired (:mod:`winellbot.outcomes.tracker`),
        read on the change check's revisions; a failure is recorded and the cycle goes on."""
        try:
            found = OutcomeCheck(self.state, self.reader,
                                 expire_days=self.settings.posting.expire_days).check(getattr(self, "_latest", None))
        except (WikiDown, StorageError):
            raise
        except WinellbotError as exc:
            if report is not None:
                report.counter["errors"] += 1
                self.state.record_error(report.run_id, None, "outcomes", str(exc))
            return None
        if report is not None:
            for key in ("adopted", "reverted", "expired"):
                report.counter[key] += len(getattr(found, key))
        return found

    def track_outcomes(self, article: Article, posted: list) -> None:
        """Keep what the article looked like when ``posted`` went up, to see later what became of them."""

        OutcomeStore(self.state).track([fingerprint(article, s, features(article, s)) for s in posted])


def _simulating() -> bool:
    import pywikibot

    return bool(pywikibot.config.simulate)


def _pause_for_tests(variable: str) -> None:
    # Tests act on the wiki while the bot waits here: WINELLBOT_PAUSE_BEFORE_POST (after the
    # page's suggestions are in state, before anything is read for the post: delete the article,
    # stop the wiki) and WINELLBOT_PAUSE_AFTER_WRITE (after a wiki write, before state records it:
    # kill the bot).
    delay = os.environ.get(variable)
    if delay:
        time.sleep(float(delay))
