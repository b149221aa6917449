"""``winellbot model serve``: llama.cpp's OpenAI-compatible server on 127.0.0.1, in the foreground.

It serves a GGUF file (default: the bundled SmolLM2-135M-Instruct) until SIGINT or SIGTERM, then
stops the server cleanly. Point any OpenAI-compatible client, or winellbot itself
(``[llm] base_url`` = the printed URL), at it; ``[llm] backend = "local"`` starts its own instead.
"""
from __future__ import annotations

import argparse
import signal
import threading



def register(subparsers) -> argparse.ArgumentParser:
    """Add the ``model`` command with its ``serve`` subcommand."""
    p = subparsers.add_parser("model", help="the local model server (llama.cpp)")
    sub = p.add_subparsers(dest="model_command", required=True)
    serve = sub.add_parser("serve", help="serve a GGUF model on 127.0.0.1 with the OpenAI chat completions API")
    serve.add_argument("--model", default="", help="GGUF file (default: the bundled SmolLM2-135M-Instruct)")
    serve.add_argument("--port", type=int, default=8080, help="port on 127.0.0.1 (0: any free port)")
    serve.add_argument("--n-ctx", type=int, default=4096, help="context window in tokens")
    serve.add_argument("--threads", type=int, default=0, help="CPU threads (0: up to 2)")
    serve.add_argument("--log", default="", help="the server's log file (default: a temporary file)")
    return p


def run(args: argparse.Namespace, *, stop: threading.Event | None = None) -> int:
    """Start the server, print where it answers, wait for a signal (or ``stop``), stop it."""
    stop = stop or threading.Event()
    # lazy: the CLI builds its parser (this module's register) on every call
    from winellbot.llm.local_server import LocalModelServer

    server = LocalModelServer(args.model or None, port=args.port, n_ctx=args.n_ctx,
                              threads=args.threads or None, log_path=args.log or None)
    previous = {}
    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGINT, signal.SIGTERM):
            previous[sig] = signal.signal(sig, lambda *_: stop.set())
    try:
        server.start()
        print(f"serving {server.model_path.name} at {server.base_url} (log: {server.log_path}); "
              f'structured output: response_format = {{"type": "json_object", "schema": ...}}', flush=True)
        while not stop.wait(1.0):
            if server.process is None or server.process.poll() is not None:
                print(f"the server stopped by itself: {server.log_tail()}", flush=True)
                return 1
        return 0
    finally:
        server.stop()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        print("server stopped", flush=True)
