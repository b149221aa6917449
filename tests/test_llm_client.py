"""ModelClient over the OpenAI backend, against the scripted local server."""
from __future__ import annotations

import pydantic
import pytest
from scripted_openai import Reply, ScriptedOpenAI, malformed_body, rate_limited, server_error

from winellbot.errors import BudgetExceeded, MalformedReply, ModelError
from winellbot.llm.base import Message
from winellbot.llm.client import ModelClient, parse_reply
from winellbot.llm.openai_backend import OpenAIBackend
from winellbot.state.db import State


class Verdict(pydantic.BaseModel):
    action: str
    reason: str


MESSAGES = (Message("system", "You judge."), Message("user", "Judge this."))


def make_client(server, state=None, sleeps=None, **kw):
    backend = OpenAIBackend(server.base_url, "test-key", "default-model",
                            sleep=(sleeps.append if sleeps is not None else lambda s: None))
    return ModelClient(backend, state=state, run_id=7, **kw)


@pytest.mark.parametrize("text", [
    '{"action": "add", "reason": "new"}',
    'Sure! ```json\n{"action": "add", "reason": "new"}\n``` hope that helps',
    'Here it is: {"action": "add", "reason": "new"} and nothing more.',
    '{"note": 1} then {"action": "add", "reason": "new"}',
])
def test_parse_reply_finds_the_object(text):
    assert parse_reply(text, Verdict) == Verdict(action="add", reason="new")


def test_a_raw_line_break_inside_a_string_does_not_hide_the_object():
    # what SmolLM2 wrote under llama.cpp's schema grammar (which lets control characters into
    # strings): strictly decoded, the outer object failed and its nested item was validated instead
    text = '{"action": "add", "reason": "them.}]}\n{" }'
    assert parse_reply(text, Verdict) == Verdict(action="add", reason="them.}]}\n{")


@pytest.mark.parametrize("text", ["no json here", '{"action": "add"}', "{broken"])
def test_parse_reply_rejects(text):
    with pytest.raises(MalformedReply):
        parse_reply(text, Verdict)


def test_ask_sends_schema_and_records_tokens():
    state = State()
    with ScriptedOpenAI([Reply('{"action": "add", "reason": "r"}', prompt_tokens=11, completion_tokens=4)]) as server:
        client = make_client(server, state)
        verdict = client.ask("aggregator", MESSAGES, Verdict, model="small-model")
        body = server.requests[0].body
    assert verdict.action == "add"
    assert body["model"] == "small-model"
    assert body["response_format"]["type"] == "json_schema"
    assert body["response_format"]["json_schema"]["schema"]["required"] == ["action", "reason"]
    assert "JSON schema" in body["messages"][-1]["content"]  # also in the prompt for plain servers
    assert server.requests[0].stage == "aggregator"
    rows = list(state.db["llm_calls"].rows)
    assert [(r["stage"], r["prompt_tokens"], r["completion_tokens"], r["cached"], r["run_id"]) for r in rows] == [
        ("aggregator", 11, 4, 0, 7)]
    assert client.tokens_used == 15


def test_cache_makes_a_rerun_free():
    state = State()
    with ScriptedOpenAI(['{"action": "add", "reason": "r"}']) as server:
        first = make_client(server, state).ask("criteria", MESSAGES, Verdict)
        second_client = make_client(server, state)
        second = second_client.ask("criteria", MESSAGES, Verdict)
        assert len(server.requests) == 1
    assert first == second
    assert second_client.tokens_used == 0
    assert [r["cached"] for r in state.db["llm_calls"].rows] == [0, 1]


def test_cache_off_asks_again():
    state = State()
    with ScriptedOpenAI(['{"action": "add", "reason": "r"}'] * 2) as server:
        make_client(server, state, cache=False).ask("criteria", MESSAGES, Verdict)
        make_client(server, state, cache=False).ask("criteria", MESSAGES, Verdict)
        assert len(server.requests) == 2


def test_malformed_reply_is_corrected_then_accepted():
    with ScriptedOpenAI(["I think it should be added.", '{"action": "add", "reason": "r"}']) as server:
        verdict = make_client(server).ask("aggregator", MESSAGES, Verdict)
        second = server.requests[1].messages
    assert verdict.reason == "r"
    assert second[-2] == {"role": "assistant", "content": "I think it should be added."}
    assert "could not be used" in second[-1]["content"]


