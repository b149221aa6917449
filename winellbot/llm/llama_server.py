"""The local model server's own process: llama.cpp's HTTP server from the ``xllamacpp`` wheel.

``python -m winellbot.llm.llama_server --model FILE.gguf --host 127.0.0.1 --port N ...`` loads the
model, serves llama.cpp's OpenAI-compatible API (``/v1/models``, ``/v1/chat/completions``) on
``host:port`` from native threads, and keeps serving until SIGTERM or SIGINT, then stops the
server and exits 0. A model that cannot be loaded exits 2 with the reason on stderr.

:class:`winellbot.llm.local_server.LocalModelServer` starts this as a child process, so that a
crash in native code (an unsupported CPU instruction, a broken model file) ends the child, never
the bot. ``xllamacpp`` is a prebuilt manylinux wheel: nothing is compiled to install it.
"""
from __future__ import annotations

import argparse
import signal
import sys
import threading


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m winellbot.llm.llama_server", description=__doc__.splitlines()[0])
    p.add_argument("--model", required=True, help="the GGUF file")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--n-ctx", type=int, default=4096, help="context window in tokens")
    p.add_argument("--threads", type=int, default=1, help="CPU threads for the prompt and for decoding")
    p.add_argument("--alias", default="", help="the model's name in /v1/models and in replies")
    return p.parse_args(argv)


def params_for(args: argparse.Namespace):
    """xllamacpp's server parameters: one model, one slot holding the whole context."""
    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = args.model
    params.n_ctx = args.n_ctx
    params.n_parallel = 1  # requests queue, as one client's stages do; the slot keeps all of n_ctx
    params.cpuparams.n_threads = args.threads
    params.cpuparams_batch.n_threads = args.threads
    params.hostnames = [args.host]
    params.port = args.port
    if args.alias:
        params.model_alias = {args.alias}
    return params


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        import xllamacpp
    except ImportError:
        print("xllamacpp is not installed", file=sys.stderr)
        return 2
    try:
        server = xllamacpp.Server(params_for(args))
    except RuntimeError as exc:
        print(f"the model server did not start: {exc}", file=sys.stderr)
        return 2
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    print(f"serving {args.model} at {server.listening_address}", file=sys.stderr, flush=True)
    try:
        while not stop.wait(1.0):
            pass
    finally:
        del server  # its destructor stops the HTTP threads and frees the model
    return 0


if __name__ == "__main__":
    sys.exit(main())
