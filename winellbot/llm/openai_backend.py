"""OpenAI-compatible chat completions: OpenAI itself, vLLM, llama.cpp server, Ollama, LiteLLM.

Servers take a JSON schema in different forms, so the form is a mode:

* ``json_schema``: ``{"type": "json_schema", "json_schema": {"name", "schema", "strict"}}`` (OpenAI,
  vLLM >= 0.12, Ollama's /v1, LiteLLM);
* ``json_object_schema``: ``{"type": "json_object", "schema": {...}}``, llama.cpp's own form (the
  server of llama-cpp-python answers ``json_schema`` with HTTP 500, and ``json_object`` alone with
  JSON that lacks the required keys); it constrains decoding with a grammar made from the schema;
* ``json_object``: JSON of any shape; ``text``: nothing, the schema is in the prompt only.

With ``response_format="auto"`` the first mode is ``json_schema``; a rejection that names the format
(HTTP 400 or 422, or llama.cpp's 500) steps down to the next mode, and the mode that worked is
learned once per server (per base URL, for the whole process), so a run pays for the discovery
once. Whatever the mode, :class:`winellbot.llm.client.ModelClient` validates the reply against the
schema on the client, and the schema is also in the prompt.

Each request is over within ``timeout`` seconds, however slowly the server sends its answer (a total
deadline, not a timeout per read). Rate limits (429), server errors (5xx), timeouts and dropped connections are retried here with
exponential backoff that honours ``Retry-After``; the ``openai`` package's own retries are turned
off so there is one retry policy, and ``sleep`` can be replaced in tests.
"""
from __future__ import annotations

import email.utils
import os
import time
from collections.abc import Callable

from winellbot.deadline import httpx_client
from winellbot.errors import ModelError
from winellbot.llm.base import ChatBackend, ChatReply, ChatRequest

FORMAT_MODES = ("json_schema", "json_object_schema", "json_object", "text")
_FORMAT_WORDS = ("response_format", "json_schema", "json_object", "structured", "schema", "grammar")


class _GarbledBody(ModelError):
    """A 200 whose body is not a completion (a proxy's error page): worth another try."""


def api_key_from_env() -> str:
    """The key the operator set, or a placeholder that self-hosted servers accept."""
    return os.environ.get("WINELLBOT_OPENAI_API_KEY") or os.environ.get("OPENAI_API_KEY") or "EMPTY"


