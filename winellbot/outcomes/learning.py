"""The wiki's outcomes as training data.

For the acceptability score (``winellbot fit acceptability --from-state``): each posted suggestion
whose measurements were kept when it was posted (:func:`winellbot.gates.acceptability.features`)
and whose outcome is known is an example: adopted or accepted is positive; rejected with a reason
is negative; expired is a weak negative (weight :data:`EXPIRED_WEIGHT`). Rejections without a reason,
withdrawn and open suggestions teach nothing and are left out. Each decision of the review page
(:meth:`winellbot.state.reviews.ReviewStore.labelled`: its latest one per suggestion) is an example
too (:func:`decision_examples`): approved, reworded then approved (a revision: the rubric's
"revise") or added by the reviewer is positive, rejected negative (with or without reasons: the
reviewer chose to reject), weight 1; skips and decisions the reviewer undid teach nothing.

:func:`winellbot.bench.accept_fit.refit` fits on the dev verdicts and these examples together.

For the editor (``winellbot editor data --from-state``): each fact adopted with the bot's own source
is a ``winell-editor/1`` example: the paragraph without the adopted sentence, the source passage the
bot posted, and the paragraph as the article came to have it.
"""
from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass

from winellbot.editor.examples import EditorExample, Source
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


# A revision (reworded, then approved) is useful, as the rubric's "revise" is in the dev verdicts.
DECISION_LABELS = {"approve": 1, "revise": 1, "adopted": 1, "reject": 0}


def decision_examples(rows: list[dict], skipped: Counter | None = None) -> list[WikiExample]:
    """Examples from the review page's decisions (rows of ``ReviewStore.labelled``); a decision the
    reviewer undid (``undone_at`` set) is left out whatever its verdict."""
    skipped = skipped if skipped is not None else Counter()
    out = []
    for row in rows:
        if row.get("undone_at"):
            skipped["decision undone by its reviewer"] += 1
        elif row["verdict"] not in DECISION_LABELS:
            skipped[f"decision {row['verdict']}: no label"] += 1
        elif not row.get("features"):
            skipped["no measurements kept when queued"] += 1
        else:
            out.append(WikiExample(row["suggestion_id"], row["page"], json.loads(row["features"]),
                                   DECISION_LABELS[row["verdict"]], 1.0, f"review:{row['verdict']}"))
    return out


def editor_examples(rows: list[dict], state, skipped: Counter | None = None) -> list:
    """``winell-editor/1`` examples from facts adopted with the bot's own source."""
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
