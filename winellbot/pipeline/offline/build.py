"""The offline pipeline assembled from its stages and refiners.
"""
from __future__ import annotations

import datetime as dt

from winellbot.pipeline.loop import UpdateAggregationLoop
from winellbot.pipeline.offline.aggregator import OfflineAggregator
from winellbot.pipeline.offline.criteria import OfflineCriteria
from winellbot.pipeline.offline.editor import OfflineEditor
from winellbot.pipeline.offline.extractor import OfflineExtractor
from winellbot.pipeline.offline.fact import FactPicker
from winellbot.pipeline.offline.meaning import MeaningPlacer, Restatements, SecondChoice, SentenceCutter
from winellbot.pipeline.offline.navigator import OfflineNavigator
from winellbot.pipeline.offline.punctuate import Punctuator
from winellbot.pipeline.offline.widen import Widener
from winellbot.pipeline.pipeline import Pipeline


def build_offline_pipeline(*, max_suggestions: int, max_iterations: int, max_empty: int,
                           today: dt.date | None = None, embedder=None, placement_embedder=None) -> Pipeline:
    """The offline pipeline; :func:`winellbot.factory.build_pipeline` builds it for the bot and
    the backtest alike from the settings' one table of defaults, with a
    :class:`winellbot.meaning.Embedder` (``embedder=None``: words only, for tests of the lexical parts)
    and the placement's own (default ``embedder``): it must embed with the model the placement
    weights were fitted with, or building the placer raises :class:`winellbot.errors.ConfigError`."""
    restatements = Restatements(embedder) if embedder is not None else None
    placement_embedder = placement_embedder or embedder
    loop = UpdateAggregationLoop(OfflineNavigator(), OfflineExtractor(), OfflineAggregator(restatements=restatements),
                                 max_iterations=max_iterations, max_empty=max_empty)
    # The passages kept are placed by meaning, then widened to a suggestion's words, then cut at a
    # sentence's end if the widening could not fit them (winellbot.pipeline.offline.widen); a passage of a page
    # that lost its punctuation is given marks back (winellbot.pipeline.offline.punctuate).
    refiners = (Widener(), SentenceCutter(), Punctuator(), FactPicker(restatements=restatements),
                MeaningPlacer(placement_embedder)) if embedder is not None else ()
    # The posted lines' last look: the source's second choice of section where it barely trails.
    settlers = (SecondChoice(placement_embedder),) if embedder is not None else ()
    return Pipeline(inducer=OfflineCriteria(), loop=loop, editor=OfflineEditor(),
                    max_suggestions=max_suggestions, today=today, refiners=refiners, settlers=settlers,
                    embedders=tuple({id(e): e for e in (embedder, placement_embedder) if e is not None}.values()))
