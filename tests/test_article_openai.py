"""`winellbot article` with the OpenAI-compatible backend, end to end against the real local wiki.

The model is a local server speaking the chat completions API with scripted replies
(``tests/scripted_openai.py``); the search corpus is fictional news written here. The command runs
through ``winellbot.cli.main`` exactly as an operator would run it, with a TOML config.
"""
from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest
from scripted_openai import Received, ScriptedOpenAI

from winellbot.cli import main
from winellbot.config import Settings, dump_settings
from winellbot.state.db import State

ARTICLE = """'''{name}''' is a fictional harbour town in the test county of Westmark.

== History ==
{name} was founded in 1802 as a fishing village. The harbour wall was built in 1850.

== Government ==
The town council has eleven members. The mayor is elected every four years.
"""
HISTORY = "{name} was founded in 1802 as a fishing village. The harbour wall was built in 1850."
GOVERNMENT = "The town council has eleven members. The mayor is elected every four years."


def news(name: str, slug: str, published: str) -> list[dict]:
    return [
        {"id": f"{slug}-mayor", "url": f"https://news.example.org/{slug}-mayor", "published": published,
         "title": f"{name} elects a new mayor", "publisher": "Westmark Gazette",
         "text": f"{name} elected Maria Olsen as its new mayor on 1 March 2026. The town council confirmed "
                 "that Olsen won 62 percent of the vote in the mayoral election. Olsen previously led the "
                 "harbour board."},
        {"id": f"{slug}-harbour", "url": f"https://news.example.org/{slug}-harbour", "published": published,
         "title": f"{name} harbour wall repaired", "publisher": "Coast Weekly",
         "text": f"The harbour wall of {name}, built in 1850, was repaired at a cost of 4.2 million euros in "
                 "2026. Engineers finished the repairs in April 2026 after two years of work."},
    ]


class TownModel:
    """The scripted model: one answer per stage, chosen from what the request holds."""

    def __init__(self, name: str) -> None:
        # The news is dated today (see the town fixture) but tells of events in early 2026, which the
        # extractor would drop as older than the page's check window: the model gives no event dates.
        self.name = name
        self.mayor = {"fact": "Maria Olsen was elected mayor in March 2026 with 62 percent of the vote.",
                      "section": "Government", "event_date": None, "reason": "a new mayor",
                      "quote": f"{name} elected Maria Olsen as its new mayor on 1 March 2026. The town council "
                               "confirmed that Olsen won 62 percent of the vote"}
        self.harbour = {"fact": "The harbour wall was repaired in 2026 at a cost of 4.2 million euros.",
                        "section": "History", "event_date": None, "reason": "works on a landmark",
                        "quote": f"The harbour wall of {name}, built in 1850, was repaired at a cost of "
                                 "4.2 million euros in 2026"}

    def __call__(self, req: Received) -> str:
        text = req.text
        if req.stage == "criteria":
            return json.dumps({"sections": [
                {"section": "Lead", "criteria": "What the town is and where it lies."},
                {"section": "History", "criteria": "Founding, landmarks and works on them."},
                {"section": "Government", "criteria": "The council, the mayor and elections."}]})
        if req.stage == "navigator" and "Write the next search query" in text:
            tried = text.split("Queries already tried:")[1].split("Updates already kept:")[0]
            if "mayor election" not in tried:
                query = f"{self.name} mayor election"
            elif "harbour wall" not in tried:
                query = f"{self.name} harbour wall"
            else:
                query = f"{self.name} council news"
            return json.dumps({"query": query, "reason": "the next section's kind of news"})
        if req.stage == "navigator":
            return json.dumps({"choice": 1, "reason": "the top result fits the query"})
        if req.stage == "extractor":
            found = [u for u in (self.mayor, self.harbour) if u["quote"].split(",")[0][:40] in text]
            return json.dumps({"updates": found})
        if req.stage == "aggregator":
            return json.dumps({"action": "add", "reason": "new to the section", "importance": 4})
        if req.stage == "editor":
            if self.mayor["fact"] in text:
                return f"{GOVERNMENT} {self.mayor['fact']}"
            return f"{HISTORY.format(name=self.name)} {self.harbour['fact']}"
        if req.stage == "judge":
            update = self.mayor if self.mayor["fact"].split(" in ")[0] in text else self.harbour
            return json.dumps({"verdict": "supported", "quote": update["quote"], "reason": "stated"})
        raise AssertionError(f"unexpected stage {req.stage!r}")


