"""The agent against a real model behind a real server: llama.cpp with SmolLM2-135M-Instruct.

The model is far too small to find good updates; these tests check what must hold whatever it
says: the server starts and stops, structured output is asked in either form and parses,
the whole backtest runs through ``--backend local`` with its figures, and nothing the model invents
reaches a suggestion unchecked. Kept few and small (a 2,048-token context, one task, one round, one
thread: ggml's spinning threads slow down badly on a shared, busy machine).
"""
from __future__ import annotations

import argparse
import json
import re
import threading
import time
import urllib.request

import pydantic
import pytest
from conftest import LOCAL_N_CTX, LOCAL_THREADS
from bench_tasks import OPINION, write_ferry_task

from winellbot.cli import main
from winellbot.config import Settings, dump_settings
from winellbot.llm.base import ChatRequest, Message
from winellbot.llm.client import ModelClient
from winellbot.llm.local_server import LocalModelServer, ServerStartError
from winellbot.llm.openai_backend import OpenAIBackend


class Town(pydantic.BaseModel):
    name: str
    country: str


def test_a_server_that_cannot_start_fails_with_the_reason(tmp_path):
    junk = tmp_path / "broken.gguf"
    junk.write_bytes(b"not a model")
    with pytest.raises(ServerStartError) as info:
        LocalModelServer(junk, start_timeout=60).start()
    assert re.search(r"exited with code|not installed", str(info.value))


def test_the_servers_process_takes_the_whole_context_in_one_slot_and_refuses_a_broken_model(tmp_path, capsys):
    """The child's side (winellbot.llm.llama_server): one slot, so a request may use all of n_ctx; the
    settings reach llama.cpp as given; a file that is no model is exit code 2 with llama.cpp's reason."""
    from winellbot.llm.llama_server import main as serve_main
    from winellbot.llm.llama_server import params_for, parse_args
    from winellbot.llm.local_server import free_port

    args = parse_args(["--model", "m.gguf", "--port", "8099", "--n-ctx", "512", "--threads", "1", "--alias", "m"])
    params = params_for(args)
    assert (params.n_parallel, params.n_ctx, params.cpuparams.n_threads, params.cpuparams_batch.n_threads) == (1, 512, 1, 1)
    assert (params.model.path, params.hostnames, params.port, params.model_alias) == ("m.gguf", ["127.0.0.1"], 8099, {"m"})
    junk = tmp_path / "broken.gguf"
    junk.write_bytes(b"not a model")
    assert serve_main(["--model", str(junk), "--port", str(free_port())]) == 2
    assert "the model server did not start" in capsys.readouterr().err


@pytest.mark.parametrize("mode", ["auto", "json_object_schema"])
def test_llama_cpp_structured_output_is_learned_and_every_reply_parses(local_model_server, mode):
    """Both forms of a schema work: OpenAI's json_schema, which ``auto`` tries first and keeps (no
    step down), and llama.cpp's json_object + schema, which ``[llm] backend = "local"`` sends."""
    backend = OpenAIBackend(local_model_server.base_url, "none", local_model_server.model_name,
                            response_format=mode)
    client = ModelClient(backend)
    asks = ["Name a town in France.", "Name a town in Spain."]
    replies = [client.ask("test", [Message("system", 'Reply as JSON: {"name": ..., "country": ...}'),
                                   Message("user", ask)], Town, max_tokens=40) for ask in asks]
    assert backend.format_mode == {"auto": "json_schema"}.get(mode, mode)
    assert all(isinstance(r, Town) and r.name for r in replies)
    assert [c.outcome for c in client.calls] == ["parsed"] * 2
    assert all(c.prompt_tokens > 0 and c.completion_tokens > 0 for c in client.calls)


def test_a_cut_reply_says_length_and_a_request_given_up_on_does_not_hold_the_server(local_model_server):
    """The client re-asks a reply cut at max_tokens by its finish_reason, and a stage that times out
    goes on to the next request: the server must report the cut, and drop the work of a client that
    hung up rather than finish it first (with ignore_eos it would decode to the context's end)."""
    backend = OpenAIBackend(local_model_server.base_url, "none", local_model_server.model_name, max_retries=0)
    cut = backend.chat(ChatRequest("test", (Message("user", "Tell a long story about a ferry."),), max_tokens=3))
    assert cut.finish_reason == "length" and cut.completion_tokens == 3
    body = json.dumps({"messages": [{"role": "user", "content": "Count to a thousand."}],
                       "max_tokens": LOCAL_N_CTX, "ignore_eos": True}).encode()
    long = urllib.request.Request(f"{local_model_server.base_url}/chat/completions", data=body,
                                  headers={"Content-Type": "application/json"})
    with pytest.raises(TimeoutError):
        urllib.request.urlopen(long, timeout=1)
    started = time.monotonic()
    done = backend.chat(ChatRequest("test", (Message("user", "Say hello."),), max_tokens=4))
    # the ~2,000 tokens given up on take 40 s or more on one thread
    assert done.finish_reason in ("stop", "length") and time.monotonic() - started < 15


