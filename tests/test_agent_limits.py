"""What a real model exposes in the agent: dates, budgets, cut replies, chatty editors, long inputs.

The model is the scripted OpenAI-compatible server; the stages and the client are the real ones.
"""
from __future__ import annotations

import json

from scripted_openai import ScriptedOpenAI
from test_agent import ARTICLE, CITE, MONACO, PARA_WIKITEXT, Script, edit_with, run, update

from winellbot.article import parse_article
from winellbot.llm.prompts import estimate_tokens, load_prompt
from winellbot.models import Document
from winellbot.pipeline.agent_common import outline_within
from winellbot.pipeline.agent_edit import cite_news, clean_reply
from winellbot.state.db import State


def test_since_reaches_the_extractor_and_drops_older_events():
    old = update("Mara Quist won the Monaco sprint race on 24 May 2025.", "Results",
                 "Mara Quist won the Monaco sprint race on 24 May 2025", "2025-05-24")
    new = update("Leo Park joined Ada Lovelace Racing as reserve driver in June 2025.", "Drivers",
                 "on 2 June 2025 that Leo Park will join the team as its reserve driver", "2025-06-02")
    # a page published after the last check that reports an older event along with a new one
    review = Document("review", "https://news.example/review", "Ada Lovelace Racing: the season so far",
                      "Mara Quist won the Monaco sprint race on 24 May 2025. The team announced on 2 June 2025 "
                      "that Leo Park will join the team as its reserve driver.", "2025-06-03")
    script = Script(queries=lambda req: f"Ada Lovelace Racing {req.text.count('- ')}",
                    extract=lambda req: [old, new])
    result, server, _ = run(script, [review], since="2025-06-01", max_iterations=1)
    assert server.stages().count("extractor") == 1
    assert [d.update.text for d in result.decisions] == [new["fact"]]
    assert any("older than 2025-06-01" in e for e in result.errors)


def test_unchanged_page_without_new_sources_costs_no_token():
    """A page checked before, with nothing published since, asks no model at all."""
    state = State()
    with ScriptedOpenAI(Script(extract=lambda req: [])) as server:
        first, _, _ = run(None, [MONACO], state=state, server=server, since="2025-05-01", max_iterations=1)
        asked = len(server.requests)
        assert asked > 0 and first.steps[0].chosen is not None
        again, _, client = run(None, [MONACO], state=state, server=server, since="2025-06-01", max_iterations=3)
        assert len(server.requests) == asked
    assert client.tokens_used == 0 and client.calls == []
    assert again.suggestions == () and "nothing published since 2025-06-01" in again.steps[0].reason


def test_criteria_cost_one_call_per_revision_across_runs_and_pages():
    state = State()
    with ScriptedOpenAI(Script()) as server:
        for since in ("2025-05-01", "2025-05-02"):  # two checks of the same revision
            run(None, [MONACO], state=state, server=server, since=since, max_iterations=1)
        assert server.stages().count("criteria") == 1
        edited = parse_article(ARTICLE.title, ARTICLE.wikitext + "\nA new sentence.\n", revid=42)
        run(None, [MONACO], state=state, server=server, article=edited, max_iterations=1)
        assert server.stages().count("criteria") == 2  # a new revision: asked once more


def test_editor_reply_with_a_preamble_is_an_edit_not_an_append():
    body = ("The team was founded in 2015 by [[Ada Lovelace]].[R1] It won [T1] in 2024.[R2] "
            "In 2025 Mara Quist won the Monaco sprint race on 24 May.")
    for reply in (f"Here is the updated paragraph:\n\n{body}",
                  f"Sure! Here is the paragraph with the news added:\n{body}\n\nNote: I kept every token.",
                  f"Updated paragraph: {body}"):
        edit, _ = edit_with(reply)
        assert edit.reason == "minimal edit by the editor model", reply
        assert edit.new_paragraph.startswith(PARA_WIKITEXT + " In 2025 Mara Quist won")
        assert edit.new_paragraph.endswith("on 24 May." + cite_news(CITE))


def test_clean_reply_keeps_a_paragraph_that_happens_to_start_with_sure():
    assert clean_reply("Surely the team was founded in 2015.", "The team was founded in 2015.") == \
        "Surely the team was founded in 2015."


def test_criteria_input_keeps_every_heading_and_first_sentences_before_whole_sections():
    sections = "\n".join(f"== Part {i} ==\nPart {i} opening sentence number {i}. " + " ".join(
        f"Filler sentence {j} of part {i} with several more words in it." for j in range(30)) + "\n"
        for i in range(1, 13))
    article = parse_article("Long Topic", "'''Long Topic''' is a fictional subject. It has a lead.\n\n" + sections)
    text = outline_within(article, 700)
    assert estimate_tokens(text) <= 700
    assert text.startswith("[Section: Lead]\n'''Long Topic''' is a fictional subject. It has a lead.") or \
        text.startswith("[Section: Lead]\nLong Topic is a fictional subject. It has a lead.")
    for i in range(1, 13):
        assert f"[Section: Part {i}]\nPart {i} opening sentence number {i}." in text
    assert "Filler sentence 29 of part 12" not in text and text.count("…") == 12
    whole = outline_within(article, 100_000)
    assert "…" not in whole and "Filler sentence 29 of part 12" in whole


def test_each_stage_request_stays_within_its_token_budget():
    long_doc = Document("long", "https://news.example/long", "Ada Lovelace Racing long read",
                                "Mara Quist won the Monaco sprint race on 24 May 2025. " * 2000, "2025-05-25")
    wikitext = ARTICLE.wikitext + "\n== Season ==\n" + "The team raced many times in 2024. " * 1500 + "\n"
    article = parse_article(ARTICLE.title, wikitext, revid=50)
    extract = [update("Mara Quist won the Monaco sprint race on 24 May 2025.", "Season",
                      "Mara Quist won the Monaco sprint race on 24 May 2025")]
    result, server, _ = run(Script(extract=lambda req: extract), [long_doc], article=article, max_iterations=1)
    stage_prompt = {"criteria": "criteria", "extractor": "extractor", "aggregator": "aggregator"}
    for req in server.requests:
        if req.stage in stage_prompt:
            limit = load_prompt(stage_prompt[req.stage]).input_tokens
            assert estimate_tokens(req.text) <= limit + 10, (req.stage, estimate_tokens(req.text))
            assert req.body["max_tokens"] <= load_prompt(stage_prompt[req.stage]).output_tokens
    assert {"criteria", "extractor", "aggregator"} <= set(server.stages())
    assert [d.action for d in result.decisions] == ["add"]


def test_prompts_carry_a_worked_example_the_field_descriptions_and_limits():
    for name, fields in {"criteria": ("section", "criteria"), "navigator_query": ("query", "reason"),
                         "navigator_pick": ("choice", "reason"),
                         "extractor": ("fact", "section", "quote", "event_date", "reason"),
                         "aggregator": ("action", "replaces", "reason", "importance"), "editor": ()}.items():
        prompt = load_prompt(name)
        system = prompt.parts[0][1]
        assert "Example" in system, name
        for field in fields:
            assert f'- "{field}":' in system, (name, field)
        example = system[system.index("{", system.index("Example")):].split("\n")[0] if fields else ""
        if fields and name != "criteria":
            json.loads(example[: example.rindex("}") + 1])  # the example reply is valid JSON
        assert prompt.input_tokens > prompt.output_tokens > 0
        assert prompt.version.endswith("-2")