class OpenAIBackend(ChatBackend):
    """A :class:`ChatBackend` over any OpenAI-compatible ``/v1/chat/completions`` endpoint.

    ``model`` is the default; a request's own ``model`` (chosen per stage) overrides it.
    """

    name = "openai"
    # The format mode that worked, per server (base URL): learned once per process.
    _learned: dict[str, str] = {}

    def __init__(
        self,
        base_url: str | None = None,
        api_key: str | None = None,
        model: str = "gpt-4.1-mini",
        *,
        timeout: float = 120.0,
        max_retries: int = 4,
        structured: bool = True,
        response_format: str = "auto",
        identity: str = "",
        single_model: bool = False,
        backoff: float = 1.0,
        max_backoff: float = 60.0,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.base_url = base_url
        self.api_key = api_key if api_key is not None else api_key_from_env()
        self.model = model
        self.timeout = timeout
        self.max_retries = max_retries
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.sleep = sleep
        if response_format != "auto" and response_format not in FORMAT_MODES:
            raise ModelError(f"unknown response_format {response_format!r}; choose auto or one of "
                             f"{', '.join(FORMAT_MODES)}")
        self._server_key = (base_url or "https://api.openai.com/v1").rstrip("/")
        self._identity = identity or self._server_key
        self.single_model = single_model  # a server of one model: requests' own model names are ignored
        if not structured:
            response_format = "text"
        self._fixed = response_format != "auto"
        self._format_mode = response_format if self._fixed else None
        self._client = None

    @property
    def identity(self) -> str:
        """The server (or, for a server started per run, what it serves): part of the cache key."""
        return self._identity

    def model_for(self, request: ChatRequest) -> str:
        return self.model if self.single_model else (request.model or self.model)

    @property
    def format_mode(self) -> str:
        """The structured-output form sent now: fixed by the settings, else learned for this server."""
        if self._format_mode is not None:
            return self._format_mode
        return self._learned.get(self._server_key, FORMAT_MODES[0])

    @format_mode.setter
    def format_mode(self, mode: str) -> None:
        if self._fixed:
            self._format_mode = mode
        else:
            self._learned[self._server_key] = mode

    @property
    def client(self):
        """The ``openai.OpenAI`` client, made on first use (no import-time work)."""
        if self._client is None:
            import openai

            # ``timeout`` is each request's total deadline, body included (winellbot/deadline.py); httpx's own
            # timeout bounds only each wait for the next bytes.
            self._client = openai.OpenAI(base_url=self.base_url, api_key=self.api_key, timeout=self.timeout,
                                         max_retries=0, http_client=httpx_client(self.timeout, timeout=self.timeout))
        return self._client

    def chat(self, request: ChatRequest) -> ChatReply:
        """One completion, retried on transient failures, stepping down the format on rejection."""
        import openai

        attempt = 0
        while True:
            try:
                return self._complete(request)
            except openai.BadRequestError as exc:
                if not self._step_down(request, exc):
                    raise ModelError(f"{self.name}: request rejected: {_message(exc)}") from exc
            except (openai.RateLimitError, openai.InternalServerError, openai.APITimeoutError,
                    openai.APIConnectionError, _GarbledBody) as exc:
                # llama.cpp's server rejects a response_format it does not know with a 500
                if isinstance(exc, openai.InternalServerError) and self._step_down(request, exc):
                    continue
                if attempt >= self.max_retries:
                    why = (f"no complete answer within {self.timeout:g} s (a total deadline)"
                           if isinstance(exc, openai.APITimeoutError) else _message(exc))
                    raise ModelError(f"{self.name}: gave up after {attempt + 1} attempts: {why}") from exc
                self.sleep(self._delay(attempt, exc))
                attempt += 1
            except openai.APIStatusError as exc:
                if exc.status_code == 422 and self._step_down(request, exc):
                    continue
                raise ModelError(f"{self.name}: HTTP {exc.status_code}: {_message(exc)}") from exc
            except openai.OpenAIError as exc:
                raise ModelError(f"{self.name}: {exc}") from exc

    def _complete(self, request: ChatRequest) -> ChatReply:
        kwargs: dict = {
            "model": self.model_for(request),
            "messages": [{"role": m.role, "content": m.content} for m in request.messages],
            "max_tokens": request.max_tokens,
            "temperature": request.temperature,
            "extra_headers": {"X-Winellbot-Stage": request.stage},
        }
        response_format = self._response_format(request)
        if response_format is not None:
            kwargs["response_format"] = response_format
        completion = self.client.chat.completions.create(**kwargs)
        if isinstance(completion, str) or not getattr(completion, "choices", None):
            raise _GarbledBody(f"{self.name}: the server sent no choices (body: {str(completion)[:200]!r})")
        choice = completion.choices[0]
        usage = completion.usage
        return ChatReply(
            text=choice.message.content or "",
            model=completion.model or kwargs["model"],
            prompt_tokens=(usage.prompt_tokens or 0) if usage else 0,
            completion_tokens=(usage.completion_tokens or 0) if usage else 0,
            finish_reason=choice.finish_reason or "",
            extra={"format_mode": self.format_mode if response_format is not None else "text"},
        )

    def _response_format(self, request: ChatRequest) -> dict | None:
        if request.json_schema is None or self.format_mode == "text":
            return None
        if self.format_mode == "json_object":
            return {"type": "json_object"}
        if self.format_mode == "json_object_schema":
            return {"type": "json_object", "schema": request.json_schema}
        # strict mode demands schemas pydantic does not produce (every property required, no
        # defaults), so the schema guides decoding and the client validates.
        return {"type": "json_schema",
                "json_schema": {"name": request.schema_name, "schema": request.json_schema, "strict": False}}

    def _step_down(self, request: ChatRequest, exc: Exception) -> bool:
        """After a rejection that names the response format, use the next simpler format."""
        if request.json_schema is None or self.format_mode == "text":
            return False
        if not any(word in _message(exc).lower() for word in _FORMAT_WORDS):
            return False
        self.format_mode = FORMAT_MODES[FORMAT_MODES.index(self.format_mode) + 1]
        return True

    def _delay(self, attempt: int, exc: Exception) -> float:
        delay = min(self.max_backoff, self.backoff * 2 ** attempt)
        response = getattr(exc, "response", None)
        retry_after = _retry_after(response.headers) if response is not None else None
        if retry_after is not None:
            delay = min(self.max_backoff, max(retry_after, 0.0))
        return delay


def _retry_after(headers) -> float | None:
    """Seconds from ``retry-after-ms`` or ``Retry-After`` (seconds or an HTTP date)."""
    if headers is None:
        return None
    value = headers.get("retry-after-ms")
    if value:
        try:
            return float(value) / 1000
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return float(value)
    except ValueError:
        pass
    try:
        parsed = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, parsed.timestamp() - time.time())


def _message(exc: Exception) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            return str(inner["message"])
        if body.get("message"):
            return str(body["message"])
    return str(exc)
