"""``winell-editor/1`` examples: reading, writing, and the view an editor may see.

An example holds a paragraph (``original``), the page that supports a new sentence
(``source``) and the paragraph as the article came to have it (``target``). A predictor
only ever gets an :class:`EditTask`, built by :meth:`EditorExample.task` or read by
:func:`load_tasks`: the target never reaches it.
"""
from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from winellbot.errors import TaskError

FORMAT = "winell-editor/1"


@dataclass(frozen=True)
class Source:
    url: str
    title: str
    text: str


@dataclass(frozen=True)
class EditTask:
    """What an editor sees: the paragraph to edit and the supporting page, no target."""

    id: str
    title: str
    section_path: tuple[str, ...]
    original: str
    source: Source


@dataclass(frozen=True)
class EditorExample(EditTask):
    """A whole example, target included (for training and scoring only)."""

    target: str = ""
    meta: dict = field(default_factory=dict, compare=False)

    def task(self) -> EditTask:
        """The example as an editor may see it (a plain :class:`EditTask`: no target field at all)."""
        return EditTask(self.id, self.title, self.section_path, self.original, self.source)

    @property
    def article(self) -> str:
        """The article an example comes from (the unit of a split by article)."""
        return str(self.meta.get("article") or self.title)

    def to_json(self) -> dict:
        data = {"format": FORMAT, "id": self.id, "title": self.title, "section_path": list(self.section_path),
                "original": self.original,
                "source": {"url": self.source.url, "title": self.source.title, "text": self.source.text},
                "target": self.target}
        if self.meta:
            data["meta"] = self.meta
        return data


def _source(data: dict) -> Source:
    src = data.get("source") or {}
    return Source(url=src.get("url") or "", title=src.get("title") or "", text=src.get("text") or "")


def _json_lines(path: str | Path) -> Iterator[tuple[int, object]]:
    """(line number, parsed JSON) of each non-blank line."""
    with Path(path).open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if line.strip():
                try:
                    yield number, json.loads(line)
                except ValueError as exc:
                    raise TaskError(f"{path}:{number}: not JSON: {exc}") from exc


def _lines(path: str | Path) -> Iterator[tuple[int, dict]]:
    for number, data in _json_lines(path):
        if not isinstance(data, dict) or not isinstance(data.get("original"), str) or not data.get("id"):
            raise TaskError(f"{path}:{number}: not a {FORMAT} example (id and original needed)")
        yield number, data


def load_tasks(path: str | Path) -> list[EditTask]:
    """The editor's view of every example in a JSONL file; ``target`` is never read."""
    return [EditTask(str(d["id"]), d.get("title") or "", tuple(d.get("section_path") or ()), d["original"],
                     _source(d)) for _, d in _lines(path)]


def load_examples(path: str | Path) -> list[EditorExample]:
    """Whole examples (with targets) for training and scoring."""
    out = []
    for number, d in _lines(path):
        if not isinstance(d.get("target"), str):
            raise TaskError(f"{path}:{number}: example {d['id']} has no target")
        meta = dict(d.get("meta") or {})
        meta.setdefault("article", _article_of(str(d["id"]), d.get("title") or ""))
        out.append(EditorExample(str(d["id"]), d.get("title") or "", tuple(d.get("section_path") or ()),
                                 d["original"], _source(d), d["target"], meta))
    return out


def _article_of(example_id: str, title: str) -> str:
    """``ed-61807563-36`` -> ``61807563``: the bench's ids name their article; otherwise the title."""
    parts = example_id.split("-")
    return parts[1] if len(parts) >= 3 and parts[0] == "ed" else title


def write_jsonl(rows: Iterable[dict], path: str | Path) -> int:
    """Write JSON lines (UTF-8); returns how many."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    n = 0
    with path.open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
            handle.flush()  # a long apply run stopped midway keeps what it predicted
            n += 1
    return n


def load_predictions(path: str | Path) -> dict[str, str]:
    """``{"id", "edited"}`` lines as a dict id -> edited paragraph."""
    out: dict[str, str] = {}
    for number, data in _json_lines(path):
        try:
            out[str(data["id"])] = str(data["edited"])
        except (KeyError, TypeError) as exc:
            raise TaskError(f"{path}:{number}: not a prediction line: {exc}") from exc
    return out


def article_fold(article: str, folds: int, seed: str = "winell-editor") -> int:
    """The fold (0..folds-1) of an article: a stable hash, so a split never changes between runs."""
    import hashlib

    digest = hashlib.sha256(f"{seed}:{article}".encode()).hexdigest()
    return int(digest[:8], 16) % folds


def split_by_article(examples: list[EditorExample], fold: int, folds: int) -> tuple[list, list]:
    """(training, held-out) examples: every example of an article lands on the same side."""
    held = [e for e in examples if article_fold(e.article, folds) == fold]
    return [e for e in examples if article_fold(e.article, folds) != fold], held
