"""Search backends (local corpus, GDELT, Brave, SearXNG), the source filter and the web fetcher.

:func:`winellbot.search.backends.get_search_backend` builds one backend by name. This package root
imports nothing, so a helper such as :mod:`winellbot.search.urls` loads alone.
"""
