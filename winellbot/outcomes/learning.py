"""The wiki's outcomes as training data.

For the acceptability score (``winellbot fit acceptability --from-state``): each posted suggestion
whose measurements were kept when it was posted (:func:`winellbot.gates.acceptability.features`)
and whose outcome is known is an example: adopted or accepted is positive; rejected with a reason
is negative; expired is a weak negative (weight :data:`EXPIRED_WEIGHT`). Rejections without a reason,
withdrawn and open suggestions teach nothing and are left out.

:func:`refit` fits on the dev verdicts and these examples together and measures the refit out of
fold on the dev verdicts alone, the figure the shipped model was chosen on, so that the two compare;
:func:`winellbot.bench.accept_fit.replaces` then decides whether it may replace the shipped model.

For the editor (``winellbot editor data --from-state``): each fact adopted with the bot's own source
is a ``winell-editor/1`` example: the paragraph without the adopted sentence, the source passage the
bot posted, and the paragraph as the article came to have it.
"""
from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass

from winellbot.outcomes.report import outcome_of

EXPIRED_WEIGHT = 0.3
LABELS = {"adopted": (1, 1.0), "accepted": (1, 1.0), "rejected": (0, 1.0), "expired": (0, EXPIRED_WEIGHT)}


@dataclass(frozen=True)
class WikiExample:
    """One outcome as a training example of the acceptability score."""

    suggestion_id: str
    page: str
    features: dict
    label: int
    weight: float
    outcome: str


def score_examples(rows: list[dict], skipped: Counter | None = None) -> list[WikiExample]:
    """Examples from :meth:`winellbot.state.outcomes.OutcomeStore.history` rows."""
    skipped = skipped if skipped is not None else Counter()
    out = []
    for row in rows:
        outcome = outcome_of(row)
        if outcome not in LABELS:
            skipped[f"{outcome}: no label"] += 1
        elif outcome == "rejected" and not row.get("reasons"):
            skipped["rejected without a reason"] += 1
        elif not row.get("features"):
            skipped["no measurements kept when posted"] += 1
        else:
            label, weight = LABELS[outcome]
            out.append(WikiExample(row["id"], row["page"], json.loads(row["features"]), label, weight, outcome))
    return out


@dataclass(frozen=True)
class Refit:
    """A refit on dev verdicts plus the wiki's outcomes, with its out-of-fold figures on the dev rows."""

    params: dict
    chosen: dict
    examples: int
    wiki_examples: int


def refit(X_dev, y_dev, dev_tasks: list[str], dev_rows: list[dict], dev_verdicts: list, wiki: list[WikiExample],
          features: tuple[str, ...], *, per_task: int, n_tasks: int, min_posts: float) -> Refit:
    """Fit on both sources (wiki examples folded by article, weighted), then choose the bar and
    measure out of fold on the dev rows only."""
    import numpy as np

    from winellbot.bench.accept_fit import choose, fit, out_of_fold

    X_wiki = np.array([[w.features.get(f, 0.0) for f in features] for w in wiki], dtype=float).reshape(-1, len(features))
    X = np.vstack([X_dev, X_wiki])
    y = np.concatenate([y_dev, np.array([w.label for w in wiki], dtype=int)])
    weights = np.concatenate([np.ones(len(y_dev)), np.array([w.weight for w in wiki], dtype=float)])
    tasks = list(dev_tasks) + [f"wiki:{w.page}" for w in wiki]
    oof = out_of_fold(X, y, tasks, weights=weights)
    chosen = choose(dev_rows, oof[: len(y_dev)], dev_verdicts, n_tasks, per_task, min_posts)
    return Refit(fit(X, y, weights=weights), chosen, len(y), len(wiki))


def editor_examples(rows: list[dict], state, skipped: Counter | None = None) -> list:
    """``winell-editor/1`` examples from facts adopted with the bot's own source."""
    from winellbot.editor.examples import EditorExample, Source

    skipped = skipped if skipped is not None else Counter()
    out = []
    for row in rows:
        if outcome_of(row) != "adopted":
            continue
        if row.get("adopted_how") != "cited":
            skipped["adopted with another source (its text is not the bot's passage)"] += 1
            continue
        sentence, paragraph = row.get("adopted_sentence") or "", row.get("adopted_paragraph") or ""
        if not sentence or sentence not in paragraph:
            skipped["no adopting sentence found in the article"] += 1
            continue
        original = " ".join(paragraph.replace(sentence, " ").split())
        citation = json.loads((state.suggestion(row["id"]) or {}).get("citation") or "{}")
        section = tuple(p for p in (row.get("adopted_section") or "").split(" > ") if p)
        out.append(EditorExample(
            f"outcome-{row['id']}", row["page"], section, original,
            Source(row.get("url") or "", citation.get("title") or "", row.get("update_text") or ""), paragraph,
            {"article": row["page"], "suggestion": row["id"], "revid": row.get("adopted_revid"), "kind": "adopted"}))
    return out
