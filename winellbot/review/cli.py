"""``winellbot review serve``: the review page on this machine (docs/review.md)."""
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


def run(args: argparse.Namespace, settings) -> int:
    from werkzeug.serving import run_simple

    from winellbot.review.app import create_app

    app = create_app(settings)
    print(f"review page: http://{args.host}:{args.port}/ (state {settings.state.server_url or settings.state.path}, "
          f"wiki {settings.wiki.api_url})", flush=True)
    run_simple(args.host, args.port, app, threaded=True, use_reloader=False, use_debugger=False)
    return 0
