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
    errors = [r["error"] for r in state.db["llm_calls"].rows if r["error"]]
    assert len(errors) == 1 and "after 3 attempts" in errors[0]
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
    assert formats == ["json_schema", "json_object", "text", "text"]
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