@pytest.fixture
def town(local_wiki, make_page, tmp_path, monkeypatch):
    """An opted-in article, its news corpus, a scripted model server and a config pointing at both."""
    monkeypatch.setenv("WINELLBOT_BOT_PASSWORD", local_wiki.credentials.bot_password)
    monkeypatch.delenv("WINELLBOT_OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    name = make_page.title("Harbourtown")
    local_wiki.edit(name, ARTICLE.format(name=name))
    local_wiki.edit(f"Talk:{name}", "{{Winellbot}}\nEarlier talk.")
    bot = local_wiki.credentials.bot_user
    shutoff = f"User:{bot}/Shutoff-{make_page.title('s').replace(' ', '')}"
    local_wiki.edit(shutoff, "run")
    corpus = tmp_path / "news"
    corpus.mkdir()
    slug = name.lower().replace(" ", "-")
    # dated today (UTC, as the state's last check is): still new after the first run's check
    docs = news(name, slug, dt.datetime.now(dt.timezone.utc).date().isoformat())
    (corpus / "news.jsonl").write_text("\n".join(json.dumps(d) for d in docs), encoding="utf-8")
    server = ScriptedOpenAI(TownModel(name)).start()
    s = Settings()
    s.wiki.api_url = local_wiki.api_url
    s.wiki.username = bot
    s.wiki.bot_password_app = local_wiki.credentials.bot_app
    s.wiki.shutoff_page = shutoff
    s.wiki.put_throttle = 0.0
    s.pipeline.backend = "openai"
    s.llm.base_url = server.base_url
    s.llm.model = "scripted-small"
    s.llm.stage_models = {"criteria": "scripted-large"}
    s.search.backend = "corpus"
    s.search.corpus_dir = str(corpus)
    s.state.path = str(tmp_path / "state.sqlite")
    config = tmp_path / "winellbot.toml"
    config.write_text(dump_settings(s), encoding="utf-8")
    yield {"name": name, "docs": docs, "server": server, "config": str(config), "state": s.state.path}
    server.stop()


def test_article_runs_all_stages_prints_posts_and_records(town, site, capsys):
    import pywikibot

    name, server = town["name"], town["server"]
    assert main(["article", name, "--config", town["config"]]) == 0
    out = capsys.readouterr().out
    assert "Maria Olsen was elected mayor in March 2026" in out
    assert "The harbour wall was repaired in 2026" in out
    assert "2 suggestion(s) (0 held by gates), 0 page(s) posted, 0 error(s)" in out
    assert {"criteria", "navigator", "extractor", "aggregator", "editor", "judge"} <= set(server.stages())
    assert [r.body["model"] for r in server.requests if r.stage == "criteria"] == ["scripted-large"]
    talk = pywikibot.Page(site, f"Talk:{name}")
    assert "winellbot-suggestion" not in talk.text, "a dry run posts nothing"

    state = State(town["state"])
    run_id = state.db.execute("select max(id) from runs").fetchone()[0]
    assert state.db["runs"].get(run_id)["status"] == "dry-run"
    calls = list(state.db["llm_calls"].rows_where("run_id = ?", [run_id]))
    assert calls and all(c["prompt_tokens"] > 0 and c["completion_tokens"] > 0 and not c["cached"] for c in calls)
    assert len(calls) == len(server.requests)
    assert state.suggestions(page=name) == [], "a dry run keeps its cost, not what it found"

    # Posting: the same revision and sources, so every model answer comes from the cache.
    asked = len(server.requests)
    assert main(["article", name, "--config", town["config"], "--post"]) == 0
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
    for doc in town["docs"]:
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


def test_article_records_model_failures_and_still_finishes(town, capsys):
    """A server that answers every extractor request with junk: skipped with recorded errors, no crash."""
    name, server = town["name"], town["server"]
    good = server.func

    def junk_extractor(req: Received):
        return "I cannot produce JSON today." if req.stage == "extractor" else good(req)

    server.func = junk_extractor
    assert main(["article", name, "--config", town["config"]]) == 0
    out = capsys.readouterr().out
    assert "0 suggestion(s)" in out
    state = State(town["state"])
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
