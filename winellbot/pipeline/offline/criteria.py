"""The offline criteria stage: per section, its most characteristic terms.
"""
from __future__ import annotations

from winellbot.models import (
    Article,
    SectionCriteria,
)
from winellbot.interface import (
    CriteriaInducer,
)
from winellbot.pipeline.offline.profile import profile


class OfflineCriteria(CriteriaInducer):
    """Per section, its most characteristic terms (TF-IDF against the other sections)."""

    def __init__(self, *, terms: int = 12) -> None:
        self.terms = terms

    def induce(self, article: Article) -> SectionCriteria:
        prof = profile(article)
        criteria = {}
        for path, bag in prof.sections:
            ranked = sorted(bag, key=lambda t: (-bag[t] * prof.idf.get(t, 1.0), t))
            criteria[path] = " ".join(ranked[: self.terms])
        return SectionCriteria(criteria=criteria, revid=article.revid)
