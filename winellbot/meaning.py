"""Meaning from the bundled pretrained models: sentence embeddings and spaCy's English pipeline.

* :class:`Embedder`: sentence-transformers models' vectors, unit length: all-MiniLM-L6-v2 for most
  questions, all-mpnet-base-v2 for placing a statement that stands alone. Each text
  is embedded once: vectors are kept in an :class:`EmbeddingCache` (SQLite, keyed by the
  model's name and the text's hash) and in memory, and texts not yet seen are embedded in
  batches. On 2 cores the model embeds some 170 sentences a second, so the callers embed
  only what a cheaper signal has short-listed.
* :func:`english`: spaCy's ``en_core_web_sm`` 3.8 (sentences, names, dates, numbers).

Both models ship inside registry packages (``requirements-models.txt``, located by
:mod:`winellbot.bundled`) and load from there, never from a model hub; torch, spaCy and
transformers are imported on first use only. A missing package raises
:class:`winellbot.bundled.ModelMissing`, which names the install command.
"""
from __future__ import annotations

import functools
import hashlib
import json
import logging
import sqlite3
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from winellbot import bundled
from winellbot.gates.textnorm import MONTHS, WEEKDAYS
from winellbot.text import content_tokens

log = logging.getLogger(__name__)

MINILM = "all-MiniLM-L6-v2"
MPNET = "all-mpnet-base-v2"
# Each model's folder (found in its bundled packages) and vector size. MiniLM (6 layers) serves
# the cheap questions (novelty, the selection's similarities); mpnet (12 layers, several times
# slower) places a statement alone, which it does better (docs/results.md, "Placement of a
# statement alone" and "Embeddings per task and embedding speed").
MODELS = {MINILM: (bundled.minilm_dir, 384), MPNET: (bundled.mpnet_dir, 768)}


