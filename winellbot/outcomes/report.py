"""The outcome table: what became of the posted suggestions, overall and by section, source, gate
or month.

Each posted suggestion has one outcome, the first that holds of:

* ``adopted``: its fact is in the article (:mod:`winellbot.outcomes.adoption`), not reverted;
* ``accepted`` / ``rejected``: a trusted reviewer's latest verdict on its box;
* ``withdrawn``: withdrawn by the operator or on the box;
* ``expired``: none of these ``expire_days`` after it was posted;
* ``open``: still waiting.

So the columns add up to ``posted``. The table also gives the median time from the post to the
adoption, the reasons reviewers gave for rejections (the rubric's error codes), how many statuses
were set by editors the bot does not trust (recorded, never counted), and the review page's decisions
(:func:`winellbot.outcomes.decisions.review_summary`: approved as they stood, revised, rejected by
reason, undone; overall and per month). The rates per month can be plotted (matplotlib, the ``report`` extra) and the table published as wikitext, every cell escaped.
"""
from __future__ import annotations

import statistics
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlparse

from winellbot.escape import escape_text
from winellbot.outcomes import GROUPINGS
from winellbot.outcomes.decisions import review_lines, review_summary, review_wikitext
from winellbot.plots import pyplot, save

OUTCOMES = ("adopted", "accepted", "rejected", "withdrawn", "expired", "open")


def outcome_of(row: dict) -> str:
    """The one outcome of a row of :meth:`winellbot.state.outcomes.OutcomeStore.history`."""
    verdict = row.get("verdict")
    if verdict is None and row.get("status") in ("accepted", "rejected"):
        verdict = row["status"]  # decided before outcomes were tracked
    if row.get("adopted_revid") is not None:
        return "adopted"
    if verdict in ("accepted", "rejected"):
        return verdict
    if row.get("status") == "withdrawn" or verdict == "withdrawn":
        return "withdrawn"
    return "expired" if row.get("expired_at") else "open"


def group_keys(row: dict, by: str | None) -> list[str]:
    """The groups a row counts in (a suggestion with findings of several gates counts in each)."""
    if by is None:
        return ["all"]
    if by == "section":
        return [(row.get("section") or "").split(" > ")[0] or "(lead)"]
    if by == "source":
        host = urlparse(row.get("url") or "").hostname or "(none)"
        return [host.removeprefix("www.")]
    if by == "gate":
        return list(row.get("gates") or ()) or ["(no finding)"]
    if by == "month":
        return [(row.get("posted_at") or "")[:7] or "(unknown)"]
    raise ValueError(f"unknown grouping {by!r} ({', '.join(GROUPINGS)})")


@dataclass
class Line:
    """One row of the table."""

    group: str
    counts: Counter = field(default_factory=Counter)
    days: list[float] = field(default_factory=list)
    accepted_any: int = 0  # a trusted accepted verdict, adopted or not (the acceptance rate)

    @property
    def posted(self) -> int:
        return sum(self.counts[o] for o in OUTCOMES)

    @property
    def median_days(self) -> float | None:
        return round(statistics.median(self.days), 1) if self.days else None

    def as_dict(self) -> dict:
        n = self.posted
        return {"group": self.group, "posted": n, **{o: self.counts[o] for o in OUTCOMES},
                "adoption_rate": round(self.counts["adopted"] / n, 3) if n else None,
                "acceptance_rate": round(self.accepted_any / n, 3) if n else None,
                "median_days_to_adoption": self.median_days}


@dataclass
class Table:
    """The outcome table and what goes with it."""

    by: str | None
    since: str | None
    lines: list[Line]
    total: Line
    reasons: Counter
    untrusted: int
    months: list[Line]
    reviews: dict = field(default_factory=dict)

    def as_dict(self) -> dict:
        return {"by": self.by, "since": self.since, "total": self.total.as_dict(),
                "lines": [x.as_dict() for x in self.lines], "rejection_reasons": dict(self.reasons.most_common()),
                "untrusted_statuses": self.untrusted, "months": [x.as_dict() for x in self.months],
                "review_page": self.reviews}


