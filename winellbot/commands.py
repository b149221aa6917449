"""What each CLI command does, as plain functions over the Python API."""
from __future__ import annotations

import contextlib
import json
import logging
import sqlite3
import threading
import warnings
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path

from winellbot.bot import CycleReport, WinellBot
from winellbot.config import Settings
from winellbot.errors import ConfigError, NoStateYet, StateError, WikiError
from winellbot.state.db import State
from winellbot.state.jobs import JobBeat
from winellbot.state.lock import JobLock

# lazy imports: every command goes through this module, `winellbot health` (every 10 s) included,
# so the factory and the wiki are imported only by the commands that build the bot.

log = logging.getLogger(__name__)


def open_state(settings: Settings, *, readonly: bool = False) -> State:
    """The configured state: the MariaDB database of ``[state] url``, or else the SQLite file at ``path``."""
    return State(settings.state.path, readonly=readonly, journal_mode=settings.state.journal_mode,
                 url=settings.state.server_url or None)


@contextlib.contextmanager
def job_state(settings: Settings, *, dry_run: bool = False) -> Iterator[State]:
    """The state a job works on.

    A job that writes (run, once, article --post, the demo) holds the state's lock for its whole
    life, so a second one refuses to start; runs a killed job left "running" are marked killed. On
    a database server (``[state] url``) several jobs may run: none takes the lock, each claims its
    pages with leases, and only runs whose job's heartbeat stopped are marked killed; the job keeps
    its heartbeat going between cycles and clears it when it ends (state/jobs.py).
    A dry run takes no lock and works on an in-memory copy, so nothing a later real run decides
    on changes (what was found, the pages' schedule, reviewers' verdicts): every dry run shows what
    a real run would do now. Only its cost is kept: its run and model calls, and the model's replies.
    The state is closed when the job's block ends (on SQLite before the lock goes): it cannot be used after it.
    """
    if dry_run:  # the run and its model calls are kept afterwards (_keep_cost)
        state = dry_run_copy(settings)
        with contextlib.closing(state.db.conn):
            yield state
        return
    if settings.state.server_url:  # several jobs share a database: each claims its pages with leases (bot.run)
        state = open_state(settings)
        with contextlib.closing(state.db.conn):
            killed = state.mark_interrupted()  # runs whose job stopped giving its heartbeat
            if killed:
                log.warning("run(s) %s of a killed job marked 'killed'", ", ".join(map(str, killed)))
            with JobBeat(state):  # the job's heartbeat between its cycles too, cleared when it ends (health reads it)
                yield state
        return
    with JobLock(settings.state.path) as lock:  # the connection is closed before the lock goes
        state = open_state(settings)
        with contextlib.closing(state.db.conn):
            killed = state.mark_interrupted()
            if killed or lock.taken_over:
                log.warning("run(s) %s of a killed job marked 'killed'", ", ".join(map(str, killed)) or "(none)")
            yield state


def dry_run_copy(settings: Settings) -> State:
    """An in-memory copy of the state for a dry run. The file is opened read-only only for the
    moment of copying: a dry run holds no connection a real job's writes would wait on (issue 30: a
    real job beside dry runs died with "database is locked")."""
    if not settings.state.server_url and not Path(settings.state.path).is_file():
        return State()
    try:
        real = open_state(settings, readonly=True)
    except NoStateYet:  # a database no job has made the state in yet: as a SQLite file not made yet
        return State()
    try:
        return real.snapshot()
    finally:
        real.db.conn.close()


def state_dir(settings: Settings) -> Path:
    return Path(settings.state.path).resolve().parent


def build_bot(settings: Settings, state: State, *, dry_run: bool = False, wiki=None) -> WinellBot:
    from winellbot import factory

    wiki = wiki or factory.build_wiki(settings, state_dir(settings))
    if dry_run:  # a dry run works on a copy: nothing a later real run reads may change
        state = state.snapshot()
    # One model client per cycle, shared by the pipeline and the support judge; the bot tells
    # it the run id, so its calls and token use are recorded against the run.
    client, editor_client = factory.build_model_clients(settings, state)
    agent = factory.web_user_agent(getattr(wiki, "site", None), settings.wiki.username)
    bot = WinellBot(
        state=state, reader=wiki.reader, writer=wiki.writer,
        pipeline=factory.build_pipeline(settings, state=state, client=client, editor_client=editor_client),
        search=factory.build_search(settings, agent), fetcher=factory.build_fetcher(settings, state, agent),
        gates=factory.build_gates(settings, state, client=client, for_review=settings.review.mode == "reviewed"),
        settings=settings, dry_run=dry_run,
        clients=tuple(c for c in (client, editor_client) if c is not None),
    )
    if settings.review.mode == "reviewed":
        from winellbot.gates.revision import RevisionCheck

        bot.recheck = RevisionCheck(bot.gates, language=settings.wiki.language)  # the same gates, built once
    return bot


