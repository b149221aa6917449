"""What a real model exposes in the agent: dates, budgets, cut replies, chatty editors, long inputs.

The model is the scripted OpenAI-compatible server; the stages and the client are the real ones.
"""
from __future__ import annotations

import json
import re

import pydantic
import pytest

from agent_scene import ARTICLE, CITE, MONACO, PARA_WIKITEXT, RESERVE, Script, edit_with, run, update
from scripted_openai import ScriptedOpenAI

from winellbot.article import parse_article
from winellbot.llm.prompts import estimate_tokens, load_prompt
from winellbot.models import Document
from winellbot.pipeline.agent_common import REPLY_CHARS_PER_TOKEN, outline_within, reply_tokens
from winellbot.pipeline.agent_extract import MAX_UPDATES, ExtractedUpdate, ExtractReply, verdict_schema
from winellbot.pipeline.agent_navigate import MAX_CRITERIA, CriteriaReply, QueryReply, criteria_schema
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
        assert re.fullmatch(rf"{name}-[2-9]", prompt.version)


def test_every_reply_schema_is_bounded_and_its_longest_reply_fits_the_stage_limit():
    """llama.cpp lets a model that repeats itself run to the schema's bounds: such a reply must
    still end as valid JSON within the stage's limit (eight looping updates were cut at 500 tokens)."""
    bounds = {"extractor": reply_tokens(ExtractReply), "navigator_query": reply_tokens(QueryReply),
              "aggregator": max(reply_tokens(verdict_schema(tuple(f"K{i}" for i in range(n)))) for n in range(9)),
              "criteria": reply_tokens(criteria_schema(100))}
    for name, bound in bounds.items():
        assert bound <= load_prompt(name).output_tokens, (name, bound)
    # the longest reply really is that long: every string at its bound, every list full
    longest = ExtractReply(updates=[ExtractedUpdate(fact="f" * 200, section="s" * 80, quote="q" * 200,
                                                    event_date="2025-01-01", reason="r" * 80)] * MAX_UPDATES)
    assert len(longest.model_dump_json()) / REPLY_CHARS_PER_TOKEN <= bounds["extractor"]
    with pytest.raises(ValueError, match="reply.sections: a list without maxItems"):
        reply_tokens(_Unbounded)
    assert criteria_schema(3).model_json_schema()["properties"]["sections"]["maxItems"] == 3
    assert criteria_schema(41).model_json_schema()["properties"]["sections"]["maxItems"] == MAX_CRITERIA


class _Unbounded(pydantic.BaseModel):
    sections: list[str]


def test_the_criteria_request_allows_one_item_per_section_and_its_limit_holds_them():
    """The grammar stops a looping model's list at the article's sections, and the request's
    token limit holds that many items at their longest; a longer list keeps its first items."""
    _, server, _ = run(Script(), [MONACO], max_iterations=1)
    (req,) = [r for r in server.requests if r.stage == "criteria"]
    sent = req.body["response_format"]["json_schema"]["schema"]
    assert sent["properties"]["sections"]["maxItems"] == len(ARTICLE.sections) == 4
    assert req.body["max_tokens"] == reply_tokens(criteria_schema(4))
    looping = {"sections": [{"section": "Drivers", "criteria": "x" * 100}] * 9}
    assert len(criteria_schema(4).model_validate(looping).sections) == 4


def test_a_server_that_ignores_max_items_gets_its_first_updates_kept_not_a_re_ask():
    """A server without a grammar may send more updates than the schema allows: the first three are
    checked, with no second request."""
    honest = update("Mara Quist won the Monaco sprint race on 24 May 2025.", "Results",
                    "Mara Quist won the Monaco sprint race on 24 May 2025")
    extra = update("The team won nine races in 2025.", "Results", "the team won nine races this year")  # not in it
    result, server, _ = run(Script(extract=lambda req: [honest] + [extra] * 6), [MONACO], max_iterations=1)
    assert server.stages().count("extractor") == 1
    dropped = [e for e in result.errors if e.startswith("extractor: dropped")]
    assert [d.update.text for d in result.decisions] == [honest["fact"]] and len(dropped) == 2


def test_numbers_and_labels_a_model_chooses_are_enums_the_grammar_enforces():
    """llama.cpp's grammar ignores minimum/maximum (a pick of result 2 of 1 failed to parse on
    SmolLM2); an enum it enforces."""
    extract = [update("Mara Quist won the Monaco sprint race on 24 May 2025.", "Results",
                      "Mara Quist won the Monaco sprint race on 24 May 2025")]
    _, server, _ = run(Script(extract=lambda req: extract), [MONACO, RESERVE], max_iterations=1)
    schemas = {r.body["response_format"]["json_schema"]["name"]: r.body["response_format"]["json_schema"]["schema"]
               for r in server.requests if "response_format" in r.body}
    choice = schemas["Pick"]["properties"]["choice"]["anyOf"]
    assert {"enum": [1, 2], "type": "integer"} in choice  # two unread results
    assert schemas["Verdict"]["properties"]["importance"]["enum"] == [1, 2, 3, 4, 5]


def test_the_extractor_schema_lists_the_articles_sections_and_stays_bounded():
    from winellbot.pipeline.agent_extract import extract_schema

    long_heading = "A heading far longer than eighty characters, as some real articles have in their history"
    schema = extract_schema(["Lead", "History", long_heading, "History"])
    item = schema.model_json_schema()["$defs"]["SectionUpdate"]["properties"]["section"]
    assert item["enum"] == ["Lead", "History", long_heading]
    assert reply_tokens(schema) > 0  # bounded: the enum bounds the field
    # a real heading longer than the free field's 80 characters still parses
    assert schema(updates=[{"fact": "A fact.", "section": long_heading, "quote": "q"}]).updates[0].section == long_heading
    assert extract_schema([]) is ExtractReply


def test_a_quoted_heading_is_listed_without_double_quotes_and_resolved_back():
    from winellbot.article import parse_article
    from winellbot.pipeline.agent_common import resolve_section, section_name

    heading = 'Construction: "Harbour builds a ferry"'
    article = parse_article("Harbour", f"Lead text here.\n\n== {heading} ==\nThe ferry was built in 2020.\n")
    listed = section_name((heading,))
    assert '"' not in listed and listed == "Construction: 'Harbour builds a ferry'"
    assert resolve_section(article, listed) == ((heading,), "exact")
