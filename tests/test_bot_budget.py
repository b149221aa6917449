"""A spent token budget ends the cycle: unfinished pages stay due, and the run record says why.

Against the real local wiki, with the ``model_town`` fixture's scripted model (``tests/wikiscene.py``).
"""
from __future__ import annotations

from scripted_openai import Reply, ScriptedOpenAI
from wikiscene import ARTICLE, configured_state, TownModel

from winellbot.cli import main
from winellbot.commands import build_bot
from winellbot.config import load_settings


def test_spent_budget_ends_the_cycle_without_rescheduling_unfinished_pages(model_town, local_wiki, make_page, capsys):
    name = model_town["name"]
    other = make_page.title("Otherton")
    local_wiki.edit(other, ARTICLE.format(name=other))
    settings = load_settings(model_town["config"])
    settings.llm.token_budget = 500
    model = TownModel(name)
    # every request costs 300 tokens: criteria fit, the navigator's query spends the budget
    with ScriptedOpenAI(lambda req: Reply(model(req), prompt_tokens=290, completion_tokens=10)) as server:
        settings.llm.base_url = server.base_url
        state = configured_state(settings)
        report = build_bot(settings, state).run([name, other], force=True)
        asked = server.stages()
    assert asked[:2] == ["criteria", "navigator"]
    assert report.stopped.startswith("token budget spent")
    assert "2 page(s) left due" in report.stopped
    assert report.pages == [name], "the cycle ended at the first page"
    for title in (name, other):
        row = state.page(title)
        assert row is None or not row.get("next_due"), f"{title} must stay due"
    run = state.db["runs"].get(report.run_id)
    assert run["status"] == "budget spent"
    errors = list(state.db["errors"].rows_where("stage = 'budget'"))
    assert len(errors) == 1 and errors[0]["page"] == name
    assert main(["status", "--config", model_town["config"]]) == 0
    out = capsys.readouterr().out
    assert "budget spent" in out and "[budget] token budget spent" in out


def test_next_cycle_finishes_the_pages_and_reuses_the_answers_already_paid_for(model_town):
    name = model_town["name"]
    settings = load_settings(model_town["config"])
    settings.llm.token_budget = 200
    server = model_town["server"]
    state = configured_state(settings)
    first = build_bot(settings, state).run([name], force=True)
    assert first.stopped.startswith("token budget spent")
    settings.llm.token_budget = 200_000
    second = build_bot(settings, state).run([name], force=True)
    assert not second.stopped and state.page(name)["next_due"]
    assert len(second.results[name].suggestions) == 2
    assert server.stages().count("criteria") == 1, "the criteria already paid for came from the cache"
