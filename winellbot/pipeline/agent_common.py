"""Helpers shared by the LLM agent's stages: the error journal, section names, data fencing,
and fitting inputs into a stage's token budget."""
from __future__ import annotations

import difflib
import json
import logging
import re
from dataclasses import dataclass, field
from typing import Annotated

from pydantic import BeforeValidator, Field

from winellbot.llm.prompts import CHARS_PER_TOKEN, estimate_tokens
from winellbot.models import Article, SectionPath
from winellbot.text import split_sentences

log = logging.getLogger("winellbot.pipeline.agent")

LEAD = "Lead"
_SPLIT = re.compile(r"\s*(?:>|›|»|/)\s*")
_LEAD_NAMES = {"lead", "(lead)", "introduction", "intro", "lede", "lead section", "summary"}


@dataclass
class Journal:
    """Errors the stages met and worked around; the pipeline adds them to its result.

    A failed stage never stops the run: it writes here, falls back, and the run goes on. The
    client has already recorded the failed call in ``llm_calls``; this makes it visible per page.
    """

    entries: list[str] = field(default_factory=list)

    def note(self, stage: str, message: str) -> None:
        log.warning("%s: %s", stage, message)
        self.entries.append(f"{stage}: {message}")

    def drain(self) -> tuple[str, ...]:
        out, self.entries = tuple(self.entries), []
        return out


def section_name(path: SectionPath) -> str:
    """How a section is named in prompts and replies: ``A > B``, or ``Lead``.

    Double quotes become single ones and backslashes slashes: the names are the extractor's enum,
    and llama-cpp-python 0.3.36 fails to parse the grammar it writes for an enum value holding an
    escaped quote (a heading ``Construction: "March builds a Williams"``), then drops the connection.
    """
    return (" > ".join(path) if path else LEAD).replace('"', "'").replace("\\", "/")


def resolve_section(article: Article, name: str) -> tuple[SectionPath | None, str]:
    """The real section a model meant by ``name``, and how it was matched (or why not).

    Exact path first, then the heading alone, then the closest name (difflib, cutoff 0.8).
    """
    wanted = _clean_name(name)
    if wanted in _LEAD_NAMES:
        return (), "lead"
    by_path = {_clean_name(section_name(s.path)): s.path for s in article.sections}
    if wanted in by_path:
        return by_path[wanted], "exact"
    parts = [p for p in _SPLIT.split(wanted) if p]
    if parts:
        by_path_parts = {tuple(_clean_name(x) for x in s.path): s.path for s in article.sections if s.path}
        if tuple(parts) in by_path_parts:
            return by_path_parts[tuple(parts)], "exact"
        for sec in reversed(article.sections):  # the deepest section with that heading
            if sec.path and _clean_name(sec.path[-1]) == parts[-1]:
                return sec.path, f"heading {sec.path[-1]!r}"
    close = difflib.get_close_matches(wanted, list(by_path), n=1, cutoff=0.8)
    if close:
        return by_path[close[0]], f"closest name {section_name(by_path[close[0]])!r}"
    return None, f"no section named {name!r} in the article"


def _clean_name(name: str) -> str:
    name = str(name).replace('"', "'").replace("\\", "/")  # as section_name writes them
    name = re.sub(r"^\s*\[?\s*section\s*:\s*", "", name, flags=re.IGNORECASE)
    name = name.strip().strip("[]\"'`*=# ").strip()
    return re.sub(r"\s+", " ", name).casefold()


def fence(text: str, tag: str) -> str:
    """``text`` made safe to put between ``<tag>`` and ``</tag>``: it cannot close the fence."""
    pattern = re.compile(rf"<\s*/?\s*{re.escape(tag)}\s*>", re.IGNORECASE)
    return pattern.sub(f"[{tag}]", text)


