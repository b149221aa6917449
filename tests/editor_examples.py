"""Two hand-written editor examples (a paragraph, its news source, the human edit) and a writer for them.

Shared by ``test_editor.py``, ``test_editor_spans.py`` and ``test_local_server.py`` (tests/ is on
sys.path under pytest).
"""
from __future__ import annotations

import json

from winellbot.editor.examples import EditorExample, Source

BRIDGE = EditorExample(
    "hand-1", "Harbour Bridge", ("History",),
    "Work on the bridge began in 2020. The bridge was built by Elwin Construction.",
    Source("https://news.example/bridge", "Bridge opens",
           "menu home sport the harbour bridge opened on 3 may 2024 and carried 3000 vehicles in its first "
           "hour critics called the ceremony a costly spectacle subscribe now"),
    "Work on the bridge began in 2020. The bridge opened on 3 May 2024 and carried 3,000 vehicles in its "
    "first hour. The bridge was built by Elwin Construction.",
    {"article": "Harbour Bridge"})
LIBRARY = EditorExample(
    "hand-2", "Elwin Library", ("Collections",),
    "The library holds rare maps. Its reading room opened in 1931.",
    Source("https://news.example/library", "Library gift",
           "The library received 4,000 letters of the poet Ann Vale in March 2023, the trust said. "
           "It was a wonderful and moving day for everyone who loves poetry."),
    "The library holds rare maps. Its reading room opened in 1931. In March 2023 it received 4,000 letters "
    "of the poet Ann Vale.",
    {"article": "Elwin Library"})


def write_examples(path, examples, **override):
    with open(path, "w", encoding="utf-8") as handle:
        for ex in examples:
            handle.write(json.dumps({**ex.to_json(), **override}) + "\n")
    return str(path)