def simulating(settings: Settings, args: list[str]) -> bool:
    """Whether Pywikibot will only simulate the saves (``-simulate`` or ``[wiki] simulate``): the job
    then works on a copy of the state too, so a later real run finds everything still to do."""
    return settings.wiki.simulate or any(a == "-simulate" or a.startswith("-simulate:") for a in args)


def titles_from_args(site, args: list[str]) -> list[str] | None:
    """Pywikibot's own options: -simulate and friends, then page generators. None: no generator given.
    Every page the generators give, in any namespace: the cycle says of each one that is not an
    article why it is not treated (WinellBot._resolve), and records it."""
    if not args:
        return None
    import pywikibot
    from pywikibot import config, pagegenerators

    # handle_args() instantiates the default site: make that the wiki we are connected to.
    config.family, config.mylang = site.family.name, site.code
    with warnings.catch_warnings():  # the site is made first on purpose: it is the one handle_args uses
        warnings.filterwarnings("ignore", message="Site objects have been created before arguments")
        rest = pywikibot.handle_args(args)
    factory = pagegenerators.GeneratorFactory(site)
    unknown = [a for a in rest if not factory.handle_arg(a)]
    if unknown:
        raise ConfigError(f"unknown options: {' '.join(unknown)}")
    gen = factory.getCombinedGenerator()
    if gen is None:
        return None
    return [p.title() for p in gen]


def once(settings: Settings, args: list[str], *, force: bool = False, dry_run: bool = False) -> int:
    from winellbot import factory

    copy = dry_run or simulating(settings, args)
    with job_state(settings, dry_run=copy) as state:
        wiki = factory.build_wiki(settings, state_dir(settings))
        titles = titles_from_args(wiki.site, args)
        bot = build_bot(settings, state, dry_run=dry_run, wiki=wiki)
        report = bot.run(titles, force=force or titles is not None)
        if copy:
            _keep_cost(settings, bot, report)
    if _failed(report):
        raise WikiError(f"run {report.run_id} stopped: {report.stopped}")
    print_report(report)
    return 3 if report.stopped.startswith("shutoff") else 0


def run_forever(settings: Settings, args: list[str], *, approved_only: bool = False) -> int:
    """``winellbot run``: cycles on schedule and, in the reviewed mode, posts of what reviewers approved
    between them (every ``review.poll_seconds``); ``approved_only``: the posts only, no cycles."""
    from winellbot import factory
    from winellbot.scheduler import CycleScheduler

    simulate = simulating(settings, args)
    with job_state(settings) as state:
        wiki = factory.build_wiki(settings, state_dir(settings))
        titles = titles_from_args(wiki.site, args)

        def cycle(stop: threading.Event) -> None:
            _job_cycle(settings, state, wiki, simulate, titles=titles, stop=stop)

        def post_approved(stop: threading.Event) -> None:
            from winellbot.state.reviews import ReviewStore

            if ReviewStore(state).approved_pages():  # a run record only when something was approved
                _job_cycle(settings, state, wiki, simulate, stop=stop, approved_only=True)

        reviewed = settings.review.mode == "reviewed"
        if approved_only and not reviewed:
            raise ConfigError("run --approved-only posts what reviewers approved: it needs [review] mode = \"reviewed\"")
        CycleScheduler(None if approved_only else cycle, interval_minutes=settings.schedule.interval_minutes,
                       poll=post_approved if reviewed else None, poll_seconds=settings.review.poll_seconds).serve()
    return 0


def _job_cycle(settings: Settings, state: State, wiki, simulate: bool, **run) -> None:
    """One cycle of a running job, printed. Under ``-simulate`` it works on a fresh copy of the state
    and only its cost is kept, as ``once -simulate`` does: no page is marked checked by a cycle that
    posted nothing, so the next real run finds everything still due."""
    bot = build_bot(settings, dry_run_copy(settings) if simulate else state, wiki=wiki)
    report = bot.run(**run)
    if simulate:
        _keep_cost(settings, bot, report)
    print_report(report)


def article(settings: Settings, args: list[str], title: str, *, post: bool = False, as_json: bool = False) -> int:
    from winellbot import factory

    copy = not post or simulating(settings, args)
    with job_state(settings, dry_run=copy) as state:
        wiki = factory.build_wiki(settings, state_dir(settings))
        titles_from_args(wiki.site, args)  # honours -simulate and friends
        bot = build_bot(settings, state, dry_run=not post, wiki=wiki)
        report = bot.run([title], force=True)
        if copy:
            _keep_cost(settings, bot, report)
    if title in report.problems:
        raise WikiError(report.problems[title])
    if _failed(report):
        raise WikiError(report.stopped)
    result = report.results.get(report.canonical.get(title, title))
    if result is None:
        print_report(report)
        return 1
    for s in result.suggestions:
        if as_json:
            print(json.dumps({"id": s.id, "section": list(s.section_path), "added": s.edit.added_text,
                              "new_paragraph": s.edit.new_paragraph, "url": s.update.document.url,
                              "findings": [asdict(f) for f in s.findings]}, ensure_ascii=False))
        else:
            print(format_suggestion(s))
    if not as_json:
        print_report(report)
    return 0