def clip(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters at a word boundary, marked with an ellipsis."""
    if len(text) <= limit:
        return text
    cut = text[:limit].rsplit(" ", 1)[0]
    return cut + " …"


def bullet_list(lines: list[str], empty: str = "(none)") -> str:
    return "\n".join(f"- {line}" for line in lines) if lines else empty


def fit(text: str, tokens: int) -> str:
    """``text`` cut to about ``tokens`` tokens (see :func:`estimate_tokens`)."""
    return clip(text, max(0, int(tokens * CHARS_PER_TOKEN)))


# Below the fewest characters per token measured in SmolLM2's JSON replies (short replies, dense in
# punctuation, have the fewest), so the bound holds every reply (docs/results.md, "Characters per
# token in SmolLM2's replies").
REPLY_CHARS_PER_TOKEN = 2.5


def at_most(item, n: int):
    """A list type of at most ``n`` items of ``item``: ``maxItems`` in the schema sent to the server
    (llama.cpp's grammar stops the list there), while a longer list from a server that does not
    enforce the schema keeps its first ``n`` items instead of failing the reply."""
    return Annotated[list[item], BeforeValidator(lambda v: v[:n] if isinstance(v, list) else v),
                     Field(max_length=n)]


def reply_tokens(schema) -> int:
    """An upper estimate of the tokens in the longest reply ``schema`` allows.

    A server that constrains decoding by the schema (llama.cpp) lets a small model that repeats
    itself run on to the schema's bounds (every string at its ``maxLength``, every list at its
    ``maxItems``); a stage's token limit at least this high means such a reply still ends as valid
    JSON instead of being cut and asked again with the whole prompt. Every string and list in a
    reply schema must be bounded (a ValueError names the one that is not).
    """
    js = schema.model_json_schema()
    return int(_max_chars(js, js.get("$defs", {}), "reply") / REPLY_CHARS_PER_TOKEN) + 1


def _max_chars(node: dict, defs: dict, where: str) -> int:
    """The most characters of JSON (one space after each separator) that ``node`` allows."""
    if "$ref" in node:
        return _max_chars(defs[node["$ref"].rsplit("/", 1)[1]], defs, where)
    if "anyOf" in node:
        return max(_max_chars(n, defs, where) for n in node["anyOf"])
    if "enum" in node or "const" in node:
        return max(len(json.dumps(v)) for v in node.get("enum", [node.get("const")]))
    kind = node.get("type")
    if kind == "object":
        return 2 + sum(len(json.dumps(k)) + 4 + _max_chars(v, defs, f"{where}.{k}")
                       for k, v in node.get("properties", {}).items())
    if kind == "array":
        if "maxItems" not in node:
            raise ValueError(f"{where}: a list without maxItems")
        return 2 + node["maxItems"] * (_max_chars(node["items"], defs, f"{where}[]") + 2)
    if kind == "string":
        if "maxLength" not in node:
            raise ValueError(f"{where}: a string without maxLength")
        return node["maxLength"] + 2
    if kind == "integer":
        return max(len(str(node[b])) for b in ("minimum", "maximum")) if "maximum" in node else 20
    return {"null": 4, "boolean": 5}.get(kind, 20)


def pack(blocks: list[str], tokens: int, sep: str = "\n\n") -> str:
    """As many whole ``blocks`` as fit in about ``tokens`` tokens, in order (the first is cut to fit
    when it alone is too long): a block cut in the middle would show the model half a passage."""
    taken, budget = [], int(tokens * CHARS_PER_TOKEN)
    for block in blocks:
        cost = len(block) + (len(sep) if taken else 0)
        if cost > budget:
            break
        taken.append(block)
        budget -= cost
    return sep.join(taken) if taken else fit(blocks[0] if blocks else "", tokens)


def schema_tokens(schema) -> int:
    """What the schema note the client appends to a prompt costs (see ``client._with_schema``)."""
    return estimate_tokens(json.dumps(schema.model_json_schema(), separators=(",", ":"))) + 20


def outline_within(article: Article, tokens: int) -> str:
    """The article with ``[Section: name]`` markers, trimmed to about ``tokens`` tokens.

    What a model needs to tell sections apart comes first: every heading and the lead, then the
    first sentence of every section, then the second ... so a long article keeps all its sections
    with their opening sentences instead of losing its last sections whole. Cut sections end in "…".
    """
    sections = [(section_name(s.path), [x for p in s.paragraphs for x in split_sentences(p.text)])
                for s in article.sections]
    # each section's marker, its blank-line separator and a possible " …"
    budget = int(tokens * CHARS_PER_TOKEN) - sum(len(f"[Section: {name}]\n\n\n …") for name, _ in sections)
    taken = [0] * len(sections)
    open_ = [True] * len(sections)
    # the lead's sentences first, then round after round one more sentence of each section
    lead = 1 if sections and not article.sections[0].path else 0
    order = [(0, k) for k in range(len(sections[0][1]))] if lead else []
    rounds = max((len(sents) for _, sents in sections), default=0)
    order += [(i, k) for k in range(rounds) for i in range(lead, len(sections))]
    for i, k in order:
        if not open_[i] or k >= len(sections[i][1]) or k != taken[i]:
            continue
        cost = len(sections[i][1][k]) + 1
        if cost > budget:
            open_[i] = False  # later sentences of this section would read out of order
            continue
        budget -= cost
        taken[i] += 1
    parts = []
    for (name, sents), n in zip(sections, taken):
        body = " ".join(sents[:n]) + (" …" if n < len(sents) else "")
        parts.append(f"[Section: {name}]\n{body.strip()}".rstrip())
    return "\n\n".join(parts)
