"""Full stops, commas and sentence capitals for passages of pages that lost them.

WikiGenBench stores the pages an article cites lower-cased and without punctuation, and a
suggestion quoting one is a wall of words a reviewer cannot read (the bench's ``readable``
figure counts it as unreadable: over 40 words without a mark). :mod:`winellbot.pipeline.restore`
gives names their capitals from the article; this module adds what the article cannot know:
where the source's sentences and clauses end. A token classifier reads the passage's words and
says, per word, which mark follows it (none, comma, full stop, question mark) and how it is
written (lower case, capitalised, upper case). It is the bundled all-MiniLM-L6-v2 encoder (its
vocabulary is lower-cased, as these texts are) with a LoRA adapter and two linear heads
(``winellbot/data/punctuation.safetensors``, under 2 MB), trained by ``winellbot fit punctuation``
on cased text with its case and punctuation stripped the way WikiGenBench strips it.

The words are never changed: a mark is attached to a word, a capital changes a letter's case,
and the reviewer is told that the marks are the bot's (:data:`PUNCTUATED_NOTE`).
"""
from __future__ import annotations

import functools
import re
from dataclasses import replace
from pathlib import Path

from winellbot.bundled import minilm_dir
from winellbot.meaning import held_to_share
from winellbot.pipeline.offline.profile import profile
from winellbot.pipeline.pagetext import has_capitals, safe_text
from winellbot.pipeline.restore import english_words, restore_word

MARKS = ("", ",", ".", "?")
CASES = ("lower", "capital", "upper")
WEIGHTS = Path(__file__).resolve().parents[2] / "data" / "punctuation.safetensors"
LORA = {"r": 16, "lora_alpha": 32, "target_modules": ["query", "key", "value", "dense"]}
MAX_TOKENS = 256
_NOT_KEPT = re.compile(r"[^\w\s]|_")

PUNCTUATED_NOTE = ("the full stops and commas are also the bot's: a model's guess at where the source's "
                   "sentences end")


def lost_form(word: str) -> str:
    """A cased, punctuated word as a page that lost its case and punctuation writes it ("U.S." -> "us",
    "hole-in-one" -> "holeinone"); "" for a word that was only marks."""
    return _NOT_KEPT.sub("", word).lower()


def word_labels(word: str) -> tuple[int, int]:
    """(mark, case) of a cased word: the indices in :data:`MARKS` and :data:`CASES` it is trained on."""
    core = _NOT_KEPT.sub("", word)
    tail = word.rstrip("\"')]\u201d\u2019")
    mark = 3 if tail.endswith("?") else 2 if tail.endswith((".", "!")) else 1 if tail.endswith((",", ";", ":")) else 0
    letters = [c for c in core if c.isalpha()]
    case = 0
    if letters and letters[0].isupper():
        case = 2 if len(letters) > 1 and all(c.isupper() for c in letters) else 1
    return mark, case


class PunctuationModel:
    """The encoder and heads: :meth:`marks` of a list of lower-cased words."""

    def __init__(self, weights: Path | str = WEIGHTS) -> None:
        import torch
        from safetensors.torch import load_file
        from transformers import AutoTokenizer
        from transformers.utils import logging as transformers_logging


        held_to_share(torch)
        transformers_logging.disable_progress_bar()  # the bot's output is its report, not a loading bar
        base = minilm_dir()
        self.tokenizer = AutoTokenizer.from_pretrained(base, local_files_only=True)
        encoder = adapted_encoder(base)
        state = load_file(str(weights))
        self.heads = build_heads(encoder.config.hidden_size)
        self.heads.load_state_dict({k[6:]: v.float() for k, v in state.items() if k.startswith("heads.")})
        missing = encoder.load_state_dict({k[8:]: v.float() for k, v in state.items() if k.startswith("encoder.")},
                                          strict=False)
        if missing.unexpected_keys:
            raise ValueError(f"{weights}: weights the encoder does not have: {missing.unexpected_keys[:3]}")
        self.encoder = encoder.merge_and_unload().eval()
        self.heads.eval()

    def marks(self, tokens: list[str], *, window: int = 120, overlap: int = 20) -> list[tuple[int, int]]:
        """(mark, case) per word, read in windows of ``window`` words that overlap by ``overlap`` (a
        word near a window's edge takes its labels from the window where it sits further in)."""
        out: list[tuple[int, int]] = [(0, 0)] * len(tokens)
        start = 0
        while start < len(tokens):
            end = min(len(tokens), start + window)
            labels = self._window(tokens[start:end])
            keep_from = 0 if start == 0 else overlap // 2
            for i in range(keep_from, end - start):
                out[start + i] = labels[i]
            if end == len(tokens):
                break
            start = end - overlap
        return out

    def _window(self, tokens: list[str]) -> list[tuple[int, int]]:
        return read(self.tokenizer, self.encoder, self.heads, [tokens])[0]


