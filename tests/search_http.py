"""A tiny HTTP server on 127.0.0.1 for the search and fetch tests: canned routes, recorded requests."""
from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit


@dataclass
class Reply:
    status: int = 200
    body: bytes | str | dict | list = b""
    headers: dict[str, str] = field(default_factory=dict)
    content_type: str = "text/html; charset=utf-8"
    send_length: bool = True  # False: no Content-Length, the body ends when the connection closes

    def encoded(self) -> bytes:
        if isinstance(self.body, (dict, list)):
            return json.dumps(self.body).encode()
        return self.body.encode() if isinstance(self.body, str) else self.body


def json_reply(body, status: int = 200) -> Reply:
    return Reply(status=status, body=body, content_type="application/json")


@dataclass
class Seen:
    path: str
    params: dict[str, list[str]]
    headers: dict[str, str]


class LocalServer:
    """``routes[path] = Reply``; every request is appended to ``requests``."""

    def __init__(self) -> None:
        self.routes: dict[str, Reply] = {}
        self.requests: list[Seen] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 (http.server's naming)
                parts = urlsplit(self.path)
                server.requests.append(Seen(parts.path, parse_qs(parts.query, keep_blank_values=True),
                                            {k.lower(): v for k, v in self.headers.items()}))
                reply = server.routes.get(parts.path, Reply(404, "not found", content_type="text/plain"))
                body = reply.encoded()
                self.send_response(reply.status)
                if reply.content_type:
                    self.send_header("Content-Type", reply.content_type)
                for k, v in reply.headers.items():
                    self.send_header(k, v)
                if reply.send_length and "Content-Length" not in reply.headers:
                    self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02},
                                       daemon=True)

    def __enter__(self) -> "LocalServer":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
