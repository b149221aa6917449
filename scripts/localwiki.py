#!/usr/bin/env python3
"""Manage a local MediaWiki for tests and the demo: create, start, stop, status, url.

    scripts/localwiki.py create var/wiki [--port 8080] [--ensure-packages]
    scripts/localwiki.py start  var/wiki
    scripts/localwiki.py status var/wiki      # exit 0 running, 3 stopped
    scripts/localwiki.py url    var/wiki [--api]
    scripts/localwiki.py stop   var/wiki      # says "not running" when it was not

(``--dir DIR`` works as well as the positional DIR.)

A thin layer over winellbot.localwiki.LocalWiki; credentials are in DIR/credentials.json.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

STOPPED = 3  # like `systemctl status` for a unit that is not running


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="localwiki.py", description="Manage a local MediaWiki instance.")
    sub = parser.add_subparsers(dest="command", required=True)
    for name, text in [("create", "install a new wiki in DIR (a no-op if one exists) with its templates"),
                       ("start", "serve the wiki in the background"), ("stop", "stop the server"),
                       ("status", "say whether the wiki is running (exit 0) or not (exit 3)"),
                       ("url", "print the wiki's base URL")]:
        command = sub.add_parser(name, help=text, description=text)
        command.add_argument("dir_arg", nargs="?", type=Path, metavar="DIR", help="the instance directory")
        command.add_argument("--dir", type=Path, help="the instance directory (the same as DIR)")
        if name == "create":
            command.add_argument("--port", type=int, default=0, help="port to serve on (0: pick a free one)")
            command.add_argument("--ensure-packages", action="store_true",
                                 help="apt-get install php and mediawiki first when missing")
            command.add_argument("--no-templates", action="store_true", help="do not install the templates")
        if name == "url":
            command.add_argument("--api", action="store_true", help="print the URL of api.php instead")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run one command; library errors become a message on stderr and exit status 2."""
    parser = _parser()
    args = parser.parse_args(argv)
    args.dir = args.dir or args.dir_arg
    if args.dir is None:
        parser.error("the instance directory is required (DIR or --dir DIR)")
    from winellbot.errors import WinellbotError
    from winellbot.localwiki import LocalWiki, ensure_packages

    wiki = LocalWiki(args.dir, getattr(args, "port", 0))
    try:
        if args.command == "create":
            if args.ensure_packages:
                ensure_packages()
            _create(wiki, templates=not args.no_templates)
        elif args.command == "start":
            wiki.start()
            print(f"running at {wiki.base_url}")
        elif args.command == "stop":
            print("stopped" if wiki.stop() else "not running")
        elif args.command == "status":
            running = wiki.exists() and wiki.is_running()
            print(f"running at {wiki.base_url}" if running else "stopped")
            return 0 if running else STOPPED
        elif args.command == "url":
            print(wiki.api_url if args.api else wiki.base_url)
    except WinellbotError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


def _create(wiki, *, templates: bool) -> None:
    existed = wiki.exists()
    creds = wiki.create()
    if templates:
        was_running = wiki.is_running()
        wiki.start()
        try:
            installed = wiki.install_templates()
        finally:
            if not was_running:
                wiki.stop()
        print(f"templates: {', '.join(installed) or 'none'}")
    print(f"{'kept existing' if existed else 'created'} wiki in {wiki.directory} for {wiki.base_url}")
    print(f"bot login: {creds.bot_login} (password in {wiki.credentials_path})")


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout without installing
    sys.exit(main())
