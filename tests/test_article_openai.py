"""`winellbot article` with the OpenAI-compatible backend, end to end against the real local wiki.

The model is a local server speaking the chat completions API with scripted replies
(``tests/scripted_openai.py``); the search corpus is fictional news (the ``model_town`` fixture: conftest.py and
``tests/wikiscene.py``). The command runs through ``winellbot.cli.main`` exactly as an operator would run
it, with a TOML config.
"""
from __future__ import annotations

from pathlib import Path

from scripted_openai import Received
from wikiscene import configured_state

from winellbot.cli import main
from winellbot.config import Settings, dump_settings
from winellbot.state.db import State


def test_article_runs_all_stages_prints_posts_and_records(model_town, site, capsys):
    import pywikibot

    name, server = model_town["name"], model_town["server"]
    assert main(["article", name, "--config", model_town["config"]]) == 0
    out = capsys.readouterr().out
    assert "Maria Olsen was elected mayor in March 2026" in out
    assert "The harbour wall was repaired in 2026" in out
    assert "2 suggestion(s) (0 held by gates), 0 page(s) posted, 0 error(s)" in out
    assert {"criteria", "navigator", "extractor", "aggregator", "editor", "judge"} <= set(server.stages())
    assert [r.body["model"] for r in server.requests if r.stage == "criteria"] == ["scripted-large"]
    talk = pywikibot.Page(site, f"Talk:{name}")
    assert "winellbot-suggestion" not in talk.text, "a dry run posts nothing"

    state = configured_state(model_town["settings"])
    run_id = state.db.execute("select max(id) from runs").fetchone()[0]
    assert state.db["runs"].get(run_id)["status"] == "dry-run"
    calls = list(state.db["llm_calls"].rows_where("run_id = ?", [run_id]))
    assert calls and all(c["prompt_tokens"] > 0 and c["completion_tokens"] > 0 and not c["cached"] for c in calls)
    assert len(calls) == len(server.requests)
    assert state.suggestions(page=name) == [], "a dry run keeps its cost, not what it found"

    # Posting: the same revision and sources, so every model answer comes from the cache.
    asked = len(server.requests)
    assert main(["article", name, "--config", model_town["config"], "--post"]) == 0
    out = capsys.readouterr().out
    assert "1 page(s) posted" in out
    assert len(server.requests) == asked, "the second run asked the model again"
    run2 = state.db.execute("select max(id) from runs").fetchone()[0]
    calls2 = list(state.db["llm_calls"].rows_where("run_id = ?", [run2]))
    assert calls2 and all(c["cached"] == 1 and c["prompt_tokens"] == 0 for c in calls2)
    decisions = list(state.db["decisions"].rows_where("run_id = ? and page = ?", [run2, name]))
    assert [d["action"] for d in decisions] == ["add", "add"]
    assert all(d["reason"] == "new to the section" for d in decisions)
    queries = [r["query"] for r in state.db["steps"].rows_where("run_id = ?", [run2], order_by="id")]
    assert queries[:2] == [f"{name} mayor election", f"{name} harbour wall"]
    for doc in model_town["docs"]:
        source = state.source(doc["url"])
        assert source is not None, doc["url"]
        assert (source["status"], source["title"], source["publisher"], source["published"]) == (
            "corpus", doc["title"], doc["publisher"], doc["published"])
    rows = state.suggestions(page=name)
    assert {r["section"] for r in rows} == {"History", "Government"}
    judged = {r["suggestion_id"] for r in state.db["gate_results"].rows_where("gate = 'judge'")}
    assert {r["id"] for r in rows} <= judged

    talk = pywikibot.Page(site, f"Talk:{name}")
    assert "Earlier talk." in talk.text
    for row in rows:
        assert f"<!-- winellbot-suggestion:{row['id']} -->" in talk.text
    assert "Maria Olsen" in talk.text
    assert {r["status"] for r in state.suggestions(page=name)} == {"posted"}
    users = {r.user for r in pywikibot.Page(site, name).revisions()}
    assert local_bot(site) not in users, "the bot never edits the article"


def test_article_records_model_failures_and_still_finishes(model_town, capsys):
    """A server that answers every extractor request with junk: skipped with recorded errors, no crash."""
    name, server = model_town["name"], model_town["server"]
    good = server.func

    def junk_extractor(req: Received):
        return "I cannot produce JSON today." if req.stage == "extractor" else good(req)

    server.func = junk_extractor
    assert main(["article", name, "--config", model_town["config"]]) == 0
    out = capsys.readouterr().out
    assert "0 suggestion(s)" in out
    state = configured_state(model_town["settings"])
    errors = [e["message"] for e in state.db["errors"].rows]
    assert any("extractor: skipped" in e and "no valid reply" in e for e in errors), errors
    failed = list(state.db["llm_calls"].rows_where("stage = 'extractor' and error is not null"))
    assert failed


def local_bot(site) -> str:
    return site.username()


def test_config_file_round_trips_the_model_settings(tmp_path):
    """The TOML the tests (and operators) write selects the model backend and its server."""
    from winellbot.config import load_settings

    s = Settings()
    s.pipeline.backend = "openai"
    s.llm.base_url = "http://127.0.0.1:9/v1"
    s.llm.stage_models = {"criteria": "big", "judge": "small"}
    path = Path(tmp_path / "c.toml")
    path.write_text(dump_settings(s), encoding="utf-8")
    loaded = load_settings(path)
    assert (loaded.pipeline.backend, loaded.llm.base_url) == ("openai", "http://127.0.0.1:9/v1")
    assert loaded.llm.stage_models == {"criteria": "big", "judge": "small"}


def test_sources_the_navigator_chose_are_recorded_once_with_their_fields():
    """Corpus results carry their document and are recorded as ``corpus``; web results are the fetcher's."""
    from winellbot.bot import WinellBot
    from winellbot.models import Document, NavigationStep, PipelineResult, SearchResult

    state = State()
    doc = Document("n1", "https://news.example.org/a", "A title", "Some text.", "2026-01-02", "Gazette")
    state.record_source("https://web.example.org/b", status="ok", title="Fetched", text="fetched text")
    steps = (NavigationStep("q1", SearchResult(doc.url, doc.title, document=doc)),
             NavigationStep("q2", SearchResult("https://web.example.org/b", "Fetched")),  # fetched: not ours
             NavigationStep("q3", None))
    bot = WinellBot(state=state, reader=None, writer=None, pipeline=None, search=None, fetcher=None,
                    gates=None, settings=Settings())
    bot.record_sources(PipelineResult(suggestions=(), steps=steps))
    bot.record_sources(PipelineResult(suggestions=(), steps=steps[:1]))  # a later run: still one row
    assert state.db["sources"].count == 2
    row = state.source(doc.url)
    assert (row["status"], row["title"], row["publisher"], row["published"], row["text"]) == (
        "corpus", "A title", "Gazette", "2026-01-02", "Some text.")
    assert state.source("https://web.example.org/b")["status"] == "ok"
