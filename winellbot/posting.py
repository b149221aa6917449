"""What the bot posts for one article, and how: the posting policy.

Before anything is rendered, :class:`PostPlanner` decides, for a page's pending suggestions:

* **one post per fact**: a suggestion that reports the same fact as another one being posted, or
  as one already posted for the article, is not posted on its own; its source is listed as a
  further source of the one that is (its state says why);
* **caps**: at most ``max_per_page_per_week`` suggestions per article in seven days, and at most
  ``max_per_wiki_per_day`` on the whole wiki in a day (WMF's "Add a Fact" caps a user at 10 facts
  a day; English Wikipedia switched off talk-page notices that came too often). What a cap holds
  back stays pending for a later cycle;
* **what the reviewer is shown**: the new fact in one short line, the article sentence it may make
  stale, other sources of the same fact, and the article's named references (so that a preview
  of a paragraph that reuses one renders without a cite error).

The style (``fact`` or ``edit``) is the wiki's: :func:`resolve_style`.
"""
from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

from winellbot import clock
from winellbot.article import named_ref_definitions
from winellbot.errors import ConfigError
from winellbot.facts import key_sentence, same_fact, stale_sentence
from winellbot.models import Article, Suggestion
from winellbot.wiki.render import Notes

STYLES = ("fact", "edit")
# Wikis whose guidance restricts proposing ready-made (LLM-generated) article prose: the bot
# posts the sourced fact and a citation there, never a rewritten paragraph.
FACT_WIKIS = frozenset({"en.wikipedia.org"})


def resolve_style(style: str, hostname: str) -> str:
    """``fact`` or ``edit``; ``auto`` picks ``fact`` on the wikis in :data:`FACT_WIKIS`."""
    if style in STYLES:
        return style
    if style == "auto":
        return "fact" if hostname.lower() in FACT_WIKIS else "edit"

    raise ConfigError(f"unknown posting.style {style!r} (fact | edit | auto)")


@dataclass(frozen=True)
class PostPlan:
    """The decision for one article: what to post (with its notes) and what not, with reasons."""

    post: tuple[Suggestion, ...] = ()
    notes: dict[str, Notes] = field(default_factory=dict)
    merged: dict[str, str] = field(default_factory=dict)  # id -> why it is not posted on its own
    capped: tuple[str, ...] = ()
    cap_reason: str = ""


class PostPlanner:
    """Applies one-post-per-fact and the caps to a page's pending suggestions."""

    def __init__(self, state, *, max_per_page_per_week: int, max_per_wiki_per_day: int,
                 now: dt.datetime | None = None) -> None:
        self.state = state
        self.per_page = max_per_page_per_week
        self.per_wiki = max_per_wiki_per_day
        self.now = now

    def plan(self, article: Article, pending: list[Suggestion]) -> PostPlan:
        keep, merged, further = self._one_per_fact(article, pending)
        room, reason = self._room(article.title)
        post, capped = keep[:room], tuple(s.id for s in keep[room:])
        refs = named_ref_definitions(article.wikitext)
        notes = {}
        for s in post:
            twins = further.get(s.id, [])
            # The sources of one fact together say more about what it replaces than one alone.
            text = " ".join([s.update.text, *(t.update.text for t in twins)])
            notes[s.id] = Notes(fact=key_sentence(s.update.text, article),
                                may_replace=stale_sentence(article, text) or "",
                                also_reported=tuple(t.edit.citation for t in twins), references=refs)
        return PostPlan(tuple(post), notes, merged, capped, reason if capped else "")

    def _one_per_fact(self, article: Article, pending: list[Suggestion]):
        earlier = [row for status in ("posted", "accepted") for row in self.state.suggestions(article.title, status)]
        keep: list[Suggestion] = []
        merged: dict[str, str] = {}
        further: dict[str, list[Suggestion]] = {}
        for s in pending:
            twin = next((k for k in keep if same_fact(k.update.text, s.update.text, article)), None)
            if twin is not None:
                merged[s.id] = f"same fact as suggestion {twin.id}, posted with it as a further source"
                further.setdefault(twin.id, []).append(s)
                continue
            old = next((r for r in earlier if same_fact(r["update_text"] or "", s.update.text, article)), None)
            if old is not None:
                merged[s.id] = f"same fact as suggestion {old['id']}, already {old['status']} on the wiki"
                continue
            keep.append(s)
        return keep, merged, further

    def _room(self, page: str) -> tuple[int, str]:
        now = (self.now or clock.now()).replace(microsecond=0)
        # A post dated after now (a clock that ran fast) counts: the counts run from the window's start on.
        week = self.state.count_posts((now - dt.timedelta(days=7)).isoformat(), page=page)
        day = self.state.count_posts((now - dt.timedelta(days=1)).isoformat())
        page_room, wiki_room = max(0, self.per_page - week), max(0, self.per_wiki - day)
        if page_room <= wiki_room:
            return page_room, f"{self.per_page} suggestions per article in 7 days ({week} posted)"
        return wiki_room, f"{self.per_wiki} suggestions per day on the wiki ({day} posted)"
