"""Hybrid mode: the offline pass's passages lead the navigator and are all the extractor reads."""
from __future__ import annotations

import datetime as dt

from agent_scene import ARTICLE, MONACO, RESERVE, Script, corpus, update
from scripted_openai import ScriptedOpenAI

from winellbot.llm.client import ModelClient
from winellbot.llm.openai_backend import OpenAIBackend
from winellbot.models import Document
from winellbot.pipeline.agent import build_agent_pipeline
from winellbot.pipeline.agent_common import fit, pack
from winellbot.pipeline.agent_hybrid import build_hybrid_pipeline

# a long page: one paragraph of news about the team among much that is not
FILLER = " ".join(f"The harbour market sold {n} crates of apples and pears on a quiet weekday." for n in range(60))
LONG = Document("long", "https://news.example/long", "Ada Lovelace Racing news and a market report",
                f"{FILLER} Ada Lovelace Racing announced that Leo Park will join the team as its reserve driver "
                f"for the rest of the season, the team said in Oxford on 2 June 2025. {FILLER}", "2025-06-02")
OFF_TOPIC = Document("soup", "https://news.example/soup", "Soup recipes",
                     "Tomato soup needs tomatoes, onions and salt. Simmer for twenty minutes.", "2025-06-01")


def extract(req):
    if LONG.url in req.text:
        return [update("Leo Park joined Ada Lovelace Racing as reserve driver in June 2025.", "Drivers",
                       "Leo Park will join the team as its reserve driver", "2025-06-02")]
    return []


def run(build, docs):
    with ScriptedOpenAI(Script(queries=lambda req: f"Ada Lovelace Racing {req.text.count('- ')}",
                               extract=extract)) as server:
        client = ModelClient(OpenAIBackend(server.base_url, "k", "scripted"))
        pipeline = build(client, max_iterations=4, max_empty=3)
        pipeline.today = dt.date(2025, 6, 10)
        result = pipeline.propose(ARTICLE, corpus(*docs))
    return result, server, client


def test_hybrid_reads_passages_not_pages_and_spends_fewer_tokens():
    docs = [LONG, OFF_TOPIC, MONACO]
    agent, agent_server, agent_client = run(build_agent_pipeline, docs)
    hybrid, server, client = run(build_hybrid_pipeline, docs)
    extracts = [r for r in server.requests if r.stage == "extractor"]
    assert len(extracts) == 1, "every lead's passages in one request"
    (req,) = extracts
    assert f'[Passage 1 from "{LONG.title}", placed under:' in req.text
    assert "Leo Park will join the team as its reserve driver" in req.text
    assert FILLER not in req.text  # the page around the passage stays out
    assert "navigator" not in server.stages(), "the leads need no query and no pick"
    assert not any(OFF_TOPIC.url in r.text for r in extracts), "a document without passages costs no call"
    leads = [s for s in hybrid.steps if s.query.startswith("(offline pass)")]
    assert leads and leads[0].chosen.url == LONG.url
    assert [s.update.text for s in hybrid.suggestions] == [s.update.text for s in agent.suggestions]
    assert client.tokens_used < 0.6 * agent_client.tokens_used


def test_hybrid_model_rounds_search_on_after_the_leads():
    with ScriptedOpenAI(Script(queries=lambda req: "Ada Lovelace Racing reserve", extract=extract)) as server:
        client = ModelClient(OpenAIBackend(server.base_url, "k", "scripted"))
        pipeline = build_hybrid_pipeline(client, model_rounds=1)
        result = pipeline.propose(ARTICLE, corpus(LONG, RESERVE))
    assert server.stages().count("navigator") == 2  # one query and one pick, after the leads
    assert "Ada Lovelace Racing reserve" in [s.query for s in result.steps]


def test_passages_are_packed_whole_in_order_up_to_the_budget():
    blocks = [f"[Passage {i}]\n" + "word " * 40 for i in range(1, 6)]  # about 60 tokens each
    shown = pack(blocks, 150)
    assert shown == "\n\n".join(blocks[:2]), "two whole passages fit; the third is left out, not cut"
    assert pack(blocks, 20) == fit(blocks[0], 20), "a first passage alone too long is cut to fit"
    assert pack([], 100) == ""