def _keep_cost(settings: Settings, bot: WinellBot, report: CycleReport) -> None:
    """After a dry run or ``-simulate`` (both on a copy), keep its run and model calls in the real state, in
    one short transaction; if the state cannot take them now, the run says so and its output stands."""
    if settings.state.path == ":memory:" and not settings.state.server_url:
        return
    try:
        real = open_state(settings)
        try:
            report.run_id = real.keep_dry_run(bot.state, report.run_id) or report.run_id
        finally:
            real.db.conn.close()
    except (StateError, sqlite3.Error) as exc:
        log.warning("the dry run's cost records were not kept in %s: %s", settings.state.path, exc)


def _failed(report: CycleReport) -> bool:
    """The cycle ended because the wiki could not be used (recorded; the line says why)."""
    return bool(report.stopped) and not report.stopped.startswith(("shutoff", "stop requested"))


def format_suggestion(s) -> str:
    lines = [f"== {s.article_title} > {' > '.join(s.section_path) or '(lead)'}  [{s.id}]",
             f"   + {s.edit.added_text}", f"   source: {s.update.document.url}"]
    lines += [f"   {f.severity}: {f.gate}: {f.message}" for f in s.findings]
    return "\n".join(lines)


def print_report(report: CycleReport) -> None:
    for why in report.problems.values():
        print(f"not treated: {why}")
    c = report.counter
    print(f"run {report.run_id}: {len(report.pages)} page(s), {c['suggestions']} suggestion(s) "
          f"({c['held']} held by gates" + (f", {c['merged']} held as the same fact as another" if c["merged"] else "")
          + f"), {c['posted']} page(s) posted, {c['recorded']} error(s) or skip(s) "
          f"recorded"
          + (f", {c['capped']} waiting for the posting caps" if c["capped"] else "")
          + (f"; outcomes: {c['adopted']} newly adopted, {c['reverted']} adoption(s) reverted, {c['expired']} "
             f"expired" if c["adopted"] or c["reverted"] or c["expired"] else "")
          + (f"; stopped: {report.stopped}" if report.stopped else ""))


def status(settings: Settings, *, as_json: bool = False) -> int:
    state = open_state(settings, readonly=True)  # reading creates nothing
    info = state_summary(state)
    if as_json:
        print(json.dumps(info, indent=2, default=str))
        return 0
    print(f"state: {state.path} (schema {info['schema']})")
    print("tables: " + ", ".join(f"{k} {v}" for k, v in info["tables"].items()))
    print("suggestions by status: " + (", ".join(f"{k} {v}" for k, v in info["by_status"].items()) or "none"))
    print("gate findings: " + (", ".join(f"{g}/{s} {n}" for g, s, n in info["gates"]) or "none"))
    print(f"model tokens: {info['tokens']['prompt']} prompt + {info['tokens']['completion']} completion "
          f"in {info['tokens']['calls']} call(s), {info['tokens']['cached']} cached")
    for run in info["runs"]:
        print(f"run {run['id']}: {run['started']} {run['status']} backend={run['backend']} pages={run['pages']} "
              f"suggestions={run['suggestions']} posted={run['posted']} errors={run['errors']}")
    for err in info["errors"]:
        print(f"error: {err['created']} {err['page']} [{err['stage']}] {_one_line(err['message'], 400)}")
    for src in info["hostile"]:
        print(f"hostile source: {src['url']}: {_one_line(src['hostile'], 200)}")
    return 0


def _one_line(text: str, most: int) -> str:
    """``text`` on one line (a message recorded over several lines too), cut to ``most`` characters with "…"."""
    line = " ".join(str(text or "").split())
    return line if len(line) <= most else line[:most - 1] + "…"


def state_summary(state: State) -> dict:
    db = state.db
    q = lambda sql: [dict(r) for r in db.query(sql)]  # noqa: E731
    tok = q("select coalesce(sum(prompt_tokens),0) p, coalesce(sum(completion_tokens),0) c, count(*) n, "
            "coalesce(sum(cached),0) k from llm_calls")[0]
    return {
        "schema": state.version,
        "tables": state.counts(),
        "by_status": {r["status"]: r["n"] for r in q("select status, count(*) n from suggestions group by status")},
        "gates": [(r["gate"], r["severity"], r["n"]) for r in
                  q("select gate, severity, count(*) n from gate_results group by gate, severity")],
        "tokens": {"prompt": tok["p"], "completion": tok["c"], "calls": tok["n"], "cached": tok["k"]},
        "runs": q("select * from runs order by id desc limit 5"),
        "errors": q("select * from errors order by id desc limit 5"),
        # sources that addressed an AI or the reader with instructions (a state older than the column has none)
        "hostile": q("select url, hostile from sources where hostile is not null order by url")
        if "hostile" in {c.name for c in db["sources"].columns} else [],
    }
