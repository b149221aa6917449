"""The editor's figures (the bench README's lexical analogues of WINELL's Table 1).

Content tokens are the back-test's (:func:`winellbot.text.content_tokens`) of text cleaned of
references, templates and link markup (:func:`winellbot.text.clean_suggestion_text`); token
change is the back-test's (:func:`winellbot.bench.score.token_change`). Per example, with
O, T, S, E the token sets of original, target, source and edit:

* key facts  = |K & E| / |K|, K = (T & S) - O   (examples with an empty K are left out of the mean)
* commentary = |C & E| / |C|, C = S - T - O
* preserved  = |O & E| / |O|
* unsupported = |(E - O) - S| / |E - O|         (examples that add no token are left out)

All are macro means over examples. With a model configured, the paper's annotation is added:
the model lists the key words and commentary words of each example (Appendix B.2), then judges
for each word whether the edit mentions it.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from winellbot.bench.score import token_change
from winellbot.editor.examples import EditorExample, load_examples, load_predictions
from winellbot.errors import TaskError
from winellbot.text import clean_suggestion_text, content_tokens

FIGURES = ("token_change", "key_facts", "commentary", "preserved", "unsupported")
_NO_CAP = 10**9


def _clean(text: str) -> str:
    return clean_suggestion_text(text, max_words=_NO_CAP)


def _tokens(text: str) -> set[str]:
    return set(content_tokens(_clean(text)))


@dataclass(frozen=True)
class Scores:
    token_change: int
    key_facts: float | None
    commentary: float | None
    preserved: float | None
    unsupported: float | None


def fact_sets(original: set[str], target: set[str], source: set[str]) -> tuple[set[str], set[str]]:
    """The key facts (the target's source words the paragraph lacked) and the commentary (the
    source's other words the paragraph lacked) of the bench README's figures, as token sets."""
    return (target & source) - original, source - target - original


def score_edit(example: EditorExample, edited: str) -> Scores:
    o, t, s, e = (_tokens(x) for x in (example.original, example.target, example.source.text, edited))
    (k, c), new = fact_sets(o, t, s), e - o
    return Scores(token_change(_clean(example.original), _clean(edited)),
                  len(k & e) / len(k) if k else None,
                  len(c & e) / len(c) if c else None,
                  len(o & e) / len(o) if o else None,
                  len(new - s) / len(new) if new else None)


def _mean(values) -> float | None:
    values = [v for v in values if v is not None]
    return sum(values) / len(values) if values else None


def figures(examples: list[EditorExample], predictions: dict[str, str], annotator=None) -> dict:
    """The five figures over ``examples`` (a missing prediction counts as no change)."""
    scores = [score_edit(ex, predictions.get(ex.id, ex.original)) for ex in examples]
    row = {name: _mean(getattr(s, name) for s in scores) for name in FIGURES}
    row["examples"] = len(examples)
    row["missing"] = sum(1 for ex in examples if ex.id not in predictions)
    if annotator is not None:
        judged = [annotator(ex, predictions.get(ex.id, ex.original)) for ex in examples]
        row["model_key_facts"] = _mean(j[0] for j in judged)
        row["model_commentary"] = _mean(j[1] for j in judged)
    return row


def reference_rows(examples: list[EditorExample], annotator=None) -> dict[str, dict]:
    """The bench README's reference rows: no change, the human edit, appending the whole source."""
    return {
        "no change": figures(examples, {e.id: e.original for e in examples}, annotator),
        "human edit (target)": figures(examples, {e.id: e.target for e in examples}, annotator),
        "append the whole source": figures(examples, {e.id: f"{e.original} {e.source.text}" for e in examples},
                                           annotator),
    }


def evaluate_files(examples_path: str, prediction_paths: list[str], annotator=None) -> dict[str, dict]:
    examples = load_examples(examples_path)
    rows = reference_rows(examples, annotator)
    ids = {e.id for e in examples}
    for path in prediction_paths:
        predictions = load_predictions(path)
        stray = set(predictions) - ids
        if stray:
            raise TaskError(f"{path}: {len(stray)} prediction(s) for ids not in {examples_path}")
        rows[path] = figures(examples, predictions, annotator)
    return rows


def table(rows: dict[str, dict]) -> str:
    """A Markdown table of figures, one row per editor."""
    model = any("model_key_facts" in r for r in rows.values())
    head = "| editor | token change | key facts | commentary | preserved | unsupported |" + (
        " key facts (model) | commentary (model) |" if model else "")
    lines = [head, "|---" * (head.count("|") - 1) + "|"]
    for name, r in rows.items():
        cells = [f"{r['token_change']:.1f}" if r["token_change"] is not None else "-"]
        cells += [_pct(r[k]) for k in FIGURES[1:]]
        if model:
            cells += [_pct(r.get("model_key_facts")), _pct(r.get("model_commentary"))]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    n = next(iter(rows.values()))["examples"] if rows else 0
    lines.append(f"\n{n} example(s); macro means; key facts over examples with key tokens, unsupported "
                 "over edits that add tokens.")
    return "\n".join(lines)


def _pct(value) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


