"""Which runs of the source the copying editor may choose from: a fitted ranking of candidate runs.

The editor trained on copied answers (:mod:`winellbot.llm.copying`) takes the source's own words,
but left to choose where on the page to copy from, a 135M model seldom starts near the best run.
This module short-lists the runs instead: every run of 10, 15, 20, 25 or 30 words of the shown
source is described by a few word counts (new content words, words the paragraph has, words of
the title and section, numbers, where it starts and ends in the page, whether it starts and ends
at a sentence's edges) and scored by gradient-boosted trees fitted to "key facts minus 1.5 x
commentary" of the dev examples (the bench's lexical figures; 1.5 rather than 1 keeps the
commentary under the 15% target). The model then chooses among the three best
(``copy_choices``). The trees are kept as JSON in ``winellbot/data/editor/spans.json`` (no
pickle: any Python reads them) and refitted with ``winellbot editor fit-spans``. The code that
ranks never reads ``target``; fitting does. Figures: docs/results.md, "The run ranker" and
"Copied runs: the upper bound".
"""
from __future__ import annotations

import json
import re
from array import array
from dataclasses import dataclass
from pathlib import Path

from winellbot.editor.evaluate import _tokens, fact_sets
from winellbot.editor.examples import EditorExample, EditTask
from winellbot.errors import ConfigError
from winellbot.llm.local_model import SPANS_FILE, copies
from winellbot.text import content_tokens

LENGTHS = (10, 15, 20, 25, 30)
COMMENTARY_WEIGHT = 1.5
CHOICES = 3
_END = re.compile(r"[.!?][\"')\u201d\u2019]*$")


@dataclass(frozen=True)
class Run:
    start: int
    length: int
    tokens: frozenset[str]
    features: tuple[float, ...]


def runs(task: EditTask, source_words: list[str]) -> list[Run]:
    """Every candidate run of ``source_words`` (the shown source) with its features (as float32:
    scikit-learn's trees compare float32 features with their thresholds)."""
    if not source_words:
        return []
    toks = [frozenset(content_tokens(w)) for w in source_words]
    known = frozenset(content_tokens(task.original))
    title = frozenset(content_tokens(task.title))
    section = frozenset(content_tokens(" ".join(task.section_path)))
    n = len(source_words)
    out = []
    for length in LENGTHS:
        for i in range(0, max(1, n - length + 1)):
            got = frozenset().union(*toks[i:i + length])
            new = got - known
            middle = (i + length / 2) / max(1, n)
            out.append(Run(i, length, got, tuple(array("f", (
                length / 30, len(new) / 10, len(got & known) / 10, len(new) / (len(got) + 1),
                len(got & title) / 3, len(got & section) / 3, sum(t[0].isdigit() for t in got) / 3,
                middle, abs(middle - 0.5),
                float(i == 0 or bool(_END.search(source_words[i - 1]))),
                float(bool(_END.search(source_words[min(n, i + length) - 1]))),
                float(source_words[i][:1].isupper()),
            )).tolist())))
    return out


class SpanRanker:
    """The fitted trees: the best few runs of a task's shown source, far enough apart to differ."""

    def __init__(self, fitted: dict) -> None:
        self.base = float(fitted["base"])
        self.rate = float(fitted["learning_rate"])
        self.trees = fitted["trees"]

    @classmethod
    def load(cls, path: str | Path) -> SpanRanker:
        return cls(json.loads(Path(path).read_text(encoding="utf-8")))

    def score(self, features: tuple[float, ...]) -> float:
        total = self.base
        for tree in self.trees:
            node = 0
            while tree["left"][node] >= 0:
                node = tree["left"][node] if features[tree["feature"][node]] <= tree["threshold"][node] \
                    else tree["right"][node]
            total += self.rate * tree["value"][node]
        return total

    def best(self, task: EditTask, source_words: list[str], k: int = CHOICES, apart: int = 5) -> list[str]:
        """The ``k`` best runs' texts, no two starting within ``apart`` words of each other."""
        scored = sorted(runs(task, source_words), key=lambda r: -self.score(r.features))
        chosen: list[Run] = []
        for run in scored:
            if all(abs(run.start - c.start) >= apart for c in chosen):
                chosen.append(run)
                if len(chosen) == k:
                    break
        return [" ".join(source_words[r.start: r.start + r.length]) for r in chosen]


def labelled_runs(example: EditorExample, source_words: list[str],
                  commentary_weight: float = COMMENTARY_WEIGHT) -> list[tuple[tuple[float, ...], float]]:
    """FITTING ONLY (reads ``target``): each run's features and its key facts minus weighted commentary."""
    key, commentary = fact_sets(_tokens(example.original), _tokens(example.target), _tokens(" ".join(source_words)))
    if not key:
        return []
    return [(r.features, len(key & r.tokens) / len(key)
             - commentary_weight * (len(commentary & r.tokens) / len(commentary) if commentary else 0.0))
            for r in runs(example, source_words)]


def fit(examples: list[EditorExample], source_words, *, trees: int = 150, depth: int = 3,
        learning_rate: float = 0.05, seed: int = 0) -> dict:
    """Gradient-boosted regression trees (scikit-learn, least squares) as JSON-ready lists."""
    import numpy as np
    from sklearn.ensemble import GradientBoostingRegressor

    rows = [row for e in examples for row in labelled_runs(e, source_words(e))]
    if not rows:
        raise ValueError("no example has key facts in its source")
    x = np.array([r[0] for r in rows])
    y = np.array([r[1] for r in rows])
    model = GradientBoostingRegressor(n_estimators=trees, max_depth=depth, learning_rate=learning_rate,
                                      random_state=seed).fit(x, y)
    exported = []
    for (est,) in model.estimators_:
        t = est.tree_
        exported.append({"left": t.children_left.tolist(), "right": t.children_right.tolist(),
                         "feature": t.feature.tolist(), "threshold": t.threshold.tolist(),
                         "value": [float(v) for v in t.value[:, 0, 0]]})
    return {"format": "winell-spans/1", "base": float(model.init_.constant_[0][0]), "learning_rate": learning_rate,
            "commentary_weight": COMMENTARY_WEIGHT, "examples": len(examples), "runs": len(rows), "trees": exported}


def copy_decoding(spec: str | Path) -> dict:
    """How the editor at ``spec`` decodes, as the predictor's and the bot's editor's keyword
    arguments: ``copied`` (held to the source's words, :func:`copies`) and ``ranker``, the run
    ranker kept beside a copying editor (``spans.json``, :mod:`winellbot.editor.spans`), or None:
    the editor then chooses where to copy from by itself."""
    copied = copies(spec)
    path = Path(spec) / SPANS_FILE
    if not copied or not path.is_file():
        return {"copied": copied, "ranker": None}
    try:
        return {"copied": True, "ranker": SpanRanker.load(path)}
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ConfigError(f"{path}: not a fitted run ranker: {exc}") from exc
