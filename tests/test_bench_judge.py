"""The paper's judge through ModelClient and the OpenAI backend, against a scripted local server."""
import json

import pytest

from scripted_openai import ScriptedOpenAI
from winellbot.bench.judge import ModelJudge
from winellbot.bench.score import score
from winellbot.bench.tasks import HeldOut, Task
from winellbot.llm.client import ModelClient
from winellbot.llm.openai_backend import OpenAIBackend
from winellbot.models import Document

FACT = "Mayor Alice Brown opened the bridge on 4 March 2024."


def judgments(*flags):
    return json.dumps({"judgments": [{"element": f"e{i}", "thought": "t", "mentioned": f}
                                      for i, f in enumerate(flags)]})


def test_model_judge_decomposes_once_then_judges_each_suggestion():
    replies = [json.dumps({"facts": ["Alice Brown is mayor", "She opened the bridge", "It was 4 March 2024"]}),
               judgments(True, True, False), judgments(False, False, False)]
    with ScriptedOpenAI(replies) as server:
        judge = ModelJudge(ModelClient(OpenAIBackend(server.base_url, "k", "judge-model"), cache=False))
        assert judge.recall(FACT, "Alice Brown, the mayor, opened it.") == pytest.approx(2 / 3)
        assert judge.recall(FACT, "The weather was fine.") == 0.0
        assert judge.recall(FACT, "") == 0.0  # no call for an empty suggestion
        assert len(server.requests) == 3
        assert "atomic facts" in json.dumps(server.requests[0].body)
        assert "Alice Brown is mayor" in json.dumps(server.requests[1].body)


def test_model_judge_plugs_into_the_scorer():
    task = Task("t", "Bridge", "Lead.\n\n== History ==\nA. B.", (Document("d1", "u", "t", "x"),),
                (HeldOut(("History",), FACT, "d1"),), {"d1": "search"})
    replies = [json.dumps({"facts": ["a", "b"]}), judgments(True, True)]
    with ScriptedOpenAI(replies) as server:
        judge = ModelJudge(ModelClient(OpenAIBackend(server.base_url, "k", "m"), cache=False))
        figures = score([task], [{"task": "t", "section": "History", "text": "Brown opened it in March.",
                                  "documents": ["d1"]}], judge=judge)
    assert figures["c_hard"] == 1.0 and figures["s_acc"] == 1.0
