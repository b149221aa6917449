"""Reading the wiki: which articles to watch, their latest revisions and their text.

Everything here reads in batches: one API request covers up to ``site.maxlimit`` titles (500 for an
account with ``apihighlimits``, such as a bot; 50 otherwise), so checking 1,000 watched articles for new
revisions costs a handful of requests. The reader never writes.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from winellbot.errors import ConfigError
from winellbot.wiki.boundary import guarded

if TYPE_CHECKING:
    import pywikibot
    from pywikibot.site import APISite

MAIN, TALK, TEMPLATE = 0, 1, 10
# A list item holding a wikilink: "* [[Title]]", "# [[Title|label]]", "** [[:Title]] -- comment".
_LIST_LINK = re.compile(r"^[*#]+\s*\[\[\s*:?([^\[\]|#]+?)\s*(?:#[^\[\]|]*)?(?:\|[^\[\]]*)?\]\]")

Revision = tuple[int, str]  # (revision id, ISO timestamp such as "2024-05-01T12:00:00Z")


@dataclass(frozen=True)
class PageRevision:
    """One page's latest revision: ids, time, who saved it (``anon``: an IP or a temporary account)
    and its wikitext. ``title`` is the title as the caller gave it."""

    title: str
    revid: int
    parentid: int
    timestamp: str
    user: str
    anon: bool
    text: str


@dataclass(frozen=True)
class Resolved:
    """What a title as given names on the wiki: the canonical article title, or the problem."""

    given: str
    title: str = ""  # canonical: first letter case, spaces, namespace, the redirect followed
    pageid: int | None = None
    problem: str = ""  # one line; empty when ``title`` is an article the bot may treat

    @property
    def ok(self) -> bool:
        return not self.problem


class WikiReader:
    """Batched, read-only access to one wiki through a Pywikibot site.

    ``optin_template`` is the default for :meth:`opted_in`. ``text_batch`` caps how many pages'
    wikitext one request carries (their size, not the API's title limit, is what matters there);
    metadata requests use ``title_batch`` titles, by default the site's limit (``site.maxlimit``).
    """

    def __init__(self, site: APISite, *, optin_template: str | None = None, text_batch: int = 50,
                 title_batch: int | None = None) -> None:
        self.site = site
        self.optin_template = optin_template
        self.text_batch = text_batch
        self.title_batch = title_batch

    # -- which page a title names ------------------------------------------------------------------

    @guarded("resolving titles")
    def resolve(self, titles: Iterable[str], *, content_namespaces: Iterable[int] = (MAIN,),
                bot_user: str = "") -> dict[str, Resolved]:
        """``{given: Resolved}``: each title normalised by the wiki (first-letter case, underscores,
        namespace names), a redirect followed to its target, and checked to be an existing article
        in ``content_namespaces``. Talk pages, the bot's own pages, other namespaces, missing
        pages, double redirects and other wikis get a one-line problem instead. Batched."""
        wanted = list(dict.fromkeys(t for t in titles))
        content = set(content_namespaces)
        out: dict[str, Resolved] = {}
        batch = self.title_batch or self.site.maxlimit
        for start in range(0, len(wanted), batch):
            chunk = wanted[start:start + batch]
            normalized: dict[str, str] = {}
            redirects: dict[str, str] = {}
            pages: dict[str, dict[str, Any]] = {}
            interwiki: set[str] = set()
            for reply in self._continued(action="query", prop="info", titles=chunk, redirects=True,
                                         formatversion="2"):
                query = reply.get("query", {})
                normalized.update((n["from"], n["to"]) for n in query.get("normalized", []))
                redirects.update((r["from"], r["to"]) for r in query.get("redirects", []))
                interwiki.update(i["title"] for i in query.get("interwiki", []))
                pages.update((p["title"], p) for p in query.get("pages", []))
            for given in chunk:
                out[given] = self._resolved(given, normalized, redirects, pages, interwiki, content, bot_user)
        return out

    def _resolved(self, given: str, normalized: dict[str, str], redirects: dict[str, str],
                  pages: dict[str, dict[str, Any]], interwiki: set[str], content: set[int],
                  bot_user: str) -> Resolved:
        title = normalized.get(given, given)
        via = ""
        if title in redirects:
            via = f" (through the redirect {title!r})"
            title = redirects[title]
        if title in interwiki:
            return Resolved(given, problem=f"{given!r} points at another wiki")
        page = pages.get(title)
        if page is None or page.get("invalid"):
            reason = (page or {}).get("invalidreason", "not a valid title")
            return Resolved(given, problem=f"{given!r} is not a valid title: {reason}")
        ns = int(page.get("ns", 0))
        if ns not in content:
            return Resolved(given, problem=self._not_article(given, title, ns, bot_user) + via)
        if page.get("missing"):
            return Resolved(given, problem=f"there is no page {title!r} on the wiki{via}")
        if page.get("redirect"):
            return Resolved(given, problem=f"{given!r} is a double redirect ({title!r} redirects again)")
        return Resolved(given, title, page.get("pageid"))

    def _not_article(self, given: str, title: str, ns: int, bot_user: str) -> str:
        import pywikibot

        if bot_user and ns == 2:
            own = pywikibot.Page(self.site, f"User:{bot_user}").title()
            if title == own or title.startswith(own + "/"):
                return f"{given!r} is one of the bot's own pages, not an article"
        if ns < 0:  # Special: and Media: have no talk pages (-1 % 2 is 1 in Python)
            return f"{given!r} is a special page, not an article"
        if ns % 2 == 1:
            article = pywikibot.Page(self.site, title).toggleTalkPage()
            hint = f"; give the article's title ({article.title()!r})" if article is not None else ""
            return f"{given!r} is a talk page, not an article{hint}"
        name = self.site.namespaces[ns].custom_name if ns in self.site.namespaces else str(ns)
        return f"{given!r} is not an article (namespace {name!r})"

    # -- which articles ----------------------------------------------------------------------------

    @guarded("reading the watchlist and opt-ins")
    def watched_titles(self, optin_template: str, watchlist_page: str | None = None,
                       extra: Iterable[pywikibot.Page] = ()) -> list[str]:
        """Main-namespace titles to watch, deduplicated and sorted.

        The union of articles whose article or talk page transcludes ``optin_template``, the titles
        listed (``* [[Title]]``) on the operator's ``watchlist_page``, and ``extra`` pages (talk pages
        stand for their articles; other namespaces are dropped).
        """
        titles = set(self._opted_in_articles(optin_template))
        if watchlist_page:
            titles.update(self._listed_titles(watchlist_page))
        for page in extra:
            title = self._article_title(page)
            if title is not None:
                titles.add(title)
        return sorted(titles)

    @guarded("reading the opt-ins")
    def opted_in(self, titles: Iterable[str], optin_template: str | None = None) -> set[str]:
        """Those of ``titles`` (as given) whose article or talk page transcludes the opt-in template."""
        template = optin_template or self.optin_template
        if not template:
            raise ConfigError("opted_in() needs an opt-in template (argument or constructor)")
        opted = self._opted_in_articles(template)
        return {title for title in titles if self._normalize(title) in opted}

    def _opted_in_articles(self, template: str) -> set[str]:
        import pywikibot

        page = pywikibot.Page(self.site, template, ns=TEMPLATE)
        found = set()
        # Transclusions through redirects to the template count too: templatelinks records both.
        for user in page.embeddedin(namespaces=[MAIN, TALK], content=False):
            title = self._article_title(user)
            if title is not None:
                found.add(title)
        return found

    def _listed_titles(self, watchlist_page: str) -> set[str]:
        import pywikibot

        text = self.page_text(watchlist_page) or ""
        titles = set()
        for line in text.splitlines():
            match = _LIST_LINK.match(line.strip())
            if not match:
                continue
            try:
                title = self._article_title(pywikibot.Page(self.site, match.group(1)))
            except (pywikibot.exceptions.InvalidTitleError, ValueError):
                continue  # a malformed line on a human-edited page is skipped, not fatal
            if title is not None:
                titles.add(title)
        return titles

    @staticmethod
    def _article_title(page: pywikibot.Page) -> str | None:
        namespace = page.namespace()
        if namespace == TALK:
            return page.toggleTalkPage().title()
        return page.title() if namespace == MAIN else None

    def _normalize(self, title: str) -> str:
        import pywikibot

        return pywikibot.Page(self.site, title).title()

    # -- revisions and text ------------------------------------------------------------------------

    @guarded("reading latest revisions")
    def latest_revisions(self, titles: Iterable[str]) -> dict[str, Revision]:
        """``{title: (revid, timestamp)}`` of each page's latest revision; missing pages are absent.

        Keys are the titles as given. Redirects are reported as the redirect page itself.
        """
        result: dict[str, Revision] = {}
        batch = self.title_batch or self.site.maxlimit
        for given, page in self._query(titles, batch, rvprop="ids|timestamp"):
            revision = _latest(page)
            if revision is not None:
                for title in given:
                    result[title] = (int(revision["revid"]), str(revision["timestamp"]))
        return result

    @guarded("reading pages")
    def read(self, titles: Iterable[str]) -> Iterator[tuple[str, str, int, str]]:
        """``(title, wikitext, revid, timestamp)`` for each existing page, in the order given."""
        wanted = list(dict.fromkeys(titles))
        for start in range(0, len(wanted), self.text_batch):
            chunk = wanted[start:start + self.text_batch]
            found: dict[str, tuple[str, int, str]] = {}
            for given, page in self._query(chunk, self.text_batch, rvprop="ids|timestamp|content",
                                           rvslots="main"):
                revision = _latest(page)
                if revision is not None:
                    text = revision["slots"]["main"].get("content", "")
                    for title in given:
                        found[title] = (text, int(revision["revid"]), str(revision["timestamp"]))
            for title in chunk:
                if title in found:
                    yield (title, *found[title])

    @guarded("reading revisions")
    def revisions(self, titles: Iterable[str], *, batch: int | None = None) -> Iterator[PageRevision]:
        """The latest revision of each existing page, with its text and its editor, in the order given.

        ``batch`` titles per request (default ``text_batch``); the outcome check asks for the site's
        title limit, so 500 changed articles of a bot cost one request when their texts fit in one
        reply (the API continues a larger one).
        """
        wanted = list(dict.fromkeys(titles))
        size = batch or self.text_batch
        for start in range(0, len(wanted), size):
            chunk = wanted[start:start + size]
            found: dict[str, PageRevision] = {}
            for given, page in self._query(chunk, size, rvprop="ids|timestamp|user|userid|content",
                                           rvslots="main"):
                rev = _latest(page)
                if rev is None:
                    continue
                for title in given:
                    found[title] = PageRevision(
                        title, int(rev["revid"]), int(rev.get("parentid") or 0), str(rev["timestamp"]),
                        str(rev.get("user") or ""), bool(rev.get("anon") or rev.get("temp")),
                        rev.get("slots", {}).get("main", {}).get("content", ""))
            for title in chunk:
                if title in found:
                    yield found[title]

    @guarded("reading user rights")
    def user_rights(self, names: Iterable[str]) -> dict[str, frozenset[str]]:
        """``{name: rights}`` of registered users as the wiki grants them (its groups' settings);
        names the wiki does not know are absent. ``title_batch`` names per request."""
        wanted = list(dict.fromkeys(n for n in names if n))
        batch = self.title_batch or self.site.maxlimit
        out: dict[str, frozenset[str]] = {}
        for start in range(0, len(wanted), batch):
            chunk = wanted[start:start + batch]
            for reply in self._continued(action="query", list="users", ususers=chunk, usprop="rights",
                                         formatversion="2"):
                for user in reply.get("query", {}).get("users", []):
                    if not user.get("missing") and not user.get("invalid"):
                        out[user["name"]] = frozenset(user.get("rights", ()))
        return out

    @guarded("reading the wiki's clock")
    def server_time(self) -> dt.datetime:
        """The wiki's time now (the API's ``curtimestamp``, whole seconds), timezone-aware UTC."""
        reply = self.site.simple_request(action="query", curtimestamp=1, formatversion="2").submit()
        return dt.datetime.fromisoformat(str(reply["curtimestamp"]).replace("Z", "+00:00"))

    @guarded("reading a page")
    def page_text(self, title: str) -> str | None:
        """Current wikitext of ``title``, or None when the page does not exist (always fresh)."""
        for _, text, _, _ in self.read([title]):
            return text
        return None

    def _query(self, titles: Iterable[str], batch: int,
               **params: Any) -> Iterator[tuple[list[str], dict[str, Any]]]:
        """Yield ``(given titles, page)`` for pages of prop=revisions queries over ``titles`` in batches.

        Follows ``continue`` (large texts can overflow one response) and maps the API's normalized
        titles back to the caller's spellings.
        """
        wanted = list(dict.fromkeys(titles))
        for start in range(0, len(wanted), batch):
            chunk = wanted[start:start + batch]
            pages: dict[str, dict[str, Any]] = {}
            aliases: dict[str, list[str]] = {title: [title] for title in chunk}
            for reply in self._continued(action="query", prop="revisions", titles=chunk,
                                         formatversion="2", **params):
                query = reply.get("query", {})
                for step in query.get("normalized", []):
                    aliases.setdefault(step["to"], []).extend(aliases.pop(step["from"], [step["from"]]))
                for page in query.get("pages", []):
                    merged = pages.setdefault(page["title"], page)
                    if merged is not page and page.get("revisions"):
                        merged.setdefault("revisions", []).extend(page["revisions"])
            for title, page in pages.items():
                if not page.get("missing") and not page.get("invalid"):
                    yield aliases.get(title, [title]), page

    def _continued(self, **params: Any) -> Iterator[dict[str, Any]]:
        carry: dict[str, Any] = {}
        while True:
            reply = self.site.simple_request(**params, **carry).submit()
            yield reply
            if "continue" not in reply:
                return
            carry = reply["continue"]


def _latest(page: dict[str, Any]) -> dict[str, Any] | None:
    revisions: Sequence[dict[str, Any]] = page.get("revisions") or ()
    return max(revisions, key=lambda rev: rev["revid"]) if revisions else None
