"""What a run's model calls came to, in total and per stage (the backtest's ``llm`` figures).

Counted from :class:`winellbot.llm.client.CallRecord` outcomes:

* ``calls``: requests sent to the model (cached answers and skip records send none);
* ``parsed``: replies that were usable (valid against the schema, or a non-empty text);
* ``reasked``: requests that asked again (after a malformed or a cut reply);
* ``skipped``: asks that gave up, so the stage skipped or fell back on its item;
* ``cached``: answers served from the cache, free;
* ``prompt_tokens``, ``completion_tokens``, ``seconds``: what the requests cost.
"""
from __future__ import annotations

from collections.abc import Iterable

FIELDS = ("calls", "parsed", "reasked", "skipped", "cached", "prompt_tokens", "completion_tokens", "seconds")
SENT = ("parsed", "malformed", "truncated", "error")


def summarise(records: Iterable) -> dict:
    """Totals, ``parse_rate`` (parsed / replies received) and the same per stage under ``stages``."""
    records = list(records)
    out = _sums(records)
    out["stages"] = {stage: _sums([r for r in records if r.stage == stage])
                     for stage in dict.fromkeys(r.stage for r in records)}
    return out


def _sums(records: list) -> dict:
    sums = dict.fromkeys(FIELDS, 0)
    for r in records:
        sums["calls"] += r.outcome in SENT
        sums["parsed"] += r.outcome == "parsed"
        sums["reasked"] += r.outcome in SENT and r.attempt > 0
        sums["skipped"] += r.outcome == "skipped"
        sums["cached"] += r.outcome == "cached"
        sums["prompt_tokens"] += r.prompt_tokens
        sums["completion_tokens"] += r.completion_tokens
        sums["seconds"] += r.seconds
    sums["seconds"] = round(sums["seconds"], 1)
    replies = sum(1 for r in records if r.outcome in ("parsed", "malformed", "truncated"))
    sums["parse_rate"] = round(sums["parsed"] / replies, 4) if replies else None
    return sums


def table(figures: dict) -> str:
    """A Markdown table: one row per stage, then the totals."""
    cols = FIELDS + ("parse_rate",)
    lines = ["| stage | " + " | ".join(cols) + " |", "|---" * (len(cols) + 1) + "|"]
    rows = list(figures.get("stages", {}).items()) + [("total", figures)]
    for name, f in rows:
        lines.append(f"| {name} | " + " | ".join("-" if f.get(c) is None else str(f.get(c)) for c in cols) + " |")
    return "\n".join(lines) + "\n"
