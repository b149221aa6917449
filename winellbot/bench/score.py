"""The backtest's figures: C_soft, C_hard, C_hard_top, S_acc and friends.

Defined in the bench README. A *judge* decides whether one suggestion covers
one held-out fact; :class:`LexicalJudge` (offline) says yes when at least 60%
of the fact's content tokens appear in the cleaned suggestion. The paper's
model judge (:mod:`winellbot.bench.judge`) plugs in through the same method.
"""
from __future__ import annotations

import difflib
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

from winellbot.bench.tasks import Task
from winellbot.text import clean_suggestion_text, content_tokens, longest_unpunctuated_run, words

COUNTED = 5
THRESHOLD = 0.6
# A suggestion reads as prose when no more than this many words run on without punctuation
# (the issue: never a run of words without punctuation; see longest_unpunctuated_run).
PROSE_RUN = 40


class Judge(Protocol):
    def recall(self, fact: str, suggestion: str) -> float:
        """How much of ``fact`` the (cleaned) suggestion states, 0..1; covered at >= 0.6."""


class LexicalJudge:
    """Share of the fact's content tokens found in the suggestion."""

    def recall(self, fact: str, suggestion: str) -> float:
        wanted = set(content_tokens(fact))
        if not wanted:
            return 0.0
        return len(wanted & set(content_tokens(suggestion))) / len(wanted)


def _norm(name: str) -> str:
    return " ".join(name.replace("_", " ").split()).casefold()


def suggestion_path(s: dict) -> tuple[str, ...]:
    """A suggestion's section path from ``section_path`` or ``section``."""
    if s.get("section_path"):
        return tuple(s["section_path"])
    if s.get("section"):
        return (s["section"],)
    return ()


def placed_in(path: Sequence[str], fact_path: Sequence[str]) -> bool:
    """The C_hard placement rule: the deepest names match (which covers a bare top-level name)."""
    return bool(path) and bool(fact_path) and _norm(path[-1]) == _norm(fact_path[-1])


def top_level_of(path: Sequence[str], headings: dict[str, str]) -> str:
    """The top-level section of a path; a bare sub-section name is resolved through the headings."""
    if not path:
        return ""
    if len(path) > 1:
        return _norm(path[0])
    return headings.get(_norm(path[0]), _norm(path[0]))


def heading_tops(wikitext: str) -> dict[str, str]:
    """Map each heading name of the article to its top-level heading name."""
    tops: dict[str, str] = {}
    top = ""
    for line in wikitext.splitlines():
        s = line.strip()
        if s.startswith("==") and s.endswith("=="):
            level = len(s) - len(s.lstrip("="))
            name = _norm(s.strip("=").strip())
            if level == 2:
                top = name
            tops.setdefault(name, top or name)
    return tops


def token_change(old: str, new: str) -> int:
    """Words changed between two paragraph versions (inserted + deleted, a replacement counts its larger side)."""
    a, b = words(old), words(new)
    changed = 0
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if op != "equal":
            changed += max(i2 - i1, j2 - j1)
    return changed


@dataclass
class _FactResult:
    origin: str
    soft: bool
    hard: bool
    hard_top: bool
    best_recall: float


def score(tasks: Iterable[Task], suggestions: Iterable[dict], judge: Judge | None = None) -> dict:
    """All figures of the bench README, overall and per origin of the supporting document."""
    judge = judge or LexicalJudge()
    by_task: dict[str, list[dict]] = defaultdict(list)
    for s in suggestions:
        by_task[s["task"]].append(s)
    facts: list[_FactResult] = []
    counted = covering = placed_ok = cites_support = readable = 0
    total_words = 0
    changes: list[int] = []
    n_tasks = 0
    for task in tasks:
        n_tasks += 1
        tops = heading_tops(task.wikitext)
        subs = by_task.get(task.id, [])[:COUNTED]
        cleaned = [clean_suggestion_text(s.get("text", "")) for s in subs]
        paths = [suggestion_path(s) for s in subs]
        recalls = [[judge.recall(h.text, c) for c in cleaned] for h in task.held_out]
        for h, row in zip(task.held_out, recalls):
            covered = [r >= THRESHOLD for r in row]
            facts.append(_FactResult(
                origin=task.document_origins.get(h.supporting_document, "unknown"),
                soft=any(covered),
                hard=any(c and placed_in(p, h.section_path) for c, p in zip(covered, paths)),
                hard_top=any(c and top_level_of(p, tops) == top_level_of(h.section_path[:1], tops)
                             for c, p in zip(covered, paths)),
                best_recall=max(row, default=0.0),
            ))
        for j, s in enumerate(subs):
            counted += 1
            total_words += len(words(cleaned[j]))
            readable += longest_unpunctuated_run(cleaned[j]) <= PROSE_RUN
            if s.get("old_paragraph") is not None and s.get("new_paragraph") is not None:
                changes.append(token_change(s["old_paragraph"], s["new_paragraph"]))
            hits = [h for i, h in enumerate(task.held_out) if recalls[i][j] >= THRESHOLD]
            if not hits:
                continue
            covering += 1
            placed_ok += any(placed_in(paths[j], h.section_path) for h in hits)
            cites_support += any(h.supporting_document in (s.get("documents") or []) for h in hits)
    return _figures(facts, n_tasks, counted, covering, placed_ok, cites_support, readable, total_words, changes)


def _share(part: float, whole: float) -> float:
    return part / whole if whole else 0.0


def _fact_figures(facts: list[_FactResult]) -> dict:
    n = len(facts)
    return {
        "facts": n,
        "c_soft": _share(sum(f.soft for f in facts), n),
        "c_hard": _share(sum(f.hard for f in facts), n),
        "c_hard_top": _share(sum(f.hard_top for f in facts), n),
        "mean_best_recall": _share(sum(f.best_recall for f in facts), n),
    }


def _figures(facts, n_tasks, counted, covering, placed_ok, cites_support, readable, total_words, changes) -> dict:
    figures = _fact_figures(facts)
    figures.update({
        "tasks": n_tasks,
        "s_acc": _share(placed_ok, covering),
        "cover_precision": _share(covering, counted),
        "readable": _share(readable, counted),
        "suggestions": counted,
        "suggestions_per_task": _share(counted, n_tasks),
        "words_per_suggestion": _share(total_words, counted),
        "cites_supporting_document": _share(cites_support, covering),
        "token_change": _share(sum(changes), len(changes)) if changes else None,
    })
    origins = sorted({f.origin for f in facts})
    figures["by_origin"] = {o: _fact_figures([f for f in facts if f.origin == o]) for o in origins}
    return figures