def test_backtest_with_the_local_backend_reports_llm_figures(local_model_server, tmp_path, capsys):
    """Every stage's figures through the real server; the document read is one SmolLM2 answers
    briefly (its tokens on one thread are most of the seconds)."""
    write_ferry_task(tmp_path / "tasks", reference=OPINION)
    s = Settings()
    s.llm.local_n_ctx, s.llm.local_threads = LOCAL_N_CTX, LOCAL_THREADS  # the session's server
    s.pipeline.max_iterations = 1
    s.pipeline.max_empty = 1
    s.state.path = str(tmp_path / "state.sqlite")
    (tmp_path / "c.toml").write_text(dump_settings(s), encoding="utf-8")
    code = main(["backtest", str(tmp_path / "tasks"), "--output", str(tmp_path / "out.jsonl"), "--backend",
                 "local", "--config", str(tmp_path / "c.toml"), "--no-progress", "--report", str(tmp_path / "r")])
    out = capsys.readouterr().out
    assert code == 0, out
    (figures,) = json.loads((tmp_path / "r" / "figures.json").read_text()).values()
    llm = figures["llm"]
    assert set(llm["stages"]) >= {"criteria", "navigator", "extractor"}
    for name in ("calls", "parsed", "reasked", "skipped", "prompt_tokens", "completion_tokens", "seconds"):
        assert name in llm and all(name in stage for stage in llm["stages"].values())
    assert llm["calls"] > 0 and llm["prompt_tokens"] > 0 and llm["tokens_per_task"] > 0
    assert figures["tasks"]["with_result"] + len(figures["tasks"]["skipped"]) == 1
    assert figures["quotes_found"] in (None, 1.0), "no suggestion without its quote in its source"
    assert "| criteria |" in (tmp_path / "r" / "report.md").read_text()


@pytest.mark.model_server  # starts a server of its own, not the fixture's
def test_model_serve_starts_answers_and_stops(tmp_path, capsys):
    from winellbot.llm.serve import run

    stop = threading.Event()
    args = argparse.Namespace(model="", port=0, n_ctx=512, threads=1, log=str(tmp_path / "server.log"))
    codes = []
    thread = threading.Thread(target=lambda: codes.append(run(args, stop=stop)))
    thread.start()
    out, deadline = "", time.monotonic() + 120
    while "serving" not in out and thread.is_alive() and time.monotonic() < deadline:
        time.sleep(0.2)
        out += capsys.readouterr().out
    url = re.search(r"at (http://127\.0\.0\.1:\d+/v1)", out).group(1)
    reply = OpenAIBackend(url, "none", "any").chat(ChatRequest("test", (Message("user", "Say hello."),),
                                                                max_tokens=8))
    assert reply.text.strip() and reply.completion_tokens > 0
    stop.set()
    thread.join(30)
    assert not thread.is_alive() and codes == [0]
    assert "server stopped" in capsys.readouterr().out


def test_extractor_sections_are_held_to_the_articles_own_names(local_model_server):
    from winellbot.pipeline.agent_common import section_name
    from winellbot.pipeline.agent_extract import extract_schema

    # a heading with double quotes: llama.cpp failed to parse the grammar of such an enum and dropped
    # the connection (a real dev article's "Construction: \"March builds a Williams\"")
    paths = [(), ("History",), ("Transport", "Ferries"), ('Construction: "Harbour builds a ferry"',)]
    names = [section_name(p) for p in paths]
    schema = extract_schema(names)
    client = ModelClient(OpenAIBackend(local_model_server.base_url, "none", local_model_server.model_name))
    # the field's description invites a made-up name: SmolLM2 used to copy it as the section
    reply = client.ask("extractor", [
        Message("system", 'List facts as JSON {"updates": [{"fact", "section", "quote", "event_date", "reason"}]}; '
                          'section: the section path exactly as listed'),
        Message("user", f"Sections: {', '.join(names)}.\nDocument: A new ferry to Marrow Island "
                        "starts on 2 May 2025, the operator said.\nList the new facts.")], schema, max_tokens=400)
    assert reply.updates, "the model listed no update: nothing to check"
    assert all(u.section in names for u in reply.updates), [u.section for u in reply.updates]


def test_zero_shot_editor_through_the_local_server(local_model_server, tmp_path):
    """SmolLM2 rewrites the library's paragraph in some 60 tokens (on the bridge's it loops to the limit,
    twice, and the paragraph is kept unchanged)."""
    from editor_examples import LIBRARY, write_examples

    examples = write_examples(tmp_path / "ex.jsonl", [LIBRARY])
    out = tmp_path / "zero.jsonl"
    assert main(["editor", "apply", examples, "--output", str(out), "--editor", "zero-shot-server",
                 "--no-progress"]) == 0
    (line,) = [json.loads(x) for x in out.read_text().splitlines()]
    assert line["id"] == LIBRARY.id and line["edited"].strip()


def test_the_zero_shot_editor_keeps_the_paragraph_when_the_model_loops_to_its_limit(tmp_path):
    """What SmolLM2 does on the bridge's paragraph, scripted: a reply cut at the limit, and again at twice
    the limit, is no reply; the paragraph is kept unchanged and counted as a model error."""
    from editor_examples import BRIDGE, write_examples
    from scripted_openai import Reply, ScriptedOpenAI

    from winellbot.editor.examples import load_tasks
    from winellbot.editor.predict import PARAGRAPH_TOKENS, ParagraphPredictor

    (task,) = load_tasks(write_examples(tmp_path / "ex.jsonl", [BRIDGE]))
    loop = Reply("The bridge opened. " * 100, finish_reason="length")
    with ScriptedOpenAI([loop, loop]) as server:
        predictor = ParagraphPredictor(ModelClient(OpenAIBackend(server.base_url, "none", "m", max_retries=0)))
        assert predictor.predict(task) == task.original
        assert [r.body["max_tokens"] for r in server.requests] == [PARAGRAPH_TOKENS, 2 * PARAGRAPH_TOKENS]
    assert predictor.summary() == "model error 1"
