"""The one place where winellbot saves anything to a wiki.

Every save goes through :meth:`WikiWriter._save`, which refuses, in this order: a target outside
talk namespaces and the bot's own userspace (``UnsafeWriteError``: the bot never edits an
article); a page whose ``{{bots}}``/``{{nobots}}`` excludes the bot (``PostingRefused``, read with
:mod:`winellbot.wiki.exclusion` and Pywikibot's ``botMayEdit``); any save once the shutoff page,
read right before each save, no longer says exactly :data:`RUN_WORD` (``ShutoffError``). The review queue
never writes a control page (the shutoff page, the user page, ``control_pages``), whatever the settings.

Before a post about an article, the article is read again: one that is gone (deleted, moved,
now a redirect) or that excludes the bot gets nothing (``PageGone``). A talk page that redirects
is followed once, and only within its own talk namespace (elsewhere: ``UnsafeWriteError``). A talk
page post is made only while, at the moment of writing, the talk page or the article carries the
opt-in template (``optin_template``); a talk page is created only for an article that carries it.
Pywikibot's errors leave the public methods through :mod:`winellbot.wiki.boundary`.

Talk pages get at most one new section per ``new_section_interval_days`` (a bot revision whose
summary carries :data:`NEW_SECTION_TAG` counts as one); inside that window new suggestions are
batched into the bot's latest section, and if that section is gone the post is deferred.

Posting is idempotent: every suggestion whose id marker is already on the target is skipped, so a
retry after a crash never posts twice. Saves use Pywikibot's ``Page.save``, so maxlag, the
throttle and ``-simulate`` apply.
"""
from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

import pywikibot
from pywikibot import exceptions as pwb_errors

from winellbot import clock
from winellbot.errors import ConfigError, PageGone, PostingRefused, ShutoffError, UnsafeWriteError, WikiError
from winellbot.wiki.boundary import guarded, refusal
from winellbot.wiki.exclusion import exclusion
from winellbot.wiki.render import (
    SECTION_MARKER,
    anchor,
    present_ids,
    queue_index_intro,
    queue_index_line,
    recount,
    set_status,
    split_blocks,
)

RUN_WORD = "run"
# The opt-in template's parameter by which an article's editors ask for its suggestions without review.
REVIEW_PARAM = "review"
UNREVIEWED_VALUES = frozenset({"no", "off", "direct", "none"})
NEW_SECTION_TAG = "[new section]"
_HEADING = re.compile(r"(?m)^(={1,6})[^\n]*?\1[ \t]*$")

PostMode = Literal["new-section", "batched", "queue", "deferred", "nothing"]


# What :meth:`WikiWriter._save_or_retry` returns after a first edit conflict.
_RETRY = object()


@dataclass(frozen=True)
class PostResult:
    """What one post did: which ids went up, which were already there, the new revision."""

    target: str
    mode: PostMode
    posted_ids: tuple[str, ...] = ()
    skipped_ids: tuple[str, ...] = ()
    revid: int | None = None
    section_title: str = ""
    reason: str = ""

    @property
    def deferred(self) -> bool:
        return self.mode == "deferred"


@dataclass(frozen=True)
class StatusChange:
    """What setting a suggestion's status on the wiki did."""

    target: str
    found: bool = True
    previous: str = ""
    revid: int | None = None


