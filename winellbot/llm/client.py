"""The one place any model is called.

:class:`ModelClient` wraps a :class:`ChatBackend` and gives the stages typed answers:

* the pydantic model's JSON schema goes with the request (structured output where the server has
  it) and into the prompt (where it has not);
* the reply is parsed (code fences stripped, the JSON object found) and validated; a malformed reply
  is asked again with a short correction, then :class:`MalformedReply` is raised;
* a reply cut at ``max_tokens`` (``finish_reason == "length"``) is asked again once with twice the
  limit, then the item is skipped: a cut reply is never re-asked with the same limit;
* valid replies are cached by a hash of the server (or model folder), the model that answers, the
  prompt's version and the request, so re-running on an unchanged revision costs nothing and a
  changed model, server or prompt is asked afresh;
* a per-run token budget is enforced (:class:`BudgetExceeded`);
* every call, cached or not, failed or not, is recorded (``State.record_llm_call``).
"""
from __future__ import annotations

import hashlib
import json
import logging
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TypeVar

import pydantic

from winellbot.errors import BudgetExceeded, MalformedReply, ModelError
from winellbot.llm.base import ChatBackend, ChatReply, ChatRequest, Message

log = logging.getLogger(__name__)

T = TypeVar("T", bound=pydantic.BaseModel)
R = TypeVar("R")

_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.DOTALL)


@dataclass(frozen=True)
class CallRecord:
    """What one call cost; the same fields go to the ``llm_calls`` table.

    ``outcome`` is what became of it: ``parsed`` (a usable reply), ``malformed`` (asked again),
    ``truncated`` (cut at ``max_tokens``: asked again once with a larger limit), ``error`` (the
    backend failed), ``cached`` (served from the cache, free), or ``skipped``: the ask gave up and
    the stage skips its item (this record sends nothing; ``error`` says why). ``attempt`` is 0 for
    the first request of an ask and counts the re-asks after it.
    """

    stage: str
    backend: str
    model: str
    request_hash: str
    prompt_tokens: int
    completion_tokens: int
    cached: bool
    seconds: float
    error: str | None = None
    outcome: str = "parsed"
    attempt: int = 0


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
        self.on_close: list = []  # what to stop with the client (a server started for it)

    # -- public ------------------------------------------------------------
    @property
    def tokens_used(self) -> int:
        """Tokens spent by this client so far (cached replies are free)."""
        return sum(c.prompt_tokens + c.completion_tokens for c in self.calls)

    @property
    def budget_spent(self) -> bool:
        return self.token_budget is not None and self.tokens_used >= self.token_budget

    def ask(self, stage: str, messages: Sequence[Message], schema: type[T], *, model: str = "",
            max_tokens: int = 1024, version: str = "") -> T:
        """The model's reply to ``messages`` as a validated ``schema`` instance.

        ``version`` is the prompt's version (part of the cache key). Raises :class:`MalformedReply`
        when no valid reply came after ``max_attempts`` (or a reply was cut at the token limit
        twice), :class:`BudgetExceeded` when the token budget is spent, :class:`ModelError` when
        the backend failed; each is recorded as a ``skipped`` call.
        """
        json_schema = schema.model_json_schema()
        request = ChatRequest(stage=stage, messages=_with_schema(messages, json_schema), model=model,
                              json_schema=json_schema, schema_name=schema.__name__, max_tokens=max_tokens,
                              prompt_version=version)
        return self._ask(request, lambda text: parse_reply(text, schema))

    def ask_text(self, stage: str, messages: Sequence[Message], *, model: str = "",
                 max_tokens: int = 1024, version: str = "", copy_from: str = "",
                 copy_choices: tuple[str, ...] = ()) -> str:
        """A free-text reply (the editor's new paragraph); cached and recorded like :meth:`ask`."""
        request = ChatRequest(stage=stage, messages=tuple(messages), model=model, max_tokens=max_tokens,
                              prompt_version=version, copy_from=copy_from, copy_choices=tuple(copy_choices))
        return self._ask(request, _non_empty)

    def close(self) -> None:
        """Stop what was started for this client (a local model server)."""
        while self.on_close:
            self.on_close.pop()()

    # -- internals -----------------------------------------------------------
    def _ask(self, request: ChatRequest, parse):
        key = self.key(request)
        cached = self._cached(key)
        if cached is not None:
            try:
                value = parse(cached)
            except MalformedReply:
                value = None  # a cache written by an older schema: ask again
            if value is not None:
                self._record(request, key, ChatReply(cached), 0.0, outcome="cached")
                return value
        try:
            return self._attempts(request, key, parse)
        except ModelError as exc:
            self._record(request, key, ChatReply(""), 0.0, outcome="skipped", error=str(exc))
            raise

    def _attempts(self, request: ChatRequest, key: str, parse):
        """Ask until a reply parses: a malformed one is corrected, a cut one gets a larger limit once."""
        current, malformed, enlarged, attempt = request, 0, False, 0
        while True:
            reply, seconds = self._call(current, key, attempt)
            try:
                if reply.finish_reason == "length" and request.json_schema is None:
                    raise MalformedReply("cut")  # a cut text is never usable; a complete JSON object is
                value = parse(reply.text)
            except MalformedReply as exc:
                problem = str(exc)
            else:
                self._record(current, key, reply, seconds, outcome="parsed", attempt=attempt)
                self._store(key, reply.text)
                return value
            attempt += 1
            if reply.finish_reason == "length":
                self._record(current, key, reply, seconds, outcome="truncated", attempt=attempt - 1,
                             error=f"cut at {current.max_tokens} tokens")
                if enlarged:
                    raise MalformedReply(f"{request.stage}: the reply was cut at the token limit twice "
                                         f"({current.max_tokens} tokens)")
                enlarged = True
                current = replace(current, max_tokens=2 * current.max_tokens)
                continue
            self._record(current, key, reply, seconds, outcome="malformed", attempt=attempt - 1, error=problem)
            log.info("%s: malformed reply (attempt %d): %s", request.stage, attempt, problem)
            malformed += 1
            if malformed >= self.max_attempts:
                raise MalformedReply(f"{request.stage}: no valid reply after {malformed} attempts: {problem}")
            current = _corrected(request, reply.text, problem, current.max_tokens)

    def key(self, request: ChatRequest) -> str:
        """The cache key: the server (or model folder), the model that answers, and the request."""
        return request_hash(self.backend.identity, replace(request, model=self.backend.model_for(request)))

    def _call(self, request: ChatRequest, key: str, attempt: int) -> tuple[ChatReply, float]:
        if self.budget_spent:
            raise BudgetExceeded(f"token budget of {self.token_budget} spent ({self.tokens_used} used)")
        started = time.monotonic()
        try:
            reply = self.backend.chat(request)
        except ModelError as exc:
            self._record(request, key, ChatReply(""), time.monotonic() - started, outcome="error",
                         attempt=attempt, error=str(exc))
            raise
        return reply, time.monotonic() - started

    def _cached(self, key: str) -> str | None:
        if not self.cache or self.state is None:
            return None
        return self.state.cache_get(key)

    def _store(self, key: str, text: str) -> None:
        if self.cache and self.state is not None:
            self.state.cache_put(key, text)

    def _record(self, request: ChatRequest, key: str, reply: ChatReply, seconds: float, *,
                outcome: str, attempt: int = 0, error: str | None = None) -> None:
        record = CallRecord(
            stage=request.stage, backend=self.backend.name,
            model=reply.model or self.backend.model_for(request), request_hash=key,
            prompt_tokens=reply.prompt_tokens, completion_tokens=reply.completion_tokens,
            cached=outcome == "cached", seconds=round(seconds, 3), error=error, outcome=outcome,
            attempt=attempt,
        )
        self.calls.append(record)
        if self.state is not None:
            self.state.record_llm_call(run_id=self.run_id, **{**record.__dict__, "cached": int(record.cached)})


