"""Editor verdicts on back-test suggestions: blind packets for a judge, the store, and the figures.

The rubric is the bench's ``verdicts.md``: each suggestion gets ``accept`` (usable as it stands),
``revise`` (a real new fact, the line needs work) or ``reject``, whether it carries a new fact,
and the rubric's errors. Judging is blind: :func:`write_packets` mixes the lines of several
suggestion files (versions of the bot) and some of the human editors' held-out sentences (the
calibration), shuffles them, and writes each item with what a reviewer on the wiki would have at
hand (the article's outline, lead and section, its sentences closest to the line, the source's
passage around the quoted words), numbered, with nothing that says where it came from. The key
from numbers to origins stays beside the packets; :func:`merge` joins a judge's answers to it and
appends them to the store.

The store (``winellbot/data/verdicts/dev.jsonl``) holds, per judged line, the task id and a hash of
the line, never its text (the dev set's pages belong to their publishers): a later run's line is
found by hashing it again (:func:`text_hash`).
"""
from __future__ import annotations

import hashlib
import json
import random
from collections import Counter
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from importlib import resources
from pathlib import Path

from winellbot.bench.tasks import Task, article_from_task
from winellbot.errors import WinellbotError
from winellbot.text import content_tokens, split_sentences, words

VERDICTS = ("accept", "revise", "reject")
ERRORS = ("not_new", "insignificant", "off_topic", "unsupported", "wrong_section", "subjective", "unclear",
          "furniture", "too_long")
STORE = "data/verdicts/dev.jsonl"


def text_hash(text: str) -> str:
    """The key of a judged line: its words, whitespace folded."""
    return hashlib.sha256(" ".join(text.split()).encode("utf-8")).hexdigest()[:16]


@dataclass(frozen=True)
class Verdict:
    """One judge's verdict on one line of one task."""

    task: str
    hash: str
    verdict: str
    new_fact: bool
    errors: tuple[str, ...] = ()
    kind: str = "bot"          # "bot" or "human" (a held-out sentence, the calibration)
    version: str = ""          # which suggestions file the line came from
    judge: str = ""            # who judged, and in which round

    def __post_init__(self) -> None:
        if self.verdict not in VERDICTS:
            raise WinellbotError(f"verdict {self.verdict!r} is not one of {', '.join(VERDICTS)}")
        unknown = set(self.errors) - set(ERRORS)
        if unknown:
            raise WinellbotError(f"unknown error(s) {sorted(unknown)}; the rubric's are {', '.join(ERRORS)}")


def store_path() -> Path:
    return Path(str(resources.files("winellbot").joinpath(STORE)))


