"""Reviewers' revisions as data: `winellbot review export` writes each revision with its attribution, the
editor's data command turns the file into training pairs that keep it, refits count a revision as useful,
and the outcomes report gives approved, revised (words changed), rejected and undone per month."""
from __future__ import annotations

import dataclasses
import datetime as dt
import json

import pytest
from review_scene import queue_suggestions, suggestion
from wikiscene import configured_state

from winellbot import clock
from winellbot.bench.accept_fit import refit_from
from winellbot.cli import main
from winellbot.config import load_settings
from winellbot.editor.examples import load_examples
from winellbot.models import Edit
from winellbot.outcomes.decisions import words_changed
from winellbot.outcomes.learning import decision_examples
from winellbot.outcomes.report import OutcomeReport, as_text, as_wikitext
from winellbot.state.reviews import Decision, ReviewStore
from winellbot.state.revisions import RevisionStore

BEFORE = ("Quillhaven is a port town.<ref>{{cite web |url=https://old.example/a |title=A}}</ref> "
          "Its harbour dates from 1820. It has a ferry to the islands.")
POST_URL = "http://127.0.0.1/w/index.php?title=Talk:Quillhaven&oldid=41"


def _edit_style(page: str) -> object:
    """A suggestion with a paragraph (the edit style): the bot's sentence inserted after the second one."""
    s = suggestion(page, "The ferry terminal reopened in March 2026 after repairs.", section=("History",))
    added = s.update.text
    new = BEFORE.replace("1820.", f"1820. {added}<ref>{{{{cite news |url={s.update.document.url}}}}}</ref>")
    return dataclasses.replace(s, edit=Edit(BEFORE, new, added, s.edit.citation))


@pytest.fixture
def scene(tmp_path):
    cfg = tmp_path / "c.toml"
    cfg.write_text(f'[state]\npath = "{tmp_path / "state.sqlite"}"\n[wiki]\nusername = "ExampleBot"\n')
    state = configured_state(load_settings(cfg))
    edited = _edit_style("Quillhaven")
    made = queue_suggestions(state, ["Marrowby"], per_page=4, extra=[edited])
    url = edited.update.document.url
    state.record_source(url, text="Opening words. " + "Filler. " * 30 + edited.update.quote + " Closing words.")
    store = ReviewStore(state)
    return cfg, state, store, made


def _decide_all(state, store, made):
    edited, a, b, c, d = made
    store.decide(Decision(edited.id, "Ada", "revise", text="Repairs to the ferry terminal ended in March 2026.",
                          note="plainer"))
    RevisionStore(state).set_status(edited.id, "posted", post_url=POST_URL)
    store.decide(Decision(a.id, "Bo", "revise", section=("Economy",), text="A reworded line about the town."))
    store.decide(Decision(b.id, "Bo", "approve"))
    store.decide(Decision(c.id, "Cy", "revise", text="Taken back later."))
    store.undo("Cy", store.last_decision("Cy")["id"])
    store.decide(Decision(d.id, "Ada", "reject", ("unclear", "too_long")))


def test_export_then_editor_data_gives_training_pairs_with_attribution(scene, tmp_path, capsys):
    cfg, state, store, made = scene
    _decide_all(state, store, made)
    out, examples = tmp_path / "revisions.jsonl", tmp_path / "examples.jsonl"
    assert main(["review", "export", "--config", str(cfg), "--output", str(out)]) == 0
    lines = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    assert [(x["reviewer"], x["status"]) for x in lines] == [("Ada", "posted"), ("Bo", "approved")]  # not undone
    posted, moved = lines
    assert posted["attribution"]["author"] == "Ada" and posted["attribution"]["link"] == POST_URL
    assert posted["attribution"]["licence"] == "CC BY-SA 4.0" and "Ada" in posted["attribution"]["credit"]
    assert posted["attribution"]["bot_line_by"] == "User:ExampleBot" and posted["attribution"]["wiki"] == "127.0.0.1"
    assert posted["bot_text"] == made[0].update.text and posted["note"] == "plainer"
    assert posted["paragraph_before"] == BEFORE and posted["source"]["quote"] in posted["source"]["passage"]
    assert posted["source"]["citation"]["url"] == made[0].update.document.url
    assert moved["attribution"]["link"] is None and not moved["attribution"]["published"]
    assert moved["section_from"] != ["Economy"] and moved["section_to"] == ["Economy"] and moved["moved"]

    assert main(["editor", "data", "--revisions", str(out), "--output", str(examples)]) == 0
    pairs = {e.meta["reviewer"]: e for e in load_examples(examples)}
    ada = pairs["Ada"]
    assert ada.original == "Quillhaven is a port town. Its harbour dates from 1820. It has a ferry to the islands."
    assert ada.target == ("Quillhaven is a port town. Its harbour dates from 1820. Repairs to the ferry terminal "
                          "ended in March 2026. It has a ferry to the islands.")
    assert ada.meta["attribution"] == posted["attribution"] and ada.meta["post_url"] == POST_URL
    assert made[0].update.quote in ada.source.text
    bo = pairs["Bo"]  # moved to another section: no paragraph of its own, the reviewer's sentence is the target
    assert bo.original == "" and bo.target == "A reworded line about the town." and bo.section_path == ("Economy",)
    assert bo.meta["attribution"]["author"] == "Bo"


