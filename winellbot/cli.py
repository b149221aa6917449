"""The `winellbot` command: a thin layer over the Python API.

Each command loads the settings, calls one function, and turns library errors
into a clean message and exit code 1. Arguments winellbot does not know
(``-page:``, ``-cat:``, ``-transcludes:``, ``-file:``, ``-simulate`` ...) go to
Pywikibot's own handlers, so operators' usual options work.
"""
from __future__ import annotations

import argparse
import gc
import json
import logging
import os
import select
import sys

from winellbot.errors import WinellbotError

# lazy imports: every call builds the whole parser, `winellbot health` (every 10 s on Toolforge)
# included, so a command's modules are imported only when that command runs.

log = logging.getLogger("winellbot")


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--config", help="TOML config file (default: $WINELLBOT_CONFIG or ./winellbot.toml)")
    p.add_argument("-v", "--verbose", action="store_true", help="log progress")
    p.add_argument("--log-file", metavar="PATH", help="also log to PATH, rotated by size (default: [logging] file)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="winellbot",
        description="Proposes minimal, cited updates to Wikipedia articles for human review.",
        epilog="Unknown -options (e.g. -page:Title, -cat:Name, -transcludes:T, -file:F, -simulate) "
               "are passed to Pywikibot.",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("run", help="long-running: a cycle over the due pages on a schedule")
    _common(p)
    p.add_argument("--approved-only", action="store_true",
                   help="no cycles: only post what reviewers approved, every [review] poll_seconds")
    p = sub.add_parser("once", help="one cycle over the due pages, then exit")
    _common(p)
    p.add_argument("--force", action="store_true", help="treat every watched page as due")
    p.add_argument("--dry-run", action="store_true", help="propose and record, but post nothing")
    p = sub.add_parser("article", help="run the pipeline on one article and print the suggestions")
    _common(p)
    p.add_argument("title")
    p.add_argument("--post", action="store_true", help="post the suggestions (default: dry run)")
    p.add_argument("--json", action="store_true", help="print the suggestions as JSON lines")
    p = sub.add_parser("status", help="what the state holds")
    _common(p)
    p.add_argument("--json", action="store_true")
    p = sub.add_parser("demo", help="local wiki + bundled fictional sample data + one offline cycle")
    _common(p)
    p.add_argument("--dir", default="var/demo", help="where the local wiki and state live")
    p.add_argument("--port", type=int, default=8765, help="port of the local wiki (0: any free port)")
    p.add_argument("--stop", action="store_true", help="stop the demo wiki, its review page and its poster, and exit")
    p.add_argument("--review-port", type=int, default=8766, help="port of the review page (0: any free port)")
    p.add_argument("--style", choices=["fact", "edit"], default="fact",
                   help="how suggestions are posted: the sourced fact (as on English Wikipedia) or the paragraph edit")
    _state_parser(sub)
    from winellbot.bench.cli import register as register_backtest

    register_backtest(sub)
    from winellbot.operations import register as register_operations

    register_operations(sub, _common)
    from winellbot.outcomes.cli import register as register_outcomes

    register_outcomes(sub, _common)
    __import__("winellbot.editor.cli", fromlist=["register"]).register(sub)
    __import__("winellbot.llm.serve", fromlist=["register"]).register(sub)
    from winellbot.bench import fit

    fit.register(sub)
    from winellbot.review.cli import register as register_review

    register_review(sub, _common)
    return parser


def _state_parser(sub) -> None:
    p = sub.add_parser("state", help="move the state: `state copy` copies the SQLite file into MariaDB (ToolsDB)")
    what = p.add_subparsers(dest="state_command", required=True)
    p = what.add_parser("copy", help="copy the SQLite state into an empty MariaDB database, keeping every id")
    _common(p)
    p.add_argument("--to", metavar="URL", help="the MariaDB database, as a SQLAlchemy URL (default: [state] url)")
    p.add_argument("--from", dest="source", metavar="PATH", help="the SQLite file (default: [state] path)")


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    args, rest = parser.parse_known_args(argv)
    stray = [a for a in rest if not a.startswith("-")]
    if stray:
        parser.error(f"unexpected arguments: {' '.join(stray)}")
    from winellbot import logs

    logs.configure(verbose=getattr(args, "verbose", False))
    try:
        code = _dispatch(args, rest)
        sys.stdout.flush()  # here, where a closed pipe is caught, not at the interpreter's exit
        return code
    except BrokenPipeError:
        if not _output_closed():
            raise  # a connection's (the wiki's, a server's): not the reader of the output
        # whoever read the output stopped reading (`winellbot status | head`): nothing went wrong here;
        # the rest of the output goes nowhere, as Python's documentation advises (signal module, SIGPIPE)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141  # 128 + SIGPIPE, what a shell reports for a program the closed pipe stopped
    except WinellbotError as exc:
        print(f"winellbot: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


def command() -> int:
    """The ``winellbot`` program (setup.cfg's console script, and ``python -m winellbot.cli``): :func:`main`, after
    which the process ends without the interpreter's last full garbage collection, which would only free memory
    the process is about to give back: in a job that loaded the pipeline's models it took a second or more of the
    exit. What must be closed is closed before then: the state (commands.job_state), the log files and Pywikibot
    (their exit hooks, which still run). :func:`main` itself leaves the caller's collector alone."""
    code = main()
    gc.freeze()
    return code


def _output_closed() -> bool:
    """Whether standard output is a pipe whose reader has gone (poll says so with POLLERR)."""
    try:
        poll = select.poll()
        poll.register(sys.stdout.fileno(), select.POLLOUT)
        return any(events & (select.POLLERR | select.POLLHUP) for _, events in poll.poll(0))
    except (OSError, ValueError, AttributeError):  # no descriptor (a test's capture), or a closed one
        return False


def _dispatch(args: argparse.Namespace, rest: list[str]) -> int:
    from winellbot import commands
    from winellbot.config import load_settings

    if args.command == "backtest":
        from winellbot.bench.cli import run as run_backtest

        return run_backtest(args)
    if args.command == "editor":
        return __import__("winellbot.editor.cli", fromlist=["run"]).run(args)
    if args.command == "model":
        return __import__("winellbot.llm.serve", fromlist=["run"]).run(args)
    if args.command == "fit":
        from winellbot.bench import fit

        return fit.run(args)
    if args.command == "demo":
        from winellbot.demo import demo_main

        _log_to_configured_file(args, None)
        return demo_main(args)
    settings = load_settings(args.config)
    _log_to_configured_file(args, settings)
    from winellbot import operations

    if args.command in operations.COMMANDS:
        return operations.run(args, settings)
    if args.command == "outcomes":
        from winellbot.outcomes.cli import run as run_outcomes

        return run_outcomes(args, settings)
    if args.command == "state":
        return _state_copy(args, settings)
    if args.command == "review":
        from winellbot.review.cli import run as run_review

        return run_review(args, settings)
    if args.command == "status":
        return commands.status(settings, as_json=args.json)
    if args.command == "run":
        return commands.run_forever(settings, rest, approved_only=args.approved_only)
    if args.command == "once":
        return commands.once(settings, rest, force=args.force, dry_run=args.dry_run)
    if args.command == "article":
        return commands.article(settings, rest, args.title, post=args.post, as_json=args.json)
    raise AssertionError(args.command)


def _state_copy(args: argparse.Namespace, settings) -> int:
    from winellbot.errors import ConfigError
    from winellbot.state.copy import copy_state

    url = args.to or settings.state.server_url
    if not url:
        raise ConfigError("state copy: name the MariaDB database with --to URL or [state] url")
    report = copy_state(args.source or settings.state.path, url)
    for name, rows in report.tables:
        print(f"{name:<16}{rows:>10} rows")
    if report.unread_texts:
        print(f"{report.unread_texts} source text(s) the bot never read (over the reading cap) were not copied: "
              "their rows say why in `error`")
    print(f"copied {report.rows} rows in {len(report.tables)} tables from {report.source} to {report.target} "
          f"in {report.seconds:.1f} s; every table's count matches the file's")
    return 0


def _log_to_configured_file(args: argparse.Namespace, settings) -> None:
    from winellbot import logs

    from winellbot.config import LoggingSettings

    c = settings.logging if settings is not None else LoggingSettings()
    if args.log_file or c.file:
        logs.add_file(args.log_file or c.file, level=c.level, max_bytes=c.max_bytes, backup_count=c.backup_count)


def print_json(obj) -> None:
    print(json.dumps(obj, ensure_ascii=False, indent=2, default=str))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(command())
