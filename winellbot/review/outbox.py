"""What the bot's writer does with reviewers' decisions: approvals (and revisions) made into posts, and
posts whose approval was undone withdrawn, once.

:class:`Approved` turns the approved suggestions of one page into what is rendered: each names its
reviewer and the date; a revision's wording replaces the bot's line in the post (the bot's line stays
in the state), the reviewer's note goes with it, and a section the reviewer chose is said to be theirs.
Before anything is rendered, a revision is checked again as the writer checks any post
(``recheck``: a callable given the suggestion as it would be posted, the reviewer's text and note,
returning a finding in words or None); one that fails goes back to the queue with the finding and is never posted.

:class:`Withdrawals` settles the posts just recorded (a revision posted; an approval undone while
the post was in flight makes it ``withdrawing``) and withdraws, through the writer's one write path,
every post whose approval was undone: the box's status becomes ``withdrawn`` with an edit summary naming who
undid it, then the state says ``withdrawn``. A crash between the two is finished by the next run (the
writer's status change is idempotent).
"""
from __future__ import annotations

import dataclasses
import logging
import re
from collections.abc import Callable

from winellbot.gates.base import needs_rewording
from winellbot.models import Suggestion
from winellbot.state.reviews import ReviewStore
from winellbot.state.revisions import RevisionStore
from winellbot.wiki.render import Notes

log = logging.getLogger(__name__)
_REF = re.compile(r"<ref\b[^>]*/>|<ref\b[^>]*>.*?</ref>", re.S | re.I)

Recheck = Callable[[Suggestion, str, str], "str | None"]  # (suggestion, wording, note) -> a finding or None


@dataclasses.dataclass(frozen=True)
class Prepared:
    """The suggestions of one page to render (revisions applied), their notes, and those refused now."""

    post: tuple[Suggestion, ...]
    notes: dict[str, Notes]
    refused: dict[str, str]  # id -> the finding that sent the revision back to the queue


class Approved:
    """Applies the recorded approvals and revisions of a state to a page's posts."""

    def __init__(self, state, recheck: Recheck | None = None) -> None:
        self.state, self.recheck = state, recheck

    def postable(self, title: str, opted_in: bool, gate, asks_unreviewed: Callable[[str], bool]) -> tuple[list, dict]:
        """The page's suggestions that may be posted now in the reviewed mode, and who approved each: those
        with a recorded approval (an ``approved`` status without one is never posted), and where the opt-in
        says ``review=no`` (``asks_unreviewed``, asked of the wiki only when it matters) the pending ones the
        acceptability ``gate``'s bar passes, but a line marked for rewording (a reviewer's to word)."""
        approved = [self.state.load_suggestion(r) for r in self.state.suggestions(page=title, status="approved")]
        approvals = ReviewStore(self.state).approvals([s.id for s in approved])
        postable = [s for s in approved if s.id in approvals and not s.blocked]
        if opted_in:
            bar = [self.state.load_suggestion(r) for r in self.state.suggestions(page=title, status="proposed")
                   if gate is None or gate.passes(r.get("estimate"))]
            unreviewed = [s for s in bar if not s.blocked and not needs_rewording(s)]
            if unreviewed and asks_unreviewed(title):
                postable += unreviewed
        return postable, approvals

    def prepare(self, post: tuple[Suggestion, ...], notes: dict[str, Notes], reviewed: set[str]) -> Prepared:
        """``post`` (suggestions of one page, as the posting policy planned them; ``reviewed``: the ids that
        were postable for their approval) with each one's approval and revision applied, read now, just
        before the write: one whose approval was undone since is left out (``refused``, not sent back: the
        undo put it where it belongs); a revision the recheck refuses is left out and sent back."""
        ids = [s.id for s in post]
        approvals = ReviewStore(self.state).approval_rows(ids)
        revisions = RevisionStore(self.state).live(ids)
        out, out_notes, refused = [], {}, {}
        for s in post:
            note = notes.get(s.id, Notes())
            review = approvals.get(s.id)
            if review is None:
                if s.id in reviewed:  # its approval was undone since it was read
                    refused[s.id] = "its approval was undone"
                else:  # posted without review (review=no): as the bot wrote it
                    out.append(s), out_notes.__setitem__(s.id, note)
                continue
            note = dataclasses.replace(note, reviewer=review["reviewer"], checked_on=(review["decided_at"] or "")[:10],
                                       section_chosen=review.get("section_to") is not None,
                                       note=review.get("note") or "")
            revision = revisions.get(s.id)
            if revision is not None:
                s = reworded(s, revision["text"])
                finding = self.recheck(s, revision["text"], revision.get("note") or "") if self.recheck else None
                if finding:
                    refused[s.id] = finding
                    ReviewStore(self.state).send_back(s.id, finding)
                    log.info("suggestion %s: the reviewer's wording was not posted: %s", s.id, finding)
                    continue
                note = dataclasses.replace(note, fact=revision["text"], worded=True, may_replace=note.may_replace)
            out.append(s), out_notes.__setitem__(s.id, note)
        return Prepared(tuple(out), out_notes, refused)


def reworded(s: Suggestion, text: str) -> Suggestion:
    """``s`` as it is posted with a reviewer's wording: the text the paragraph gains is the reviewer's,
    with the bot's citation kept; the update (its line, its quote, hence its id) stays the bot's."""
    e = s.edit
    refs = "".join(_REF.findall(e.added_text))
    added = text.strip() + refs
    if e.added_text and e.added_text in e.new_paragraph:
        paragraph = e.new_paragraph.replace(e.added_text, added, 1)
    else:
        paragraph = (e.old_paragraph.rstrip() + " " + added).strip()
    return dataclasses.replace(s, edit=dataclasses.replace(e, added_text=added, new_paragraph=paragraph, quoted=False))


class Withdrawals:
    """Withdraws posts whose approval was undone, through ``writer`` (the one write path)."""

    def __init__(self, state, writer) -> None:
        self.state, self.writer = state, writer

    def run(self, done: list[str] | None = None, links: dict[str, str] | None = None) -> int:
        """Settle the posts just recorded (``done``, with their ``links``; None: every recorded post, as at
        a start that recorded lost posts): their revisions ``posted``, and those whose approval was undone
        meanwhile ``withdrawing``. Then withdraw every ``withdrawing`` suggestion's post; returns how many
        boxes changed."""
        revisions = RevisionStore(self.state)
        if done is None:
            revisions.posted_since()
        else:
            for sid in done:
                revisions.set_status(sid, "posted", post_url=(links or {}).get(sid))
        ReviewStore(self.state).settle_posted(done)
        changed = 0
        for row in ReviewStore(self.state).withdrawing():
            why = row["status_reason"] or "its approval was undone"
            change = self.writer.set_status(row["target"], row["id"], "withdrawn",
                                            summary=f"suggestion {row['id']} withdrawn: {why}")
            gone = "" if change.found else f" (its box is no longer on {row['target']})"
            self.state.set_status(row["id"], "withdrawn", why + gone)
            changed += bool(change.found and change.revid)
            log.info("suggestion %s withdrawn on %s: %s%s", row["id"], row["target"], why, gone)
        return changed
