"""Blind verdicts: packets that do not say where a line came from, a key that does, a store that
keeps task ids and hashes (never page text), and the figures."""
import json

import pytest

from winellbot.bench import verdicts as V
from winellbot.bench.tasks import load_task
from winellbot.errors import WinellbotError


@pytest.fixture
def task(tmp_path):
    from bench_tasks import write_bridge_task

    return load_task(write_bridge_task(tmp_path / "t.json", held_text="On its first day the bridge carried 5,000 cars."))


def line(text: str) -> dict:
    return {"task": "wgb-1", "section_path": ["History"], "text": text, "fact": text, "documents": ["d1"],
            "quote": "On its first day the Harbour Bridge carried 5,000 cars"}


def test_packets_mix_versions_and_human_sentences_without_saying_which(task, tmp_path):
    items = V.items_from_lines([line("The bridge carried 5,000 cars."), line("Shared line.")], "version-a")
    items += V.items_from_lines([line("Shared line."), line("Another line.")], "version-b")
    items += V.human_items([task], 1, seed=1)
    out = V.write_packets(items, {task.id: task}, tmp_path / "packets", parts=2, seed=3)
    key = [json.loads(x) for x in (out / "key.jsonl").read_text().splitlines()]
    assert len(key) == 4  # the shared line is judged once
    assert {k["kind"] for k in key} == {"bot", "human"} and {k["version"] for k in key} >= {"version-a", "human"}
    text = "".join(p.read_text() for p in out.glob("part-*.md"))
    assert text.count("## Item") == 4 and "Harbour Bridge" in text and "**Outline:**" in text
    for secret in ("version-a", "version-b", "human", "held_out", "reference"):
        assert secret not in text.lower()


def test_merge_keeps_hashes_not_text_and_refuses_what_the_rubric_does_not_know(tmp_path):
    items = V.items_from_lines([line("The bridge carried 5,000 cars.")], "v")
    key = tmp_path / "k.jsonl"
    key.write_text(json.dumps({"item": 1, "task": "wgb-1", "hash": V.text_hash(items[0].text), "kind": "bot",
                               "version": "v"}) + "\n")
    answers = tmp_path / "a.jsonl"
    answers.write_text(json.dumps({"item": 1, "verdict": "Accept", "new_fact": True, "errors": []}) + "\n")
    store = tmp_path / "store.jsonl"
    assert V.merge(key, [answers], judge="test", store=store) == 1
    assert "bridge" not in store.read_text()
    [v] = V.load_store(store)
    assert v.verdict == "accept" and v.judge == "test"
    found, missing = V.judged([line("The bridge  carried 5,000 cars."), line("Unjudged.")], V.by_line([v]))
    assert [x.verdict for x in found] == ["accept"] and missing == 1
    for bad, match in (({"item": 1, "verdict": "maybe"}, "not one of"),
                       ({"item": 1, "verdict": "reject", "errors": ["ugly"]}, "unknown error"),
                       ({"item": 9, "verdict": "reject"}, "not in the key")):
        answers.write_text(json.dumps(bad) + "\n")
        with pytest.raises(WinellbotError, match=match):
            V.merge(key, [answers], judge="test", store=store)


def test_figures_give_shares_errors_and_accepted_lines_per_task():
    vs = [V.Verdict("t1", "a", "accept", True), V.Verdict("t1", "b", "revise", True, ("unclear",)),
          V.Verdict("t2", "c", "reject", False, ("unclear", "furniture")), V.Verdict("t2", "d", "reject", False)]
    f = V.figures(vs, tasks=4)
    assert (f["accept"], f["revise"], f["reject"], f["new_fact"]) == (0.25, 0.25, 0.5, 0.5)
    assert f["errors"] == {"unclear": 0.5, "furniture": 0.25} and f["accepted_per_task"] == 0.25


def test_over_every_verdict_a_line_read_twice_counts_once():
    a, b = line("The bridge carried 5,000 cars."), line("Another line.")
    ha, hb = V.text_hash(a["fact"]), V.text_hash(b["fact"])
    vs = [V.Verdict("wgb-1", ha, "accept", True), V.Verdict("wgb-1", ha, "revise", True),
          V.Verdict("wgb-1", hb, "reject", False), V.Verdict("wgb-2", ha, "accept", True)]  # another task's
    f = V.over_every_verdict([a, b, a], vs)
    assert f == {"lines": 2, "verdicts": 3, "accept": 0.25, "revise": 0.25, "reject": 0.5}
    assert V.over_every_verdict([line("Never judged.")], vs)["accept"] is None


def test_the_shipped_store_holds_no_page_text():
    rows = [json.loads(x) for x in V.store_path().read_text("utf-8").splitlines() if x.strip()]
    assert rows and all(set(r) == {"task", "hash", "verdict", "new_fact", "errors", "kind", "version", "judge"}
                        for r in rows)


def test_a_line_suggested_for_a_section_is_shown_with_its_subsections_text(tmp_path):
    """A reviewer told "History" reads all of History; the judge is shown the same."""
    from bench_tasks import write_bridge_task

    path = write_bridge_task(tmp_path / "t.json")
    data = json.loads(path.read_text())
    data["wikitext"] = ("The Harbour Bridge is a bridge in Port Town.\n\n== History ==\nPlans date from 1990.\n\n"
                        "=== Building ===\nWork took four years.\n\n== Design ==\nIt has two towers.\n")
    path.write_text(json.dumps(data))
    task = load_task(path)
    [item] = V.items_from_lines([dict(line("The bridge opened in 2024."), task=task.id)], "v")
    shown = V.render_item(1, item, task)
    section_line = next(x for x in shown.splitlines() if x.startswith("**Section text now:**"))
    assert "Plans date from 1990." in section_line and "Work took four years." in section_line
    assert "two towers" not in section_line


def test_a_human_sentence_is_shown_with_each_place_of_its_page_that_supports_it(tmp_path):
    """The calibration's sentences draw on several places of their page; one window showed about half
    of their words, and the judge called most of them unsupported."""
    from bench_tasks import write_bridge_task

    path = write_bridge_task(tmp_path / "t.json", held_text="The Harbour Bridge cost 90 million euros and "
                                                            "carried 5,000 cars on its first day.")
    data = json.loads(path.read_text())
    filler = " ".join(f"word{i}" for i in range(120))
    doc = data["held_out"][0]["supporting_document"]
    for d in data["documents"]:
        if d["id"] == doc:
            d["text"] = (f"The Harbour Bridge cost 90 million euros to build. {filler} "
                         f"On its first day the bridge carried 5,000 cars.")
    path.write_text(json.dumps(data))
    task = load_task(path)
    [item] = V.human_items([task], 1, seed=1)
    shown = V.render_item(1, item, task)
    passage = next(x for x in shown.splitlines() if x.startswith("**Source passage"))
    assert "90 million euros" in passage and "5,000 cars" in passage and "\u2026" in passage
    assert "word60" not in passage  # the filler between the two places is left out
