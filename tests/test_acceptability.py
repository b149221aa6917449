"""The acceptability score: fitted on editors' verdicts, it holds what falls below its bar, gives
every suggestion its estimate, and the best-estimated are taken first; a refit that does worse out
of fold is refused."""
import json

import numpy as np
import pytest

from winellbot.article import parse_article
from winellbot.bench.accept_fit import choose, nested, replaces
from winellbot.bench.verdicts import Verdict
from winellbot.errors import ConfigError
from winellbot.gates.acceptability import FEATURES, Acceptability, AcceptabilityGate, features
from winellbot.models import Citation, Document, Edit, Suggestion, Update

ARTICLE = parse_article("Fellside Rovers", "'''Fellside Rovers''' is a football club.\n\n== Honours ==\n"
                                           "The club won the County Cup in 1954.\n")


def suggestion(text: str) -> Suggestion:
    doc = Document("d1", "https://news.example/cup", "Rovers win", text)
    u = Update(text=text, section_path=("Honours",), quote=text, document=doc, score=2.0)
    return Suggestion("Fellside Rovers", 1, ("Honours",), None, Edit("", text, text, Citation(doc.url, doc.title)), u)


def model_file(tmp_path, **about) -> str:
    """A model that weighs new figures only: estimate 0.5 at the mean, higher with more figures."""
    coef = [2.0 if f == "new_figures" else 0.0 for f in FEATURES]
    data = {"features": list(FEATURES), "mean": [0.0] * len(FEATURES), "scale": [1.0] * len(FEATURES),
            "coef": coef, "intercept": 0.0, "threshold": 0.6, "about": about}
    path = tmp_path / "model.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return str(path)


def test_the_shipped_model_loads_and_weighs_this_versions_features():
    model = Acceptability.load()
    assert model is not None and set(model.names) <= set(FEATURES)
    assert 0 < model.threshold < 1 and model.about["examples"] > 0
    p = model.estimate(features(ARTICLE, suggestion("Fellside Rovers won the County Cup on 10 May 2026.")))
    assert 0.0 < p < 1.0


def test_below_the_bar_is_held_above_it_gets_its_estimate(tmp_path):
    gate = AcceptabilityGate(Acceptability.load(model_file(tmp_path)))
    [high] = gate.check(ARTICLE, suggestion("Fellside Rovers won the County Cup on 10 May 2026 at Quarry Lane."))
    [low] = gate.check(ARTICLE, suggestion("Fellside Rovers won the County Cup again at Quarry Lane."))
    assert high.severity == "info" and high.value > 0.6
    assert low.severity == "hold" and low.value == pytest.approx(0.5) and "below 0.60" in low.message
    s = suggestion("x")
    s = Suggestion(*[getattr(s, f) for f in ("article_title", "revid", "section_path", "paragraph_index", "edit",
                                              "update")], findings=(high,))
    assert s.estimate == high.value
    assert AcceptabilityGate(Acceptability.load(model_file(tmp_path)), threshold=0.4).check(
        ARTICLE, suggestion("Fellside Rovers won the County Cup again at Quarry Lane."))[0].severity == "info"


def test_without_a_model_nothing_is_held_on_a_guess():
    assert AcceptabilityGate(None).check(ARTICLE, suggestion("anything at all")) == []


def test_a_model_for_other_features_or_a_broken_file_is_a_clear_error(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"features": ["moon_phase"], "mean": [0], "scale": [1], "coef": [1],
                               "intercept": 0, "threshold": 0.5}), encoding="utf-8")
    with pytest.raises(ConfigError, match="does not fit"):
        Acceptability.load(bad)
    bad.write_text("{not json", encoding="utf-8")
    with pytest.raises(ConfigError, match="not readable"):
        Acceptability.load(bad)
    with pytest.raises(ConfigError, match="not found"):
        Acceptability.load(tmp_path / "missing.json")


