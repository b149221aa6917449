"""Outcomes on the real local wiki: the bot posts through its writer, editors act (adopt, revert,
set statuses as a person, as a bot account, as an IP), and the bot's review sync and outcome check
read it all back; `winellbot outcomes` reports it (--report, --publish) and `editor data
--from-state` learns from it; benchmarks/outcomes.py runs the whole at a small size."""
import datetime as dt
import json
import secrets
from pathlib import Path

import pytest
import requests
from wikiscene import configured_state

from winellbot import cli, commands, factory
from winellbot.article import parse_article
from winellbot.config import Settings, dump_settings
from winellbot.errors import ShutoffError, UnsafeWriteError
from winellbot.models import Citation, Document, Edit, PipelineResult, Suggestion, Update
from winellbot.state.outcomes import OutcomeStore

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
pytestmark = pytest.mark.module_state  # `posted`, built once for the module, makes the state its tests read
ARTICLE = """'''{t}''' is a harbour town.

== Transport ==
A ferry connects the town with Eastholm.

== References ==
{{{{Reflist}}}}
"""
FACT = "The ferry terminal of {t} reopened on {d} May 2026 after a rebuild led by Halvard {name}."


def _suggestion(title: str, n: int, name: str) -> Suggestion:
    fact = FACT.format(t=title, d=n + 3, name=name)
    doc = Document(f"d{n}", f"https://news.example.org/{name.lower()}", "Terminal", fact, "2026-05-15", "Gazette")
    return Suggestion(title, 1, ("Transport",), 0, Edit("x", "x", fact, Citation(doc.url, "Terminal", "Gazette")),
                      Update(fact + " Passengers used a pier meanwhile.", ("Transport",), fact, doc))


@pytest.fixture(scope="module")
def posted(local_wiki, tmp_path_factory):
    """Five articles, each with one suggestion the bot posted to its queue."""
    folder = tmp_path_factory.mktemp("outcomes")
    creds, token = local_wiki.credentials, secrets.token_hex(3)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("WINELLBOT_BOT_PASSWORD", creds.bot_password)
        s = Settings()
        s.review.mode = "direct"  # the outcomes of posted suggestions: posted as before the review page
        s.wiki.api_url, s.wiki.username, s.wiki.bot_password_app = local_wiki.api_url, creds.bot_user, creds.bot_app
        s.wiki.shutoff_page, s.wiki.put_throttle = f"User:{creds.bot_user}/Shutoff-{token}", 0.0
        s.wiki.queue_prefix = f"User:{creds.bot_user}/Queue-{token}"
        s.state.path = str(folder / "state.sqlite")
        (folder / "news").mkdir()
        s.search.corpus_dir = str(folder / "news")
        local_wiki.edit(s.wiki.shutoff, "run")
        config = folder / "winellbot.toml"
        config.write_text(dump_settings(s), encoding="utf-8")
        cases = ["adopted", "rejected", "bot", "ip", "left"]
        titles = {c: f"Outcome {c} {token}" for c in cases}
        found = {c: _suggestion(titles[c], n, f"Name{c.capitalize()}{token}") for n, c in enumerate(cases)}
        for c in cases:
            local_wiki.edit(titles[c], ARTICLE.format(t=titles[c]))
        state = configured_state(s)
        parts = factory.build_wiki(s, folder)
        bot = commands.build_bot(s, state, wiki=parts)
        run_id = state.start_run("offline")
        for c in cases:
            state.record_result(run_id, titles[c], PipelineResult((found[c],)))
        for title, text, revid, ts in parts.reader.read(list(titles.values())):
            bot.post(parse_article(title, text, revid=revid, timestamp=ts), opted_in=False)
        yield {"settings": s, "state": state, "bot": bot, "parts": parts, "titles": titles, "found": found,
               "config": config, "wiki": local_wiki, "folder": folder}


def _queue(p, case):
    return p["bot"].queue_page(p["titles"][case])


def _set_status(p, case, status, editor):
    text = p["parts"].reader.page_text(_queue(p, case))
    editor(_queue(p, case), text.replace("status=pending", status, 1))


def _login(api, user, password):
    session = requests.Session()
    token = session.get(api, params={"action": "query", "meta": "tokens", "type": "login",
                                     "format": "json"}).json()["query"]["tokens"]["logintoken"]
    reply = session.post(api, data={"action": "clientlogin", "username": user, "password": password,
                                    "logintoken": token, "loginreturnurl": "http://127.0.0.1/", "format": "json"}).json()
    assert reply["clientlogin"]["status"] == "PASS", reply
    return session


