"""The local transformers backend on a tiny random model built offline, and the backend factory."""
from __future__ import annotations

import pytest

from winellbot.errors import ConfigError, ModelError
from winellbot.llm.base import ChatRequest, Message
from winellbot.llm.client import ModelClient
from winellbot.llm.offline import OfflineBackend, get_backend
from winellbot.llm.openai_backend import OpenAIBackend
from winellbot.models import Citation, Document, Paragraph, Update
from winellbot.pipeline.agent import LLMEditor
from winellbot.state.db import State

pytest.importorskip("torch")
pytest.importorskip("transformers")

REQUEST = ChatRequest("editor", (Message("system", "You edit paragraphs."),
                                 Message("user", "Original paragraph: The team won the race.")), max_tokens=16)


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory):
    from winellbot.llm.tiny_model import build_tiny_model

    return build_tiny_model(tmp_path_factory.mktemp("tiny") / "model")


def test_tiny_model_generates_greedily_and_counts_tokens(tiny_model):
    from winellbot.llm.transformers_backend import TransformersBackend

    backend = TransformersBackend(tiny_model, max_new_tokens=8)
    first, second = backend.chat(REQUEST), backend.chat(REQUEST)
    assert first.text and first.text == second.text  # greedy: the same reply every time
    assert first.completion_tokens == 8  # capped by the backend's max_new_tokens, below the request's 16
    assert first.prompt_tokens > 10
    assert first.model == "model"


def test_prompt_is_truncated_to_the_token_limit(tiny_model):
    from winellbot.llm.transformers_backend import TransformersBackend

    backend = TransformersBackend(tiny_model, max_new_tokens=2, max_prompt_tokens=12)
    long = ChatRequest("editor", (Message("user", "word " * 500),), max_tokens=2)
    assert backend.chat(long).prompt_tokens == 12


def test_tokenizer_without_chat_template_uses_a_role_tagged_prompt(tmp_path):
    from winellbot.llm.tiny_model import build_tiny_model
    from winellbot.llm.transformers_backend import TransformersBackend, plain_prompt

    backend = TransformersBackend(build_tiny_model(tmp_path / "plain", chat_template=False), max_new_tokens=4)
    reply = backend.chat(REQUEST)
    assert reply.completion_tokens == 4
    assert plain_prompt(REQUEST.messages).endswith("### Assistant:\n")
    assert "### System:\nYou edit paragraphs." in plain_prompt(REQUEST.messages)


def test_tiny_model_produces_an_edit_through_the_client(tiny_model):
    from winellbot.llm.transformers_backend import TransformersBackend

    state = State()
    client = ModelClient(TransformersBackend(tiny_model, max_new_tokens=24), state=state, run_id=3)
    doc = Document("d", "https://news.example/a", "Team wins", "The team won in Monaco.", "2025-05-24")
    update = Update("The team won the Monaco race on 24 May 2025.", ("Results",), "The team won in Monaco.", doc)
    paragraph = Paragraph("The team finished fourth in 2024.", "The team finished fourth in 2024.", 0, 33)
    citation = Citation(doc.url, doc.title, "Example News", "2025-05-24", "2025-06-01")
    edit = LLMEditor(client).edit(paragraph, update, citation)
    # a random model cannot write a faithful minimal edit, so the editor falls back, safely
    assert edit.new_paragraph == ("The team finished fourth in 2024. The team won the Monaco race on 24 May 2025."
                                  "<ref>{{cite news |url=https://news.example/a |title=Team wins "
                                  "|work=Example News |date=2025-05-24 |access-date=2025-06-01}}</ref>")
    assert edit.reason.startswith(("model edit rejected", "editor failed"))
    rows = list(state.db["llm_calls"].rows)
    assert (rows[0]["stage"], rows[0]["backend"], rows[0]["completion_tokens"]) == ("editor", "transformers", 24)
    # a random model never stops by itself: cut at the limit, asked once more, then skipped
    assert [r["outcome"] for r in rows] in (["parsed"], ["truncated", "truncated", "skipped"])


def test_missing_model_directory_is_a_model_error(tmp_path):
    from winellbot.llm.transformers_backend import TransformersBackend

    with pytest.raises(ModelError, match="config.json missing"):
        TransformersBackend(tmp_path / "nothing").chat(REQUEST)


def test_factory_builds_each_kind(tmp_path):
    assert isinstance(get_backend("offline"), OfflineBackend)
    openai = get_backend("openai", base_url="http://127.0.0.1:9/v1", api_key="k", model="m")
    assert isinstance(openai, OpenAIBackend) and openai.model == "m"
    local = get_backend("transformers", model_dir=tmp_path, max_new_tokens=5)
    assert local.name == "transformers" and local.max_new_tokens == 5
    with pytest.raises(ConfigError, match="unknown model backend"):
        get_backend("gpt5-magic")
    with pytest.raises(ConfigError, match="bad settings"):
        get_backend("openai", colour="blue")


def test_offline_backend_says_no_model_is_configured():
    with pytest.raises(ModelError, match="no model is configured"):
        ModelClient(OfflineBackend()).ask_text("editor", [Message("user", "hi")])


def test_cpu_threads_leave_the_busy_cores_to_other_processes(monkeypatch):
    from winellbot.llm.local_model import cpu_threads

    monkeypatch.delenv("WINELLBOT_THREADS", raising=False)
    assert cpu_threads(cores=2, load=0.1) == 2
    assert cpu_threads(cores=2, load=3.5) == 1  # others hold both cores: one thread, never zero
    assert cpu_threads(cores=8, load=3.2) == 5
    assert cpu_threads(cores=2, load=2.0, own=2.0) == 2  # the load this process makes is not others'
    monkeypatch.setenv("WINELLBOT_THREADS", "3")
    assert cpu_threads(cores=2, load=9.0) == 3


def test_the_backend_sets_torch_threads_before_each_request(tiny_model, monkeypatch):
    import torch

    from winellbot.llm.transformers_backend import TransformersBackend

    before = torch.get_num_threads()
    backend = TransformersBackend(tiny_model, max_new_tokens=2)
    try:
        for threads in ("1", "2", "1"):
            monkeypatch.setenv("WINELLBOT_THREADS", threads)
            backend.chat(REQUEST)
            assert torch.get_num_threads() == int(threads)
    finally:
        torch.set_num_threads(before)


def test_one_in_process_backend_per_model(tiny_model):
    from winellbot.editor.predict import local_client

    first, second = local_client(tiny_model), local_client(tiny_model)
    assert first is not second and first.backend is second.backend  # loaded once for the process