def text_key(text: str) -> str:
    """The cache key of a text: its SHA-256, so the cache holds no page text."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class EmbeddingCache:
    """Vectors by (model, text hash) in a SQLite file (``None``: in memory only, for one process).

    Several jobs may share the file (jobs on one ToolsDB state keep it beside ``[state] path``, on
    NFS): a read or write that finds the file locked for ``timeout_s`` is given up, as a cache miss
    or a vector not kept, and counted in ``busy``; it never fails the caller.
    """

    def __init__(self, path: str | Path | None = None, *, timeout_s: float = 2.0) -> None:
        self.path = str(path) if path else ":memory:"
        self.busy = 0
        if path:
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(self.path, check_same_thread=False, timeout=timeout_s)
        self._lock = threading.Lock()
        with self._lock, self._db:
            self._db.execute("CREATE TABLE IF NOT EXISTS embeddings (model TEXT NOT NULL, key TEXT NOT NULL, "
                             "vector BLOB NOT NULL, PRIMARY KEY (model, key))")

    def get_many(self, model: str, keys: Sequence[str]) -> dict[str, bytes]:
        found: dict[str, bytes] = {}
        with self._lock:
            try:
                for i in range(0, len(keys), 500):  # SQLite's limit on bound parameters
                    chunk = list(keys[i: i + 500])
                    marks = ",".join("?" * len(chunk))
                    found.update(self._db.execute(
                        f"SELECT key, vector FROM embeddings WHERE model = ? AND key IN ({marks})", [model, *chunk]))
            except sqlite3.OperationalError as exc:  # locked by another job: what was read so far
                self._gave_up("read", exc)
        return found

    def put_many(self, model: str, items: Sequence[tuple[str, bytes]]) -> None:
        with self._lock:
            try:
                with self._db:
                    self._db.executemany("INSERT OR REPLACE INTO embeddings (model, key, vector) VALUES (?, ?, ?)",
                                         [(model, key, blob) for key, blob in items])
            except sqlite3.OperationalError as exc:  # locked by another job: the vectors stay in memory only
                self._gave_up("write", exc)

    def _gave_up(self, what: str, exc: sqlite3.OperationalError) -> None:
        if "locked" not in str(exc) and "busy" not in str(exc):
            raise exc
        self.busy += 1
        log.warning("embedding cache %s: %s given up (%s)", self.path, what, exc)

    def __len__(self) -> int:
        with self._lock:
            return self._db.execute("SELECT COUNT(*) FROM embeddings").fetchone()[0]

    def close(self) -> None:
        self._db.close()


@dataclass
class EmbeddingStats:
    """What the embedder did: distinct texts per call computed by the model or served from a cache,
    seconds spent computing, and seconds spent loading the model (0 when every text was cached)."""

    computed: int = 0
    cached: int = 0
    seconds: float = 0.0
    load_seconds: float = 0.0


class Embedder:
    """Sentence vectors (unit length, float32) of one of :data:`MODELS` (default all-MiniLM-L6-v2)
    for any number of texts.

    Vectors are stored as float16 and always returned from that form, so a run on a warm
    cache gives exactly the figures of a cold one. ``max_tokens`` cuts long texts (the model
    was trained on 128 word pieces; the callers embed sentences and passages of at most 100 words).
    """

    def __init__(self, cache: EmbeddingCache | None = None, *, model: str = MINILM, threads: int = 2,
                 batch_size: int = 16, max_tokens: int = 128, memory: int = 50_000) -> None:
        if model not in MODELS:
            raise ValueError(f"unknown sentence model {model!r}; one of {', '.join(MODELS)}")
        self.model_name = model
        self.dimensions = MODELS[model][1]
        self.cache = cache
        self.threads = threads
        self.batch_size = batch_size
        self.max_tokens = max_tokens
        self.stats = EmbeddingStats()
        self._memory: dict[str, bytes] = {}
        self._memory_size = memory
        self._model = None

    def embed(self, texts: Sequence[str]):
        """An ``(len(texts), 384)`` float32 array of unit vectors, in the order of ``texts``."""
        import numpy as np

        keys = [text_key(t) for t in texts]
        missing = [k for k in dict.fromkeys(keys) if k not in self._memory]
        if missing and self.cache is not None:
            found = self.cache.get_many(self.model_name, missing)
            self._remember(found)
            missing = [k for k in missing if k not in found]
        self.stats.cached += len(set(keys)) - len(missing)
        if missing:
            wanted = set(missing)
            todo = {k: t for k, t in zip(keys, texts) if k in wanted}
            self._compute(todo)
        if not keys:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        return np.stack([np.frombuffer(self._memory[k], dtype=np.float16) for k in keys]).astype(np.float32)

    def _compute(self, todo: dict[str, str]) -> None:
        import numpy as np

        model = self.model()
        start = time.perf_counter()
        vectors = model.encode(list(todo.values()), batch_size=self.batch_size)
        blobs = [(k, np.asarray(v, dtype=np.float16).tobytes()) for k, v in zip(todo, vectors)]
        if self.cache is not None:
            self.cache.put_many(self.model_name, blobs)
        self._remember(dict(blobs))
        self.stats.computed += len(blobs)
        self.stats.seconds += time.perf_counter() - start

    def _remember(self, blobs: dict[str, bytes]) -> None:
        if len(self._memory) + len(blobs) > self._memory_size:
            self._memory.clear()
        self._memory.update(blobs)

    def model(self):
        """The :class:`SentenceEncoder`, loaded from the bundled package on first use."""
        if self._model is None:
            start = time.perf_counter()
            self._model = _load_model(str(MODELS[self.model_name][0]()), self.threads, self.max_tokens)
            self.stats.load_seconds += time.perf_counter() - start
        return self._model


_THREADS_CAP: list[int] = []


def share_threads(most: int) -> None:
    """At most ``most`` torch threads for this process's models (a backtest worker beside others
    on the same cores), whatever the configuration asks: at once where torch is imported already
    (a forked worker inherits it, and a model its parent loaded), else when a model loads."""
    import sys

    _THREADS_CAP[:] = [max(1, most)]
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(_THREADS_CAP[0])


def held_to_share(torch) -> None:
    """A model loaded outside :class:`Embedder` (the punctuation restorer) keeps to the cores
    :func:`share_threads` gave this process: on a warm cache no embedding model loads first, and
    torch's default of a thread per core in each of two workers slows the back-test several times
    (docs/results.md, "Back-test speed")."""
    if _THREADS_CAP:
        torch.set_num_threads(_THREADS_CAP[0])


@functools.lru_cache(maxsize=4)
def _load_model(path: str, threads: int, max_tokens: int) -> "SentenceEncoder":
    import torch

    # More threads than cores only fight each other (2 cores here, shared with the rest of the bot).
    torch.set_num_threads(max(1, min([threads, *_THREADS_CAP])))
    return SentenceEncoder(Path(path), max_tokens)


class SentenceEncoder:
    """A sentence-transformers model folder run with plain transformers: the encoder, the mean of its
    token vectors over the attention mask, unit length, in batches of texts sorted by length, which
    is what sentence-transformers computes for these models (tests/test_meaning.py compares them).

    Why not sentence-transformers itself: importing it (scikit-learn and its own modules) added
    about a third to a fresh process's way to its first vector. A folder whose ``modules.json`` asks for more
    than a transformer, mean pooling and normalisation is refused with :class:`ValueError`.
    """

    def __init__(self, folder: Path, max_tokens: int) -> None:
        from transformers import AutoModel, AutoTokenizer
        from transformers.utils import logging as transformers_logging

        transformers_logging.disable_progress_bar()  # the bot's output is its report, not a loading bar
        _check_mean_pooled(folder)
        self.tokenizer = AutoTokenizer.from_pretrained(folder, local_files_only=True)
        self.model = AutoModel.from_pretrained(folder, local_files_only=True).eval()
        self.max_tokens = max_tokens

    def encode(self, texts: Sequence[str], batch_size: int = 16):
        """A float32 numpy array of unit vectors, one row per text, in the order of ``texts``."""
        import numpy as np
        import torch

        order = [int(i) for i in np.argsort([-len(t) for t in texts])]  # sentence-transformers' batches
        rows: list = [None] * len(texts)
        with torch.inference_mode():
            for start in range(0, len(order), batch_size):
                batch = order[start:start + batch_size]
                inputs = self.tokenizer([texts[i] for i in batch], padding=True, truncation="longest_first",
                                        max_length=self.max_tokens, return_tensors="pt")
                tokens = self.model(**inputs, return_dict=True).last_hidden_state
                mask = inputs["attention_mask"].unsqueeze(-1).to(tokens.dtype)
                mean = (tokens * mask).sum(1) / torch.clamp(mask.sum(1), min=1e-9)
                # normalised twice, as sentence-transformers does (its Normalize module, then encode's
                # normalize_embeddings): the vectors are then the same to the bit
                unit = torch.nn.functional.normalize(mean, p=2, dim=1)
                for i, vector in zip(batch, torch.nn.functional.normalize(unit, p=2, dim=1)):
                    rows[i] = vector.float().numpy()
        return np.stack(rows) if rows else np.zeros((0, self.model.config.hidden_size), dtype=np.float32)


def _check_mean_pooled(folder: Path) -> None:
    kinds = [m["type"].rsplit(".", 1)[-1] for m in json.loads((folder / "modules.json").read_text())]
    pooling = json.loads((folder / "1_Pooling" / "config.json").read_text()) if "Pooling" in kinds else {}
    modes = {k for k, v in pooling.items() if k.startswith("pooling_mode") and v}
    if kinds != ["Transformer", "Pooling", "Normalize"] or modes != {"pooling_mode_mean_tokens"}:
        raise ValueError(f"{folder}: not a mean-pooled, normalised sentence model ({kinds}, {sorted(modes)})")


@functools.lru_cache(maxsize=1)
def english():
    """spaCy's English pipeline (``en_core_web_sm`` 3.8 from the bundled package), loaded once."""
    bundled.spacy_model_dir()  # a clear ModelMissing instead of spaCy's E050
    import spacy

    return spacy.load(bundled.SPACY_MODEL, exclude=["lemmatizer"])