def attempt(call: Callable[[], R]) -> tuple[R | None, ModelError | None]:
    """One model call for a stage that has a way on without it: ``(reply, None)``, or ``(None,
    error)`` when the model failed (the client has recorded the failed call). A spent token budget
    is not the call's failure: :class:`BudgetExceeded` propagates and ends the cycle."""
    try:
        return call(), None
    except BudgetExceeded:
        raise
    except ModelError as exc:
        return None, exc


def request_hash(backend: str, request: ChatRequest) -> str:
    """Same request to the same server and model with the same prompt version, same hash."""
    payload = {
        "backend": backend, "stage": request.stage, "model": request.model,
        "version": request.prompt_version,
        "messages": [[m.role, m.content] for m in request.messages],
        "schema": request.json_schema, "max_tokens": request.max_tokens,
        "temperature": request.temperature,
    }
    # a held decoding answers differently (the keys of requests without one are as before)
    if request.copy_from or request.copy_choices:
        payload["copy"] = [request.copy_from, list(request.copy_choices)]
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode("utf-8")).hexdigest()


def _non_empty(text: str) -> str:
    if not text.strip():
        raise MalformedReply("empty reply")
    return text


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
    # strict=False: a raw newline or tab inside a string is taken as written. llama-cpp-python's
    # schema grammar allows them (its string characters are [^"\\]); strict JSON decoding rejected
    # the whole object and validated an item nested in it instead.
    decoder = json.JSONDecoder(strict=False)
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


def _corrected(request: ChatRequest, bad_reply: str, problem: str, max_tokens: int) -> ChatRequest:
    if request.json_schema is None:
        correction = f"That reply could not be used ({problem}). Answer again."
    else:
        correction = (f"That reply could not be used ({problem}). Answer again with only one JSON object "
                      "that matches the schema.")
    messages = request.messages + (Message("assistant", bad_reply[:4000]), Message("user", correction))
    return replace(request, messages=messages, max_tokens=max_tokens)
