"""Every builder takes its bounds from the settings table, and every stage's model call fails one way."""
import dataclasses
import inspect

import pytest

from winellbot.bench.backtest import run_task, run_tasks
from winellbot.config import PipelineSettings
from winellbot.errors import BudgetExceeded, MalformedReply, ModelError
from winellbot.llm.client import attempt
from winellbot.pipeline.agent import build_agent_pipeline
from winellbot.pipeline.agent_hybrid import build_hybrid_pipeline
from winellbot.pipeline.offline.build import build_offline_pipeline

TABLE = {f.name: f.default for f in dataclasses.fields(PipelineSettings)}
# a builder's parameter named otherwise than its setting
ALIASES = {"limit": "max_suggestions"}


@pytest.mark.parametrize("builder", [build_agent_pipeline, build_hybrid_pipeline, build_offline_pipeline,
                                     run_tasks, run_task], ids=lambda f: f.__name__)
def test_a_builder_has_no_default_of_its_own(builder):
    own = {}
    for name, param in inspect.signature(builder).parameters.items():
        setting = ALIASES.get(name, name)
        if setting in TABLE and param.default is not inspect.Parameter.empty and param.default != TABLE[setting]:
            own[name] = (param.default, TABLE[setting])
    assert own == {}


def test_the_check_sees_a_default_of_its_own():
    def builder(*, max_iterations: int = 6, max_empty: int = TABLE["max_empty"], limit: int = 99):
        return max_iterations, max_empty, limit

    assert {n for n, p in inspect.signature(builder).parameters.items()
            if ALIASES.get(n, n) in TABLE and p.default != TABLE[ALIASES.get(n, n)]} == {"max_iterations", "limit"}


def test_attempt_returns_the_reply_or_the_models_error():
    assert attempt(lambda: "reply") == ("reply", None)

    def broken():
        raise MalformedReply("not JSON")

    reply, failed = attempt(broken)
    assert reply is None and isinstance(failed, ModelError) and "not JSON" in str(failed)


def test_attempt_lets_a_spent_budget_end_the_cycle():
    def spent():
        raise BudgetExceeded("budget of 100 tokens spent")

    with pytest.raises(BudgetExceeded):
        attempt(spent)


def test_attempt_does_not_hide_a_bug():
    with pytest.raises(ZeroDivisionError):
        attempt(lambda: 1 / 0)
