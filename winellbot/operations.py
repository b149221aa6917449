"""Operator commands: ``winellbot posted`` (what went where), ``winellbot withdraw ID`` and
``winellbot userpage`` (the bot's user page for these settings, to save by hand on a real wiki).

``posted`` reads the state only: every posted suggestion with its page, section, status (as
reviewers last set it, or withdrawn) and the permanent link of the revision that posted it.
``withdraw`` records the suggestion as withdrawn in state, then sets its ``status`` to ``withdrawn``
on the wiki, through the writer's one save path (so the shutoff page, {{bots}} and the namespace
rules hold), changing nothing else on the page.
"""
from __future__ import annotations

import argparse
import datetime as dt
import json

from winellbot import clock
from winellbot.config import Settings
from winellbot.errors import ConfigError

# lazy imports: the CLI builds its parser (this module's register) on every call, so what a command
# runs (the factory, the wiki) is imported when it runs.

COMMANDS = ("posted", "withdraw", "userpage", "health")
DECIDED = ("accepted", "rejected")


def register(subparsers, common) -> None:
    """Add the ``posted`` and ``withdraw`` subcommands (``common`` adds --config, -v, --log-file)."""
    p = subparsers.add_parser("posted", help="list posted suggestions: page, section, status, permanent link")
    common(p)
    p.add_argument("--page", metavar="TITLE", help="only this article's suggestions")
    p.add_argument("--since", metavar="DATE", help="only those posted on or after DATE (YYYY-MM-DD)")
    p.add_argument("--json", action="store_true", help="one JSON object per line")
    p = subparsers.add_parser("withdraw", help="mark a posted suggestion withdrawn, on the wiki and in state")
    common(p)
    p.add_argument("id", metavar="ID", help="the suggestion's id (or a unique prefix of at least 6 characters)")
    p.add_argument("--reason", default="", help="why, for the edit summary and the state")
    p.add_argument("--force", action="store_true", help="withdraw even when a reviewer accepted or rejected it")
    p = subparsers.add_parser("userpage", help="print the wikitext of the bot's user page for these settings")
    common(p)
    p.add_argument("--operator", required=True,
                   help="the operator's user name, linked from the page (bot policy: the page names who runs it)")
    p = subparsers.add_parser("health", help="exit 0 when the bot's job is alive and its cycles keep coming")
    common(p)
    p.add_argument("--job", choices=["continuous", "scheduled"], default="continuous",
                   help="continuous: a `winellbot run` job must hold the state; scheduled: cycles are started by cron")
    p.add_argument("--max-age", type=float, metavar="MINUTES",
                   help="the latest cycle must have started this recently (default: twice the interval, plus 10)")
    p.add_argument("--jobs", type=int, metavar="N",
                   help="with [state] url: at least N jobs must give their heartbeat (default: 1, or 0 with --here)")
    p.add_argument("--here", action="store_true",
                   help="with [state] url: judge only the jobs on this host (a Toolforge job's health check runs "
                        "in its container)")


def run(args: argparse.Namespace, settings: Settings) -> int:
    if args.command == "posted":
        return posted(settings, page=args.page, since=args.since, as_json=args.json)
    if args.command == "withdraw":
        return withdraw(settings, args.id, reason=args.reason, force=args.force)
    if args.command == "health":
        return health(settings, job=args.job, max_age=args.max_age, jobs=args.jobs, here=args.here)
    if args.command == "userpage":
        from winellbot.wiki.userpage import render_user_page

        print(render_user_page(settings, hostname=wiki_hostname(settings), operator=args.operator), end="")
        return 0
    raise AssertionError(args.command)


def posted(settings: Settings, *, page: str | None = None, since: str | None = None, as_json: bool = False) -> int:
    from winellbot.commands import open_state

    rows = open_state(settings, readonly=True).posted(page=page, since=_since(since) if since else None)
    for row in rows:
        if as_json:
            print(json.dumps(row, ensure_ascii=False, default=str))
        else:
            print(f"{row['id']}  {row['posted_at'][:10]}  {row['status']:<9}  {row['page']} > "
                  f"{row['section'] or '(lead)'}\n    {row['url'] or row['target']}")
    if not rows and not as_json:
        print("no posted suggestions" + (f" for {page}" if page else "") + (f" since {since}" if since else ""))
    return 0


