"""Reviewers' verdicts on posted suggestions, read from the boxes of the pages they were posted on.

A box's ``status`` says accepted, rejected or withdrawn (:func:`winellbot.wiki.render.parse_statuses`);
its ``reason`` may name errors of the rubric (``../shared/bench/verdicts.md``: ``not_new``,
``off_topic`` ...; words such as "not new" or "wrong section" count too, anything else is ``other``).

A status is attributed to the editor of the page's revision in which the bot first reads it. It is
trusted when that editor is a registered account without the wiki's ``bot`` right (the wiki's own
group settings decide who has it), and, unless ``trust_anonymous``, not an IP or a temporary
account. The bot's own account never sets a verdict: a status first read in one of its own revisions
was set by someone the bot cannot name, and is not trusted either. Untrusted statuses are recorded,
never counted.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import mwparserfromhell

from winellbot.bench.verdicts import ERRORS
from winellbot.state.outcomes import OutcomeStore
from winellbot.wiki.reader import PageRevision
from winellbot.wiki.render import _is_box, parse_statuses

DECIDED = ("accepted", "rejected", "withdrawn")
_REASON_WORDS = {
    "not new": "not_new", "already in the article": "not_new", "already there": "not_new", "duplicate": "not_new",
    "trivial": "insignificant", "not notable": "insignificant", "off topic": "off_topic",
    "unsourced": "unsupported", "not in the source": "unsupported", "not supported": "unsupported",
    "wrong section": "wrong_section", "opinion": "subjective", "promotion": "subjective",
    "promotional": "subjective", "pov": "subjective", "not neutral": "subjective", "fragment": "unclear",
    "too long": "too_long",
}


@dataclass(frozen=True)
class Verdict:
    """One status read from a box, with who set it and whether it counts."""

    suggestion_id: str
    target: str
    revid: int
    status: str
    reasons: tuple[str, ...] = ()
    set_by: str = ""
    trusted: bool = True
    why_untrusted: str = ""

    def row(self) -> dict:
        return {"suggestion_id": self.suggestion_id, "target": self.target, "revid": self.revid,
                "status": self.status, "reasons": ",".join(self.reasons), "set_by": self.set_by,
                "trusted": int(self.trusted), "why_untrusted": self.why_untrusted}


def reasons_of(text: str) -> tuple[str, ...]:
    """Rubric error codes named by a reviewer's ``reason`` text, in order; ``other`` for the rest."""
    found: list[str] = []
    for part in re.split(r"[,;/]|\band\b", text.lower()):
        part = re.sub(r"[\s_-]+", " ", part).strip(" .")
        if not part:
            continue
        code = part.replace(" ", "_")
        code = code if code in ERRORS else _REASON_WORDS.get(part, "other")
        if code not in found:
            found.append(code)
    return tuple(found)


def box_reasons(page_text: str) -> dict[str, str]:
    """``{suggestion id: reason text}`` of every box that has a ``reason`` (the first box of an id wins)."""
    out: dict[str, str] = {}
    for tpl in mwparserfromhell.parse(page_text).filter_templates():
        if not _is_box(tpl):
            continue
        sid = str(tpl.get("id").value).strip().lower()
        if sid not in out:
            out[sid] = str(tpl.get("reason").value).strip() if tpl.has("reason") else ""
    return out


class VerdictReader:
    """Turns revisions of review pages into verdicts: ``rights(names)`` gives registered editors'
    rights (:meth:`winellbot.wiki.reader.WikiReader.user_rights`)."""

    def __init__(self, rights, *, bot_user: str, trust_anonymous: bool = False) -> None:
        self.rights = rights
        self.bot_user = bot_user
        self.trust_anonymous = trust_anonymous

    def read(self, revisions: list[PageRevision], known: dict[str, tuple[str, str]]) -> list[Verdict]:
        """The statuses that changed: ``known`` maps a suggestion id to the (status, reasons) last
        recorded for it; an id not in ``known`` is not one the bot posted and is left out."""
        found: list[tuple[PageRevision, str, str, tuple[str, ...]]] = []
        for rev in revisions:
            reasons = box_reasons(rev.text)
            for sid, status in parse_statuses(rev.text).items():
                if sid not in known:
                    continue
                why = reasons_of(reasons.get(sid, "")) if status == "rejected" else ()
                if (status, ",".join(why)) != known[sid] and (status in DECIDED or known[sid][0] in DECIDED):
                    found.append((rev, sid, status, why))
        registered = {rev.user for rev, *_ in found if not rev.anon and rev.user != self.bot_user}
        rights = self.rights(sorted(registered)) if registered else {}
        return [Verdict(sid, rev.title, rev.revid, status, why, rev.user, *self._trust(rev, rights))
                for rev, sid, status, why in found]

    def _trust(self, rev: PageRevision, rights: dict[str, frozenset[str]]) -> tuple[bool, str]:
        if rev.user == self.bot_user:
            return False, "first read in a revision of the bot's own: who set it is not known"
        if rev.anon:
            return (True, "") if self.trust_anonymous else (False, "set by an IP or a temporary account")
        if rev.user not in rights:
            return False, f"set by {rev.user!r}, not a registered account on the wiki"
        if "bot" in rights[rev.user]:
            return False, f"set by {rev.user!r}, an account with the bot right"
        return True, ""


class ReviewSync:
    """Reads the review pages edited since the bot last read them and records the verdicts found.

    Only pages holding suggestions still awaiting a trusted verdict are looked at, in batches: their
    latest revisions first, then the text (with its editor) of those edited since. A trusted
    verdict sets the suggestion's status in state; an untrusted one is recorded only.
    """

    def __init__(self, state, reader, *, bot_user: str, trust_anonymous: bool = False) -> None:
        self.state = state
        self.reader = reader
        self.verdicts = VerdictReader(reader.user_rights, bot_user=bot_user, trust_anonymous=trust_anonymous)

    def sync(self) -> int:
        """Returns how many suggestions' statuses trusted verdicts changed."""
        seen = self.state.review_targets()
        if not seen:
            return 0
        latest = self.reader.latest_revisions(list(seen))
        edited = [t for t in seen if t in latest and latest[t][0] != seen[t]]
        revisions = list(self.reader.revisions(edited))
        store = OutcomeStore(self.state)
        changed = 0
        for v in self.verdicts.read(revisions, self._known(revisions, store)):
            store.record_verdict(v.row())
            row = self.state.suggestion(v.suggestion_id)
            if v.trusted and row["status"] != v.status:
                why = "set by a reviewer on the wiki" + (f" ({', '.join(v.reasons)})" if v.reasons else "")
                self.state.set_status(v.suggestion_id, v.status, why)
                changed += 1
        for rev in revisions:
            self.state.saw_target(rev.title, rev.revid)
        return changed

    def _known(self, revisions: list[PageRevision], store) -> dict[str, tuple[str, str]]:
        """The status last recorded for each suggestion on these pages (``pending`` for none)."""
        known: dict[str, tuple[str, str]] = {}
        for rev in revisions:
            for sid in parse_statuses(rev.text):
                row = self.state.suggestion(sid)
                if row is None or sid in known:
                    continue
                last = store.last_verdict(sid)
                if last is not None:
                    known[sid] = (last["status"], last["reasons"] or "")
                else:
                    known[sid] = (row["status"] if row["status"] in DECIDED else "pending", "")
        return known
