"""Quality gates: every suggestion is checked before it may reach a talk page.

A :class:`Gate` looks at one suggestion (and the article it is for) and returns
:class:`~winellbot.models.GateFinding` objects. Severities mean:

    info   shown to the reviewer, nothing more (e.g. the supporting quote)
    flag   shown to the reviewer as something to fix before accepting
    hold   not posted; kept in state for an operator to look at
    block  not posted

:class:`GateChain` runs the gates in order and attaches the findings to each
suggestion; :meth:`Suggestion.blocked` then tells the poster what to skip. A gate
that fails with an exception holds the suggestion: nothing is posted unchecked. A spent token
budget is not a failure of the suggestion: it leaves the chain and ends the cycle, so the page is
checked again in full (and its suggestion judged) in the next one.
"""
from __future__ import annotations

import logging
import tomllib
from abc import ABC, abstractmethod
from collections.abc import Iterable, Sequence
from dataclasses import replace
from importlib import resources
from pathlib import Path

from winellbot.errors import BudgetExceeded, ConfigError
from winellbot.models import Article, GateFinding, Severity, Suggestion

log = logging.getLogger(__name__)

SEVERITIES: tuple[Severity, ...] = ("info", "flag", "hold", "block")
# The gate name of a finding that marks a line for rewording: in the reviewed mode a line held only for
# its wording (winellbot.gates.editorial) goes to the review queue with such a flag instead.
REWORD = "reword"


def needs_rewording(suggestion: Suggestion) -> bool:
    """Whether a gate marked ``suggestion`` for a reviewer to reword: never to be posted without one."""
    return any(f.gate == REWORD for f in suggestion.findings)


class Gate(ABC):
    """One check on a suggestion. Subclasses set ``name`` and implement :meth:`check`."""

    name: str = "gate"

    @abstractmethod
    def check(self, article: Article, suggestion: Suggestion) -> list[GateFinding]:
        """What this gate finds about ``suggestion``; an empty list means it passes."""

    def finding(self, severity: Severity, message: str) -> GateFinding:
        return GateFinding(gate=self.name, severity=severity, message=message)


class GateChain:
    """Runs gates in order over suggestions and attaches their findings."""

    def __init__(self, gates: Sequence[Gate]) -> None:
        self.gates = tuple(gates)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(g.name for g in self.gates)

    def check(self, article: Article, suggestions: Iterable[Suggestion]) -> tuple[Suggestion, ...]:
        """The suggestions with every gate's findings appended to their own."""
        return tuple(self.check_one(article, s) for s in suggestions)

    def check_one(self, article: Article, suggestion: Suggestion) -> Suggestion:
        findings: list[GateFinding] = []
        for gate in self.gates:
            try:
                # A gate sees what the gates before it found (the acceptability score counts their flags).
                findings.extend(gate.check(article, replace(suggestion, findings=suggestion.findings + tuple(findings))))
            except BudgetExceeded:
                raise
            except Exception as exc:  # one broken gate must not let a suggestion through unchecked
                log.warning("gate %s failed on %s: %s", gate.name, suggestion.id, exc)
                findings.append(GateFinding(gate.name, "hold", f"the {gate.name} check failed ({exc}); held"))
        return replace(suggestion, findings=suggestion.findings + tuple(findings))


def summary(suggestions: Iterable[Suggestion]) -> dict[str, dict[str, int]]:
    """Per gate and severity, how many suggestions got at least one such finding.

    A suggestion with two ``block`` findings from one gate counts once for that
    gate, so ``hold`` + ``block`` per gate is the number of suggestions it stopped.
    """
    counts: dict[str, dict[str, int]] = {}
    for s in suggestions:
        for gate, severity in {(f.gate, f.severity) for f in s.findings}:
            per_gate = counts.setdefault(gate, {sev: 0 for sev in SEVERITIES})
            per_gate[severity] = per_gate.get(severity, 0) + 1
    return counts


def stopped(suggestions: Iterable[Suggestion]) -> dict[str, int]:
    """Per gate, how many suggestions it held or blocked."""
    return {gate: c.get("hold", 0) + c.get("block", 0) for gate, c in summary(suggestions).items()}


def summary_table(counts: dict[str, dict[str, int]]) -> str:
    """The counts of :func:`summary` as a Markdown table, one row per gate, for status and reports."""
    lines = ["| gate | " + " | ".join(SEVERITIES) + " | stopped |", "|---" * (len(SEVERITIES) + 2) + "|"]
    for gate in sorted(counts):
        c = counts[gate]
        cells = [str(c.get(sev, 0)) for sev in SEVERITIES] + [str(c.get("hold", 0) + c.get("block", 0))]
        lines.append(f"| {gate} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def read_gate_data(shipped: str, path: str | Path | None, what: str) -> dict:
    """A gate's TOML data: the file shipped in ``winellbot/data`` (``path`` None) or an operator's file."""
    if path is None:
        text = resources.files("winellbot").joinpath(f"data/{shipped}").read_text("utf-8")
    else:
        try:
            text = Path(path).read_text("utf-8")
        except OSError as exc:
            raise ConfigError(f"cannot read {what} {path}: {exc}") from exc
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{what} {path or 'shipped'} is not valid TOML: {exc}") from exc