def health(settings: Settings, *, job: str = "continuous", max_age: float | None = None,
           now: dt.datetime | None = None, jobs: int | None = None, here: bool = False) -> int:
    """Print "healthy: ..." and return 0, or "unhealthy: ..." and return 1.

    Unhealthy: (continuous job) no winellbot job holds the state's lock; a cycle has been running
    for longer than the interval (stuck); or no cycle has started for ``max_age`` minutes. With
    ``[state] url`` the jobs are read from the database instead (:func:`server_health`).
    """
    from winellbot.commands import open_state
    from winellbot.errors import StateError
    from winellbot.state.lock import holder

    interval = settings.schedule.interval_minutes
    limit = dt.timedelta(minutes=max_age if max_age is not None else 2 * interval + 10)
    if settings.state.server_url:
        return server_health(settings, job=job, limit=limit, wanted=jobs, here=here)
    if jobs is not None and jobs > 1:
        raise ConfigError(f"--jobs {jobs}: several jobs share a state on a database server only ([state] url); "
                          "on SQLite one job at a time holds the state")
    now = now or clock.now()
    problems = []
    who = holder(settings.state.path)
    if job == "continuous" and who is None:
        problems.append(f"no winellbot job holds the state {settings.state.path}")
    try:
        last = open_state(settings, readonly=True).latest_run()
    except StateError as exc:
        last, problems = None, problems + [str(exc)]
    if last is None:
        said = "no cycle yet"
        if job == "scheduled" and not problems:
            problems.append("no cycle has run yet")
    else:
        started = dt.datetime.fromisoformat(last["started"])
        age = now - started
        said = f"cycle {last['id']} started {last['started']} ({last['status']})"
        if last["status"] == "running" and age > dt.timedelta(minutes=interval):
            problems.append(f"{said} has run for {age.total_seconds() / 60:.0f} minutes, longer than the interval")
        elif age > limit:
            problems.append(f"no cycle started for {age.total_seconds() / 60:.0f} minutes (the latest: {said})")
    holding = f"; held by pid {who.get('pid')} on {who.get('host')}" if who else ""
    if problems:
        print("unhealthy: " + "; ".join(problems))
        return 1
    print(f"healthy: {said}{holding}")
    return 0


def server_health(settings: Settings, *, job: str, limit: dt.timedelta, wanted: int | None, here: bool) -> int:
    """``health`` on a state on a database server, where several jobs share the state and none holds a lock.

    A job is live while its heartbeat (by the server's clock) is fresh: in a cycle, or between the
    cycles of ``winellbot run`` (state/jobs.py). Unhealthy: fewer than ``wanted`` live jobs
    (default: 1 for the continuous job; 0 with ``here``, or for the scheduled one); a live cycle
    running longer than the interval; no cycle started for ``limit`` (or, scheduled, none at all).
    ``here`` judges only the jobs on this host. Prints the verdict, then one line per live job and
    per cycle whose heartbeat stopped, with the pages each holds under lease.
    """
    import socket

    from winellbot.commands import open_state
    from winellbot.errors import StateError
    from winellbot.state.jobs import jobs_now, latest_run

    host = socket.gethostname() if here else None
    try:
        state = open_state(settings, readonly=True)
        try:
            clock, found = jobs_now(state)
            last = latest_run(state, host)
        finally:
            state.db.conn.close()
    except StateError as exc:
        print(f"unhealthy: {exc}")
        return 1
    live = [j for j in found if j.live and (host is None or j.name.startswith(host + ":"))]
    if wanted is None:
        wanted = 1 if job == "continuous" and not here else 0
    now = dt.datetime.fromtimestamp(clock, dt.timezone.utc)
    said, problems = _server_problems(live, last, job, settings.schedule.interval_minutes, limit, now)
    where = f" on {host}" if host else ""
    if len(live) < wanted:
        problems.insert(0, f"{len(live)} live winellbot job(s){where} on the state {state.path}, {wanted} wanted "
                           "(a job gives its heartbeat every few minutes while it runs)")
    print("unhealthy: " + "; ".join(problems) if problems else f"healthy: {said}; {len(live)} live job(s){where}")
    for j in found:
        print("  " + _job_line(j, clock))
    return 1 if problems else 0


def _server_problems(live: list, last: dict | None, job: str, interval: float, limit: dt.timedelta,
                     now: dt.datetime) -> tuple[str, list[str]]:
    """What the latest cycle says, and what is wrong: a live cycle running longer than the interval
    (a cycle whose heartbeat stopped is not stuck but dead), or the latest cycle too old."""
    problems = []
    for j in live:
        age = now - dt.datetime.fromisoformat(j.run["started"])
        if j.in_cycle and age > dt.timedelta(minutes=interval):
            problems.append(f"cycle {j.run['id']} of {j.name} started {j.run['started']} has run for "
                            f"{age.total_seconds() / 60:.0f} minutes, longer than the interval")
    if last is None:
        return "no cycle yet", problems + (["no cycle has run yet"] if job == "scheduled" else [])
    said = f"cycle {last['id']} started {last['started']} ({last['status']})"
    age = now - dt.datetime.fromisoformat(last["started"])
    in_cycle = last["status"] == "running" and any(j.run["id"] == last["id"] for j in live)
    if not in_cycle and age > limit:
        problems.append(f"no cycle started for {age.total_seconds() / 60:.0f} minutes (the latest: {said})")
    return said, problems


