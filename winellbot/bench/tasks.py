"""Backtest tasks (format ``winell-backtest/1``) and the bot's restricted view of them.

A :class:`Task` holds everything in a task file, scoring data included. The
code that runs the bot only ever gets a :class:`BotTask`, built by
:meth:`Task.bot_view`: title, wikitext and documents, nothing else. Keeping
``held_out`` and ``document_origins`` out of that object is what keeps the
backtest honest (the distractor label would give the game away).
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from winellbot.article import parse_article
from winellbot.errors import TaskError
from winellbot.models import Article, Document, Paragraph, Section

FORMAT = "winell-backtest/1"


@dataclass(frozen=True)
class HeldOut:
    """A removed sentence (scoring only)."""

    section_path: tuple[str, ...]
    text: str
    supporting_document: str
    support: float = 0.0


@dataclass(frozen=True)
class BotTask:
    """What the bot may see of a task: nothing but the article and the documents."""

    title: str
    wikitext: str
    documents: tuple[Document, ...]


@dataclass(frozen=True)
class Task:
    """A whole task file, scoring data included. Never hand this to the pipeline."""

    id: str
    title: str
    wikitext: str
    documents: tuple[Document, ...]
    held_out: tuple[HeldOut, ...]
    document_origins: dict[str, str]

    def bot_view(self) -> BotTask:
        """The task as the bot may see it; documents are rebuilt from their visible fields only."""
        docs = tuple(
            Document(id=d.id, url=d.url, title=d.title, text=d.text, published=d.published)
            for d in self.documents
        )
        return BotTask(title=self.title, wikitext=self.wikitext, documents=docs)


def load_task(path: str | Path) -> Task:
    """Read one task file; raise :class:`TaskError` when it is malformed."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        docs = tuple(
            Document(id=d["id"], url=d.get("url") or "", title=d.get("title") or "", text=d.get("text") or "",
                     published=d.get("published"))
            for d in data["documents"]
        )
        held = tuple(
            HeldOut(section_path=tuple(h["section_path"]), text=h["text"],
                    supporting_document=h.get("supporting_document") or "", support=h.get("support") or 0.0)
            for h in data.get("held_out", [])
        )
        return Task(id=data["id"], title=data["title"], wikitext=data["wikitext"], documents=docs,
                    held_out=held, document_origins=dict(data.get("document_origins") or {}))
    except (KeyError, TypeError, ValueError) as exc:
        raise TaskError(f"{path}: not a {FORMAT} task: {exc}") from exc


def load_tasks(directory: str | Path, limit: int | None = None) -> list[Task]:
    """All ``*.json`` tasks of a folder, sorted by file name."""
    files = sorted(Path(directory).glob("*.json"))
    if not files:
        raise TaskError(f"no task files in {directory}")
    return [load_task(f) for f in files[:limit]]


_HEADING = re.compile(r"^(={2,6})\s*(.*?)\s*\1\s*$")


def article_from_task(task: BotTask) -> Article:
    """Parse a task's wikitext into an :class:`Article` with the bot's own article parser."""
    return parse_article(task.title, task.wikitext)


def parse_simple_article(title: str, wikitext: str) -> Article:
    """Sections and paragraphs of plain task wikitext, with character offsets."""
    sections: list[Section] = []
    path: list[tuple[int, str]] = []
    current = ("", 0, ())
    paragraphs: list[Paragraph] = []
    pos = 0
    for block in re.split(r"(\n{2,})", wikitext):
        start, pos = pos, pos + len(block)
        if not block.strip() or block.startswith("\n"):
            continue
        lines = block.split("\n")
        body_start = start
        for line in lines:
            match = _HEADING.match(line)
            if not match:
                break
            sections.append(Section(current[0], current[1], current[2], tuple(paragraphs)))
            level = len(match.group(1))
            path = [(lv, name) for lv, name in path if lv < level] + [(level, match.group(2))]
            current = (match.group(2), level, tuple(name for _, name in path))
            paragraphs = []
            body_start += len(line) + 1
        body = wikitext[body_start:pos]
        if body.strip():
            paragraphs.append(Paragraph(wikitext=body, text=body, start=body_start, end=pos))
    sections.append(Section(current[0], current[1], current[2], tuple(paragraphs)))
    return Article(title=title, wikitext=wikitext, sections=tuple(sections))