@pytest.mark.slow
def test_the_backtest_takes_the_best_estimated_first(tmp_path):
    from bench_tasks import build_offline_pipeline, write_bridge_task

    from winellbot.bench.backtest import run_task
    from winellbot.bench.tasks import load_task
    from winellbot.gates.registry import default_gates

    task = load_task(write_bridge_task(tmp_path / "t.json"))
    gates = default_gates(acceptability_path=model_file(tmp_path), acceptability_threshold=0.0)
    held: list = []
    lines = run_task(task.id, task.bot_view(), build_offline_pipeline(), gates, held=held)
    estimates = [x["estimate"] for x in lines]
    assert estimates and all(e is not None for e in estimates)
    assert estimates == sorted(estimates, reverse=True)
    assert all({"fact", "quote", "source", "features"} <= set(x) for x in lines)
    assert all(x["held"] for x in held)


def test_a_refit_that_accepts_a_smaller_share_or_rejects_a_larger_one_out_of_fold_is_refused():
    old = {"out_of_fold": {"accept": 0.15, "reject": 0.40}}
    assert replaces(old, {"accept": 0.12, "reject": 0.30})[0] is False
    assert replaces(old, {"accept": 0.20, "reject": 0.45})[0] is False
    assert replaces(old, {"accept": 0.15, "reject": 0.40})[0] is True
    assert replaces(old, {"accept": None, "reject": None})[0] is False
    assert replaces(None, {"accept": 0.0, "reject": 1.0})[0] is True


def verdicts_of(labels: str) -> list[Verdict]:
    """One verdict per letter: a(ccept), r(evise), x (reject)."""
    names = {"a": "accept", "r": "revise", "x": "reject"}
    return [Verdict(f"t{i}", f"h{i}", names[c], c != "x") for i, c in enumerate(labels)]


def test_the_bar_is_chosen_for_the_share_accepted_as_it_stands_not_the_share_usable():
    # Highest estimates: revisions; below them a rejection, then the accepted lines. The bar that
    # posts only usable lines (the revisions) accepts none of them as they stand.
    labels = "rrrrxaaaxxx"
    estimates = [0.95, 0.94, 0.93, 0.92, 0.85, 0.8, 0.79, 0.78, 0.4, 0.3, 0.2]
    rows = [{"task": f"t{i}"} for i in range(len(labels))]
    chosen = choose(rows, estimates, verdicts_of(labels), n_tasks=10, per_task=5, min_posts=0.3)
    assert chosen["threshold"] == 0.78 and chosen["accepted"] == 3 and chosen["posted"] == 8
    # At least min_posts lines a task: the bar cannot rise above what posts that many.
    assert choose(rows, estimates, verdicts_of(labels), n_tasks=10, per_task=5, min_posts=1.0)["posted"] >= 10


@pytest.mark.slow
def test_the_out_of_fold_figure_chooses_the_bar_without_the_task():
    rng = np.random.default_rng(7)
    n = 200
    x = rng.normal(size=n)
    labels = "".join("a" if v > 1.2 else "r" if v > 0.3 else "x" for v in x)
    rows = [{"task": f"t{i // 2}"} for i in range(n)]
    X = np.column_stack([x, rng.normal(size=n)])
    y = np.array([c != "x" for c in labels], dtype=int)
    figures = nested(X, y, rows, verdicts_of(labels), per_task=5, min_posts=0.1)
    everything = labels.count("a") / n
    assert figures["posted"] >= 10 and figures["accept"] > 2 * everything and figures["reject"] < 0.2


def test_an_article_sentence_restated_with_a_new_figure_measures_as_an_update_not_a_repeat():
    update = features(ARTICLE, suggestion("Fellside Rovers won the County Cup again in 2026 at Quarry Lane."))
    repeat = features(ARTICLE, suggestion("Fellside Rovers won the County Cup in 1954, the club said."))
    assert update["stated"] > 0.3 and update["update"] == pytest.approx(update["stated"])
    assert repeat["stated"] > 0.3 and repeat["update"] == 0.0
