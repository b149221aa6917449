"""A round of blind verdicts from the command line: the packet mixes the posted lines the store has
not judged with as many it has and with human sentences, keeps its key outside the judge's folder,
and the merge says how often the judge agrees with the store."""
import json

import pytest
from bench_tasks import write_bridge_task

from winellbot.bench import verdicts as V
from winellbot.bench.verdict_round import main, packet
from winellbot.errors import WinellbotError

LINES = ["The Harbour Bridge carried 5,000 cars on its first day.", "Port Town opened the Harbour Bridge in 2024.",
         "The Harbour Bridge has a footpath on its east side.", "Officials from Port Town counted the cars on Monday."]


@pytest.fixture
def round_files(tmp_path):
    (tmp_path / "tasks").mkdir()
    write_bridge_task(tmp_path / "tasks" / "wgb-1.json")
    posted = tmp_path / "posted.jsonl"
    posted.write_text("".join(json.dumps({"task": "wgb-1", "section_path": ["History"], "text": t, "fact": t,
                                          "documents": ["d1"], "quote": t}) + "\n" for t in LINES))
    store = tmp_path / "store.jsonl"  # the first line judged before, the rest not
    store.write_text(json.dumps({"task": "wgb-1", "hash": V.text_hash(LINES[0]), "verdict": "revise",
                                 "new_fact": True, "errors": ["unclear"], "kind": "bot", "version": "old",
                                 "judge": "earlier"}) + "\n")
    return tmp_path, posted, store


def test_the_packet_mixes_new_and_judged_lines_and_humans_with_the_key_kept_apart(round_files):
    tmp, posted, store = round_files
    counts = packet(posted, tmp / "tasks", tmp / "judge", tmp / "key.jsonl", humans=1, store=store)
    assert counts == {"new": 3, "judged_before": 1, "human": 1, "posted_lines": 4}
    assert sorted(p.name for p in (tmp / "judge").iterdir()) == ["answers.md", "part-01.md"]
    key = [json.loads(x) for x in (tmp / "key.jsonl").read_text().splitlines()]
    assert sorted(k["version"] for k in key) == ["human", "posted-judged", "posted-new", "posted-new", "posted-new"]
    assert [k["stored_verdict"] for k in key if "stored_verdict" in k] == ["revise"]
    text = (tmp / "judge" / "part-01.md").read_text()
    assert text.count("## Item") == 5
    for secret in ("posted-new", "posted-judged", "stored_verdict", "human"):
        assert secret not in text.lower()
    with pytest.raises(WinellbotError, match="outside"):
        packet(posted, tmp / "tasks", tmp / "judge", tmp / "judge" / "key.jsonl", store=store)


def test_the_merge_adds_the_answers_and_says_how_often_the_judge_agrees_with_the_store(round_files, capsys):
    tmp, posted, store = round_files
    packet(posted, tmp / "tasks", tmp / "judge", tmp / "key.jsonl", humans=1, store=store)
    key = [json.loads(x) for x in (tmp / "key.jsonl").read_text().splitlines()]
    answers = tmp / "answers.jsonl"
    answers.write_text("".join(json.dumps({"item": k["item"], "verdict": "accept", "new_fact": True, "errors": []})
                               + "\n" for k in key))
    assert main(["merge", str(tmp / "key.jsonl"), str(answers), "--judge", "round-3", "--store", str(store)]) == 0
    out = capsys.readouterr().out
    assert '"same_as_stored": "0 of 1"' in out and "added 5 verdict(s)" in out
    assert len(V.load_store(store)) == 6 and "Harbour" not in store.read_text()
