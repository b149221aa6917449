"""The one place any model is called.

:class:`ModelClient` wraps a :class:`ChatBackend` and gives the stages typed answers:

* the pydantic model's JSON schema goes with the request (structured output where the server has
  it) and into the prompt (where it has not);
* the reply is parsed (code fences stripped, the JSON object found) and validated; a malformed reply
  is asked again with a short correction, then :class:`MalformedReply` is raised;
* valid replies are cached by a hash of the request, so re-running on an unchanged revision costs
  nothing;
* a per-run token budget is enforced (:class:`BudgetExceeded`);
* every call, cached or not, failed or not, is recorded (``State.record_llm_call``).
"""
from __future__ import annotations

import hashlib
import json
import logging
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeVar

import pydantic

from winellbot.errors import BudgetExceeded, MalformedReply, ModelError
from winellbot.llm.base import ChatBackend, ChatReply, ChatRequest, Message

log = logging.getLogger(__name__)

T = TypeVar("T", bound=pydantic.BaseModel)

_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.DOTALL)


@dataclass(frozen=True)
class CallRecord:
    """What one call cost; the same fields go to the ``llm_calls`` table."""

    stage: str
    backend: str
    model: str
    request_hash: str
    prompt_tokens: int
    completion_tokens: int
    cached: bool
    seconds: float
    error: str | None = None


class ModelClient:
    """Typed, validated, cached, budgeted and recorded model calls over one backend."""

    def __init__(
        self,
        backend: ChatBackend,
        *,
        state=None,
        run_id: int | None = None,
        cache: bool = True,
        token_budget: int | None = None,
        max_attempts: int = 3,
    ) -> None:
        self.backend = backend
        self.state = state
        self.run_id = run_id
        self.cache = cache
        self.token_budget = token_budget
        self.max_attempts = max(1, max_attempts)
        self.calls: list[CallRecord] = []

    # -- public ------------------------------------------------------------
    @property
    def tokens_used(self) -> int:
        """Tokens spent by this client so far (cached replies are free)."""
        return sum(c.prompt_tokens + c.completion_tokens for c in self.calls)

    def ask(self, stage: str, messages: Sequence[Message], schema: type[T], *, model: str = "",
            max_tokens: int = 1024) -> T:
        """The model's reply to ``messages`` as a validated ``schema`` instance.

        Raises :class:`MalformedReply` when no valid reply came after ``max_attempts``,
        :class:`BudgetExceeded` when the token budget is spent, :class:`ModelError` when the
        backend failed.
        """
        json_schema = schema.model_json_schema()
        request = ChatRequest(stage=stage, messages=_with_schema(messages, json_schema), model=model,
                              json_schema=json_schema, schema_name=schema.__name__, max_tokens=max_tokens)
        key = request_hash(self.backend.name, request)
        cached = self._cached(key)
        if cached is not None:
            try:
                value = parse_reply(cached, schema)
            except MalformedReply:
                value = None  # a cache written by an older schema: ask again
            if value is not None:
                self._record(request, key, ChatReply(cached), 0.0, cached=True)
                return value
        attempt_request, problem = request, ""
        for attempt in range(self.max_attempts):
            reply = self._call(attempt_request, key)
            try:
                value = parse_reply(reply.text, schema)
            except MalformedReply as exc:
                problem = str(exc)
                log.info("%s: malformed reply (attempt %d): %s", stage, attempt + 1, problem)
                attempt_request = _corrected(request, reply.text, problem)
                continue
            self._store(key, reply.text)
            return value
        message = f"{stage}: no valid reply after {self.max_attempts} attempts: {problem}"
        self._record(request, key, ChatReply(""), 0.0, cached=False, error=message)
        raise MalformedReply(message)

    def ask_text(self, stage: str, messages: Sequence[Message], *, model: str = "",
                 max_tokens: int = 1024) -> str:
        """A free-text reply (the editor's new paragraph); cached and recorded like :meth:`ask`."""
        request = ChatRequest(stage=stage, messages=tuple(messages), model=model, max_tokens=max_tokens)
        key = request_hash(self.backend.name, request)
        cached = self._cached(key)
        if cached is not None:
            self._record(request, key, ChatReply(cached), 0.0, cached=True)
            return cached
        reply = self._call(request, key)
        if not reply.text.strip():
            message = f"{stage}: empty reply"
            self._record(request, key, ChatReply(""), 0.0, cached=False, error=message)
            raise MalformedReply(message)
        self._store(key, reply.text)
        return reply.text

    # -- internals -----------------------------------------------------------
    def _call(self, request: ChatRequest, key: str) -> ChatReply:
        if self.token_budget is not None and self.tokens_used >= self.token_budget:
            message = f"token budget of {self.token_budget} spent ({self.tokens_used} used)"
            self._record(request, key, ChatReply(""), 0.0, cached=False, error=message)
            raise BudgetExceeded(message)
        started = time.monotonic()
        try:
            reply = self.backend.chat(request)
        except ModelError as exc:
            self._record(request, key, ChatReply(""), time.monotonic() - started, cached=False, error=str(exc))
            raise
        self._record(request, key, reply, time.monotonic() - started, cached=False)
        return reply

    def _cached(self, key: str) -> str | None:
        if not self.cache or self.state is None:
            return None
        return self.state.cache_get(key)

    def _store(self, key: str, text: str) -> None:
        if self.cache and self.state is not None:
            self.state.cache_put(key, text)

    def _record(self, request: ChatRequest, key: str, reply: ChatReply, seconds: float, *,
                cached: bool, error: str | None = None) -> None:
        record = CallRecord(
            stage=request.stage, backend=self.backend.name, model=reply.model or request.model,
            request_hash=key, prompt_tokens=reply.prompt_tokens, completion_tokens=reply.completion_tokens,
            cached=cached, seconds=round(seconds, 3), error=error,
        )
        self.calls.append(record)
        if self.state is not None:
            self.state.record_llm_call(run_id=self.run_id, **{**record.__dict__, "cached": int(cached)})


