"""A local document corpus searched with SQLite FTS5 and BM25 ranking.

Documents are JSON objects ``{"id", "url", "title", "text", "published",
"publisher"}``, read from ``*.json`` files (one object or a list) and ``*.jsonl``
files (one object per line). The corpus is the offline pipeline's search
backend and the backtest's only source of documents for a task.
"""
from __future__ import annotations

import json
import re
from collections.abc import Iterable
from pathlib import Path

import sqlite_utils

from winellbot.errors import SearchError
from winellbot.models import Document, SearchResult
from winellbot.pipeline.interface import SearchBackend
from winellbot.text import STOP_WORDS, fold

_TERM = re.compile(r"\w+", re.UNICODE)
_FIELDS = ("id", "url", "title", "text", "published", "publisher")


class LocalCorpus(SearchBackend):
    """Full-text search over a set of documents kept in SQLite (in memory by default)."""

    name = "corpus"

    def __init__(self, path: str | Path = ":memory:") -> None:
        self.db = sqlite_utils.Database(str(path)) if str(path) != ":memory:" else sqlite_utils.Database(memory=True)
        self.table = self.db["documents"]
        if not self.table.exists():
            self.table.create(
                {"id": str, "url": str, "title": str, "text": str, "published": str, "publisher": str},
                pk="id",
            )
            self.table.enable_fts(["title", "text"], create_triggers=True, tokenize="porter unicode61")

    def add(self, documents: Iterable[Document | dict]) -> int:
        """Insert or replace documents; returns how many were given."""
        rows = [_row(d) for d in documents]
        if rows:
            self.table.upsert_all(rows, pk="id")
        return len(rows)

    def load_dir(self, path: str | Path) -> int:
        """Load every ``*.json`` and ``*.jsonl`` file under ``path``; returns the number of documents."""
        total = 0
        for file in sorted(Path(path).rglob("*")):
            if file.suffix == ".jsonl":
                lines = file.read_text(encoding="utf-8").splitlines()
                total += self.add(json.loads(line) for line in lines if line.strip())
            elif file.suffix == ".json":
                data = json.loads(file.read_text(encoding="utf-8"))
                total += self.add(data if isinstance(data, list) else [data])
        return total

    def __len__(self) -> int:
        return self.table.count

    def documents(self) -> list[Document]:
        """Every document, in insertion order."""
        return [_document(r) for r in self.table.rows]

    def search(self, query: str, *, since: str | None = None, limit: int = 10) -> list[SearchResult]:
        """BM25-ranked documents matching any term of ``query`` (free text; never an FTS syntax error)."""
        match = fts_query(query)
        if not match:
            return []
        where, args = None, None
        if since:
            where, args = "published is null or published >= :since", {"since": since}
        try:
            rows = list(self.table.search(match, limit=limit, where=where, where_args=args))
        except Exception as exc:  # sqlite3.OperationalError and friends
            raise SearchError(f"corpus search failed for {query!r}: {exc}") from exc
        results = []
        for rank, row in enumerate(rows, 1):
            doc = _document(row)
            results.append(
                SearchResult(url=doc.url, title=doc.title, snippet=doc.text[:300], published=doc.published,
                             backend=self.name, rank=rank, document=doc)
            )
        return results


def fts_query(text: str, max_terms: int = 32) -> str:
    """An FTS5 query that ORs the quoted terms of ``text``: safe for any input."""
    terms: list[str] = []
    for term in _TERM.findall(fold(text)):
        if term in STOP_WORDS or term in terms:
            continue
        terms.append(term)
    return " OR ".join(f'"{t}"' for t in terms[:max_terms])


def _row(doc: Document | dict) -> dict:
    data = doc if isinstance(doc, dict) else doc.__dict__
    row = {k: data.get(k) for k in _FIELDS}
    if not row["id"]:
        row["id"] = row["url"]
    if not row["id"]:
        raise SearchError("a corpus document needs an id or a url")
    row["url"] = row["url"] or ""
    row["title"] = row["title"] or ""
    row["text"] = row["text"] or ""
    return row


def _document(row: dict) -> Document:
    return Document(
        id=row["id"], url=row["url"] or "", title=row["title"] or "", text=row["text"] or "",
        published=row.get("published"), publisher=row.get("publisher"),
    )