def _token(session, api, kind="csrf"):
    reply = session.get(api, params={"action": "query", "meta": "tokens", "type": kind, "format": "json"}).json()
    return reply["query"]["tokens"][f"{kind}token"]


def _as_bot(p):
    """Edits as another account that the wiki's administrator put in the bot group."""
    api, creds = p["wiki"].api_url, p["wiki"].credentials
    name, password = f"Otherbot{secrets.token_hex(3)}", "Pw-" + secrets.token_urlsafe(16)
    anon = requests.Session()
    reply = anon.post(api, data={"action": "createaccount", "username": name, "password": password,
                                 "retype": password, "createreturnurl": "http://127.0.0.1/", "format": "json",
                                 "createtoken": _token(anon, api, "createaccount")}).json()
    assert reply["createaccount"]["status"] == "PASS", reply
    admin = _login(api, creds.admin_user, creds.admin_password)
    reply = admin.post(api, data={"action": "userrights", "user": name, "add": "bot", "format": "json",
                                  "token": _token(admin, api, "userrights")}).json()
    assert "error" not in reply, reply
    session = _login(api, name, password)

    def edit(title, text):
        reply = session.post(api, data={"action": "edit", "title": title, "text": text, "bot": "1",
                                        "format": "json", "token": _token(session, api)}).json()
        assert reply.get("edit", {}).get("result") == "Success", reply
    return edit


def _as_ip(p):
    def edit(title, text):
        session = requests.Session()
        api = p["wiki"].api_url
        token = session.get(api, params={"action": "query", "meta": "tokens", "format": "json"}).json()
        reply = session.post(api, data={"action": "edit", "title": title, "text": text, "format": "json",
                                        "token": token["query"]["tokens"]["csrftoken"]}).json()
        assert "error" not in reply, reply
    return edit


def test_posting_tracks_each_suggestion_with_its_articles_fingerprint(posted):
    rows = {r["suggestion_id"]: r for r in OutcomeStore(posted["state"]).watched()}
    assert set(rows) == {s.id for s in posted["found"].values()}
    row = rows[posted["found"]["adopted"].id]
    assert row["baseline_revid"] and row["baseline_sentences"] and row["features"]
    assert set(row["figures"]) >= {"2026"}


def test_adoption_and_verdicts_are_read_back_with_who_set_them_and_a_revert_undoes_the_adoption(posted):
    p, state, bot = posted, posted["state"], posted["bot"]
    adopted = p["found"]["adopted"]
    fact = adopted.update.quote
    title = p["titles"]["adopted"]
    p["wiki"].edit(title, ARTICLE.format(t=title).replace(
        "with Eastholm.", f"with Eastholm. {fact}<ref>{{{{cite news|url={adopted.update.document.url}|title=T}}}}</ref>"))
    _set_status(p, "rejected", "status=rejected|reason=not new, wrong section", lambda t, x: p["wiki"].edit(t, x))
    _set_status(p, "bot", "status=accepted", _as_bot(p))
    _set_status(p, "ip", "status=rejected|reason=off topic", _as_ip(p))
    assert bot.sync_reviews() == 1  # only the person's verdict changes a status
    found = bot.check_outcomes()
    assert found.adopted == [adopted.id] and found.changed_pages == 1

    rows = {r["id"]: r for r in OutcomeStore(state).history()}
    a = rows[adopted.id]
    assert a["adopted_how"] == "cited" and a["adopted_source"] == adopted.update.document.url
    assert a["adopted_revid"] == p["parts"].reader.latest_revisions([title])[title][0]
    assert a["adopted_exact"] == 1 and a["adoption_days"] >= 0 and fact in a["adopted_sentence"]
    r = rows[p["found"]["rejected"].id]
    assert (r["verdict"], r["reasons"], r["status"]) == ("rejected", "not_new,wrong_section", "rejected")
    for case, why in (("bot", "bot right"), ("ip", "IP")):
        row = rows[p["found"][case].id]
        assert row["verdict"] is None and row["status"] == "posted" and why in row["why_untrusted"]
    assert bot.check_outcomes().changed_pages == 0  # nothing changed since: nothing read

    p["wiki"].edit(title, ARTICLE.format(t=title), "revert")
    again = bot.check_outcomes()
    assert again.reverted == [adopted.id]
    assert {r["id"]: r for r in OutcomeStore(state).history()}[adopted.id]["adopted_revid"] is None


