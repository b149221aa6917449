"""Editors that predict an edited paragraph from an :class:`EditTask` (never from a target).

* :class:`ShortEditPredictor`: a fine-tuned local editor; its "After N: sentence" answer is
  applied by code (:mod:`winellbot.editor.shortedit`), so the paragraph's words all stay;
* :class:`ParagraphPredictor`: a model given the project's editing instruction
  (``prompts/editor.md``), rewriting the whole paragraph (the zero-shot baseline);
* :class:`AppendPassage`: no model; the source sentence with the most words new to the
  paragraph is appended, as the offline pipeline's editor does;
* :class:`NoChange`.

Model predictors ask through a :class:`winellbot.llm.client.ModelClient`, the one place a
model is called (recorded, cached, budgeted).
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from collections import Counter
from pathlib import Path

from winellbot.config import Settings
from winellbot.editor.examples import EditTask
from winellbot.editor.shortedit import apply_edit, ask_short_edit, parse_answer
from winellbot.editor.spans import copy_decoding
from winellbot.errors import ConfigError, ModelError
from winellbot.llm.client import ModelClient
from winellbot.llm.local_model import fast_device, fast_dtype
from winellbot.llm.local_server import local_backend
from winellbot.llm.prompts import load_prompt
from winellbot.llm.transformers_backend import TransformersBackend
from winellbot.models import Citation, Document, Paragraph, Update
from winellbot.pipeline.agent_edit import clean_reply
from winellbot.pipeline.offline.editor import OfflineEditor
from winellbot.text import clean_suggestion_text, content_tokens, split_sentences

SHORT_EDIT_TOKENS = 96  # one sentence; a reply cut here is still parsed
PARAGRAPH_TOKENS = 256
CHUNK_WORDS = 30  # pages that lost their punctuation are cut into pieces of this many words


class Predictor(ABC):
    name = "editor"

    def __init__(self) -> None:
        self.outcomes: Counter = Counter()

    @abstractmethod
    def predict(self, task: EditTask) -> str:
        """The whole edited paragraph."""

    def summary(self) -> str:
        return ", ".join(f"{k} {v}" for k, v in self.outcomes.most_common())


class NoChange(Predictor):
    name = "no change"

    def predict(self, task: EditTask) -> str:
        return task.original


def source_sentences(text: str) -> list[str]:
    """The source's sentences; run-on pieces (a page without punctuation) cut into short chunks."""
    out = []
    for s in split_sentences(" ".join(text.split())):
        ws = s.split()
        out += [" ".join(ws[i:i + CHUNK_WORDS]) for i in range(0, len(ws), CHUNK_WORDS)]
    return out


class AppendPassage(Predictor):
    """The offline editor: append the source sentence with the most content words new to the paragraph."""

    name = "offline (append a passage)"

    def predict(self, task: EditTask) -> str:

        known = set(content_tokens(task.original))
        pieces = source_sentences(task.source.text)
        if not pieces:
            return task.original
        best = max(pieces, key=lambda s: len(set(content_tokens(s)) - known))

        doc = Document(id="source", url=task.source.url, title=task.source.title, text=task.source.text)
        edit = OfflineEditor().edit(Paragraph(task.original, task.original, 0, len(task.original)),
                                    Update(best, task.section_path, best, doc),
                                    Citation(task.source.url, task.source.title))
        return clean_suggestion_text(edit.new_paragraph, max_words=10**9)


class ShortEditPredictor(Predictor):
    """A fine-tuned editor's short edit, applied to the paragraph; a reply without one changes nothing."""

    name = "fine-tuned editor"

    def __init__(self, client, *, max_tokens: int = SHORT_EDIT_TOKENS, copied: bool = False, ranker=None) -> None:
        super().__init__()
        self.client = client
        self.max_tokens = max_tokens
        self.copied = copied  # decoding held to the source's words (llm.copying)
        self.ranker = ranker  # and to one of its best runs (editor.spans)

    def predict(self, task: EditTask) -> str:
        try:
            reply = ask_short_edit(self.client, task, max_tokens=self.max_tokens, copied=self.copied,
                                   ranker=self.ranker)
        except ModelError:
            self.outcomes["model error"] += 1
            return task.original
        edit = parse_answer(reply)
        if edit is None:
            self.outcomes["no edit in the reply"] += 1
            return task.original
        self.outcomes["edited"] += 1
        return apply_edit(task.original, edit)[0]


