"""The bot's clock: the one place that reads the time for the bot's own records.

Every time the bot writes into its state (a run's start and end, a post, a claim, a page's last
check and next due date, an outcome, an error) and every time it compares such a record with now
comes from :data:`CLOCK`, in UTC and whole seconds.

**Agreeing with the wiki.** At the start of each cycle the bot reads the wiki's clock (the API's
``curtimestamp``, :meth:`winellbot.wiki.reader.WikiReader.server_time`) and gives it to
:meth:`Clock.agree_with`. When this machine's clock differs from the wiki's by more than
:data:`TOLERANCE_S`, the difference is kept as an offset until the next reading: the bot's records
then carry the wiki's time (the time its edits carry), so a machine whose clock is wrong by a
year neither dates its posts a year ahead nor searches from a date that has not come. Within the
tolerance (the API gives whole seconds, and a request takes a moment) no offset is kept.

**Records ahead of now.** A time recorded ahead of now (by a clock that ran fast before it was
corrected, or by another machine) is never trusted to lie in the future: :func:`is_ahead` says
which ones are, and every comparison treats them as now (a post counts in the caps, a page is due,
a last check does not move the search window; see docs/safety.md, "Clock").
"""
from __future__ import annotations

import datetime as dt
import logging
import time
from collections.abc import Callable

log = logging.getLogger(__name__)

TOLERANCE_S = 5.0  # a smaller difference from the wiki's clock is the API's whole seconds and a request's time
# Two machines that each agree with the wiki within TOLERANCE_S differ by at most this: a record of
# another job's dated less than this after now is not "ahead" (its page is not done again).
AHEAD_S = 2 * TOLERANCE_S


class Clock:
    """UTC time from ``source`` (seconds since 1970: :func:`time.time` unless a test gives its own),
    moved by the offset the latest :meth:`agree_with` found."""

    def __init__(self, source: Callable[[], float] = time.time) -> None:
        self.source = source
        self.offset = 0.0  # seconds added to the source: the wiki's clock less this machine's

    def now(self) -> dt.datetime:
        """Now, timezone-aware UTC, in whole seconds."""
        return dt.datetime.fromtimestamp(self.source() + self.offset, dt.timezone.utc).replace(microsecond=0)

    def stamp(self) -> str:
        """Now as the state records it: ISO 8601 with its offset ("2026-05-01T12:00:00+00:00")."""
        return self.now().isoformat()

    def today(self) -> dt.date:
        """Today's date in UTC (the date the wiki writes)."""
        return self.now().date()

    def agree_with(self, server: dt.datetime) -> float:
        """Take the wiki's time ``server``, read just now; returns how far this machine's clock is ahead
        of it, in seconds (negative: behind). Beyond :data:`TOLERANCE_S` that difference is the offset."""
        if server.tzinfo is None:
            server = server.replace(tzinfo=dt.timezone.utc)
        ahead = self.source() - server.timestamp()
        self.offset = -ahead if abs(ahead) > TOLERANCE_S else 0.0
        if self.offset:
            log.warning("this machine's clock is %s the wiki's: the bot's records use the wiki's time "
                        "(set the machine's clock, e.g. with NTP)", describe(ahead))
        return ahead


def describe(ahead: float) -> str:
    """``ahead`` seconds in words: "400 days ahead of", "3 minutes behind"."""
    size = abs(ahead)
    for unit, seconds in (("days", 86400), ("hours", 3600), ("minutes", 60)):
        if size >= seconds:
            amount = f"{size / seconds:.0f} {unit}"
            break
    else:
        amount = f"{size:.0f} seconds"
    return f"{amount} {'ahead of' if ahead > 0 else 'behind'}"


def parse(recorded: str) -> dt.datetime:
    """A recorded time or date as an aware UTC datetime (a date is its midnight; no zone: UTC)."""
    value = dt.datetime.fromisoformat(recorded.replace("Z", "+00:00"))
    return value if value.tzinfo else value.replace(tzinfo=dt.timezone.utc)


def is_ahead(recorded: str | None, now: dt.datetime | None = None) -> bool:
    """Whether ``recorded`` (an ISO time or date) lies more than :data:`AHEAD_S` after ``now`` (default:
    :data:`CLOCK`'s now): written by a clock that ran fast. A missing or unreadable time is not ahead."""
    if not recorded:
        return False
    try:
        return parse(recorded) > (now or CLOCK.now()) + dt.timedelta(seconds=AHEAD_S)
    except ValueError:
        return False


CLOCK = Clock()  # the process's clock: every record of the bot's reads it


def now() -> dt.datetime:
    """:data:`CLOCK`'s now."""
    return CLOCK.now()


def stamp() -> str:
    """:data:`CLOCK`'s now, as the state records it."""
    return CLOCK.stamp()


def today() -> dt.date:
    """:data:`CLOCK`'s date."""
    return CLOCK.today()