def test_malformed_reply_gives_up_and_records_the_error():
    state = State()
    with ScriptedOpenAI(["nope", '{"action": 3}', "still nope"]) as server:
        client = make_client(server, state, max_attempts=3)
        with pytest.raises(MalformedReply):
            client.ask("extractor", MESSAGES, Verdict)
        assert len(server.requests) == 3
    rows = list(state.db["llm_calls"].rows)
    assert [r["outcome"] for r in rows] == ["malformed", "malformed", "malformed", "skipped"]
    assert [r["attempt"] for r in rows[:3]] == [0, 1, 2]
    assert "after 3 attempts" in rows[-1]["error"]
    assert state.cache_get(client.calls[0].request_hash) is None  # nothing invalid is cached


def test_token_budget_stops_further_calls():
    with ScriptedOpenAI([Reply('{"action": "a", "reason": "r"}', prompt_tokens=90, completion_tokens=20),
                         '{"action": "b", "reason": "r"}']) as server:
        client = make_client(server, token_budget=100)
        client.ask("navigator", MESSAGES, Verdict)
        with pytest.raises(BudgetExceeded):
            client.ask("navigator", [Message("user", "another")], Verdict)
        assert len(server.requests) == 1
    assert client.calls[-1].error.startswith("token budget")


def test_rate_limit_backs_off_honouring_retry_after():
    sleeps: list[float] = []
    with ScriptedOpenAI([rate_limited(retry_after=7), server_error(503), '{"action": "a", "reason": "r"}']) as server:
        verdict = make_client(server, sleeps=sleeps).ask("navigator", MESSAGES, Verdict)
        assert len(server.requests) == 3
    assert verdict.action == "a"
    assert sleeps == [7.0, 2.0]  # Retry-After first, then exponential backoff (1 s * 2**1)


def test_persistent_server_error_becomes_model_error_and_is_recorded():
    state = State()
    sleeps: list[float] = []
    with ScriptedOpenAI([server_error()] * 10) as server:
        backend = OpenAIBackend(server.base_url, "k", "m", max_retries=2, sleep=sleeps.append)
        client = ModelClient(backend, state=state)
        with pytest.raises(ModelError):
            client.ask("criteria", MESSAGES, Verdict)
        assert len(server.requests) == 3
    assert sleeps == [1.0, 2.0]
    assert "gave up after 3 attempts" in list(state.db["llm_calls"].rows)[0]["error"]


def test_malformed_body_is_retried():
    with ScriptedOpenAI([malformed_body(), '{"action": "a", "reason": "r"}']) as server:
        assert make_client(server).ask("criteria", MESSAGES, Verdict).action == "a"


def test_format_falls_back_and_remembers():
    with ScriptedOpenAI(['{"action": "a", "reason": "r"}', '{"action": "b", "reason": "r"}'],
                        reject_formats={"json_schema", "json_object"}) as server:
        client = make_client(server)
        client.ask("criteria", MESSAGES, Verdict)
        client.ask("criteria", [Message("user", "second")], Verdict)
        formats = [r.response_format for r in server.requests]
    # json_schema, llama.cpp's json_object + schema, json_object alone, then plain text (remembered)
    assert formats == ["json_schema", "json_object", "json_object", "text", "text"]
    assert "schema" in server.requests[1].body["response_format"]
    assert "schema" not in server.requests[2].body["response_format"]
    assert client.backend.format_mode == "text"


def test_other_bad_request_is_not_a_format_problem():
    with ScriptedOpenAI([Reply(status=400, body='{"error": {"message": "context length exceeded"}}')]) as server:
        client = make_client(server)
        with pytest.raises(ModelError, match="context length"):
            client.ask("criteria", MESSAGES, Verdict)
    assert client.backend.format_mode == "json_schema"


def test_ask_text_returns_the_content():
    with ScriptedOpenAI(["The new paragraph."]) as server:
        text = make_client(server).ask_text("editor", MESSAGES, model="editor-model")
        assert "response_format" not in server.requests[0].body
    assert text == "The new paragraph."


def test_llama_cpp_500_on_json_schema_steps_down_to_its_own_form_once_per_server():
    """llama.cpp's server answers json_schema with HTTP 500; its form is json_object + schema."""
    sleeps: list[float] = []
    with ScriptedOpenAI(['{"action": "a", "reason": "r"}'] * 2, reject_formats={"json_schema"},
                        reject_status=500) as server:
        make_client(server, sleeps=sleeps).ask("criteria", MESSAGES, Verdict)
        second = make_client(server)  # another client of the same server: already learned
        second.ask("criteria", [Message("user", "second")], Verdict)
        bodies = [r.body["response_format"] for r in server.requests]
    assert [b["type"] for b in bodies] == ["json_schema", "json_object", "json_object"]
    assert bodies[1]["schema"]["required"] == ["action", "reason"]
    assert sleeps == []  # a format rejection is not a server failure to back off from
    assert second.backend.format_mode == "json_object_schema"