def _job_line(j, clock: float) -> str:
    """One job as ``health`` lists it: its holder, its cycle, its heartbeat and its leases."""
    run = j.run
    beat = "no heartbeat yet" if j.beat_age is None else f"heartbeat {j.beat_age:.0f} s ago"
    if not j.live:
        head = (f"job {j.name}: heartbeat STOPPED in cycle {run['id']} (started {run['started']}; "
                f"{beat}): killed? the next job to start marks the cycle killed")
    elif j.in_cycle:
        head = f"job {j.name}: in cycle {run['id']} since {run['started']}, {beat}"
    else:
        head = (f"job {j.name}: between cycles (its latest, cycle {run['id']}, {run['status']} at {run['finished']}), "
                f"{beat}")
    if not j.leases:
        return head + "; no page under lease"
    titles = [t for t, _ in j.leases]
    shown = ", ".join(titles[:5]) + (f" and {len(titles) - 5} more" if len(titles) > 5 else "")
    until = max(e for _, e in j.leases)
    when = dt.datetime.fromtimestamp(until, dt.timezone.utc).replace(microsecond=0).isoformat()
    held = "held until" if until >= clock else "ran out at"
    return f"{head}; lease on {len(titles)} page(s) {held} {when} ({until - clock:+.0f} s): {shown}"


def wiki_hostname(settings: Settings) -> str:
    """The configured wiki's host name, without logging in (for the ``auto`` posting style)."""
    if settings.wiki.api_url:
        from urllib.parse import urlparse

        return urlparse(settings.wiki.api_url).hostname or ""
    from winellbot.wiki.site import operator_site

    return operator_site(login=False).hostname()


def _since(text: str) -> str:
    try:
        day = dt.date.fromisoformat(text.strip())
    except ValueError:
        raise ConfigError(f"--since wants a date as YYYY-MM-DD, got {text!r}") from None
    return day.isoformat()


def withdraw(settings: Settings, wanted: str, *, reason: str = "", force: bool = False) -> int:
    """Withdraw one suggestion; exit 1 when a reviewer's verdict stands in the way (without --force).

    The state is written before the wiki, as posting does: a state that cannot be written refuses
    before the wiki is touched, and a wiki write that fails puts the state back as it was. A
    withdrawal cut short between the two (the state says withdrawn, the box does not) is finished by
    running the command again."""
    from winellbot import factory
    from winellbot.commands import open_state, state_dir
    from winellbot.wiki.render import parse_statuses

    state = open_state(settings)
    row = _find(state, wanted)
    sid, why = row["id"], f"withdrawn by the operator{': ' + reason if reason else ''}"
    post = next((p for p in state.posted(page=row["page"]) if p["id"] == sid), None)
    if post is None:
        if row["status"] != "withdrawn":
            state.set_status(sid, "withdrawn", why + " (before it was posted)")
            print(f"{sid} was never posted; marked withdrawn in state, so it will not be")
        else:
            print(f"{sid} is already withdrawn")
        return 0
    wiki = factory.build_wiki(settings, state_dir(settings))
    verdict = parse_statuses(wiki.reader.page_text(post["target"]) or "").get(sid)
    if row["status"] == "withdrawn" and verdict in (None, "withdrawn"):
        print(f"{sid} is already withdrawn")
        return 0
    if verdict in DECIDED and not force:
        print(f"{sid}: a reviewer set status={verdict} on {post['target']}; not changed (use --force to withdraw it)")
        return 1
    state.set_status(sid, "withdrawn", why)  # first: a state that cannot be written refuses here
    try:
        change = wiki.writer.set_status(post["target"], sid, "withdrawn", summary=f"suggestion {sid} {why}")
    except BaseException:
        state.set_status(sid, row["status"], row["status_reason"] or "")  # the wiki said no: as it was
        raise
    if not change.found:
        state.set_status(sid, "withdrawn", why + f" (its box is no longer on {post['target']})")
        print(f"{sid}: no box on {post['target']} any more (archived or removed); marked withdrawn in state")
        return 0
    link = wiki.writer.permalink(change.target, change.revid, sid)
    print(f"{sid}: withdrawn on {change.target} (was {change.previous}): {link}")
    return 0


def _find(state, wanted: str) -> dict:
    wanted = wanted.strip().lower()
    rows = state.suggestions_by_id_prefix(wanted) if len(wanted) >= 6 else []
    exact = [r for r in rows if r["id"] == wanted]
    if exact or len(rows) == 1:
        return (exact or rows)[0]
    if rows:
        raise ConfigError(f"{wanted!r} matches {len(rows)} suggestions: give more of the id")
    raise ConfigError(f"no suggestion {wanted!r} in the state (winellbot posted lists them)")
