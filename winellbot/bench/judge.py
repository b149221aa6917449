"""The paper's judge: atomic facts, then "is each element mentioned in the paragraph?".

WINELL scores coverage by decomposing each human edit into atomic facts and
asking a model, for each suggestion, which of those facts it mentions. This
judge does the same through :class:`winellbot.llm.client.ModelClient` (so every
call is validated, cached and recorded) and plugs into
:func:`winellbot.bench.score.score` like the lexical judge: its ``recall`` is the
share of a fact's atomic facts that the suggestion mentions.
"""
from __future__ import annotations

from pydantic import BaseModel, Field

from winellbot.llm.base import Message

DECOMPOSE = (
    "Break the sentence below into atomic facts: the smallest statements that can each be checked "
    "on their own (who, what, when, where, how many). Keep names and numbers exactly as written. "
    "Reply with JSON: {\"facts\": [\"...\", ...]}."
)

JUDGE = (
    "Decide, for each element of the list, whether the paragraph mentions it, one element at a time. "
    "An element counts as mentioned when the same words appear in the paragraph, or when different "
    "words (a synonym, another tense or form) say the same thing. It is not mentioned when neither "
    "the words nor their meaning appear. For every element, in the order given, give a short thought "
    "and then a yes/no judgment. Reply with JSON: "
    "{\"judgments\": [{\"element\": \"...\", \"thought\": \"...\", \"mentioned\": true}, ...]}."
)


class AtomicFacts(BaseModel):
    facts: list[str] = Field(min_length=1)


class Judgment(BaseModel):
    element: str
    thought: str = ""
    mentioned: bool


class Judgments(BaseModel):
    judgments: list[Judgment]


class ModelJudge:
    """Coverage judged by a model: share of a fact's atomic facts the suggestion mentions."""

    def __init__(self, client, *, model: str = "") -> None:
        self.client = client
        self.model = model
        self._facts: dict[str, list[str]] = {}

    def atomic_facts(self, fact: str) -> list[str]:
        """The fact split into atomic facts (asked once per fact)."""
        if fact not in self._facts:
            reply = self.client.ask("judge", (Message("system", DECOMPOSE), Message("user", fact)),
                                    AtomicFacts, model=self.model)
            self._facts[fact] = [f.strip() for f in reply.facts if f.strip()] or [fact]
        return self._facts[fact]

    def recall(self, fact: str, suggestion: str) -> float:
        """Share of the fact's atomic facts that ``suggestion`` mentions (0 for an empty suggestion)."""
        if not suggestion.strip():
            return 0.0
        return mentioned_share(self.client, self.atomic_facts(fact), suggestion, model=self.model)


def mentioned_share(client, elements: list[str], paragraph: str, *, model: str = "") -> float:
    """The paper's judgment: the share of ``elements`` that ``paragraph`` mentions, asked in one call."""
    listing = "\n".join(f"{i}. {e}" for i, e in enumerate(elements, 1))
    user = f"Elements:\n{listing}\n\nParagraph:\n{paragraph}"
    reply = client.ask("judge", (Message("system", JUDGE), Message("user", user)), Judgments, model=model)
    verdicts = [j.mentioned for j in reply.judgments[: len(elements)]]
    return sum(verdicts) / len(elements)