class WikiWriter:
    """Posts rendered suggestions to talk pages or the bot's userspace queue, safely."""

    def __init__(self, site, *, bot_user: str, shutoff_page: str,
                 allowed_userspace_prefix: str | None = None, new_section_interval_days: float = 7,
                 edit_summary_prefix: str = "winellbot: article update suggestions for human review",
                 message_type: str = "winellbot", optin_template: str | None = None,
                 control_pages: Mapping[str, str] | None = None, reviewed: bool = False) -> None:
        self.site = site
        self.reviewed = reviewed
        self.optin_template = optin_template
        self._optin_names: frozenset[str] | None = None
        self.bot_user = bot_user
        self.message_type = message_type
        self.shutoff_page = shutoff_page
        self.interval = dt.timedelta(days=new_section_interval_days)
        self.summary_prefix = edit_summary_prefix
        self._user_page = self._page(f"User:{bot_user}").title()
        prefix = allowed_userspace_prefix or f"User:{bot_user}/"
        try:
            root = self._page(prefix.rstrip("/"))
        except UnsafeWriteError as exc:
            raise ConfigError(str(exc)) from exc
        if root.namespace() != 2 or not (root.title() + "/").startswith(self._user_page + "/"):
            raise ConfigError(f"allowed_userspace_prefix {prefix!r} is not inside {self._user_page}/")
        self.userspace_prefix = root.title() + "/"
        # The bot's control pages, as this wiki spells their titles: the queue never writes one.
        pages = {self._user_page: "the bot's user page", shutoff_page: "the shutoff page", **(control_pages or {})}
        try:
            self._control = {self._page(title).title(): what for title, what in pages.items() if title}
        except UnsafeWriteError as exc:
            raise ConfigError(str(exc)) from exc

    # -- public ------------------------------------------------------------
    @guarded(lambda self, article_title, *a, **k: f"posting to the talk page of {article_title}")
    def post_talk_section(self, article_title: str, section_title: str, body: str,
                          suggestion_ids: list[str] | tuple[str, ...], *, unreviewed=()) -> PostResult:
        """Post ``body`` (from ``render_section``) under a new heading on the article's talk page.

        Suggestions already on the page are left out; inside the new-section
        interval they are appended to the bot's latest section instead, or the
        post is deferred when there is none. ``unreviewed``: the ids no reviewer approved.
        """
        head, blocks, tail = self._blocks(body, suggestion_ids)
        self.check_article(article_title)
        for attempt in range(2):
            page = self._talk_page(article_title)
            text = self._opted_in_talk(page, article_title, unreviewed=bool(unreviewed))
            new_blocks, skipped = _unposted(blocks, text)
            ids = tuple(i for i, _ in new_blocks)
            if not new_blocks:
                return PostResult(page.title(), "nothing", skipped_ids=skipped, reason="all already posted")
            added = "".join(b for _, b in new_blocks)
            if not self._recent_new_section(page):
                new_text = _append(text, f"== {section_title} ==\n{head}{added}{tail}")
                mode: PostMode = "new-section"
                summary = f"{self.summary_prefix} {NEW_SECTION_TAG}: {_count(ids)} in \"{section_title}\""
            else:
                new_text = _insert_into_latest_section(text, added + tail)
                if new_text is None:
                    return PostResult(page.title(), "deferred", skipped_ids=skipped,
                                      reason="a new section was posted recently and the bot's section is gone")
                mode = "batched"
                summary = f"{self.summary_prefix}: {_count(ids)} added to the latest suggestions section"
            revid = self._save_or_retry(page, new_text, summary, attempt)
            if revid is _RETRY:
                continue  # someone edited meanwhile: read again and recompute
            return PostResult(page.title(), mode, ids, skipped, revid, section_title)
        raise AssertionError("unreachable")

    @guarded(lambda self, queue_page, *a, **k: f"posting to {queue_page}")
    def post_queue(self, queue_page: str, body: str, suggestion_ids: list[str] | tuple[str, ...], *,
                   article: str | None = None, unreviewed=()) -> PostResult:
        """Append queue entries (from ``render_queue_entry``) to a page in the bot's userspace;
        with ``article``, only while that article exists and does not exclude the bot. In the
        reviewed mode every entry needs a reviewer's approval (``unreviewed`` must be empty)."""
        if self.reviewed and unreviewed:
            raise PostingRefused(f"{queue_page}: {len(unreviewed)} suggestion(s) without a reviewer's approval; "
                                 "nothing posted")
        head, blocks, tail = self._blocks(body, suggestion_ids)
        if article is not None:
            self.check_article(article)
        for attempt in range(2):
            page = self._queue_target(queue_page, "queue page")
            text = page.text if page.exists() else ""
            new_blocks, skipped = _unposted(blocks, text)
            ids = tuple(i for i, _ in new_blocks)
            if not new_blocks:
                return PostResult(page.title(), "nothing", skipped_ids=skipped, reason="all already posted")
            new_text = _append(text, head + "".join(b for _, b in new_blocks) + tail)
            summary = f"{self.summary_prefix}: {_count(ids)} added to the review queue"
            revid = self._save_or_retry(page, new_text, summary, attempt)
            if revid is _RETRY:
                continue
            return PostResult(page.title(), "queue", ids, skipped, revid)
        raise AssertionError("unreachable")

    @guarded(lambda self, index, *a, **k: f"listing a page on {index}")
    def list_on_index(self, index: str, page_title: str, article_title: str) -> bool:
        """Make sure the queue's index page (in the bot's userspace) links to ``page_title``.

        Returns whether it saved. The index lists one line per article page of the queue; an
        existing line (or any link to the page) is left as it is.
        """
        for attempt in range(2):
            page = self._queue_target(index, "queue index")
            text = page.text if page.exists() else queue_index_intro(self.bot_user)
            if f"[[{page_title}|" in text or f"[[{page_title}]]" in text:
                return False
            new_text = text.rstrip("\n") + "\n" + queue_index_line(page_title, article_title) + "\n"
            summary = f"{self.summary_prefix}: listing {article_title} in the review queue"
            if self._save_or_retry(page, new_text, summary, attempt) is _RETRY:
                continue
            return True
        raise AssertionError("unreachable")

    @guarded(lambda self, target, *a, **k: f"setting a status on {target}")
    def set_status(self, target: str, suggestion_id: str, status: str, *, summary: str) -> StatusChange:
        """Set the ``status`` parameter of one suggestion's box on ``target``; nothing else changes.

        ``previous`` is what the box said before (``pending``, or a reviewer's verdict); when the
        box is gone (archived, removed), nothing is saved and ``found`` is false.
        """
        for attempt in range(2):
            page = self._page(target)
            text = page.text if page.exists() else ""
            changed = set_status(text, suggestion_id, status)
            if changed is None:
                return StatusChange(page.title(), found=False)
            new_text, previous = changed
            if new_text == text:
                return StatusChange(page.title(), previous=previous, revid=page.latest_revision_id)
            revid = self._save_or_retry(page, new_text, f"{self.summary_prefix}: {summary}", attempt)
            if revid is _RETRY:
                continue
            return StatusChange(page.title(), previous=previous, revid=revid)
        raise AssertionError("unreachable")

    @guarded(lambda self, title, *a, **k: f"saving {title}")
    def save_own_page(self, title: str, text: str, *, summary: str) -> int | None:
        """Replace the text of a page in the bot's userspace (a report such as ``User:<bot>/Outcomes``);
        returns the new revision id, or None when the page already says exactly that."""
        for attempt in range(2):
            page = self._page(title)
            if not self._in_userspace(page):
                raise UnsafeWriteError(f"{page.title()} is not under {self.userspace_prefix}")
            if page.exists() and page.text == text:
                return None
            revid = self._save_or_retry(page, text, f"{self.summary_prefix}: {summary}", attempt)
            if revid is not _RETRY:
                return revid
        raise AssertionError("unreachable")

    @guarded(lambda self, article_title, *a, **k: f"reading where suggestions for {article_title} went up")
    def revisions_adding(self, article_title: str, target: str, suggestion_ids, *,
                         history: int = 50) -> tuple[str, dict[str, int]]:
        """Where a post of ``suggestion_ids`` went (``target``, or the article's talk page when empty) and,
        for each one on that page now, the revision that added it (read from its latest ``history``
        revisions; the oldest one read when the id is in all of them). Nothing is saved."""
        page = self._page(target) if target else self._talk_page(article_title)
        if not page.exists():
            return page.title(), {}
        wanted = set(suggestion_ids) & present_ids(page.get(force=True))
        found: dict[str, int] = {}
        newer = None
        for rev in page.revisions(content=True, total=history):  # newest first
            held = present_ids(rev.text or "")
            if newer is not None:
                for sid in wanted - held - set(found):
                    found[sid] = newer.revid  # the newer revision holds it, this one does not: it added it
            newer = rev
            if not wanted - set(found) or not held & wanted:
                break
        for sid in wanted - set(found):
            found[sid] = newer.revid
        return page.title(), found

    def permalink(self, title: str, revid: int | None, suggestion_id: str) -> str:
        """The permanent link of ``revid`` of ``title``, at the suggestion's box."""
        page = self._page(title)
        return f"{page.permalink(oldid=revid, with_protocol=True)}#{anchor(suggestion_id)}"

    @guarded("reading the shutoff page")
    def shutoff_allows(self) -> bool:
        """True when the shutoff page currently says to run (read fresh from the wiki)."""
        page = self._page(self.shutoff_page)
        try:
            text = page.get(force=True)
        except (pwb_errors.NoPageError, pwb_errors.IsRedirectPageError):
            return False
        return text.strip().lower() == RUN_WORD

    @guarded(lambda self, title: f"reading the article {title}")
    def check_article(self, title: str) -> None:
        """Raise unless ``title`` is an existing article (not a redirect) that does not exclude the bot."""
        page = self._page(title)
        if not page.exists():
            raise PageGone(f"the article {page.title()} does not exist (deleted or moved?); nothing posted")
        if page.isRedirectPage():
            raise PageGone(f"the article {page.title()} is now a redirect; nothing posted")
        why = exclusion(page.text, self.bot_user, self.message_type)
        if why:
            raise PostingRefused(f"{page.title()}: {why}")

    # -- the one save path -------------------------------------------------
    def _save_or_retry(self, page, text: str, summary: str, attempt: int):
        """:meth:`_save`; on an edit conflict :data:`_RETRY` the first time (the caller reads the page
        again and recomputes its text), a :class:`WikiError` the second."""
        try:
            return self._save(page, text, summary)
        except pwb_errors.EditConflictError:
            if attempt:
                raise WikiError(f"edit conflict on {page.title()} twice") from None
            return _RETRY

    def _save(self, page, text: str, summary: str) -> int | None:
        """Save ``text`` to ``page`` after every safety check; returns the new revision id."""
        self._check_target(page)
        why = exclusion(page.text if page.exists() else "", self.bot_user, self.message_type)
        if why or not page.botMayEdit():
            raise PostingRefused(f"{page.title()}: {why or 'excludes this bot with {{bots}} or {{nobots}}'}")
        if not self.shutoff_allows():
            raise ShutoffError(f"shutoff page {self.shutoff_page} does not say {RUN_WORD!r}")
        page.text = text
        try:
            page.save(summary=summary, minor=False, bot=True, apply_cosmetic_changes=False, quiet=True)
        except pwb_errors.EditConflictError:
            raise
        except pwb_errors.OtherPageSaveError as exc:  # a spam filter, {{bots}}: one line, the wiki's reason kept
            raise PostingRefused(f"{page.title()}: {refusal(exc)}") from exc
        return page.latest_revision_id if page.exists() else None

    def _check_target(self, page) -> None:
        if page.site != self.site:
            raise UnsafeWriteError(f"refusing to write {page.title()}: it is on another wiki")
        ns = page.namespace().id
        if ns > 0 and ns % 2 == 1:
            return
        if self._in_userspace(page):
            return
        raise UnsafeWriteError(f"refusing to write {page.title()}: not a talk page or under {self.userspace_prefix}")

    def _queue_target(self, title: str, what: str):
        """The page of the review queue at ``title``: under the bot's userspace and none of its control
        pages (the shutoff page, its user page, the watchlist...), whatever the settings say."""
        page = self._page(title)
        if not self._in_userspace(page):
            raise UnsafeWriteError(f"{what} {page.title()} is not under {self.userspace_prefix}")
        control = self._control.get(page.title())
        if control:
            raise UnsafeWriteError(f"refusing to write {page.title()} as the {what}: it is {control}, not a "
                                   "page of the review queue")
        return page

    def _in_userspace(self, page) -> bool:
        title = page.title()
        return page.namespace().id == 2 and (title == self._user_page or title.startswith(self.userspace_prefix))

    # -- helpers -----------------------------------------------------------
    def _page(self, title: str):
        """A page of this wiki; a title with an interwiki prefix is refused before Pywikibot
        would resolve it (and log in to) another wiki."""
        prefix, sep, _ = title.partition(":")
        prefix = prefix.strip().replace("_", " ").lower()
        if sep and prefix and self.site.namespaces.lookup_name(prefix) is None:
            interwiki = {row.get("prefix", "").lower() for row in self.site.siteinfo.get("interwikimap", [])}
            if prefix in interwiki:
                raise UnsafeWriteError(f"{title!r} points at another wiki ({prefix}:)")
        return pywikibot.Page(self.site, title)

    def _talk_page(self, article_title: str):
        page = self._page(article_title)
        talk = page if page.isTalkPage() else page.toggleTalkPage()
        if talk is None:
            raise UnsafeWriteError(f"{article_title} has no talk page")
        if talk.exists() and talk.isRedirectPage():
            target = talk.getRedirectTarget()  # posting on a redirect would replace it
            if target.namespace().id != talk.namespace().id:
                raise UnsafeWriteError(f"{talk.title()} redirects to {target.title()}, outside its namespace: "
                                       "nothing posted there")
            if not target.exists():
                raise PostingRefused(f"{talk.title()} redirects to {target.title()}, which does not exist")
            if target.isRedirectPage():
                raise PostingRefused(f"{talk.title()} is a double redirect (through {target.title()})")
            talk = target
        return talk

    def _opted_in_talk(self, page, article_title: str, *, unreviewed: bool = False) -> str:
        """The talk page's text, read now, if a post may go there: the talk page or the article
        carries the opt-in template at this moment; a talk page that does not exist is created only
        for an article that carries it itself (a deleted talk page is not brought back on an opt-in
        it no longer shows). With ``unreviewed`` in the reviewed mode, the template must also say
        ``review=no`` now. Else ``PostingRefused``."""
        text = page.get(force=True) if page.exists() else ""
        if self.optin_template is None:
            return text
        article = None
        if not (text and self._carries_optin(text)):
            article = self._page(article_title).get(force=True)
            if not self._carries_optin(article):
                where = "the talk page or the article" if text else "the article (the talk page does not exist)"
                raise PostingRefused(f"{page.title()}: the opt-in ({{{{{self.optin_template}}}}}) is not on {where} "
                                     "now; nothing posted")
        if unreviewed and self.reviewed:
            texts = [text, article if article is not None else self._page(article_title).get(force=True)]
            if not any(self._carries_optin(t, unreviewed=True) for t in texts):
                raise PostingRefused(f"{page.title()}: suggestions without a reviewer's approval, and the opt-in "
                                     f"does not say {REVIEW_PARAM}=no; nothing posted")
        return text

    @guarded(lambda self, title: f"reading the opt-in of {title}")
    def asks_unreviewed(self, article_title: str) -> bool:
        """Whether the opt-in template on the article's talk page or the article says ``review=no`` now."""
        if self.optin_template is None:
            return False
        article = self._page(article_title)
        talk = self._talk_page(article_title)
        texts = [talk.get(force=True) if talk.exists() else "", article.get(force=True) if article.exists() else ""]
        return any(self._carries_optin(t, unreviewed=True) for t in texts)

    def _carries_optin(self, text: str, *, unreviewed: bool = False) -> bool:
        """Whether ``text`` transcludes the opt-in template (``unreviewed``: one that says ``review=no``)."""
        import mwparserfromhell

        names = self._optin_template_names()
        for t in mwparserfromhell.parse(text).filter_templates():
            if _template_name(t.name) not in names:
                continue
            if not unreviewed:
                return True
            if t.has(REVIEW_PARAM) and str(t.get(REVIEW_PARAM).value).strip().lower() in UNREVIEWED_VALUES:
                return True
        return False

    def _optin_template_names(self) -> frozenset[str]:
        """The opt-in template's name and those of its redirects, normalised (read once)."""
        if self._optin_names is None:
            template = pywikibot.Page(self.site, self.optin_template, ns=10)
            names = {_template_name(template.title(with_ns=False))}
            try:
                names |= {_template_name(p.title(with_ns=False))
                          for p in template.backlinks(filter_redirects=True, namespaces=[10])}
            except pwb_errors.Error:
                pass  # the template's own name still counts
            self._optin_names = frozenset(names)
        return self._optin_names

    def _recent_new_section(self, page) -> bool:
        """Whether the bot opened a section on this page within the interval."""
        if self.interval <= dt.timedelta(0) or not page.exists():
            return False
        cutoff = clock.now() - self.interval
        for rev in page.revisions(total=100):
            ts = rev.timestamp if rev.timestamp.tzinfo else rev.timestamp.replace(tzinfo=dt.timezone.utc)
            if ts < cutoff:
                return False
            if rev.user == self.bot_user and NEW_SECTION_TAG in (rev.get("comment") or ""):
                return True
        return False

    @staticmethod
    def _blocks(body: str, suggestion_ids) -> tuple[str, list[tuple[str, str]], str]:
        head, blocks, tail = split_blocks(body)
        found = [i for i, _ in blocks]
        if sorted(found) != sorted(suggestion_ids) or len(set(found)) != len(found):
            raise ValueError(f"body holds suggestions {found}, expected {list(suggestion_ids)}")
        return head, blocks, tail


