"""A server on 127.0.0.1 that answers every request with its headers at once and then one byte of
body every ``every`` seconds, for as long as the client waits: a slow server that a per-read timeout
never catches, for the tests of total deadlines.
"""
from __future__ import annotations

import threading
import time
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class _Trickle(BaseHTTPRequestHandler):
    every = 2.0
    body_bytes = 10_000

    def _answer(self) -> None:
        self.server.requests += 1
        if self.command == "POST":
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(self.body_bytes))
        self.end_headers()
        self.wfile.flush()
        try:
            for _ in range(self.body_bytes):
                self.wfile.write(b" ")
                self.wfile.flush()
                time.sleep(self.every)
        except OSError:  # the client gave up
            return

    do_GET = do_POST = _answer

    def log_message(self, *args) -> None:
        pass


@contextmanager
def trickling(every: float = 2.0):
    """A trickling server's base URL (``http://127.0.0.1:PORT``) while the block runs."""
    handler = type("Handler", (_Trickle,), {"every": every})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    server.requests = 0
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", server
    finally:
        server.shutdown()
        server.server_close()
