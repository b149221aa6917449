"""The offline pipeline: every WINELL stage without a model.

* :class:`OfflineCriteria` (``criteria``): a section's characteristic terms (TF-IDF over the
  article's sections, plus its heading words).
* :class:`OfflineNavigator` (``navigator``): queries from the title and a section's terms not yet
  tried, avoiding terms of ignored updates; reads the best unread result.
* :class:`OfflineExtractor` (``extractor``, over ``passages``): passages of a document that share
  the article's vocabulary (they are about the subject) but bring content tokens the article lacks,
  each placed in the section whose text best matches the passage's neighbourhood in the document.
* :class:`OfflineAggregator` (``aggregator``): ignores what the section or a kept update already
  says, replaces a kept update by a longer one on the same fact, adds otherwise.
* :class:`OfflineEditor` (``editor``): appends the sentence with a ``{{cite news}}`` reference.
* The refiners, in the order :func:`build_offline_pipeline` runs them: ``widen``, ``meaning``
  (the sentence cutter and the meaning placer), ``punctuate``, ``fact``.

``profile`` holds what the stages know of an article, computed once per revision. The package is
the free first pass the model pipeline can build on, and the bot's fallback when no model is
configured; ``winellbot backtest`` measures it.
"""
