"""Search backends (local corpus, GDELT, Brave, SearXNG), the source filter and the web fetcher.

this module's :func:`get_search_backend` builds one backend by name; web backends come
wrapped in :class:`winellbot.search.filters.FilteredSearch`, so Wikipedia, its
mirrors and sources older than ``since`` never reach the navigator.
"""
from __future__ import annotations

from typing import Any

from winellbot.errors import ConfigError
from winellbot.interface import SearchBackend
from winellbot.search.brave import BraveNewsSearch
from winellbot.search.corpus import LocalCorpus
from winellbot.search.filters import FilteredSearch, SourceFilter
from winellbot.search.gdelt import GdeltSearch
from winellbot.search.searxng import SearxngSearch

BACKENDS = ("corpus", "gdelt", "brave", "searxng")
_KEYLESS = ("corpus", "gdelt", "searxng")


def get_search_backend(kind: str, *, filter_sources: bool = True, **settings: Any) -> SearchBackend:
    """The search backend called ``kind``, built from keyword settings.

    ``settings`` are the backend's constructor arguments (``base_url``,
    ``api_key``, ``timeout`` ...); an ``api_key`` given to a backend that needs
    none is ignored. ``filter_sources`` wraps the backend in a
    :class:`FilteredSearch` with the default :class:`SourceFilter`.
    """
    if kind in _KEYLESS:
        settings.pop("api_key", None)
    try:
        if kind == "corpus":
            backend: SearchBackend = LocalCorpus(**settings)
        elif kind == "gdelt":
            backend = GdeltSearch(**settings)
        elif kind == "brave":
            backend = BraveNewsSearch(**settings)
        elif kind == "searxng":
            backend = SearxngSearch(**settings)
        else:
            raise ConfigError(f"unknown search backend {kind!r} (one of {', '.join(BACKENDS)})")
    except TypeError as exc:
        raise ConfigError(f"bad settings for the {kind} search backend: {exc}") from exc
    if not filter_sources:
        return backend

    return FilteredSearch(backend, SourceFilter())
