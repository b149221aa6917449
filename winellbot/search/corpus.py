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
from winellbot.interface import SearchBackend
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
        self.problems: list[str] = []  # what load_dir skipped, and why

    def add(self, documents: Iterable[Document | dict]) -> int:
        """Insert or replace documents; returns how many were given."""
        rows = [_row(d) for d in documents]
        if rows:
            self.table.upsert_all(rows, pk="id")
        return len(rows)

    def load_dir(self, path: str | Path) -> int:
        """Load every ``*.json`` and ``*.jsonl`` file under ``path``; returns the number of documents.

        A file, line or document that cannot be read (not UTF-8, not JSON, not an object, no id
        or url, a field of the wrong kind) is skipped and described in :attr:`problems`: one bad
        document never costs the others their run.
        """
        folder = Path(path)
        if not folder.is_dir():
            raise SearchError(f"corpus folder {path} does not exist")
        rows: list[dict] = []
        for file in sorted(folder.rglob("*")):
            if file.suffix in (".json", ".jsonl") and file.is_file():
                rows += self._rows_of(file)
        if rows:
            self.table.upsert_all(rows, pk="id")
        return len(rows)

    def _rows_of(self, file: Path) -> list[dict]:
        try:
            raw = file.read_bytes()
        except OSError as exc:
            self.problems.append(f"{file}: cannot be read ({exc.strerror or exc})")
            return []
        if file.suffix == ".json":
            pieces = [(str(file), raw)]
        else:
            pieces = [(f"{file} line {n}", line) for n, line in enumerate(raw.split(b"\n"), 1) if line.strip()]
        rows = []
        for where, piece in pieces:
            try:
                data = json.loads(piece.decode("utf-8"))
            except UnicodeDecodeError as exc:
                self.problems.append(f"{where}: not UTF-8 text (byte {exc.start}); skipped")
                continue
            except ValueError as exc:
                self.problems.append(f"{where}: not JSON ({exc}); skipped")
                continue
            except RecursionError:
                self.problems.append(f"{where}: JSON nested too deeply to read; skipped")
                continue
            items = data if isinstance(data, list) and file.suffix == ".json" else [data]
            for i, item in enumerate(items):
                at = f"{where} item {i + 1}" if len(items) > 1 or items is data else where
                try:
                    rows.append(_row(item))
                except SearchError as exc:
                    self.problems.append(f"{at}: {exc}; skipped")
        return rows

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
    if not isinstance(doc, (dict, Document)):
        raise SearchError(f"a corpus document must be a JSON object, not {type(doc).__name__}")
    data = doc if isinstance(doc, dict) else doc.__dict__
    row = {k: data.get(k) for k in _FIELDS}
    for key, value in row.items():
        if value is not None and not isinstance(value, str):
            raise SearchError(f"a corpus document's {key} must be text, not {type(value).__name__}")
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
