"""The no-model backend, and the factory that builds a backend by kind.

With ``offline`` the agent's stages are never asked: the offline stages in
:mod:`winellbot.pipeline.offline` do the work. :class:`OfflineBackend` exists so that a stage wired
to a model by mistake fails with a clear message instead of a confusing one.
"""
from __future__ import annotations

from winellbot.errors import ConfigError, ModelError
from winellbot.llm.base import ChatBackend, ChatReply, ChatRequest
from winellbot.llm.openai_backend import OpenAIBackend
from winellbot.llm.transformers_backend import TransformersBackend

BACKEND_KINDS = ("openai", "transformers", "offline")


class OfflineBackend(ChatBackend):
    """A backend that refuses every request: no model is configured."""

    name = "offline"

    def chat(self, request: ChatRequest) -> ChatReply:
        raise ModelError(
            f"no model is configured (backend 'offline'), so stage {request.stage!r} cannot ask one; "
            "set a model backend (openai or transformers) or use the offline stages"
        )


def get_backend(kind: str, **settings) -> ChatBackend:
    """A backend of ``kind`` ("openai" | "transformers" | "offline") built from keyword settings.

    The settings are the backend's constructor arguments (``base_url``, ``api_key``, ``model``,
    ``timeout`` ... for openai; ``model_dir``, ``max_new_tokens``, ``device`` for transformers).
    """
    kind = (kind or "offline").strip().lower()
    try:
        if kind == "openai":
            return OpenAIBackend(**settings)
        if kind == "transformers":
            return TransformersBackend(**settings)
        if kind == "offline":
            return OfflineBackend()
    except TypeError as exc:  # an unknown or missing setting
        raise ConfigError(f"bad settings for the {kind} backend: {exc}") from exc
    raise ConfigError(f"unknown model backend {kind!r}; choose one of {', '.join(BACKEND_KINDS)}")