def _template_name(name) -> str:
    """A template's name as the wiki compares it: trimmed, spaces for underscores, first letter up."""
    text = " ".join(str(name).replace("_", " ").split())
    text = text.split(":", 1)[1].strip() if text.lower().startswith("template:") else text
    return text[:1].upper() + text[1:]


def _unposted(blocks: list[tuple[str, str]], page_text: str) -> tuple[list[tuple[str, str]], tuple[str, ...]]:
    present = present_ids(page_text)
    return [(i, b) for i, b in blocks if i not in present], tuple(i for i, _ in blocks if i in present)


def _append(text: str, addition: str) -> str:
    text = text.rstrip()
    return f"{text}\n\n{addition}" if text else addition


def _insert_into_latest_section(text: str, addition: str) -> str | None:
    """``text`` with ``addition`` at the end of the section holding the last bot section marker."""
    at = text.rfind(SECTION_MARKER)
    if at < 0:
        return None
    headings = list(_HEADING.finditer(text))
    before = [h for h in headings if h.start() < at]
    level = len(before[-1].group(1)) if before else 0
    after = [h for h in headings if h.start() > at and (level == 0 or len(h.group(1)) <= level)]
    end = after[0].start() if after else len(text)
    start = before[-1].start() if before else 0
    rest = text[end:]
    section = recount(text[start:end].rstrip() + "\n" + addition)  # the intro counts what it holds now
    return text[:start] + section + ("\n" + rest if rest else "")


def _count(ids: tuple[str, ...]) -> str:
    return f"{len(ids)} suggestion{'s' if len(ids) != 1 else ''}"
