"""A tiny HTTP server on 127.0.0.1 for the search and fetch tests: canned routes, recorded requests."""
from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
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
    """``routes[path] = Reply``; every request is appended to ``requests``.

    With ``answer`` (a request's path and query -> :class:`Reply`) the replies are computed instead, and
    nothing is recorded; ``latency_s`` delays every reply (each request in a thread of its own, as a
    remote site's answers overlap); ``keep_alive`` speaks HTTP/1.1 with persistent connections."""

    def __init__(self, answer: Callable[[str], Reply] | None = None, *, latency_s: float = 0.0,
                 keep_alive: bool = False) -> None:
        self.routes: dict[str, Reply] = {}
        self.requests: list[Seen] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1" if keep_alive else "HTTP/1.0"

            def do_GET(self):  # noqa: N802 (http.server's naming)
                time.sleep(latency_s)
                if answer is not None:
                    reply = answer(self.path)
                else:
                    parts = urlsplit(self.path)
                    server.requests.append(Seen(parts.path, parse_qs(parts.query, keep_blank_values=True),
                                                {k.lower(): v for k, v in self.headers.items()}))
                    reply = server.routes.get(parts.path, Reply(404, "not found", content_type="text/plain"))
                body = reply.encoded()
                if not reply.send_length:  # the body ends when the connection closes, kept alive or not
                    self.close_connection = True
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
        self.httpd.daemon_threads = True
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


class TricklingServer:
    """Sends its reply one byte every ``interval`` seconds, for as long as the client listens (each
    connection in a thread of its own); ``headers_first`` sends the headers at once and trickles only
    the body; ``content_type`` is the one the headers declare."""

    def __init__(self, *, interval: float = 0.2, headers_first: bool = True,
                 content_type: str = "text/plain") -> None:
        import socket

        self.interval = interval
        self.headers_first = headers_first
        self.content_type = content_type
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.connections = 0
        self._stop = threading.Event()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.connections += 1
            threading.Thread(target=self._trickle, args=(conn,), daemon=True).start()

    def _trickle(self, conn) -> None:
        head = f"HTTP/1.1 200 OK\r\nContent-Type: {self.content_type}\r\n\r\n".encode()
        try:
            conn.recv(65536)
            if self.headers_first:
                conn.sendall(head)
                head = b""
            data = head + b" " * 100_000
            for i in range(len(data)):
                if self._stop.is_set():
                    break
                conn.sendall(data[i:i + 1])
                time.sleep(self.interval)
        except OSError:
            pass
        finally:
            conn.close()

    def __enter__(self) -> "TricklingServer":
        threading.Thread(target=self._serve, daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self.sock.close()


class TricklingProxy:
    """A TCP proxy on 127.0.0.1 in front of ``upstream`` (host, port): passes everything through until
    :attr:`trickling` is set, then sends what the upstream answers one byte every ``interval`` seconds
    (connections kept alive from before included)."""

    def __init__(self, upstream: tuple[str, int], *, interval: float = 0.5) -> None:
        import socket

        self.upstream = upstream
        self.interval = interval
        self.trickling = threading.Event()
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(32)
        self.port = self.sock.getsockname()[1]
        self._stop = threading.Event()

    def _serve(self) -> None:
        import socket

        while not self._stop.is_set():
            try:
                client, _ = self.sock.accept()
            except OSError:
                return
            try:
                server = socket.create_connection(self.upstream)
            except OSError:
                client.close()
                continue
            threading.Thread(target=self._pump, args=(client, server, False), daemon=True).start()
            threading.Thread(target=self._pump, args=(server, client, True), daemon=True).start()

    def _pump(self, source, sink, answers: bool) -> None:
        try:
            while not self._stop.is_set():
                data = source.recv(65536)
                if not data:
                    break
                if not (answers and self.trickling.is_set()):
                    sink.sendall(data)
                    continue
                for i in range(len(data)):
                    if self._stop.is_set():
                        return
                    sink.sendall(data[i:i + 1])
                    time.sleep(self.interval)
        except OSError:
            pass
        finally:
            for end in (source, sink):  # shut down first: the other direction's thread is blocked on them
                for close in (lambda: end.shutdown(2), end.close):
                    try:
                        close()
                    except OSError:
                        pass

    def __enter__(self) -> "TricklingProxy":
        threading.Thread(target=self._serve, daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self.sock.close()
