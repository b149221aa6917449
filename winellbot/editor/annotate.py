"""The paper's annotation of editor examples (WINELL Appendix B.2), by a model.

For each example the model lists the *key words* (in the source and used by the human edit) and
the *commentary words* (in the source, left out by the human edit); then, for an editor's
paragraph, the judgment instruction of the back-test's model judge asks which of those the
paragraph mentions (:func:`winellbot.bench.judge.mentioned_share`). Calls go through the
:class:`winellbot.llm.client.ModelClient`: validated, cached and recorded.
"""
from __future__ import annotations

from pydantic import BaseModel

from winellbot.bench.judge import mentioned_share
from winellbot.editor.examples import EditorExample
from winellbot.llm.base import Message

ANNOTATE = (
    "You compare a paragraph before and after an edit with the news text that motivated the edit. "
    "List (1) the key words and phrases of the news that the edited paragraph uses and the original "
    "did not have: names, dates, numbers, places, events; and (2) the commentary words and phrases of the "
    "news: opinions, judgments and side remarks that the edited paragraph leaves out. Every key word must "
    "appear in both the news and the edited paragraph; every commentary word in the news but not in the "
    "edited paragraph. Reply with JSON: {\"key_words\": [\"...\"], \"commentary_words\": [\"...\"]}."
)


class Annotation(BaseModel):
    key_words: list[str] = []
    commentary_words: list[str] = []


class ModelAnnotator:
    """``annotator(example, edited) -> (key facts share, commentary share)``, None where a list is empty."""

    def __init__(self, client, *, model: str = "") -> None:
        self.client = client
        self.model = model
        self._annotations: dict[str, Annotation] = {}

    def annotation(self, example: EditorExample) -> Annotation:
        if example.id not in self._annotations:
            user = (f"Original paragraph:\n{example.original}\n\nModified paragraph:\n{example.target}\n\n"
                    f"News:\n{example.source.text}")
            self._annotations[example.id] = self.client.ask(
                "judge", (Message("system", ANNOTATE), Message("user", user)), Annotation, model=self.model)
        return self._annotations[example.id]

    def __call__(self, example: EditorExample, edited: str) -> tuple[float | None, float | None]:
        found = self.annotation(example)
        key = [w for w in found.key_words if w.strip()]
        commentary = [w for w in found.commentary_words if w.strip()]
        return (mentioned_share(self.client, key, edited, model=self.model) if key else None,
                mentioned_share(self.client, commentary, edited, model=self.model) if commentary else None)
