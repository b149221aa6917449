"""Posts announced to the state before the wiki's save, so that the wiki is never ahead of the state.

Before the writer saves a page's suggestions, :meth:`PostIntents.announce` checks that the state can take
the post's record and writes one ``post_intents`` row per suggestion (the article, and the queue page the
post goes to, or none for the article's talk page) in a committed transaction. It refuses with a
:class:`winellbot.errors.StorageError`, before anything reaches the wiki, when the state's folder has less
free space than the margin (SQLite) or when that write fails (any engine: a full disk, a read-only file, a
server that refuses the write). The rows are removed once the post is recorded, or once the writer
answered without saving.

A row still there at the next start is a save whose record may have been lost (a full disk, a killed job,
a state that failed after the save): :meth:`PostIntents.left` lists them, the bot reads the target page's
history to find the revision that added each suggestion, records the post with that revision, and
removes the rows (winellbot/bot.py). On a database server another job's rows count only once its lease
time has passed since they were written (a job alive is still writing them).
"""
from __future__ import annotations

import datetime as dt
import logging
import os
import shutil
from dataclasses import dataclass

from winellbot import clock
from winellbot.errors import StorageError, WikiDown, WinellbotError

DEFAULT_MARGIN_MB = 16.0
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Intent:
    """The suggestions of one page announced for one save."""

    page: str
    target: str  # the queue page; "" for the article's talk page
    ids: tuple[str, ...]


class PostIntents:
    """The announced posts of ``state``; ``margin_mb``: the free space the state's folder must keep (SQLite)."""

    def __init__(self, state, *, margin_mb: float = DEFAULT_MARGIN_MB) -> None:
        self.state, self.db, self.margin_mb = state, state.db, margin_mb

    def announce(self, page: str, ids: list[str], target: str = "") -> None:
        """Check the state can take the post's record, then write one row per suggestion; StorageError if not."""
        self._space()
        stamp = clock.stamp()
        try:
            with self.db.atomic():
                for sid in ids:
                    self.db["post_intents"].upsert({"suggestion_id": sid, "page": page, "target": target,
                                                    "created": stamp}, pk="suggestion_id")
        except StorageError as exc:
            raise StorageError(f"nothing posted to the wiki: the state cannot record the post ({exc})") from exc
        except Exception as exc:  # a server's refusal, a driver's error: the state is not writable now
            raise StorageError(f"nothing posted to the wiki: the state refused a write "
                               f"({type(exc).__name__}: {' '.join(str(exc).split())[:300]})") from exc

    def done(self, ids) -> None:
        """The rows of ``ids`` removed: their post is recorded, or the writer saved nothing of them."""
        ids = list(ids)
        if ids:
            with self.db.atomic():
                self.db.execute(f"delete from post_intents where suggestion_id in ({','.join('?' * len(ids))})", ids)

    def left(self, older_than: float = 0.0) -> list[Intent]:
        """The rows left by saves whose record may be missing (on a server: written ``older_than`` s ago or more)."""
        since = (clock.now() - dt.timedelta(seconds=older_than)).isoformat()
        rows = self.db.execute("select page, target, suggestion_id from post_intents where created <= ? "
                               "order by page, target, suggestion_id", [since]).fetchall()
        grouped: dict[tuple[str, str], list[str]] = {}
        for page, target, sid in rows:
            grouped.setdefault((page, target or ""), []).append(sid)
        return [Intent(page, target, tuple(ids)) for (page, target), ids in grouped.items()]

    def _space(self) -> None:
        """SQLite: StorageError when the state's folder has less free space than the margin."""
        if getattr(self.state, "engine", "sqlite") != "sqlite" or self.state.path == ":memory:":
            return
        folder = os.path.dirname(os.path.abspath(self.state.path))
        free = shutil.disk_usage(folder).free
        if free < self.margin_mb * 1024 * 1024:
            raise StorageError(f"nothing posted to the wiki: the state's disk ({folder}) has {free / 1048576:.1f} MB "
                               f"free, less than the {self.margin_mb:g} MB kept to record posts ([state] min_free_mb): "
                               "free space there, then run again")


class LostPosts:
    """Records the saves announced on ``state`` and left unrecorded, reading where they went through
    ``writer`` (:meth:`winellbot.wiki.writer.WikiWriter.revisions_adding`); a queue page found is listed on
    ``index`` (the per-article queue's index; "" for none), as the killed job would have. A page whose
    history cannot be read for a reason of its own (gone, refused) is one of :attr:`problems` (page, why)."""

    def __init__(self, state, writer, *, index: str = "") -> None:
        self.state, self.writer, self.index = state, writer, index

    def run(self, older_than: float = 0.0) -> int:
        """Record them (rows written ``older_than`` s ago or more); returns how many posts were recorded."""
        intents = PostIntents(self.state)
        recorded = 0
        self.problems: list[tuple[str, str]] = []
        for intent in intents.left(older_than):
            unposted = [sid for sid in intent.ids if (self.state.suggestion(sid) or {}).get("status") != "posted"]
            try:
                target, found = self.writer.revisions_adding(intent.page, intent.target, unposted) if unposted \
                    else ("", {})
            except (WikiDown, StorageError):
                raise  # the cycle stops; the rows wait for the next start
            except WinellbotError as exc:  # this page only (gone, refused): nothing of it can be found
                self.problems.append((intent.page, f"a post announced and not recorded was not found: {exc}"))
                intents.done(intent.ids)
                continue
            for revid in sorted(set(found.values())):
                sids = [sid for sid, r in found.items() if r == revid]
                links = {sid: self.writer.permalink(target, revid, sid) for sid in sids}
                self.state.record_post(sids, target, revid, "", links)
                log.info("%s: %d post(s) found on %s (revision %s) recorded", intent.page, len(sids), target, revid)
                recorded += len(sids)
            if found and intent.target and self.index:
                try:
                    self.writer.list_on_index(self.index, target, intent.page)
                except (WikiDown, StorageError):
                    raise
                except WinellbotError as exc:  # a listing refused (the index is a control page ...): said once
                    self.problems.append((intent.page, f"a post recorded at this start was not listed: {exc}"))
            intents.done(intent.ids)
        return recorded


def migrate_013(schema) -> None:
    """The posts announced before a save and not yet recorded."""
    schema.create("post_intents", {"suggestion_id": str, "page": str, "target": str, "created": str},
                  pk="suggestion_id")