# spaCy's entity labels for names, dates and quantities: the facts a sentence states.
FACT_LABELS = frozenset({"PERSON", "ORG", "GPE", "LOC", "NORP", "FAC", "EVENT", "WORK_OF_ART", "LAW", "PRODUCT",
                         "DATE", "TIME", "PERCENT", "MONEY", "QUANTITY", "ORDINAL", "CARDINAL"})


# In a date or time only the figures and the calendar's names pin down when: "in the following
# decades" and "in the decades that followed" state the same, and "today" or "recent years" date
# nothing a reader can check.
VAGUE_LABELS = frozenset({"DATE", "TIME"})


@functools.lru_cache(maxsize=4096)
def named_facts(text: str) -> frozenset[str]:
    """The content tokens (:func:`winellbot.text.content_tokens`) of the names, dates and numbers
    spaCy finds in ``text`` (of a date or time, its figures and month and day names), and of every
    token that reads as a number."""

    calendar = WEEKDAYS.union(MONTHS)
    doc = english()(text)
    found = {t for ent in doc.ents if ent.label_ in FACT_LABELS for t in content_tokens(ent.text)
             if ent.label_ not in VAGUE_LABELS or t in calendar or any(c.isdigit() for c in t)}
    found.update(t for tok in doc if tok.like_num for t in content_tokens(tok.text))
    return frozenset(found)
