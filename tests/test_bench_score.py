"""The backtest scorer on hand-made tasks."""
import pytest

from winellbot.bench.score import LexicalJudge, score, token_change
from winellbot.bench.tasks import HeldOut, Task
from winellbot.models import Document

WIKITEXT = ("Lead text about the Harbour Bridge.\n\n== History ==\nBuilt over four years.\n\n"
            "=== Opening ===\nThe bridge opened in 2024.\n\n== Design ==\nIt is a steel arch.")
FACT_A = "The opening ceremony was attended by 3,000 residents and Mayor Alice Brown."
FACT_B = "Engineers from Norway designed the 240 metre steel arch."


def task(task_id="t1"):
    return Task(
        id=task_id, title="Harbour Bridge", wikitext=WIKITEXT,
        documents=(Document("d1", "https://a.example/1", "A", "text"), Document("d2", "https://b.example/2", "B", "t")),
        held_out=(HeldOut(("History", "Opening"), FACT_A, "d1", 0.9), HeldOut(("Design",), FACT_B, "d2", 0.8)),
        document_origins={"d1": "reference", "d2": "search"},
    )


def line(section, text, docs=("d1",), task_id="t1"):
    return {"task": task_id, "section_path": list(section), "text": text, "documents": list(docs)}


def test_perfect_run_scores_100_percent():
    f = score([task()], [line(["History", "Opening"], FACT_A + "<ref>{{cite news|url=x}}</ref>"),
                         line(["Design"], FACT_B, ("d2",))])
    assert f["c_soft"] == f["c_hard"] == f["c_hard_top"] == f["s_acc"] == f["cover_precision"] == 1.0
    assert f["cites_supporting_document"] == 1.0
    assert f["by_origin"]["reference"]["c_hard"] == 1.0 and f["by_origin"]["search"]["c_hard"] == 1.0


def test_empty_run_scores_zero():
    f = score([task()], [])
    assert f["c_soft"] == f["c_hard"] == f["s_acc"] == f["mean_best_recall"] == 0.0
    assert f["facts"] == 2 and f["suggestions"] == 0


def test_misplaced_suggestion_counts_for_soft_not_hard():
    f = score([task()], [line(["Design"], FACT_A)])
    assert f["c_soft"] == 0.5
    assert f["c_hard"] == 0.0 and f["c_hard_top"] == 0.0
    assert f["s_acc"] == 0.0 and f["cover_precision"] == 1.0


def test_top_level_match_counts_for_hard_top_only():
    f = score([task()], [line(["History"], FACT_A)])
    assert (f["c_soft"], f["c_hard"], f["c_hard_top"]) == (0.5, 0.0, 0.5)


def test_bare_subsection_name_and_section_key_are_understood():
    f = score([task()], [{"task": "t1", "section": "opening", "text": FACT_A, "documents": []}])
    assert f["c_hard"] == 0.5 and f["c_hard_top"] == 0.5 and f["s_acc"] == 1.0


def test_s_acc_over_covering_suggestions_only():
    f = score([task()], [line(["Design"], "Unrelated words about weather."),
                         line(["History", "Opening"], FACT_A), line(["History"], FACT_B)])
    assert f["cover_precision"] == pytest.approx(2 / 3)
    assert f["s_acc"] == 0.5


def test_only_first_five_suggestions_count():
    lines = [line(["Design"], "filler sentence number %d" % i) for i in range(5)] + \
        [line(["History", "Opening"], FACT_A)]
    assert score([task()], lines)["c_soft"] == 0.0


def test_recall_threshold_and_100_word_cut():
    judge = LexicalJudge()
    assert judge.recall(FACT_B, "Engineers from Norway designed it.") == pytest.approx(3 / 7)
    padded = " ".join(["padding"] * 100) + " " + FACT_B
    assert score([task()], [line(["Design"], padded, ("d2",))])["c_soft"] == 0.0


def test_token_change_counts_changed_words():
    assert token_change("a b c", "a b c") == 0
    assert token_change("a b c", "a b c d e") == 2
    assert token_change("a b c", "a x c") == 1
    f = score([task()], [dict(line(["Design"], FACT_B), old_paragraph="It is.", new_paragraph="It is. New words here.")])
    assert f["token_change"] == 3


def test_readable_counts_suggestions_without_a_long_unpunctuated_run():
    run_on = " ".join(["the", "bridge", "opened", "in", "2024", "with", "a", "crowd"] * 6)  # 48 words, no marks
    f = score([task()], [line(["Design"], FACT_B, ("d2",)), line(["Design"], run_on)])
    assert f["readable"] == 0.5
    ws = run_on.split()
    punctuated = ", ".join(" ".join(ws[i:i + 8]) for i in range(0, 48, 8)) + "."
    assert score([task()], [line(["Design"], punctuated)])["readable"] == 1.0
    assert score([task()], [])["readable"] == 0.0
