"""``winellbot review serve``: the review page on this machine; ``winellbot review export``: reviewers'
revisions as JSONL edit data (docs/review.md)."""
from __future__ import annotations

import argparse

# lazy imports: the review page (Flask and its templates) is loaded only when the command runs.


def register(sub, common) -> None:
    p = sub.add_parser("review", help="the review page, where editors approve or reject suggestions")
    what = p.add_subparsers(dest="review_command", required=True)
    p = what.add_parser("serve", help="serve the review page (Flask) for the configured state and wiki")
    common(p)
    p.add_argument("--port", type=int, default=8766, help="port to listen on (default 8766)")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    p = what.add_parser("export", help="reviewers' revisions as JSONL (winellbot-revision/1), with attribution")
    common(p)
    p.add_argument("--output", required=True, metavar="FILE", help="the JSONL file to write ('-': standard output)")
    p.add_argument("--since", metavar="DATE", help="only revisions made on or after DATE (YYYY-MM-DD)")
    p.add_argument("--all", action="store_true", dest="include_all",
                   help="also revisions undone by their reviewer or refused by the writer's checks (with their status)")
    p.add_argument("--licence", default="CC BY-SA 4.0", help="the wiki's text licence named in each attribution")


def run(args: argparse.Namespace, settings) -> int:
    if args.review_command == "export":
        from winellbot.review.export import run_export

        return run_export(args, settings)
    from werkzeug.serving import run_simple

    from winellbot.review.app import create_app
    from winellbot.review.revise import warm

    app = create_app(settings)
    warm()
    print(f"review page: http://{args.host}:{args.port}/ (state {settings.state.server_url or settings.state.path}, "
          f"wiki {settings.wiki.api_url})", flush=True)
    run_simple(args.host, args.port, app, threaded=True, use_reloader=False, use_debugger=False)
    return 0
