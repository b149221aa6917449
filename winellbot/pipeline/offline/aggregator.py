"""The offline aggregation stage: ignore, add or replace an update against the section and the kept ones.
"""
from __future__ import annotations

from winellbot.models import (
    Article,
    Decision,
    Update,
)
from winellbot.interface import (
    Aggregator,
)
from winellbot.pipeline.offline.profile import profile, token_set


class OfflineAggregator(Aggregator):
    """Ignore what is already said, replace a kept update by a longer one on the same fact, else add."""

    def __init__(self, *, stated: float = 0.8, same_fact: float = 0.6, restatements=None) -> None:
        self.stated = stated
        self.same_fact = same_fact
        # A winellbot.pipeline.offline.meaning.Restatements: an article sentence that says the
        # same in other words makes an update old news too.
        self.restatements = restatements

    def aggregate(self, article: Article, update: Update, kept: tuple[Update, ...]) -> Decision:
        toks = token_set(update.text)
        if not toks:
            return Decision("ignore", update, "no content words")
        prof = profile(article)
        section = [s for path, s in prof.sentences if path == tuple(update.section_path)]
        said = max((len(toks & s) / len(toks) for s in section), default=0.0)
        if said >= self.stated:
            return Decision("ignore", update, f"the section already says {said:.0%} of it in one sentence")
        restated = self.restatements.find(article, update.text) if self.restatements is not None else None
        if restated is not None:
            return Decision("ignore", update, restated)
        for other in kept:
            theirs = token_set(other.text)
            overlap = len(toks & theirs) / max(1, min(len(toks), len(theirs)))
            if overlap < self.same_fact:
                continue
            # The better-scored of two passages on the same fact wins, whichever was read first.
            if update.score > other.score or (update.score == other.score and len(toks) > len(theirs)):
                return Decision("replace", update, f"says more about the same fact ({overlap:.0%} shared) "
                                                   f"than a kept update", replaces=other.key)
            return Decision("ignore", update, f"a kept update already says {overlap:.0%} of it")
        return Decision("add", update, "new relative to the section and to the kept updates")
