"""The state's schema as named migrations, run in order on SQLite or MariaDB.

Each migration takes a :class:`winellbot.state.schema.Schema` (which writes the engine's DDL) and
is recorded in ``_migrations`` once applied; :meth:`winellbot.state.db.State.migrate` runs the ones
a database lacks, each in a transaction (on SQLite the whole migration or none of it; on MariaDB
each statement commits on its own and every step is idempotent, so a cut-short migration is
finished by the next open). A name, once released, never changes: it is what a database records.

This module imports no SQLAlchemy: the state reads the names on every open, and only a database
with a migration to apply loads the schema writer.
"""
from __future__ import annotations

from collections.abc import Callable

from winellbot.state.intents import migrate_013
from winellbot.state.outcomes import migrate_006
from winellbot.state.reviews import migrate_010
from winellbot.state.revisions import migrate_011
from winellbot.state.sessions import migrate_012


def _m001_initial(schema) -> None:
    schema.create("pages", {"title": str, "opted_in": int, "last_revid": int, "last_checked": str, "last_run": str,
                            "next_due": str, "last_error": str}, pk="title")
    schema.create("runs", {"id": int, "started": str, "finished": str, "status": str, "backend": str, "pages": int,
                           "suggestions": int, "posted": int, "errors": int}, pk="id")
    schema.create("sources", {"url": str, "original_url": str, "title": str, "publisher": str, "published": str,
                              "fetched_at": str, "status": str, "error": str, "content_hash": str, "text": str},
                  pk="url")
    schema.create("updates", {"key": str, "run_id": int, "page": str, "section": str, "text": str, "quote": str,
                              "url": str, "event_date": str, "score": float, "reason": str}, pk="key")
    schema.create("decisions", {"id": int, "run_id": int, "page": str, "update_key": str, "action": str,
                                "reason": str, "replaces": str, "created": str}, pk="id")
    schema.create("steps", {"id": int, "run_id": int, "page": str, "query": str, "chosen_url": str, "reason": str},
                  pk="id")
    # rowid: State.suggestions lists them in the order they were made (SQLite's rowid; a column on MariaDB)
    schema.create("suggestions", {"id": str, "run_id": int, "page": str, "revid": int, "section": str,
                                  "paragraph_index": int, "old_paragraph": str, "new_paragraph": str,
                                  "added_text": str, "update_text": str, "quoted": int, "citation": str,
                                  "quote": str, "url": str, "status": str, "status_reason": str, "created": str,
                                  "updated": str}, pk="id", rowid=True)
    schema.create("gate_results", {"id": int, "suggestion_id": str, "gate": str, "severity": str, "message": str,
                                   "created": str}, pk="id")
    schema.create("posts", {"id": int, "suggestion_id": str, "target": str, "revid": int, "section_title": str,
                            "posted_at": str}, pk="id")
    schema.create("llm_calls", {"id": int, "run_id": int, "stage": str, "backend": str, "model": str,
                                "request_hash": str, "prompt_tokens": int, "completion_tokens": int, "cached": int,
                                "seconds": float, "error": str, "created": str}, pk="id")
    schema.create("llm_cache", {"key": str, "reply": str, "created": str}, pk="key")
    schema.create("errors", {"id": int, "run_id": int, "page": str, "stage": str, "message": str, "created": str},
                  pk="id")
    schema.create_index("suggestions", ["page", "status"])
    schema.create_index("posts", ["suggestion_id"])
    schema.create_index("decisions", ["run_id", "page"])


def _m002_post_links(schema) -> None:
    # The permanent link of each post (the revision that added it, anchored at the suggestion),
    # so that `winellbot posted` can list where everything went without asking the wiki.
    schema.add_column("posts", "url", str)
    schema.create_index("posts", ["posted_at"])


def _m003_review_pages(schema) -> None:
    # The last revision of each page holding posted suggestions whose verdicts the bot has read.
    schema.create("review_pages", {"target": str, "seen_revid": int, "checked": str}, pk="target")


def _m004_hostile_sources(schema) -> None:
    # Why a source was found addressing an AI or the reader with instructions (gates/hostile.py).
    schema.add_column("sources", "hostile", str)


def _m005_suggestion_reasons(schema) -> None:
    # The reason of the update as the suggestion was made from it: the pipeline's last looks
    # (placing again by meaning, widening) rewrite the reason the loop recorded with the update.
    schema.add_column("suggestions", "update_reason", str)


def _m006_outcomes(schema) -> None:
    # What became of each posted suggestion: adoption, reviewers' verdicts (winellbot/state/outcomes.py).
    migrate_006(schema)


def _m007_leases(schema) -> None:
    # Several jobs on one state on MariaDB (winellbot/state/leases.py): which job holds a lease on
    # each page and until when (seconds since 1970 by the server's clock), and each run's job and
    # the last sign of life it gave.
    schema.add_column("pages", "lease_holder", str)
    schema.add_column("pages", "lease_expires", float)
    schema.create_index("pages", ["lease_holder"])
    schema.add_column("runs", "job", str)
    schema.add_column("runs", "heartbeat", float)


def _m008_post_claims(schema) -> None:
    # Posts claimed before the wiki write, counted by the caps of every job (winellbot/state/posts.py),
    # and the one row whose lock lets one job at a time claim.
    schema.create("post_claims", {"suggestion_id": str, "page": str, "job": str, "claimed_at": str, "done": int},
                  pk="suggestion_id")
    schema.create_index("post_claims", ["done", "claimed_at"])
    schema.create("post_caps", {"name": str}, pk="name")


def _m009_long_source_urls(schema) -> None:
    # A source's URL of any length as the key of `sources`: on MariaDB a key holds at most 768
    # characters and a longer URL could not be recorded (SQLite, whose keys have no limit, is unchanged).
    schema.unbounded_key("sources", "url")


def _m010_review(schema) -> None:
    # Reviewed before posted (winellbot/state/reviews.py): each suggestion's acceptability estimate and
    # the measurements behind it, the wiki it is for, and every reviewer's decision.
    migrate_010(schema)


def _m011_revisions(schema) -> None:
    # Reviewers' wording, notes and undos (winellbot/state/revisions.py): the edit data the bot lacks.
    migrate_011(schema)
def _m012_review_sessions(schema) -> None:
    # The review page's sessions, which logout, a block, a lost right or a timeout end on the server
    # (winellbot/state/sessions.py).
    migrate_012(schema)
def _m013_post_intents(schema) -> None:
    # The posts announced before a wiki save and not yet recorded, recorded at the next start with the
    # revision read back from the wiki (winellbot/state/intents.py).
    migrate_013(schema)


MIGRATIONS: list[tuple[str, Callable[..., None]]] = [
    ("001_initial", _m001_initial),
    ("002_post_links", _m002_post_links),
    ("003_review_pages", _m003_review_pages),
    ("004_hostile_sources", _m004_hostile_sources),
    ("005_suggestion_reasons", _m005_suggestion_reasons),
    ("006_outcomes", _m006_outcomes),
    ("007_leases", _m007_leases),
    ("008_post_claims", _m008_post_claims),
    ("009_long_source_urls", _m009_long_source_urls),
    ("010_review", _m010_review),
    ("011_revisions", _m011_revisions),
    ("012_review_sessions", _m012_review_sessions),
    ("013_post_intents", _m013_post_intents),
]
