"""Hand-made back-test tasks in the bench format (``winell-backtest/1``), and the deployed offline pipeline.

``write_bridge_task(path, held_text=...)`` writes one task file (the Harbour Bridge, two documents); its
held-out sentence and document origins carry ``SENTINEL``, which must never reach the pipeline.
``write_ferry_task(folder)`` makes ``folder`` with one task (the Brindle Ferry), whose documents
``test_bench_openai.py``'s scripted model answers about (``reference=OPINION``: a document a small
model answers briefly). Shared by the bench, acceptability, verdicts,
one-configuration and local-server tests (tests/ is on sys.path under pytest).
"""
from __future__ import annotations

import json
from pathlib import Path

from winellbot.bench.cli import pipeline_factory
from winellbot.config import Settings

build_offline_pipeline = pipeline_factory(Settings())  # the pipeline as deployed


def every_gate():
    """The deployed gates with the acceptability score's bar at 0: these tests are about the runner,
    not about which of a made-up task's facts the score would post (tests/test_acceptability.py)."""
    from winellbot.gates.registry import default_gates

    return default_gates(acceptability_threshold=0.0)


SENTINEL = "ZQXSENTINELQZX"


def write_bridge_task(path, held_text=f"The {SENTINEL} bridge carried 5,000 cars on its first day."):
    task = {
        "format": "winell-backtest/1", "id": "wgb-1", "title": "Harbour Bridge", "origin": "test",
        "wikitext": "The Harbour Bridge is a bridge in Port Town.\n\n== History ==\n"
                    "The Harbour Bridge opened in 2024. Work took four years.\n\n== Design ==\n"
                    "The Harbour Bridge is a steel arch bridge. It has four lanes.",
        "documents": [
            {"id": "d1", "url": "https://news.example/1", "title": "Harbour Bridge opens",
             "text": "The Harbour Bridge opened in 2024 in Port Town. On its first day the Harbour Bridge "
                     "carried 5,000 cars, officials from Port Town said on Monday.", "published": None},
            {"id": "d2", "url": "https://news.example/2", "title": "Unrelated", "text": "Recipe for soup.",
             "published": None},
        ],
        "held_out": [{"section_path": ["History", SENTINEL], "text": held_text,
                      "supporting_document": "d1", "support": 0.9}],
        "document_origins": {"d1": f"reference-{SENTINEL}", "d2": f"distractor-{SENTINEL}"},
    }
    path.write_text(json.dumps(task), encoding="utf-8")
    return path


TITLE = "Brindle Ferry"
WIKITEXT = """'''Brindle Ferry''' is a fictional ferry line across the Sallow Sound.

== History ==
The line opened in 1931 with one steam ferry.

== Services ==
Ferries sail every hour between Brindle and Marrow Point.
"""
NIGHT = {"id": "d1", "url": "https://news.example.org/brindle-night", "title": "Brindle Ferry starts night crossings",
         "published": "2025-05-04",
         "text": "Brindle Ferry began a night service to Oskar Island on 3 May 2025, the operator said. "
                 "Two crossings a night will run until September."}
FAIR = {"id": "d2", "url": "https://news.example.org/fair", "title": "Harbour fair draws crowds",
        "published": "2025-05-05", "text": "A harbour fair in Marrow Point drew large crowds on Sunday."}
HELD = "In May 2025 Brindle Ferry began a night service to Oskar Island."
FACT = "From May 2025 the ferry also ran night crossings to Oskar Island."
# An opinion, not a fact: SmolLM2 (tests/test_local_server.py) answers it in some 90 tokens where
# NIGHT draws some 300, and its tokens are what the local back-test's seconds are spent on.
OPINION = {**NIGHT, "text": "Locals say Brindle Ferry is the best ferry of 2025."}
ATOMS = ["Brindle Ferry began a night service", "The service goes to Oskar Island", "It began in May 2025"]


def write_ferry_task(folder: Path, reference: dict = NIGHT) -> None:
    """The task in ``folder``; ``reference`` is its document ``d1`` (NIGHT, or OPINION)."""
    folder.mkdir()
    task = {"format": "winell-backtest/1", "id": "brindle", "title": TITLE, "wikitext": WIKITEXT,
            "documents": [reference, FAIR],
            "held_out": [{"section_path": ["Services"], "text": HELD, "supporting_document": "d1"}],
            "document_origins": {"d1": "search", "d2": "distractor"}}
    (folder / "brindle.json").write_text(json.dumps(task), encoding="utf-8")
