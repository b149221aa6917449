"""The one narrow interface every model backend implements.

A backend turns a :class:`ChatRequest` into a :class:`ChatReply`. Backends:

* ``openai``: any OpenAI-compatible chat completions server (production);
* ``transformers``: a local model directory loaded in-process (the editor);
* ``offline``: no model at all; stages that have an offline implementation use it.

Callers do not talk to backends directly: :class:`winellbot.llm.client.ModelClient`
wraps one, validates replies against a pydantic schema, retries, caches and
records every call in state. That is the one place a model is called.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Message:
    role: str  # "system" | "user" | "assistant"
    content: str


@dataclass(frozen=True)
class ChatRequest:
    stage: str  # "criteria", "navigator", "extractor", "aggregator", "editor", "judge", ...
    messages: tuple[Message, ...]
    model: str = ""
    json_schema: dict | None = None  # JSON schema the reply must follow, when structured
    schema_name: str = "reply"
    max_tokens: int = 1024
    temperature: float = 0.0
    prompt_version: str = ""  # the prompt file's version line: part of the cache key
    # "After N: <words of this text>": in-process decoding is held to copying it (llm.copying);
    # a server ignores it, and the caller checks the reply either way
    copy_from: str = ""
    # or "After N: <one of these runs>" (editor.spans short-lists them); a server ignores it too
    copy_choices: tuple[str, ...] = ()


@dataclass(frozen=True)
class ChatReply:
    text: str
    model: str = ""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    finish_reason: str = ""
    extra: dict = field(default_factory=dict)


class ChatBackend(ABC):
    name: str = "backend"

    @property
    def identity(self) -> str:
        """What the replies depend on besides the request (a server's URL, a model folder)."""
        return self.name

    def model_for(self, request: ChatRequest) -> str:
        """The model that answers ``request``: its own, else the backend's default."""
        return request.model or getattr(self, "model", "") or getattr(self, "model_name", "")

    @abstractmethod
    def chat(self, request: ChatRequest) -> ChatReply:
        """One completion; raise :class:`winellbot.errors.ModelError` on failure."""
