"""Helpers shared by the LLM agent's stages: the error journal, section names, data fencing."""
from __future__ import annotations

import difflib
import logging
import re
from dataclasses import dataclass, field

from winellbot.models import Article, SectionPath

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
    """How a section is named in prompts and replies: ``A > B``, or ``Lead``."""
    return " > ".join(path) if path else LEAD


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
    name = re.sub(r"^\s*\[?\s*section\s*:\s*", "", str(name), flags=re.IGNORECASE)
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