def load_store(path: str | Path | None = None) -> list[Verdict]:
    """Every verdict of the store (the shipped one unless ``path``)."""
    path = Path(path) if path else store_path()
    if not path.exists():
        return []
    out = []
    for line in path.read_text("utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            out.append(Verdict(**{**row, "errors": tuple(row.get("errors", ()))}))
    return out


def by_line(verdicts: Iterable[Verdict]) -> dict[tuple[str, str], Verdict]:
    """The latest verdict on each (task, hash)."""
    return {(v.task, v.hash): v for v in verdicts}


@dataclass
class Item:
    """One line to judge, with where it came from (kept in the key, never shown)."""

    task: str
    text: str
    section_path: tuple[str, ...]
    document: str
    quote: str
    kind: str = "bot"
    version: str = ""
    extra: dict = field(default_factory=dict)
    passage: str = ""  # the source text shown; empty: the text around ``quote``


def items_from_lines(lines: Iterable[dict], version: str) -> list[Item]:
    """Back-test lines (the bench's suggestions format, with ``fact`` and ``quote``) as items."""
    return [Item(task=x["task"], text=x.get("fact") or x["text"], section_path=tuple(x["section_path"]),
                 document=(x.get("documents") or [""])[0], quote=x.get("quote", ""), version=version)
            for x in lines]


def human_items(tasks: Iterable[Task], n: int, seed: int) -> list[Item]:
    """``n`` held-out sentences, drawn at random, shown as suggestions with their supporting passages:
    an editor's sentence often draws on several places of its page, which one window does not show."""
    pool = [(t, h) for t in tasks for h in t.held_out]
    rng = random.Random(seed)
    picked = rng.sample(pool, min(n, len(pool)))
    items = []
    for t, h in picked:
        doc = _doc(t, h.supporting_document)
        ws = doc.text.split() if doc else []
        starts = _supporting_windows(h.text, ws) if doc else []
        items.append(Item(task=t.id, text=h.text, section_path=tuple(h.section_path), document=h.supporting_document,
                          quote=" ".join(ws[starts[0]: starts[0] + WINDOW]) if starts else "", kind="human",
                          version="human", passage=" \u2026 ".join(" ".join(ws[max(0, i - 15): i + WINDOW + 15])
                                                                   for i in starts)))
    return items


def _doc(task: Task, doc_id: str):
    return next((d for d in task.documents if d.id == doc_id), None)


WINDOW = 40  # words of a supporting window (shown with 15 more either side)


def _supporting_windows(text: str, ws: list[str], most: int = 3) -> list[int]:
    """Where up to ``most`` windows of :data:`WINDOW` words of a document's words ``ws`` start, in the
    document's order, chosen one by one for the most of the sentence's content words the windows before
    them lack (the first one at least, each later one two at least); the document's start if none."""
    want = set(content_tokens(text))
    starts = range(0, max(1, len(ws) - WINDOW + 1), 4)
    held = {i: want & set(content_tokens(" ".join(ws[i: i + WINDOW]))) for i in starts}
    chosen: list[int] = []
    found: set[str] = set()
    while len(chosen) < most:
        at = max(held, key=lambda i: (len(held[i] - found), -i))
        if len(held[at] - found) < (1 if not chosen else 2):
            break
        chosen.append(at)
        found |= held[at]
    return sorted(chosen) or [0]


def render_item(number: int, item: Item, task: Task) -> str:
    """What the judge reads for one item: the reviewer's view, nothing about its origin."""
    article = article_from_task(task.bot_view())
    outline = "; ".join(" > ".join(s.path) for s in article.sections if s.path)
    lead_section = article.section(())
    lead = _cut(lead_section.text, 90) if lead_section is not None else ""
    section = article.section(item.section_path)
    sec_text = _cut(_subtree_text(article, section), 200) if section is not None else "(no such section)"
    doc = _doc(task, item.document)
    return "\n".join([
        f"## Item {number}",
        f"**Article:** {task.title}",
        f"**Outline:** {outline}",
        f"**Lead:** {lead}",
        f"**Suggested section:** {' > '.join(item.section_path) or 'lead'}",
        f"**Section text now:** {sec_text}",
        "**Article sentences closest to the line:** " + " | ".join(_cut(s, 45) for s in _closest(article.plain_text,
                                                                                                 item.text)),
        f"**Posted line:** {item.text}",
        f"**Source:** {doc.title if doc else '?'} ({doc.url if doc else '?'})",
        f"**Source passage around the quoted words:** {item.passage or _around(doc.text if doc else '', item.quote)}",
        f"**Quoted words:** {_cut(item.quote, 60)}",
        "",
    ])


def _subtree_text(article, section) -> str:
    """The text a reader finds under a heading: its own paragraphs, then its subsections' (a line
    suggested for "History" is judged against all of History, not only the lines above its first
    subsection); the lead's own text for the lead."""
    path = section.path
    if not path:
        return section.text
    return "\n\n".join(s.text for s in article.sections if s.path[:len(path)] == path and s.paragraphs)


def _cut(text: str, n: int) -> str:
    ws = words(text)
    return " ".join(ws[:n]) + (" ..." if len(ws) > n else "")


def _closest(plain: str, text: str, n: int = 3) -> list[str]:
    mine = set(content_tokens(text))
    scored = sorted(split_sentences(plain.replace("\n\n", " \n ")),
                    key=lambda s: -len(mine & set(content_tokens(s))))
    return [s for s in scored[:n] if mine & set(content_tokens(s))] or ["(none shares a word)"]


def _around(text: str, quote: str, margin: int = 45) -> str:
    ws, qs = text.split(), quote.split()
    if not ws:
        return "(no text)"
    head = [w.lower() for w in qs[:6]]
    low = [w.lower() for w in ws]
    at = next((i for i in range(len(low)) if low[i: i + len(head)] == head), -1) if head else -1
    if at < 0:
        return _cut(" ".join(qs), 2 * margin) if qs else _cut(" ".join(ws), 2 * margin)
    return " ".join(ws[max(0, at - margin): at + min(len(qs), 60) + margin])


def write_packets(items: list[Item], tasks: dict[str, Task], out: str | Path, *, parts: int, seed: int,
                  header: str = "", key: str | Path | None = None) -> Path:
    """Shuffled, numbered packets ``part-NN.md`` in ``out`` and their key (``key``, default
    ``out/key.jsonl``: put it outside ``out`` when the judge is handed the folder); returns ``out``.

    A line that two sources give for one task (the same text) is judged once."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    key_path = Path(key) if key else out / "key.jsonl"
    key_path.parent.mkdir(parents=True, exist_ok=True)
    unique: dict[tuple[str, str], Item] = {}
    for item in items:
        unique.setdefault((item.task, text_hash(item.text)), item)
    order = list(unique.values())
    random.Random(seed).shuffle(order)
    with open(key_path, "w", encoding="utf-8") as key_file:
        for n, item in enumerate(order, 1):
            key_file.write(json.dumps({"item": n, "task": item.task, "hash": text_hash(item.text), "kind": item.kind,
                                  "version": item.version, **item.extra}) + "\n")
    size = -(-len(order) // parts)
    for p in range(parts):
        chunk = order[p * size: (p + 1) * size]
        if chunk:
            body = [render_item(p * size + i + 1, it, tasks[it.task]) for i, it in enumerate(chunk)]
            (out / f"part-{p + 1:02d}.md").write_text(header + "\n\n".join(body), "utf-8")
    return out


def merge(key_path: str | Path, answers: Iterable[str | Path], judge: str, store: str | Path | None = None) -> int:
    """Join a judge's answers (JSONL: ``item``, ``verdict``, ``new_fact``, ``errors``) to the key and
    append them to the store; returns how many were added. An answer for an unknown item is an error."""
    keys = {row["item"]: row for row in map(json.loads, Path(key_path).read_text("utf-8").splitlines()) if row}
    added = []
    for path in answers:
        for line in Path(path).read_text("utf-8").splitlines():
            if not line.strip():
                continue
            a = json.loads(line)
            k = keys.get(int(a["item"]))
            if k is None:
                raise WinellbotError(f"{path}: item {a['item']} is not in the key {key_path}")
            added.append(Verdict(task=k["task"], hash=k["hash"], verdict=a["verdict"].strip().lower(),
                                 new_fact=bool(a.get("new_fact")), errors=tuple(a.get("errors") or ()),
                                 kind=k["kind"], version=k["version"], judge=judge))
    path = Path(store) if store else store_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a", encoding="utf-8") as fh:
        fh.writelines(json.dumps({**asdict(v), "errors": list(v.errors)}) + "\n" for v in added)
    return len(added)


def figures(verdicts: Iterable[Verdict], tasks: int | None = None) -> dict:
    """Accept / revise / reject shares, new facts, the errors' shares, and accepted lines per task."""
    vs = list(verdicts)
    n = len(vs)
    counts = Counter(v.verdict for v in vs)
    errors = Counter(e for v in vs for e in v.errors)
    out = {"judged": n, **{k: round(counts[k] / n, 3) if n else None for k in VERDICTS},
           "new_fact": round(sum(v.new_fact for v in vs) / n, 3) if n else None,
           "errors": {e: round(errors[e] / n, 3) for e in ERRORS if errors[e]}}
    if tasks:
        out["accepted_per_task"] = round(counts["accept"] / tasks, 3)
    return out


def over_every_verdict(lines: Iterable[dict], verdicts: Iterable[Verdict]) -> dict:
    """Each judged line's shares of accept, revise and reject over all its verdicts, averaged over
    the lines: a line read twice counts once, so one re-reading moves this less than the latest
    verdicts (``judged``) it moves."""
    every: dict[tuple[str, str], list[str]] = {}
    for v in verdicts:
        every.setdefault((v.task, v.hash), []).append(v.verdict)
    mine = [every[k] for k in {(x["task"], text_hash(x.get("fact") or x["text"])) for x in lines} if k in every]
    n = len(mine)
    return {"lines": n, "verdicts": sum(map(len, mine)),
            **{k: round(sum(vs.count(k) / len(vs) for vs in mine) / n, 3) if n else None for k in VERDICTS}}


def judged(lines: Iterable[dict], store: dict[tuple[str, str], Verdict]) -> tuple[list[Verdict], int]:
    """The verdicts on a suggestions file's lines, and how many of its lines have none."""
    found, missing = [], 0
    for x in lines:
        v = store.get((x["task"], text_hash(x.get("fact") or x["text"])))
        if v is None:
            missing += 1
        else:
            found.append(v)
    return found, missing
