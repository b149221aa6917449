"""Learning from review decisions: benchmarks/review_learning.py replays verdicts as decisions and
never trains on a task it ranks; ``refit_from`` fits a model file from decisions that the loader
reads back and that the guard compares with the shipped one."""
import json
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from winellbot.bench.accept_fit import refit_from, replaces, top_third
from winellbot.bench.verdicts import text_hash
from winellbot.errors import WinellbotError
from winellbot.gates.acceptability import FEATURES, Acceptability

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


@pytest.fixture
def review_learning(monkeypatch):
    """The benchmark script as a module."""
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    import review_learning as module

    return module


def decided(n_tasks=40, per=6, seed=0, inverted=False, noise=0.5):
    """Decisions on made-up suggestions whose usefulness follows ``new_figures`` (with ``noise``)."""
    rng = np.random.default_rng(seed)
    values, verdicts, groups = [], [], []
    for i in range(n_tasks * per):
        x = dict(zip(FEATURES, map(float, rng.normal(size=len(FEATURES)))))
        good = x["new_figures"] + noise * rng.normal() > 0.3
        good = good != inverted
        values.append(x)
        verdicts.append(("accept" if x["new_figures"] > 1.0 else "revise") if good else "reject")
        groups.append(f"Page {i // per}")
    return values, verdicts, groups


def test_the_top_third_counts_the_best_estimated_third():
    counts = top_third(["reject", "accept", "revise", "reject", "reject", "reject", "revise"],
                       [0.1, 0.9, 0.8, 0.7, 0.2, 0.3, 0.05])
    assert counts == {"queue": 7, "top": 3, "useful": 2, "rejected": 1}


def test_a_refit_from_decisions_round_trips_through_the_model_file(tmp_path):
    values, verdicts, groups = decided()
    model, chosen = refit_from(values, verdicts, groups, per_group=2, about={"source": "review decisions"})
    path = tmp_path / "acceptability.json"
    path.write_text(json.dumps(model), encoding="utf-8")
    loaded = Acceptability.load(path)
    assert loaded.names == FEATURES and loaded.threshold == chosen["threshold"]
    assert loaded.about["source"] == "review decisions" and loaded.about["examples"] == len(values)
    assert loaded.about["out_of_fold"] == chosen
    high, low = dict(values[0], new_figures=2.0), dict(values[0], new_figures=-2.0)
    assert loaded.estimate(high) > 0.5 > loaded.estimate(low)
    # the queue's out-of-fold top third is far above the base rate of useful decisions
    base = sum(v != "reject" for v in verdicts) / len(verdicts)
    assert loaded.about["queue_out_of_fold"]["useful"] > base + 0.2


def test_a_measurement_a_stored_dict_lacks_counts_zero_and_bad_decisions_are_refused():
    values, verdicts, groups = decided()
    older = [{k: v for k, v in x.items() if k != "update"} for x in values]
    model, _ = refit_from(older, verdicts, groups, per_group=2)
    assert model["features"] == list(FEATURES)
    with pytest.raises(WinellbotError, match="both"):
        refit_from(values[:5], ["reject"] * 5, groups[:5])
    with pytest.raises(WinellbotError, match="verdict"):
        refit_from(values[:2], ["reject", "approved"], groups[:2])
    with pytest.raises(WinellbotError, match="groups"):
        refit_from(values, verdicts, groups[:-1])


def test_the_guard_lets_an_agreeing_refit_through_and_refuses_a_worse_one():
    shipped, _ = refit_from(*decided(noise=2.0), per_group=2)
    better, chosen = refit_from(*decided(seed=1, noise=0.2), per_group=2)
    ok, why = replaces(shipped["about"], chosen)
    assert ok, why
    _, worse_chosen = refit_from(*decided(seed=2, inverted=True), per_group=2)
    ok, why = replaces(shipped["about"], worse_chosen)
    assert not ok and "not written" in why


def rows_of(module, n_tasks=30, per=8, seed=3):
    rng = random.Random(seed)
    rows = []
    for t in range(n_tasks):
        for i in range(per):
            x = {f: rng.gauss(0, 1) for f in FEATURES}
            useful = x["new_figures"] + 0.5 * rng.gauss(0, 1) > 0.3
            rows.append(module.Row(f"t{t}", rng.choice(module.KINDS), x, "revise" if useful else "reject"))
    return rows


def test_no_refit_ever_sees_a_task_of_the_queue_it_orders(review_learning):
    module = review_learning
    rows = rows_of(module)
    calls = []

    def fitter(decisions, queue):
        calls.append(({r.task for r in decisions}, {r.task for r in queue}, len(decisions)))
        return [r.values["new_figures"] for r in queue]

    steps = module.replay(rows, fitter, folds=5, draws=2, step=50, seed=1)
    assert calls and all(not (seen & ranked) for seen, ranked, _ in calls)
    assert {n for *_, n in calls} >= {50, 100, 150}
    assert [s["decisions"] for s in steps][:3] == [50, 100, 150] and steps[-1]["all"]
    # every fold's queue is ranked at each step: the whole queue, its third on top
    queue = sum(r.kind == "queue" for r in rows)
    assert all(s["queue"] == queue and s["top_third"] == -(-queue // 3) for s in steps)


def test_the_benchmark_prints_one_row_per_step_with_the_issues_keys(review_learning, tmp_path):
    module = review_learning
    rows = rows_of(module)
    cache, store = tmp_path / "lines.jsonl", tmp_path / "verdicts.jsonl"
    lines = [{"task": r.task, "hash": text_hash(f"line {i}"), "kind": r.kind, "text": f"line {i}",
              "section_path": [], "features": r.values} for i, r in enumerate(rows)]
    lines.append({**lines[0], "hash": text_hash("never judged")})
    cache.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    store.write_text("".join(json.dumps({"task": x["task"], "hash": x["hash"], "verdict": r.verdict,
                                         "new_fact": r.useful, "kind": "human" if r.kind == "human" else "bot"}) + "\n"
                             for x, r in zip(lines, rows)), encoding="utf-8")
    done = subprocess.run([sys.executable, str(BENCHMARKS / "review_learning.py"), str(tmp_path), "--cache", str(cache),
                           "--verdicts", str(store), "--folds", "5", "--draws", "1", "--step", "40"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["lines"]["found"] == {k: sum(r.kind == k for r in rows) for k in module.KINDS}
    steps = out["steps"]
    assert out["model"] == "logistic" and len(steps) >= 4
    assert [s["decisions"] for s in steps[:-1]] == list(range(40, 40 * len(steps[:-1]) + 1, 40))
    assert all({"decisions", "base_useful", "top_third_useful", "top_third_reject"} <= set(s) for s in steps)
    last = out["steps"][-1]
    assert last["top_third_useful"] > last["base_useful"] + 0.2
    assert last["top_third_useful"] + last["top_third_reject"] == pytest.approx(1.0)