class ParagraphPredictor(Predictor):
    """A model rewriting the paragraph with the project's editing instruction (zero-shot)."""

    name = "zero-shot (editing instruction)"

    def __init__(self, client, *, max_tokens: int = PARAGRAPH_TOKENS) -> None:
        super().__init__()
        self.client = client
        self.max_tokens = max_tokens

    def predict(self, task: EditTask) -> str:
        news = " ".join(task.source.text.split()[:220])
        prompt = load_prompt("editor")
        messages = prompt.render(paragraph=task.original, news=news)
        try:
            reply = clean_reply(self.client.ask_text("editor", messages, max_tokens=self.max_tokens,
                                                     version=prompt.version), task.original)
        except ModelError:
            self.outcomes["model error"] += 1
            return task.original
        self.outcomes["edited" if reply else "empty reply"] += 1
        return reply or task.original


def shipped_editor() -> Path:
    """The adapter shipped with winellbot (``winellbot/data/editor``)."""
    return Path(__file__).resolve().parent.parent / "data" / "editor"


def editor_model(model: str | Path | None) -> str | Path:
    """``model``, or the shipped adapter; a clear error when neither is there (never a silent no-op)."""
    chosen = model or shipped_editor()
    path = Path(chosen)
    if str(chosen) != "smollm2" and path.suffix != ".gguf" and not (
            (path / "adapter_config.json").is_file() or (path / "config.json").is_file()):
        where = "no editor is shipped in winellbot/data/editor" if not model else f"no model or adapter in {path}"
        raise ConfigError(f"{where}: train one with `winellbot editor train` (see docs/editor.md) or name one "
                          "with --model / [llm] editor_model_dir")
    return chosen


_BACKENDS: dict[str, object] = {}


def local_client(model: str | Path, *, state=None, run_id=None):
    """A model client over an in-process model (an adapter folder, a model folder, a GGUF file, 'smollm2').

    One backend per model for the process: the backtest builds a pipeline per task, and each would
    otherwise load (and merge) the model again.
    """

    key = str(model)
    if key not in _BACKENDS:
        _BACKENDS[key] = TransformersBackend(model, max_new_tokens=PARAGRAPH_TOKENS, max_prompt_tokens=1024,
                                             dtype=fast_dtype(), device=fast_device())
    return ModelClient(_BACKENDS[key], state=state, run_id=run_id)


def build_predictor(kind: str, model: str | None = None) -> Predictor:
    """``model`` | ``zero-shot`` | ``zero-shot-server`` | ``offline`` | ``none``; model defaults to the
    shipped editor (and, for zero-shot, to the bundled SmolLM2).

    ``zero-shot-server`` asks the GGUF model (``model``, default SmolLM2's Q4_1 file) through the
    local llama.cpp server: the same weights quantised, and several times faster on a CPU than the
    in-process float model, whose 256-token paragraphs took minutes each on a loaded machine.
    """
    if kind == "none":
        return NoChange()
    if kind == "zero-shot-server":

        settings = Settings()
        # the bot's own local backend (its timeout, retries and cache identity), on a small context:
        # a paragraph, 220 source words and 256 new tokens
        settings.llm.local_model, settings.llm.local_n_ctx, settings.llm.local_threads = model or "", 2048, 1
        return ParagraphPredictor(ModelClient(local_backend(settings)))
    if kind == "offline":
        return AppendPassage()
    if kind == "zero-shot":
        return ParagraphPredictor(local_client(model or "smollm2"))

    chosen = editor_model(model)
    return ShortEditPredictor(local_client(chosen), **copy_decoding(chosen))
