"""A local HTTP server that speaks the OpenAI chat completions API with scripted replies.

Use it to test anything that calls a model through :class:`winellbot.llm.openai_backend.OpenAIBackend`
without a network or a real model::

    from scripted_openai import ScriptedOpenAI, Reply   # tests/ is on sys.path under pytest

    with ScriptedOpenAI(['{"query": "x", "reason": "y"}']) as server:
        backend = OpenAIBackend(server.base_url, "key", "test-model")
        ...
        assert server.requests[0].stage == "navigator"

Script it with a queue of replies (``ScriptedOpenAI([...])`` or ``server.add(...)``) or with a
function of the request (``ScriptedOpenAI(func)``, ``func(received) -> reply``). A reply is a
``str`` (the message content) or a :class:`Reply` for errors and odd bodies. When the queue is
empty the server answers 400 "script exhausted", which fails the test loudly.

``reject_formats={"json_schema"}`` makes it answer 400 to that ``response_format`` type, as
some self-hosted servers do (``reject_status=500``: as llama.cpp's server does, with its message).
Every request is kept in ``server.requests`` as :class:`Received`.
Binds 127.0.0.1 on a free port; runs in a daemon thread.
"""
from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass(frozen=True)
class Reply:
    """One scripted answer. ``content`` becomes the assistant message unless ``body`` is given raw."""

    content: str = ""
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: str | None = None  # sent verbatim (a malformed body, a custom error)
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    finish_reason: str = "stop"


def rate_limited(retry_after: float = 0) -> Reply:
    """A 429 with a ``Retry-After`` header, in OpenAI's error shape."""
    return _error(429, "Rate limit reached", "rate_limit_exceeded", {"Retry-After": str(retry_after)})


def server_error(status: int = 500) -> Reply:
    return _error(status, "The server had an error while processing your request.", "server_error")


def malformed_body() -> Reply:
    """A 200 whose body is not JSON at all (a crashed proxy, a truncated response)."""
    return Reply(status=200, body="<html>upstream error</html>", headers={"Content-Type": "text/html"})


def _error(status: int, message: str, kind: str, headers: dict[str, str] | None = None) -> Reply:
    body = json.dumps({"error": {"message": message, "type": kind, "param": None, "code": kind}})
    return Reply(status=status, body=body, headers=headers or {})


@dataclass(frozen=True)
class Received:
    """A request the server got: the JSON body, the headers, and conveniences."""

    body: dict
    headers: dict[str, str]

    @property
    def stage(self) -> str:
        """The pipeline stage, from the ``X-Winellbot-Stage`` header the backend sends."""
        return self.headers.get("x-winellbot-stage", "")

    @property
    def messages(self) -> list[dict]:
        return self.body.get("messages", [])

    @property
    def text(self) -> str:
        """All message contents joined: handy for ``"..." in req.text`` checks."""
        return "\n".join(str(m.get("content", "")) for m in self.messages)

    @property
    def response_format(self) -> str:
        return (self.body.get("response_format") or {}).get("type", "text")


Script = Callable[[Received], "str | Reply"]


class ScriptedOpenAI:
    """The server. Use as a context manager; ``base_url`` ends in ``/v1`` like the real API."""

    def __init__(self, script: Iterable[str | Reply] | Script | None = None, *,
                 reject_formats: Iterable[str] = (), reject_status: int = 400,
                 model: str = "scripted-model") -> None:
        self.queue: deque[str | Reply] = deque()
        self.func: Script | None = None
        if callable(script):
            self.func = script
        elif script is not None:
            self.queue.extend(script)
        self.reject_formats = set(reject_formats)
        self.reject_status = reject_status
        self.model = model
        self.requests: list[Received] = []
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- scripting -------------------------------------------------------
    def add(self, *replies: str | Reply) -> None:
        with self._lock:
            self.queue.extend(replies)

    def stages(self) -> list[str]:
        return [r.stage for r in self.requests]

    # -- lifecycle -------------------------------------------------------
    def start(self) -> "ScriptedOpenAI":
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length).decode("utf-8")
                status, headers, body = server._answer(self.path, raw, dict(self.headers.items()))
                data = body.encode("utf-8")
                self.send_response(status)
                headers.setdefault("Content-Type", "application/json")
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args) -> None:
                pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> "ScriptedOpenAI":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        assert self._httpd is not None, "server not started"
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    # -- answering -------------------------------------------------------
    def _answer(self, path: str, raw: str, headers: dict[str, str]) -> tuple[int, dict[str, str], str]:
        if not path.rstrip("/").endswith("/chat/completions"):
            return _unpack(_error(404, f"no route {path}", "not_found"))
        body = json.loads(raw or "{}")
        received = Received(body, {k.lower(): v for k, v in headers.items()})
        with self._lock:
            self.requests.append(received)
            if received.response_format in self.reject_formats and self.reject_status == 500:
                reply: str | Reply = _error(  # llama-cpp-python 0.3.36's words
                    500, "1 validation error for CreateChatCompletionRequest\nresponse_format.type\n  Input "
                    "should be 'text' or 'json_object'", "internal_server_error")
            elif received.response_format in self.reject_formats:
                reply = _error(
                    self.reject_status, f"response_format type '{received.response_format}' is not supported",
                    "invalid_request_error")
            elif self.func is not None:
                reply = self.func(received)
            elif self.queue:
                reply = self.queue.popleft()
            else:
                reply = _error(400, "scripted server: script exhausted", "script_exhausted")
        if isinstance(reply, str):
            reply = Reply(content=reply)
        if reply.body is not None:
            return _unpack(reply)
        return reply.status, dict(reply.headers), json.dumps(self._completion(received, reply))

    def _completion(self, received: Received, reply: Reply) -> dict:
        prompt = reply.prompt_tokens if reply.prompt_tokens is not None else len(received.text.split())
        completion = (reply.completion_tokens if reply.completion_tokens is not None
                      else len(reply.content.split()))
        return {
            "id": f"chatcmpl-{len(self.requests)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": received.body.get("model") or self.model,
            "choices": [{
                "index": 0,
                "message": {"role": "assistant", "content": reply.content},
                "logprobs": None,
                "finish_reason": reply.finish_reason,
            }],
            "usage": {"prompt_tokens": prompt, "completion_tokens": completion,
                      "total_tokens": prompt + completion},
        }


def _unpack(reply: Reply) -> tuple[int, dict[str, str], str]:
    return reply.status, dict(reply.headers), reply.body or ""
