"""`fit acceptability --from-state`: the wiki's outcomes join the dev verdicts, the refit is measured
out of fold on the dev verdicts, and the guard lets it replace the shipped score only when that
figure is no worse (a worse refit is refused, the shipped file untouched)."""
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from winellbot.bench.accept_fit import _guarded_write, choose, fit, out_of_fold, refit, replaces
from winellbot.gates.acceptability import FEATURES, MODEL
from winellbot.outcomes.learning import EXPIRED_WEIGHT, WikiExample, score_examples


@dataclass(frozen=True)
class V:
    verdict: str


def _dev(seed=0, n_tasks=40, per=6):
    """Dev candidates whose usefulness follows the first feature (with noise)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_tasks * per, len(FEATURES)))
    y = (X[:, 0] + 0.5 * rng.normal(size=len(X)) > 0.3).astype(int)
    rows = [{"task": f"t{i // per}"} for i in range(len(X))]
    verdicts = [V("accept" if label else "reject") for label in y]
    return X, y, rows, verdicts, n_tasks


def _wiki(n, seed, inverted):
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        x = rng.normal(size=len(FEATURES))
        good = x[0] > 0.3
        label = int(not good) if inverted else int(good)
        out.append(WikiExample(f"s{i}", f"Page {i % 30}", dict(zip(FEATURES, map(float, x))), label, 1.0,
                               "adopted" if label else "rejected"))
    return out


def _shipped_figure(X, y, rows, verdicts, n_tasks):
    oof = out_of_fold(X, y, [r["task"] for r in rows])
    return choose(rows, oof, verdicts, n_tasks, 2, 1.0)


def test_outcomes_that_agree_with_the_verdicts_give_a_refit_the_guard_lets_through():
    X, y, rows, verdicts, n = _dev()
    shipped = _shipped_figure(X, y, rows, verdicts, n)
    found = refit(X, y, [r["task"] for r in rows], rows, verdicts, _wiki(200, 1, inverted=False), FEATURES,
                  per_task=2, n_tasks=n, min_posts=1.0)
    assert found.wiki_examples == 200 and found.examples == len(y) + 200
    ok, why = replaces({"out_of_fold": shipped}, found.chosen)
    assert ok, why


def test_a_refit_made_worse_by_the_outcomes_is_refused_and_the_shipped_file_is_kept(capsys):
    X, y, rows, verdicts, n = _dev()
    shipped = _shipped_figure(X, y, rows, verdicts, n)
    found = refit(X, y, [r["task"] for r in rows], rows, verdicts, _wiki(3000, 2, inverted=True), FEATURES,
                  per_task=2, n_tasks=n, min_posts=1.0)
    assert found.chosen["reject"] > shipped["reject"]
    ok, why = replaces({"out_of_fold": shipped}, found.chosen)
    assert not ok and "not written" in why
    # Against the real shipped model: a refit rejected on everything it posts is refused, nothing written.
    path = Path(__file__).resolve().parents[1] / "winellbot" / MODEL
    before = path.read_bytes()
    worst = {**found.chosen, "reject": 1.0}
    assert _guarded_write({"features": list(FEATURES), **fit(X, y)}, worst, write=True, always_say=True) == 1
    assert path.read_bytes() == before
    assert "not written" in capsys.readouterr().out


def test_outcomes_become_weighted_examples_and_the_rest_is_counted_out():
    rows = [{"id": "a", "page": "P", "adopted_revid": 5, "features": '{"words": 1.0}'},
            {"id": "b", "page": "P", "adopted_revid": None, "verdict": "rejected", "reasons": "not_new",
             "features": '{"words": 0.2}'},
            {"id": "c", "page": "P", "adopted_revid": None, "verdict": "rejected", "reasons": "", "features": "{}"},
            {"id": "d", "page": "P", "adopted_revid": None, "expired_at": "2026-01-01", "features": '{"words": 0.1}'},
            {"id": "e", "page": "P", "adopted_revid": None, "features": '{"words": 0.5}'},
            {"id": "f", "page": "P", "adopted_revid": 7, "features": None}]
    skipped = Counter()
    got = {w.suggestion_id: (w.label, w.weight) for w in score_examples(rows, skipped)}
    assert got == {"a": (1, 1.0), "b": (0, 1.0), "d": (0, EXPIRED_WEIGHT)}
    assert skipped == Counter({"rejected without a reason": 1, "open: no label": 1,
                               "no measurements kept when posted": 1})
