"""``winellbot outcomes``: what became of the posted suggestions.

Reads the state only (the outcome check of each cycle keeps it current), except with ``--publish``,
which saves the table to ``User:<bot>/Outcomes`` through the writer's one save path (its userspace
rule, ``{{bots}}`` and the shutoff page hold). ``--report DIR`` writes ``outcomes.md``,
``outcomes.json`` and, when matplotlib is installed (the ``report`` extra), ``outcomes.png``.
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

from winellbot.config import Settings
from winellbot.outcomes import GROUPINGS

# lazy imports: the CLI builds its parser (this module's register) on every call, so the state and
# the wiki are imported when the report runs.

def register(subparsers, common) -> None:
    p = subparsers.add_parser("outcomes", help="what became of the posted suggestions: adopted, accepted, "
                                               "rejected, expired, open")
    common(p)
    p.add_argument("--since", metavar="DATE", help="only suggestions posted on or after DATE (YYYY-MM-DD)")
    p.add_argument("--by", choices=GROUPINGS, help="one line per section, source, gate or month")
    p.add_argument("--report", metavar="DIR", help="write outcomes.md, outcomes.json and outcomes.png to DIR")
    p.add_argument("--publish", action="store_true", help="save the table to User:<bot>/Outcomes on the wiki")
    p.add_argument("--json", action="store_true", help="print the table as JSON")


def run(args: argparse.Namespace, settings: Settings) -> int:
    from winellbot.commands import open_state
    from winellbot.operations import _since
    from winellbot.outcomes.report import OutcomeReport, as_text
    from winellbot.state.outcomes import OutcomeStore
    from winellbot.state.reviews import ReviewStore
    from winellbot.state.revisions import RevisionStore

    since = _since(args.since) if args.since else None
    state = open_state(settings, readonly=not args.publish)
    if "outcomes" not in state.db.table_names():
        print("no outcomes yet: the state predates outcome tracking (the next cycle adds it)")
        return 0
    tables = state.db.table_names()
    decisions = ReviewStore(state).decisions(since=since) if "reviews" in tables else []
    revisions = RevisionStore(state).rows(since=since) if "revisions" in tables else []
    table = OutcomeReport().build(OutcomeStore(state).history(since), by=args.by, since=since, decisions=decisions,
                                  revisions=revisions)
    print(json.dumps(table.as_dict(), indent=2) if args.json else as_text(table))
    if args.report:
        for path in write_report(table, args.report):
            print(f"wrote {path}")
    if args.publish:
        print(f"saved {publish(settings, table, since)}")
    return 0


def write_report(table, directory: str | Path) -> list[Path]:
    """The report's files in ``directory``; the plot is left out (and said so) without matplotlib."""
    from winellbot.outcomes.report import as_text, plot

    folder = Path(directory)
    folder.mkdir(parents=True, exist_ok=True)
    md, js = folder / "outcomes.md", folder / "outcomes.json"
    md.write_text("# Outcomes of the posted suggestions\n\n" + as_text(table) + "\n", encoding="utf-8")
    js.write_text(json.dumps(table.as_dict(), indent=2) + "\n", encoding="utf-8")
    png = plot(table, folder / "outcomes.png")
    if png is None:
        print("no plot: matplotlib is not installed (pip install 'winellbot[report]')")
    return [md, js] + ([png] if png else [])


def publish(settings: Settings, table, since: str | None) -> str:
    """Save the table as wikitext to ``User:<bot>/Outcomes``; returns the page and its revision."""
    from winellbot import factory
    from winellbot.commands import state_dir
    from winellbot.outcomes.report import as_wikitext

    wiki = factory.build_wiki(settings, state_dir(settings))
    title = settings.wiki.outcomes_page
    text = as_wikitext(table, bot_user=settings.wiki.username, since=since)
    revid = wiki.writer.save_own_page(title, text, summary="outcomes of the posted suggestions")
    return f"{title} (revision {revid})" if revid else f"{title} (unchanged)"