def test_fixed_response_format_is_sent_as_configured():
    with ScriptedOpenAI(['{"action": "a", "reason": "r"}']) as server:
        backend = OpenAIBackend(server.base_url, "k", "m", response_format="json_object_schema")
        ModelClient(backend).ask("criteria", MESSAGES, Verdict)
        assert server.requests[0].body["response_format"]["type"] == "json_object"
        assert server.requests[0].body["response_format"]["schema"]["required"] == ["action", "reason"]


def test_cut_reply_gets_a_larger_limit_once_then_a_recorded_skip():
    state = State()
    cut = Reply('{"action": "add", "rea', finish_reason="length")
    with ScriptedOpenAI([cut, cut]) as server:
        client = make_client(server, state)
        with pytest.raises(MalformedReply, match="cut at the token limit twice"):
            client.ask("extractor", MESSAGES, Verdict, max_tokens=100)
        assert [r.body["max_tokens"] for r in server.requests] == [100, 200]
        # the second request is the same question, not a correction with the cut reply in it
        assert server.requests[1].messages == server.requests[0].messages
    assert [r["outcome"] for r in state.db["llm_calls"].rows] == ["truncated", "truncated", "skipped"]


def test_cut_reply_then_a_complete_one_is_used():
    with ScriptedOpenAI([Reply("The new para", finish_reason="length"), "The new paragraph."]) as server:
        client = make_client(server)
        assert client.ask_text("editor", MESSAGES, max_tokens=50) == "The new paragraph."
        assert [r.body["max_tokens"] for r in server.requests] == [50, 100]
    assert [c.outcome for c in client.calls] == ["truncated", "parsed"]


@pytest.mark.parametrize("change", ["model", "base_url", "version"])
def test_cache_key_holds_the_resolved_model_the_server_and_the_prompt_version(change):
    """Changing [llm] model or base_url, or a prompt's version, must not serve the old answers."""
    state = State()
    with ScriptedOpenAI(['{"action": "a", "reason": "r"}'] * 2) as one, \
            ScriptedOpenAI(['{"action": "b", "reason": "r"}']) as two:
        first = ModelClient(OpenAIBackend(one.base_url, "k", "model-a"), state=state)
        assert first.ask("navigator", MESSAGES, Verdict, version="navigator-1").action == "a"
        url = two.base_url if change == "base_url" else one.base_url
        model = "model-b" if change == "model" else "model-a"
        version = "navigator-2" if change == "version" else "navigator-1"
        second = ModelClient(OpenAIBackend(url, "k", model), state=state)
        second.ask("navigator", MESSAGES, Verdict, version=version)  # the stage names no model
        assert [c.outcome for c in second.calls] == ["parsed"], "not served from the old cache entry"
        same = ModelClient(OpenAIBackend(url, "k", model), state=state)
        same.ask("navigator", MESSAGES, Verdict, version=version)
        assert [c.outcome for c in same.calls] == ["cached"]


def test_usage_summary_counts_outcomes_per_stage():
    from winellbot.llm.usage import summarise

    with ScriptedOpenAI(["nope", Reply('{"action": "a", "reason": "r"}', prompt_tokens=10, completion_tokens=3),
                         Reply("cut", finish_reason="length"), Reply("cut", finish_reason="length")]) as server:
        client = make_client(server)
        client.ask("aggregator", MESSAGES, Verdict)
        with pytest.raises(MalformedReply):
            client.ask("extractor", MESSAGES, Verdict)
    figures = summarise(client.calls)
    assert {k: figures["stages"]["aggregator"][k] for k in ("calls", "parsed", "reasked", "skipped")} == {
        "calls": 2, "parsed": 1, "reasked": 1, "skipped": 0}
    assert {k: figures["stages"]["extractor"][k] for k in ("calls", "parsed", "reasked", "skipped")} == {
        "calls": 2, "parsed": 0, "reasked": 1, "skipped": 1}
    assert (figures["calls"], figures["parsed"], figures["parse_rate"]) == (4, 1, 0.25)
    assert figures["stages"]["aggregator"]["prompt_tokens"] >= 10
