"""The review page's decisions in the outcomes report: overall and per month.

Each suggestion counts once, by its latest decision that is neither a skip nor undone:

* ``approved``: approved as it stood (the bot's line posted as written);
* ``revised``: reworded by the reviewer, then approved (a row of ``revisions``), with the median
  share of words the reviewer changed (:func:`words_changed`);
* ``added_by_the_reviewer``: "I added it myself";
* ``rejected``: with the rubric's reasons.

Besides: ``undone`` (decisions a reviewer took back, counted in the month of the undo), ``skips``
(skip decisions, each time), and revisions the writer's checks refused (``revisions_refused``:
never posted, the suggestion back in the queue). A period is a calendar month of the decision's
timestamp (UTC, as the state records it).
"""
from __future__ import annotations

import re
import statistics
from collections import Counter, defaultdict
from collections.abc import Iterable

from winellbot.escape import escape_text

_WORD = re.compile(r"\w+(?:['’-]\w+)*")


def words(text: str) -> list[str]:
    """The word tokens of ``text``: runs of letters and digits (inner apostrophes and hyphens kept),
    lower-cased; punctuation and spacing are not words."""
    return _WORD.findall((text or "").lower())


def words_changed(before: str, after: str) -> float:
    """The share of words changed from ``before`` to ``after``: the word-level edit distance (each word
    inserted, deleted or replaced counts one) divided by the longer text's number of words. 0 when the
    words are the same (punctuation and case aside), 1 when no word stayed in its place; an empty pair is 0."""
    a, b = words(before), words(after)
    if not a and not b:
        return 0.0
    row = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        diagonal, row[0] = row[0], i
        for j, y in enumerate(b, 1):
            diagonal, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, diagonal + (x != y))
    return row[len(b)] / max(len(a), len(b))


def _month(stamp: str | None) -> str:
    return (stamp or "")[:7] or "(unknown)"


def _counts(latest: Iterable[dict], changed: dict[int, float]) -> dict:
    latest = list(latest)
    verdicts = Counter(d["verdict"] for d in latest)
    reasons = Counter(r for d in latest if d["verdict"] == "reject" for r in (d.get("reasons") or "").split(",") if r)
    shares = [changed[d["id"]] for d in latest if d["verdict"] == "revise" and d.get("id") in changed]
    n = len(latest)
    useful = verdicts["approve"] + verdicts["revise"] + verdicts["adopted"]
    return {"decided": n, "approved": verdicts["approve"], "revised": verdicts["revise"],
            "revised_words_changed_median": round(statistics.median(shares), 3) if shares else None,
            "added_by_the_reviewer": verdicts["adopted"], "rejected": verdicts["reject"],
            "reject_reasons": dict(reasons.most_common()),
            "useful_share": round(useful / n, 3) if n else None}


def review_summary(decisions: list[dict], revisions: Iterable[dict] = ()) -> dict:
    """The decisions (rows of :meth:`winellbot.state.reviews.ReviewStore.decisions`) and the
    revisions (rows of ``revisions``: ``review_id``, ``bot_text``, ``text``, ``status``), overall and
    per month (``periods``), as the module's docstring defines the counts."""
    revisions = list(revisions)
    changed = {int(v["review_id"]): words_changed(v.get("bot_text") or "", v.get("text") or "")
               for v in revisions if v.get("review_id") is not None}
    latest: dict[str, dict] = {}
    skips: Counter = Counter()
    undone: Counter = Counter()
    for d in decisions:
        if d["verdict"] == "skip":
            skips[_month(d.get("decided_at"))] += 1
        elif d.get("undone_at"):
            undone[_month(d["undone_at"])] += 1
        else:
            latest[d["suggestion_id"]] = d
    by_month: dict[str, list[dict]] = defaultdict(list)
    for d in latest.values():
        by_month[_month(d.get("decided_at"))].append(d)
    months = sorted(set(by_month) | set(skips) | set(undone))
    periods = [{"period": m, **_counts(by_month[m], changed), "undone": undone[m], "skips": skips[m]}
               for m in months]
    return {**_counts(latest.values(), changed), "undone": sum(undone.values()), "skips": sum(skips.values()),
            "revisions_refused": sum(v.get("status") == "refused" for v in revisions),
            "reviewers": len({d["reviewer"] for d in decisions}), "periods": periods}


def _why(reasons: dict) -> str:
    return " (" + ", ".join(f"{k} {v}" for k, v in reasons.items()) + ")" if reasons else ""


def _revised(r: dict) -> str:
    median = r.get("revised_words_changed_median")
    return f"revised {r['revised']}" + ("" if median is None else f" (median {median:.0%} of words changed)")


def _counts_text(r: dict) -> str:
    return (f"approved as they stood {r['approved']}, {_revised(r)}, added by the reviewer "
            f"{r['added_by_the_reviewer']}, rejected {r['rejected']}{_why(r['reject_reasons'])}, undone {r['undone']}")


def review_lines(r: dict) -> list[str]:
    """The summary for a terminal: one line overall, then one per month."""
    useful = "" if r.get("useful_share") is None else f"; useful {r['useful_share']:.0%}"
    refused = f", revisions refused by the writer's checks {r['revisions_refused']}" if r.get("revisions_refused") else ""
    out = [f"Review page: {r['decided']} decided by {r['reviewers']} reviewer(s): {_counts_text(r)}{refused}, "
           f"skipped {r['skips']} time(s){useful}"]
    out += [f"  {p['period']}: {p['decided']} decided: {_counts_text(p)}, skipped {p['skips']}"
            for p in r.get("periods", [])]
    return out


_WIKI_HEAD = ("month", "decided", "approved as they stood", "revised", "median share of words changed",
              "added by the reviewer", "rejected", "reasons", "undone", "skips")


def review_wikitext(r: dict) -> list[str]:
    """The summary as wikitext: a sentence, then a table with one row per month; every cell escaped."""
    out = [escape_text(review_lines(r)[0]), "", '{| class="wikitable"', "! " + " !! ".join(_WIKI_HEAD)]
    for p in r.get("periods", []):
        median = p["revised_words_changed_median"]
        cells = [p["period"], p["decided"], p["approved"], p["revised"], "" if median is None else f"{median:.0%}",
                 p["added_by_the_reviewer"], p["rejected"], _why(p["reject_reasons"]).strip(" ()"), p["undone"],
                 p["skips"]]
        out += ["|-", "| " + " || ".join(escape_text(str(c)) or "&#32;" for c in cells)]
    return out + ["|}"]