def request_hash(backend: str, request: ChatRequest) -> str:
    """Same request to the same backend, same hash: the cache key."""
    payload = {
        "backend": backend, "stage": request.stage, "model": request.model,
        "messages": [[m.role, m.content] for m in request.messages],
        "schema": request.json_schema, "max_tokens": request.max_tokens,
        "temperature": request.temperature,
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode("utf-8")).hexdigest()


def parse_reply(text: str, schema: type[T]) -> T:
    """The first JSON object in ``text`` that validates against ``schema``.

    Tolerates code fences and prose around the object, as small models produce them.
    """
    candidates = [m.group(1) for m in _FENCE.finditer(text)] + [text]
    errors: list[str] = []
    for candidate in candidates:
        for obj in _json_objects(candidate):
            try:
                return schema.model_validate(obj)
            except pydantic.ValidationError as exc:
                errors.append(_summarise(exc))
    if errors:
        raise MalformedReply(f"the JSON object does not match the schema: {errors[0]}")
    raise MalformedReply("no JSON object found in the reply")


def _json_objects(text: str):
    decoder = json.JSONDecoder()
    start = text.find("{")
    while start != -1:
        try:
            obj, end = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            start = text.find("{", start + 1)
            continue
        if isinstance(obj, dict):
            yield obj
        start = text.find("{", end)


def _summarise(exc: pydantic.ValidationError) -> str:
    parts = []
    for err in exc.errors()[:4]:
        where = ".".join(str(p) for p in err.get("loc", ())) or "(top)"
        parts.append(f"{where}: {err.get('msg', '')}")
    return "; ".join(parts)


def _with_schema(messages: Sequence[Message], json_schema: dict) -> tuple[Message, ...]:
    """The messages with the schema spelled out at the end of the last user message.

    Servers without structured output (and local models) see the shape they must produce.
    """
    note = ("\n\nReply with one JSON object and nothing else. It must match this JSON schema:\n"
            + json.dumps(json_schema, separators=(",", ":")))
    messages = list(messages)
    for i in range(len(messages) - 1, -1, -1):
        if messages[i].role == "user":
            messages[i] = Message("user", messages[i].content + note)
            break
    else:
        messages.append(Message("user", note.strip()))
    return tuple(messages)


def _corrected(request: ChatRequest, bad_reply: str, problem: str) -> ChatRequest:
    correction = (f"That reply could not be used ({problem}). Answer again with only one JSON object "
                  "that matches the schema.")
    messages = request.messages + (Message("assistant", bad_reply[:4000]), Message("user", correction))
    return ChatRequest(stage=request.stage, messages=messages, model=request.model,
                       json_schema=request.json_schema, schema_name=request.schema_name,
                       max_tokens=request.max_tokens, temperature=request.temperature)
