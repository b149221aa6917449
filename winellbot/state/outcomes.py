"""What became of each posted suggestion, in the state database (migration 006).

``outcomes`` holds one row per posted suggestion: what the article looked like when it was posted
(the fact's names and figures new to it, the URLs it cited, its sentences as hashes), and what the
bot has seen since (adopted at which revision, how, with which source, after how many days;
reverted; expired). ``verdicts`` keeps every status a reviewer (or anyone) set on the suggestion's
box, with the reason given, who set it and whether it is trusted. ``outcome_pages`` keeps the
article revision the outcome check last read, so an unchanged article costs nothing.
"""
from __future__ import annotations

import json
from collections.abc import Iterable

from winellbot import clock

OUTCOME_FIELDS = ("adopted_revid", "adopted_at", "adopted_how", "adopted_source", "adopted_sentence",
                  "adopted_paragraph", "adopted_section", "adoption_days", "adopted_exact")


def migrate_006(schema) -> None:
    """Tables of migration 006_outcomes (``schema``: a :class:`winellbot.state.schema.Schema`)."""
    schema.create(
        "outcomes",
        {"suggestion_id": str, "page": str, "posted_at": str, "fact": str, "names": str, "figures": str,
         "words": str, "source_url": str, "baseline_revid": int, "baseline_urls": str,
         "baseline_sentences": str, "features": str, "adopted_revid": int, "adopted_at": str,
         "adopted_how": str, "adopted_source": str, "adopted_sentence": str, "adopted_paragraph": str,
         "adopted_section": str, "adoption_days": float, "adopted_exact": int, "reverted_revid": int,
         "reverted_at": str, "expired_at": str},
        pk="suggestion_id",
    )
    schema.create_index("outcomes", ["page"])
    schema.create(
        "verdicts",
        {"id": int, "suggestion_id": str, "target": str, "revid": int, "status": str, "reasons": str,
         "note": str, "set_by": str, "trusted": int, "why_untrusted": str, "seen_at": str},
        pk="id",
    )
    schema.create_index("verdicts", ["suggestion_id"])
    schema.create("outcome_pages", {"title": str, "seen_revid": int, "checked": str}, pk="title")


