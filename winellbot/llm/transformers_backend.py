"""A local causal language model run in-process with transformers (the fine-tuned editor).

The model and tokenizer are loaded once, on the first request, from a model spec (a directory, a
GGUF file, the bundled SmolLM2, or a LoRA adapter folder merged into its base: see
:mod:`winellbot.llm.local_model`), never from the network. The chat template of the
tokenizer formats the messages; a tokenizer without one gets a plain role-tagged prompt. Decoding is
greedy, the prompt is cut to ``max_prompt_tokens`` (keeping its end, where the paragraph to edit
and the generation cue are) and the reply to ``max_new_tokens``.

torch and transformers are imported inside the methods that use them, so importing this module is
cheap and works without them installed.
"""
from __future__ import annotations

import threading
from pathlib import Path

from winellbot.errors import ConfigError, ModelError
from winellbot.llm.base import ChatBackend, ChatReply, ChatRequest, Message
from winellbot.llm.copying import choose_copy, copy_generate
from winellbot.llm.local_model import ThreadChooser, load_model, load_tokenizer


class TransformersBackend(ChatBackend):
    """A :class:`ChatBackend` over a model directory (``config.json``, weights, tokenizer files)."""

    name = "transformers"

    def __init__(self, model_dir: str | Path, *, max_new_tokens: int = 512, device: str = "cpu",
                 max_prompt_tokens: int = 4096, dtype: str | None = None) -> None:
        self.model_dir = Path(model_dir)
        self.max_new_tokens = max_new_tokens
        self.device = device
        self.max_prompt_tokens = max_prompt_tokens
        self.dtype = dtype
        self._model = None
        self._tokenizer = None
        self._lock = threading.Lock()
        self._threads = None  # a ThreadChooser on the CPU, made at load

    @property
    def model_name(self) -> str:
        return self.model_dir.name

    @property
    def identity(self) -> str:
        return f"transformers:{self.model_dir.resolve()}"

    def model_for(self, request: ChatRequest) -> str:
        return self.model_name  # one model per backend, whatever the request names

    def load(self) -> None:
        """Load tokenizer and model now (otherwise the first :meth:`chat` does)."""
        with self._lock:
            if self._model is not None:
                return

            try:
                tokenizer = load_tokenizer(self.model_dir)
                model = load_model(self.model_dir, dtype=self.dtype)
            except (ConfigError, ImportError) as exc:
                raise ModelError(f"transformers: cannot load {self.model_dir}: {exc}") from exc
            model.to(self.device)
            model.eval()
            self._tokenizer, self._model = tokenizer, model
            if self.device == "cpu":
                self._threads = ThreadChooser()

    def chat(self, request: ChatRequest) -> ChatReply:
        """Greedy completion of the chat; the request's ``model`` is ignored (one model per backend)."""
        self.load()
        import torch

        tokenizer, model = self._tokenizer, self._model
        prompt_ids = self._prompt_ids(request.messages)
        max_new = min(request.max_tokens or self.max_new_tokens, self.max_new_tokens)
        input_ids = torch.tensor([prompt_ids], device=self.device)
        pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
        if self._threads:  # only the cores other processes leave free (see local_model.cpu_threads)
            self._threads.apply()
        try:
            if request.copy_choices:
                new_ids, finish = choose_copy(model, tokenizer, prompt_ids, request.copy_choices)
            elif request.copy_from:
                new_ids, finish = copy_generate(model, tokenizer, prompt_ids, request.copy_from, max_new)
            else:
                with torch.no_grad():
                    output = model.generate(input_ids, attention_mask=torch.ones_like(input_ids),
                                            max_new_tokens=max_new, do_sample=False, pad_token_id=pad)
                new_ids = output[0][len(prompt_ids):].tolist()
                finish = "stop" if new_ids and new_ids[-1] == tokenizer.eos_token_id else "length"
        except (RuntimeError, ValueError) as exc:
            raise ModelError(f"transformers: generation failed: {exc}") from exc
        text = tokenizer.decode(new_ids, skip_special_tokens=True)
        return ChatReply(text=text.strip(), model=self.model_name, prompt_tokens=len(prompt_ids),
                         completion_tokens=len(new_ids), finish_reason=finish)

    def _prompt_ids(self, messages: tuple[Message, ...]) -> list[int]:
        tokenizer = self._tokenizer
        chat = [{"role": m.role, "content": m.content} for m in messages]
        if getattr(tokenizer, "chat_template", None):
            text = tokenizer.apply_chat_template(chat, tokenize=False, add_generation_prompt=True)
        else:
            text = plain_prompt(messages)
        ids = tokenizer(text, add_special_tokens=not getattr(tokenizer, "chat_template", None))["input_ids"]
        limit = max(1, self.max_prompt_tokens)
        return list(ids[-limit:])


def plain_prompt(messages: tuple[Message, ...]) -> str:
    """A role-tagged prompt for tokenizers without a chat template, ending with the assistant's cue."""
    parts = [f"### {m.role.capitalize()}:\n{m.content}\n" for m in messages]
    return "\n".join(parts) + "\n### Assistant:\n"