class OutcomeReport:
    """Builds the table from the state's history rows."""

    def build(self, rows: list[dict], *, by: str | None = None, since: str | None = None,
              decisions: list[dict] = (), revisions: list[dict] = ()) -> Table:
        groups: dict[str, Line] = defaultdict(lambda: Line(""))
        months: dict[str, Line] = defaultdict(lambda: Line(""))
        total, reasons, untrusted = Line("all"), Counter(), 0
        for row in rows:
            outcome = outcome_of(row)
            for line in [total, months[group_keys(row, "month")[0]]] + [groups[k] for k in group_keys(row, by)]:
                line.counts[outcome] += 1
                line.accepted_any += row.get("verdict") == "accepted" or outcome == "accepted"
                if outcome == "adopted" and row.get("adoption_days") is not None:
                    line.days.append(row["adoption_days"])
            if outcome == "rejected":
                reasons.update((row.get("reasons") or "").split(",") if row.get("reasons") else ["(none given)"])
            untrusted += row.get("untrusted_verdict") is not None
        for key, line in list(groups.items()) + list(months.items()):
            line.group = key
        return Table(by, since, [groups[k] for k in sorted(groups)] if by else [], total, reasons, untrusted,
                     [months[k] for k in sorted(months)], review_summary(list(decisions), revisions))


HEAD = ("posted",) + OUTCOMES + ("median days to adoption",)


def _cells(line: Line) -> list[str]:
    median = line.median_days
    return [str(line.posted)] + [_share(line.counts[o], line.posted) for o in OUTCOMES] + \
        ["" if median is None else f"{median:g}"]


def _share(n: int, total: int) -> str:
    return f"{n} ({n / total:.0%})" if total and n else str(n)


def as_text(table: Table) -> str:
    """The table for a terminal (and the report's Markdown, which reads the same)."""
    first = table.by or "suggestions"
    rows = [[first, *HEAD]] + [[x.group, *_cells(x)] for x in table.lines] + [["all", *_cells(table.total)]]
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    out = ["| " + " | ".join(c.ljust(w) for c, w in zip(r, widths)) + " |" for r in rows]
    out.insert(1, "|" + "|".join("-" * (w + 2) for w in widths) + "|")
    out += ["", _reasons_line(table)]
    if table.untrusted:
        out.append(f"Statuses set by a bot, an IP or an unknown editor (recorded, not counted): {table.untrusted}")
    if any(table.reviews.get(k) for k in ("decided", "skips", "undone")):
        out += review_lines(table.reviews)
    return "\n".join(out)


def _reasons_line(table: Table) -> str:
    if not table.reasons:
        return "Rejection reasons: none"
    return "Rejection reasons: " + ", ".join(f"{k} {v}" for k, v in table.reasons.most_common())


def as_wikitext(table: Table, *, bot_user: str, since: str | None = None) -> str:
    """The table as a wiki page; every text from the wiki or a source is escaped."""
    first = escape_text(table.by or "suggestions")
    out = [f"What became of the suggestions [[User:{bot_user}|{bot_user}]] posted"
           + (f" since {escape_text(since)}" if since else "") + ", as its outcome check read them "
           "(adopted: the fact is in the article; accepted or rejected: a reviewer's status on the box). "
           "Updated by the bot.", "", '{| class="wikitable sortable"', "! " + " !! ".join([first, *HEAD])]
    for line in table.lines + [table.total]:
        out += ["|-", "| " + " || ".join(escape_text(c) or "&#32;" for c in [line.group, *_cells(line)])]
    out += ["|}", "", escape_text(_reasons_line(table))]
    if any(table.reviews.get(k) for k in ("decided", "skips", "undone")):
        out += [""] + review_wikitext(table.reviews)
    if table.untrusted:
        out.append("")
        out.append(f"Statuses set by a bot, an IP or an unknown editor (recorded, not counted): {table.untrusted}")
    return "\n".join(out) + "\n"


def plot(table: Table, path: str | Path) -> Path | None:
    """The acceptance and adoption rates per month as a PNG; None when matplotlib is not installed."""
    plt = pyplot()
    if plt is None:
        return None
    months = [m.group for m in table.months]
    fig, ax = plt.subplots(figsize=(7, 3.5))
    for label, values in (("adopted", [m.as_dict()["adoption_rate"] or 0 for m in table.months]),
                          ("accepted", [m.as_dict()["acceptance_rate"] or 0 for m in table.months])):
        ax.plot(months, [100 * v for v in values], marker="o", label=label)
    ax.set_ylabel("% of the suggestions posted that month")
    ax.set_ylim(0, 100)
    ax.set_title("Suggestions adopted and accepted, by month posted")
    ax.legend()
    return save(fig, path)
