#!/usr/bin/env python3
"""Pywikibot-style entry script: one winellbot cycle over the pages Pywikibot's usual options select.

    python scripts/winellbot_bot.py -page:"Some article" -simulate
    python scripts/winellbot_bot.py -cat:"Living people" -dry-run

Same as `winellbot once`; kept so operators used to `pwb.py`-style scripts find the usual
options (-page:, -cat:, -transcludes:, -file:, -simulate, -help).
"""
import sys

from winellbot.cli import main as winellbot_main


def main(*args: str) -> int:
    args = list(args or sys.argv[1:])
    if "-help" in args or "--help" in args:
        print(__doc__)
        return 0
    dry = ["--dry-run"] if "-dry-run" in args else []
    args = [a for a in args if a != "-dry-run"]
    return winellbot_main(["once", "--force", *dry, *args])


if __name__ == "__main__":
    sys.exit(main())
