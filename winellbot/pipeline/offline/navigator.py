"""The offline navigation stage: the next query and the best unread result for it.
"""
from __future__ import annotations

from collections import Counter

from winellbot.models import (
    Article,
    NavigationStep,
    SectionCriteria,
)
from winellbot.interface import (
    Memory,
    Navigator,
    SearchBackend,
)
from winellbot.pipeline.offline.profile import token_set


class OfflineNavigator(Navigator):
    """Title plus one section's untried terms per query; the best unread result is read next."""

    def __init__(self, *, terms_per_query: int = 6, limit: int = 50) -> None:
        self.terms_per_query = terms_per_query
        self.limit = limit

    def navigate(self, article: Article, criteria: SectionCriteria, memory: Memory,
                 search: SearchBackend) -> NavigationStep:
        avoid = _ignored_terms(memory)
        tried = {t for q in memory.queries for t in q.split()}
        paths = list(criteria.criteria) or [()]
        queries = []
        for k in range(len(paths)):
            path = paths[(len(memory.queries) + k) % len(paths)]
            terms = [t for t in criteria.for_section(path).split() if t not in tried and t not in avoid]
            queries.append(f"{article.title} {' '.join(terms[: self.terms_per_query])}".strip())
        queries.append(article.title)
        # Last resort: every section's terms, so nothing related to the article goes unread.
        every = sorted({t for text in criteria.criteria.values() for t in text.split()})
        queries.extend(" ".join(every[i: i + 30]) for i in range(0, len(every), 30))
        for query in queries:
            for result in search.search(query, limit=self.limit):
                if result.url not in memory.read_urls:
                    return NavigationStep(query, result, f"best unread result (rank {result.rank}) for {query!r}")
        return NavigationStep(queries[-1], None, "every result of every query has been read")


def _ignored_terms(memory: Memory) -> set[str]:
    """Terms that only ignored updates carried: searching them again would find the same things."""
    kept = {t for u in memory.kept for t in token_set(u.text)}
    ignored = Counter(t for d in memory.decisions if d.action == "ignore" for t in token_set(d.update.text))
    return {t for t, c in ignored.items() if c >= 2 and t not in kept}