class OutcomeStore:
    """Reads and writes the outcome tables of a :class:`winellbot.state.db.State` (either engine)."""

    def __init__(self, state) -> None:
        self.state = state
        self.db = state.db

    # -- tracking --------------------------------------------------------------------------------
    def track(self, rows: Iterable[dict]) -> int:
        """Start tracking posted suggestions (a row per suggestion, from
        :func:`winellbot.outcomes.adoption.fingerprint`); one already tracked is left as it is."""
        rows = [{**r, "posted_at": r.get("posted_at") or now()} for r in rows]
        with self.db.atomic():
            self.db["outcomes"].insert_all(rows, pk="suggestion_id", ignore=True)
        return len(rows)

    def watched(self) -> list[dict]:
        """Tracked suggestions not expired and not withdrawn (adopted ones too: an adoption may be
        reverted), with their suggestion's status, oldest first."""
        sql = ("select o.*, s.status from outcomes o join suggestions s on s.id = o.suggestion_id "
               "where o.expired_at is null and s.status != 'withdrawn' order by o.posted_at, o.suggestion_id")
        return [_decoded(r) for r in self.db.query(sql)]

    def seen_revids(self, titles: Iterable[str]) -> dict[str, int]:
        titles = list(titles)
        if not titles:
            return {}
        marks = ",".join("?" * len(titles))
        rows = self.db.query(f"select title, seen_revid from outcome_pages where title in ({marks})", titles)
        return {r["title"]: r["seen_revid"] for r in rows}

    def saw_page(self, title: str, revid: int) -> None:
        with self.db.atomic():
            self.db["outcome_pages"].upsert({"title": title, "seen_revid": revid, "checked": now()}, pk="title")

    def adopt(self, suggestion_id: str, fields: dict) -> None:
        """Record an adoption (the fields of :data:`OUTCOME_FIELDS`); clears an earlier revert."""
        with self.db.atomic():
            self.db["outcomes"].update(suggestion_id, {**{k: fields.get(k) for k in OUTCOME_FIELDS},
                                                       "reverted_revid": None, "reverted_at": None})

    def revert(self, suggestion_id: str, revid: int, at: str) -> None:
        """The adopted fact is gone from the article again: the adoption no longer counts."""
        with self.db.atomic():
            self.db["outcomes"].update(suggestion_id, {**{k: None for k in OUTCOME_FIELDS},
                                                       "reverted_revid": revid, "reverted_at": at})

    def expire(self, suggestion_ids: Iterable[str], at: str) -> None:
        with self.db.atomic():
            for sid in suggestion_ids:
                self.db["outcomes"].update(sid, {"expired_at": at})

    # -- verdicts --------------------------------------------------------------------------------
    def last_verdict(self, suggestion_id: str) -> dict | None:
        rows = list(self.db["verdicts"].rows_where("suggestion_id = ?", [suggestion_id], order_by="id desc",
                                                   limit=1))
        return rows[0] if rows else None

    def record_verdict(self, row: dict) -> None:
        with self.db.atomic():
            self.db["verdicts"].insert({"seen_at": now(), **row})

    def decided(self) -> set[str]:
        """Suggestions whose latest trusted verdict is accepted or rejected."""
        return {r["suggestion_id"] for r in self._latest_trusted() if r["status"] in ("accepted", "rejected")}

    def _latest_trusted(self) -> list[dict]:
        sql = ("select v.* from verdicts v where v.trusted = 1 and v.id = (select max(id) from verdicts w "
               "where w.suggestion_id = v.suggestion_id and w.trusted = 1)")
        return [dict(r) for r in self.db.query(sql)]

    # -- reading everything back -----------------------------------------------------------------
    def history(self, since: str | None = None) -> list[dict]:
        """Every posted suggestion with its post, its outcome row (if tracked), its latest trusted
        verdict and its latest untrusted one, oldest post first."""
        where, args = ["p.id = (select max(id) from posts where suggestion_id = s.id)"], []
        if since:
            where.append("p.posted_at >= ?"), args.append(since)
        sql = (
            "select s.id, s.page, s.section, s.status, s.url, s.update_text, s.quote, s.old_paragraph, "
            "s.section as suggested_section, p.posted_at, p.target, o.adopted_revid, o.adopted_at, "
            "o.adopted_how, o.adopted_source, o.adopted_sentence, o.adopted_paragraph, o.adopted_section, "
            "o.adoption_days, o.adopted_exact, o.reverted_revid, o.expired_at, o.features, o.fact, "
            "tv.status as verdict, tv.reasons as reasons, tv.set_by as verdict_by, "
            "uv.status as untrusted_verdict, uv.set_by as untrusted_by, uv.why_untrusted "
            "from suggestions s join posts p on p.suggestion_id = s.id "
            "left join outcomes o on o.suggestion_id = s.id "
            "left join verdicts tv on tv.id = (select max(id) from verdicts where suggestion_id = s.id and trusted = 1) "
            "left join verdicts uv on uv.id = (select max(id) from verdicts where suggestion_id = s.id and trusted = 0) "
            f"where {' and '.join(where)} order by p.posted_at, p.id")
        rows = [dict(r) for r in self.db.query(sql, args)]
        gates = self._gates([r["id"] for r in rows])
        for r in rows:
            r["gates"] = gates.get(r["id"], [])
        return rows

    def _gates(self, ids: list[str]) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        wanted = set(ids)
        for r in self.db.query("select suggestion_id, gate from gate_results order by id"):
            if r["suggestion_id"] not in wanted:
                continue
            out.setdefault(r["suggestion_id"], [])
            if r["gate"] not in out[r["suggestion_id"]]:
                out[r["suggestion_id"]].append(r["gate"])
        return out


def now() -> str:
    return clock.stamp()


def _decoded(row) -> dict:
    row = dict(row)
    for key in ("names", "figures", "words", "baseline_urls", "baseline_sentences"):
        row[key] = json.loads(row.get(key) or "[]")
    return row
