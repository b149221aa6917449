"""Suggestions waiting in a review queue, written for the review page's tests and benchmark.

:func:`queue_suggestions` records fictional suggestions in a state as the bot does after its gates
(``State.record_result`` with each one's estimate and measurements), so the queue, the decisions and
the page read real rows. :data:`HOSTILE` is a suggestion whose every field a web page or a model
could fill carries markup, script and a hostile URL.
"""
from __future__ import annotations

import hashlib
import random

from winellbot.models import Citation, Document, Edit, PipelineResult, Suggestion, Update
from winellbot.state.db import Measured, State

FACTS = [
    "The town opened a new library on 3 May 2026.",
    "A storm damaged the harbour wall in January 2026.",
    "The council approved a budget of 12 million euros for 2026.",
    "The railway station reopened after repairs in March 2026.",
    "Maria Olsen was elected mayor with 62 percent of the vote.",
    "The fishing fleet landed 4,200 tonnes of cod in 2025.",
    "A new school for 300 pupils opened in September 2025.",
    "The town's population reached 12,400 in the 2025 census.",
    "The harbour festival drew 20,000 visitors in July 2026.",
    "A wind farm of 14 turbines was built off the coast in 2026.",
    "The old lighthouse was listed as a protected monument in 2026.",
    "The ferry service to the islands doubled its sailings in 2026.",
]
SECTIONS = [("History",), ("Government",), ("Economy",), ("History", "Modern era")]

# Every field a source or a model fills, hostile: markup, templates, script, a javascript: URL.
HOSTILE_TEXT = ("<script>document.title='pwned'</script>{{Delete}} [[Category:Spam]] "
                "<img src=x onerror=alert(1)> ~~~~ '''bold''' the harbour wall fell in 2026.")
HOSTILE_URL = "javascript:alert(document.cookie)//https://news.example/x"


def suggestion(page: str, fact: str, *, section: tuple[str, ...] = ("History",), url: str | None = None,
               title: str = "Westmark Gazette report", quote: str | None = None) -> Suggestion:
    url = url or f"https://news.example.org/{hashlib.sha256((page + fact).encode()).hexdigest()[:10]}"
    doc = Document(id="d", url=url, title=title, text=f"Earlier text. {quote or fact} Later text.",
                   publisher="Westmark Gazette")
    edit = Edit("", fact, fact, Citation(url, title, work="Westmark Gazette", date="2026-03-02"))
    update = Update(fact, section, quote or fact, doc, reason="the sentence brings figures the article lacks")
    return Suggestion(page, 1, section, None, edit, update)


def hostile(page: str) -> Suggestion:
    return suggestion(page, HOSTILE_TEXT, section=("History",), url=HOSTILE_URL, title=HOSTILE_TEXT,
                      quote=HOSTILE_TEXT)


def queue_suggestions(state: State, pages: list[str], per_page: int = 3, *, seed: int = 7,
                      wiki: str = "127.0.0.1", extra: list[Suggestion] = ()) -> list[Suggestion]:
    """Record ``per_page`` suggestions for each of ``pages`` (and ``extra``), each with an estimate."""
    rng = random.Random(seed)
    made = list(extra)
    for page in pages:
        for i in range(per_page):
            fact = FACTS[(i + rng.randrange(len(FACTS))) % len(FACTS)]
            made.append(suggestion(page, f"{fact} ({page} {i})", section=SECTIONS[i % len(SECTIONS)]))
    run = state.start_run("offline")
    by_page: dict[str, list[Suggestion]] = {}
    for s in made:
        by_page.setdefault(s.article_title, []).append(s)
    for page, items in by_page.items():
        measured = {s.id: Measured(round(rng.random(), 4), {"words": 0.5, "passage": rng.random()}, wiki)
                    for s in items}
        state.record_result(run, page, PipelineResult(suggestions=tuple(items)), measured)
    state.finish_run(run)
    return made