def test_export_all_adds_undone_revisions_and_dash_writes_to_stdout(scene, capsys):
    cfg, state, store, made = scene
    _decide_all(state, store, made)
    capsys.readouterr()
    assert main(["review", "export", "--config", str(cfg), "--output", "-", "--all"]) == 0
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert sorted(x["status"] for x in lines) == ["approved", "posted", "undone"]
    assert main(["review", "export", "--config", str(cfg), "--output", "-", "--since", "2999-01-01"]) == 0
    assert capsys.readouterr().out == ""


def test_editor_data_skips_undone_revisions_and_refuses_a_file_that_is_not_an_export(scene, tmp_path, capsys):
    cfg, state, store, made = scene
    _decide_all(state, store, made)
    out, examples = tmp_path / "all.jsonl", tmp_path / "ex.jsonl"
    main(["review", "export", "--config", str(cfg), "--output", str(out), "--all"])
    assert main(["editor", "data", "--revisions", str(out), "--output", str(examples)]) == 0
    assert len(load_examples(examples)) == 2 and "skipped 1: revision undone" in capsys.readouterr().out
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "x", "text": "no attribution"}\n')
    assert main(["editor", "data", "--revisions", str(bad), "--output", str(examples)]) == 1
    err = capsys.readouterr().err
    assert "bad.jsonl:1: not a winellbot-revision/1 line" in err and err.count("\n") == 1


def test_a_revision_teaches_the_score_as_useful_and_an_undone_decision_teaches_nothing(scene):
    cfg, state, store, made = scene
    _decide_all(state, store, made)
    labels = {e.suggestion_id: (e.label, e.outcome) for e in decision_examples(store.labelled())}
    assert labels[made[0].id] == (1, "review:revise") and labels[made[1].id] == (1, "review:revise")
    assert labels[made[4].id][0] == 0
    assert made[3].id not in labels  # revised, then undone: no label
    undone = dict(store.decisions(made[3].id)[0], features="{}")
    assert decision_examples([undone]) == []
    # a refit from decisions counts "revise" among the useful ones
    values = [{"words": i / 10} for i in range(10)]
    model, _ = refit_from(values, ["revise", "reject"] * 5, [f"p{i}" for i in range(10)], per_group=1)
    assert model["about"]["positives"] == 5


def test_words_changed_is_the_word_level_edit_distance_over_the_longer_text():
    assert words_changed("The harbour wall fell.", "the Harbour wall fell") == 0.0
    assert words_changed("The harbour wall fell in 2026.", "The harbour wall collapsed in 2026.") == pytest.approx(1 / 6)
    assert words_changed("One two three", "One two three four five six") == pytest.approx(0.5)
    assert words_changed("alpha beta", "gamma delta") == 1.0 and words_changed("", "") == 0.0


def test_the_outcomes_report_gives_each_month_approved_revised_rejected_and_undone(scene, monkeypatch, capsys):
    cfg, state, store, made = scene
    may = dt.datetime(2026, 5, 10, tzinfo=dt.timezone.utc).timestamp()
    monkeypatch.setattr(clock.CLOCK, "source", lambda: may)
    edited, a, b, c, d = made
    store.decide(Decision(edited.id, "Ada", "revise", text=edited.update.text.replace("reopened", "opened again")))
    store.decide(Decision(b.id, "Bo", "approve"))
    monkeypatch.setattr(clock.CLOCK, "source", lambda: may + 31 * 86400)  # June
    store.decide(Decision(a.id, "Bo", "revise", text="Entirely different words here."))
    store.decide(Decision(c.id, "Cy", "approve"))
    store.undo("Cy", store.last_decision("Cy")["id"])
    store.decide(Decision(d.id, "Ada", "reject", ("unclear",)))
    table = OutcomeReport().build([], decisions=store.decisions(), revisions=RevisionStore(state).rows())
    r = table.reviews
    assert (r["approved"], r["revised"], r["rejected"], r["undone"]) == (1, 2, 1, 1)
    may_row, june = r["periods"]
    assert may_row["period"] == "2026-05" and (may_row["approved"], may_row["revised"]) == (1, 1)
    assert may_row["revised_words_changed_median"] == pytest.approx(round(2 / 10, 3))  # 1 word for 2, of 10
    assert june["period"] == "2026-06" and (june["revised"], june["rejected"], june["undone"]) == (1, 1, 1)
    assert june["reject_reasons"] == {"unclear": 1} and june["revised_words_changed_median"] > 0.9
    text = as_text(table)
    assert "approved as they stood 1, revised 2 (median" in text and "undone 1" in text
    assert "  2026-06: 2 decided:" in text
    wiki = as_wikitext(table, bot_user="ExampleBot")
    assert "| 2026-05 || 2 || 1 || 1 || 20%" in wiki
    # the command reads the revisions from the state
    assert main(["outcomes", "--config", str(cfg), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["review_page"]["revised"] == 2