def test_the_outcomes_command_reports_and_publishes_through_the_writer(posted, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("WINELLBOT_BOT_PASSWORD", posted["wiki"].credentials.bot_password)
    config = str(posted["config"])
    assert cli.main(["outcomes", "--config", config, "--by", "month", "--report", str(tmp_path), "--json"]) == 0
    table = json.loads(capsys.readouterr().out.split("\nwrote ")[0])
    assert table["total"]["posted"] == 5 and table["total"]["rejected"] == 1 and table["untrusted_statuses"] == 2
    assert table["rejection_reasons"] == {"not_new": 1, "wrong_section": 1}
    assert (tmp_path / "outcomes.md").read_text().count("|") > 10
    assert (tmp_path / "outcomes.png").read_bytes()[:4] == b"\x89PNG"

    # a section name carrying markup reaches the page escaped
    with posted["state"].db.atomic():
        posted["state"].db.execute("update suggestions set section = ? where id = ?",
                                   ["{{Delete}} [[Evil]]", posted["found"]["left"].id])
    assert cli.main(["outcomes", "--config", config, "--by", "section", "--publish"]) == 0
    page = f"User:{posted['settings'].wiki.username}/Outcomes"
    text = posted["parts"].reader.page_text(page)
    assert "wikitable" in text and "{{Delete}}" not in text and "[[Evil]]" not in text
    assert "&#123;&#123;Delete" in text or "&#123;{Delete" in text or "{&#123;Delete" in text


def test_the_outcome_page_write_keeps_to_the_bots_userspace_and_the_shutoff(posted, local_wiki):
    writer = posted["parts"].writer
    with pytest.raises(UnsafeWriteError):
        writer.save_own_page("Talk:Somewhere else", "x", summary="t")
    with pytest.raises(UnsafeWriteError):
        writer.save_own_page(posted["titles"]["left"], "x", summary="t")
    local_wiki.edit(posted["settings"].wiki.shutoff, "stop")
    try:
        with pytest.raises(ShutoffError):
            writer.save_own_page(f"User:{posted['settings'].wiki.username}/Outcomes", "other text", summary="t")
    finally:
        local_wiki.edit(posted["settings"].wiki.shutoff, "run")


def test_an_undecided_suggestion_expires_after_the_configured_time(posted):
    from winellbot.outcomes.tracker import OutcomeCheck

    later = dt.datetime.now(dt.timezone.utc) + dt.timedelta(days=61)
    copy = posted["state"].snapshot()  # the other tests go on with the real state
    found = OutcomeCheck(copy, posted["parts"].reader, expire_days=60, now=later).check()
    expired = set(found.expired)
    f = posted["found"]
    assert f["left"].id in expired and f["bot"].id in expired and f["ip"].id in expired
    assert f["rejected"].id not in expired  # decided by a person
    assert OutcomeCheck(copy, posted["parts"].reader, expire_days=60, now=later).check().expired == []


def test_editor_data_from_state_writes_the_adopted_fact_as_an_example(posted, tmp_path):
    p = posted
    adopted = p["found"]["adopted"]
    title = p["titles"]["adopted"]
    p["wiki"].edit(title, ARTICLE.format(t=title).replace(
        "with Eastholm.", f"with Eastholm. {adopted.update.quote}"
                          f"<ref>{{{{cite news|url={adopted.update.document.url}|title=T}}}}</ref>"))
    assert p["bot"].check_outcomes().adopted == [adopted.id]
    out = tmp_path / "examples.jsonl"
    assert cli.main(["editor", "data", "--from-state", "--config", str(p["config"]), "--output", str(out)]) == 0
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    assert len(lines) == 1 and lines[0]["format"] == "winell-editor/1"
    ex = lines[0]
    assert adopted.update.quote in ex["target"] and adopted.update.quote not in ex["original"]
    assert ex["source"]["url"] == adopted.update.document.url and "Halvard" in ex["source"]["text"]
    assert ex["section_path"] == ["Transport"]


def test_the_benchmark_classifies_every_scripted_case_at_a_small_size(own_wiki, tmp_path, monkeypatch):
    monkeypatch.setenv("WINELLBOT_BOT_PASSWORD", own_wiki.credentials.bot_password)
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    from outcomes import measure, met

    r = measure(own_wiki, tmp_path, 24)
    assert r["correct"] == r["cases"], r.get("wrong")
    assert met(r), r
    assert [c["requests"] for c in r["requests_per_cycle"]][0] == 0


def test_the_demo_prints_the_outcome_table_of_its_state(posted, capsys):
    from winellbot.demo import _print_outcomes

    _print_outcomes(posted["settings"])
    out = capsys.readouterr().out
    assert "| suggestions | posted | adopted |" in out
    total = next(line for line in out.splitlines() if line.startswith("| all"))
    assert total.split("|")[2].strip() == "5"
