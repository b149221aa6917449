"""Prompt files shipped in ``winellbot/prompts/*.md``, loaded with importlib.resources.

A prompt file looks like::

    version: extractor-1
    input_tokens: 2400
    output_tokens: 600
    --- system
    You read news ...
    --- user
    Article: {{title}}
    <document>
    {{document}}
    </document>

The version goes with every call into the cache key, so changing a prompt (and its version line)
invalidates cached replies. ``input_tokens`` is the stage's budget for the whole prompt (the stage
trims its inputs to fit, see :meth:`Prompt.room`), ``output_tokens`` its reply limit (doubled once
for a reply cut at the limit, see :class:`winellbot.llm.client.ModelClient`). Placeholders are ``{{name}}``; they are filled in
one pass, so text pasted into a prompt (a web page saying ``{{title}}``) is never expanded again.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

from winellbot.llm.base import Message

_PLACEHOLDER = re.compile(r"\{\{(\w+)\}\}")
_PART = re.compile(r"^--- (system|user|assistant)\s*$", re.MULTILINE)
_LIMIT = re.compile(r"^(input_tokens|output_tokens):\s*(\d+)\s*$", re.MULTILINE)
CHARS_PER_TOKEN = 3.5  # English prose in BPE vocabularies runs about 4; rounded down to stay inside


def estimate_tokens(text: str) -> int:
    """A tokenizer-free upper estimate of ``text``'s tokens (servers tokenize differently)."""
    return int(len(text) / CHARS_PER_TOKEN) + 1


@dataclass(frozen=True)
class Prompt:
    """A versioned prompt: messages with ``{{placeholders}}``."""

    name: str
    version: str
    parts: tuple[tuple[str, str], ...]  # (role, template)
    input_tokens: int = 2000
    output_tokens: int = 512

    def render(self, **values: object) -> tuple[Message, ...]:
        """The messages with every placeholder filled; a missing value is a KeyError."""
        def fill(match: re.Match) -> str:
            key = match.group(1)
            if key not in values:
                raise KeyError(f"prompt {self.name} needs a value for {{{{{key}}}}}")
            return str(values[key])

        return tuple(Message(role, _PLACEHOLDER.sub(fill, template).strip()) for role, template in self.parts)

    def room(self, reserve: int = 0, **values: object) -> int:
        """Tokens left for the placeholders not in ``values`` (and ``reserve``, e.g. the schema note)."""
        filled = {key: values.get(key, "") for key in self.placeholders}
        used = sum(estimate_tokens(m.content) for m in self.render(**filled))
        return max(0, self.input_tokens - used - reserve)

    @property
    def placeholders(self) -> set[str]:
        return {m.group(1) for _, t in self.parts for m in _PLACEHOLDER.finditer(t)}


@lru_cache(maxsize=None)
def load_prompt(name: str) -> Prompt:
    """The prompt ``winellbot/prompts/<name>.md``."""
    text = resources.files("winellbot").joinpath("prompts", f"{name}.md").read_text(encoding="utf-8")
    return parse_prompt(name, text)


def parse_prompt(name: str, text: str) -> Prompt:
    first, _, rest = text.partition("\n")
    if not first.startswith("version:"):
        raise ValueError(f"prompt {name}: the first line must be 'version: ...'")
    pieces = _PART.split(rest)
    parts = tuple((pieces[i], pieces[i + 1]) for i in range(1, len(pieces) - 1, 2))
    if not parts:
        raise ValueError(f"prompt {name}: no '--- system' or '--- user' part")
    limits = {key: int(value) for key, value in _LIMIT.findall(pieces[0])}
    return Prompt(name, first.split(":", 1)[1].strip(), parts, **limits)
