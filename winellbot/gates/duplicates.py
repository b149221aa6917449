"""Duplicates: nothing the article already says, nothing proposed before.

A suggestion is compared on content words (folded, plural ``s`` dropped):

* against every sentence of the article: when the article already holds most
  of the added sentence's content words in one sentence, the fact is there;
* against the suggestions for the same page in state: the same id, or a
  near-duplicate (token Jaccard or containment either way over a threshold).
  A rejected one is never proposed again; one that is pending (proposed,
  posted) or accepted is not posted twice. Held and withdrawn ones do not count.
"""
from __future__ import annotations

import re
from functools import lru_cache

from winellbot.gates.base import Gate
from winellbot.gates.textnorm import content_tokens, singulars, strip_markup
from winellbot.models import Article, GateFinding, Suggestion

_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
# Most telling first: a rejection outranks a pending copy.
_BLOCKING_STATUSES = ("rejected", "accepted", "posted", "proposed")


def token_set(text: str) -> frozenset[str]:
    """Content words of ``text``, folded, with a plural ``s`` dropped."""
    return singulars(content_tokens(strip_markup(text)))


@lru_cache(maxsize=16)
def _article_sentences(plain_text: str) -> tuple[tuple[str, frozenset[str]], ...]:
    return tuple((s.strip(), token_set(s)) for s in _SENTENCE.split(plain_text) if s.strip())


def similarity(a: frozenset[str], b: frozenset[str]) -> tuple[float, float]:
    """(Jaccard, containment of the smaller set in the larger)."""
    if not a or not b:
        return 0.0, 0.0
    common = len(a & b)
    return common / len(a | b), common / min(len(a), len(b))


class DuplicatesGate(Gate):
    """Blocks facts the article already states and suggestions made before."""

    name = "duplicates"

    def __init__(self, *, state=None, article_containment: float = 0.8, jaccard: float = 0.6,
                 containment: float = 0.8, min_tokens: int = 3) -> None:
        self.state = state
        self.article_containment = article_containment
        self.jaccard = jaccard
        self.containment = containment
        self.min_tokens = min_tokens

    def check(self, article: Article, suggestion: Suggestion) -> list[GateFinding]:
        claim = token_set(suggestion.edit.added_text)
        if len(claim) < self.min_tokens:
            return []
        findings = []
        known = self._in_article(article, claim)
        if known:
            findings.append(self.finding("block", f"the article already says this: \"{known[:200]}\""))
        earlier = self._earlier(article.title, suggestion, claim)
        if earlier:
            findings.append(earlier)
        return findings

    def _in_article(self, article: Article, claim: frozenset[str]) -> str | None:
        for sentence, tokens in _article_sentences(article.plain_text):
            if tokens and len(claim & tokens) / len(claim) >= self.article_containment:
                return sentence
        return None

    def _earlier(self, page: str, suggestion: Suggestion, claim: frozenset[str]) -> GateFinding | None:
        if self.state is None:
            return None
        matches: dict[str, dict] = {}
        for row in self.state.suggestions(page=page):
            status = row.get("status") or ""
            if status not in _BLOCKING_STATUSES or status in matches:
                continue
            if row["id"] == suggestion.id or self._near(claim, token_set(row.get("added_text") or "")):
                matches[status] = row
        for status in _BLOCKING_STATUSES:
            if status in matches:
                return self._finding_for(status, matches[status], same=matches[status]["id"] == suggestion.id)
        return None

    def _near(self, claim: frozenset[str], other: frozenset[str]) -> bool:
        if len(other) < self.min_tokens:
            return False
        jaccard, contained = similarity(claim, other)
        return jaccard >= self.jaccard or contained >= self.containment

    def _finding_for(self, status: str, row: dict, *, same: bool) -> GateFinding:
        date = (row.get("updated") or row.get("created") or "")[:10] or "an earlier run"
        what = "this suggestion" if same else f"a near-duplicate (suggestion {row['id']})"
        if status == "rejected":
            why = f": {row['status_reason']}" if row.get("status_reason") else ""
            return self.finding("block", f"rejected before on {date}: {what} was turned down by a reviewer{why}")
        if status == "accepted":
            return self.finding("block", f"accepted before on {date}: {what} is already settled")
        return self.finding("block", f"already {status} on {date}: {what} is waiting for review")