def read(tokenizer, encoder, heads, windows: list[list[str]]) -> list[list[tuple[int, int]]]:
    """(mark, case) per word of each window, from the states of its first word piece (the bot reads
    one window at a time, the fitting's out-of-fold figures a batch)."""
    import torch

    enc = tokenizer(windows, is_split_into_words=True, truncation=True, max_length=MAX_TOKENS, padding=True,
                    return_tensors="pt").to(next(heads.parameters()).device)
    with torch.no_grad():
        marks, cases = (logits.argmax(-1).tolist() for logits in heads(encoder(**enc).last_hidden_state))
    return [[(marks[row][p], cases[row][p]) if p >= 0 else (0, 0) for p in first_pieces(enc.word_ids(row), len(tokens))]
            for row, tokens in enumerate(windows)]


def adapted_encoder(base):
    """The bundled encoder with the (untrained) LoRA adapter of :data:`LORA` (peft warns of a
    transformers name it still calls: not the operator's business)."""
    import warnings

    from peft import LoraConfig, get_peft_model
    from transformers import AutoModel

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        return get_peft_model(AutoModel.from_pretrained(base, local_files_only=True), LoraConfig(**LORA))


def first_pieces(word_ids: list[int | None], n: int) -> list[int]:
    """The position of each word's first word piece (-1 for a word cut off by the token limit)."""
    firsts = [-1] * n
    for pos, w in enumerate(word_ids):
        if w is not None and firsts[w] < 0:
            firsts[w] = pos
    return firsts


def build_heads(hidden: int):
    """The two linear heads over the encoder's states: the mark after a word, and its case."""
    import torch

    class Heads(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.mark = torch.nn.Linear(hidden, len(MARKS))
            self.case = torch.nn.Linear(hidden, len(CASES))

        def forward(self, states):
            return self.mark(states), self.case(states)

    return Heads()


@functools.lru_cache(maxsize=1)
def bundled_model() -> PunctuationModel:
    return PunctuationModel()


def punctuated(tokens: list[str], labels: list[tuple[int, int]], casing: dict[str, str],
               pairs: frozenset[tuple[str, str]] = frozenset()) -> str:
    """The words with their marks and capitals: a name the article writes keeps the article's form,
    a sentence starts with a capital, the passage ends with a full stop. An English word that the
    article capitalises ("new" in "New York", "will" for a Will) keeps its capital only where the
    model reads one, or where the article writes it next to the same word in a name (``pairs``, from
    :func:`winellbot.pipeline.restore.name_pairs`: "Khmer Rouge", "New York")."""
    out, starts = [], True
    for i, (word, (mark, case)) in enumerate(zip(tokens, labels)):
        written = restore_word(word, casing)
        if written == word.capitalize() and case == 0 and word in english_words() and not _in_name(tokens, i, pairs):
            written = word  # an English word the article capitalises in a name ("New York") is not one here
        if written == word:
            written = word.upper() if case == 2 and len(word) <= 6 else \
                word[:1].upper() + word[1:] if case == 1 or starts else word
        elif starts:
            written = written[:1].upper() + written[1:]
        out.append(written + MARKS[mark])
        starts = mark >= 2
    text = " ".join(out).rstrip(" ,")
    return text if text.endswith((".", "?")) else text + "."


def _in_name(tokens: list[str], i: int, pairs: frozenset[tuple[str, str]]) -> bool:
    """Whether the word at ``i`` and a neighbour are a pair the article writes as a name."""
    return (i > 0 and (tokens[i - 1], tokens[i]) in pairs) or \
        (i + 1 < len(tokens) and (tokens[i], tokens[i + 1]) in pairs)


class Punctuator:
    """The pipeline's last look at a passage from a page that lost its case and punctuation: its
    quote read again with the marks and capitals the model puts back. Other passages pass as they are."""

    def __init__(self, model: PunctuationModel | None = None) -> None:
        self._model = model

    def refine(self, article, updates: list):

        prof = profile(article)
        out = []
        for update in updates:
            tokens = update.quote.split()
            if not tokens or has_capitals(update.document.text):
                out.append(update)
                continue
            model = self._model = self._model or bundled_model()
            text = safe_text(punctuated(tokens, model.marks(tokens), prof.casing, prof.name_pairs))
            out.append(replace(update, text=text, reason=f"{update.reason}; {PUNCTUATED_NOTE}"))
        return out
