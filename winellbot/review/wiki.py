"""What the review page reads from the wiki, and how it knows who the reviewer is.

The review page never writes to the wiki. It reads, over the wiki's API with a short timeout:
a user's groups, rights and block (:meth:`WikiAccount.standing`, before every decision, so a block
takes effect at the next action, not the next login) and an article's current text (to show the
section as it stands now).

Who the reviewer is comes from one of two logins:

* **OAuth 1.0a** (Extension:OAuth on Wikimedia wikis), through mwoauth: :meth:`WikiAccount.oauth_start`
  sends the user to the wiki to allow the tool, :meth:`WikiAccount.oauth_finish` turns the wiki's
  answer into an access token and reads the user's name from the identify endpoint (a JWT signed
  with the consumer's secret). The access token is not kept: the page acts on no one's behalf.
* **The wiki's own login API** (``action=clientlogin`` with a username and password), only for a
  wiki on 127.0.0.1 (the demo and the tests: a local MediaWiki has no OAuth extension):
  :meth:`WikiAccount.local_login`.
"""
from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

import requests

from winellbot.errors import ConfigError, WinellbotError

TIMEOUT_S = 10
LOCAL_HOSTS = frozenset({"127.0.0.1"})


class LoginRefused(WinellbotError):
    """The wiki did not confirm who the user is (a wrong password, a broken handshake, no such user)."""


@dataclass(frozen=True)
class Standing:
    """A user as the wiki sees them now: registered or not, groups, rights, and a block if any."""

    name: str
    exists: bool
    groups: frozenset[str] = frozenset()
    rights: frozenset[str] = frozenset()
    blocked: str = ""  # the block's reason ("blocked" when none is given); empty: not blocked

    def may_review(self, allowed: list[str] | tuple[str, ...]) -> tuple[bool, str]:
        """Whether this user may decide, with why not: registered, not blocked, and holding one of
        ``allowed`` (group or right names)."""
        if not self.exists:
            return False, f"{self.name} is not a registered account on the wiki"
        if self.blocked:
            return False, f"{self.name} is blocked on the wiki ({self.blocked})"
        if not set(allowed) & (self.groups | self.rights):
            return False, f"{self.name} has none of the groups or rights that may review ({', '.join(allowed)})"
        return True, ""


def index_url(api_url: str) -> str:
    """The ``index.php`` beside an ``api.php`` URL."""
    parts = urlsplit(api_url)
    path = parts.path.rsplit("/", 1)[0] + "/index.php"
    return urlunsplit((parts.scheme, parts.netloc, path, "", ""))


class WikiAccount:
    """The wiki behind the review page: ``api_url`` (its api.php), ``oauth_url`` (the index.php of
    the OAuth provider), the consumer's ``key`` and ``secret``, and whether the local login is allowed."""

    def __init__(self, api_url: str, *, oauth_url: str = "", consumer_key: str = "", consumer_secret: str = "",
                 local_login: bool = False, user_agent: str = "winellbot-review") -> None:
        if not api_url:
            raise ConfigError("the review page needs [wiki] api_url: the wiki it reads reviewers and articles from")
        self.api_url = api_url
        self.oauth_url = oauth_url or index_url(api_url)
        self.key, self.secret = consumer_key, consumer_secret
        self.user_agent = user_agent
        self.local = local_login and urlsplit(api_url).hostname in LOCAL_HOSTS

    # -- reading -----------------------------------------------------------------------------------
    def _get(self, session: requests.Session | None = None, **params) -> dict:
        http = session or requests
        try:
            r = http.get(self.api_url, params={**params, "format": "json", "formatversion": "2"},
                         headers={"User-Agent": self.user_agent}, timeout=TIMEOUT_S)
            r.raise_for_status()
            return r.json()
        except (requests.RequestException, ValueError) as exc:
            raise WinellbotError(f"the wiki did not answer ({self.api_url}): {exc}") from exc

    def standing(self, name: str) -> Standing:
        """The user's groups, rights and block, read now."""
        data = self._get(action="query", list="users", ususers=name, usprop="groups|rights|blockinfo")
        users = data.get("query", {}).get("users", [])
        if not users or users[0].get("missing") or users[0].get("invalid"):
            return Standing(name, False)
        u = users[0]
        blocked = (u.get("blockreason") or "blocked") if "blockid" in u else ""
        return Standing(u["name"], True, frozenset(u.get("groups", ())), frozenset(u.get("rights", ())), blocked)

    def article_text(self, title: str) -> tuple[str, int | None] | None:
        """An article's current wikitext and revision id, or None when it does not exist."""
        data = self._get(action="query", prop="revisions", titles=title, rvprop="ids|content", rvslots="main")
        pages = data.get("query", {}).get("pages", [])
        if not pages or pages[0].get("missing") or not pages[0].get("revisions"):
            return None
        rev = pages[0]["revisions"][0]
        return rev["slots"]["main"].get("content", ""), rev.get("revid")

    def parse_preview(self, wikitext: str, title: str) -> str:
        """The wiki's HTML for ``wikitext`` as it would render on page ``title`` (``action=parse``, which
        reads and saves nothing; signatures expanded as a save would). MediaWiki's sanitizer makes the
        HTML safe to show; the page's CSP runs no script of it anyway."""
        try:
            r = requests.post(self.api_url, data={
                "action": "parse", "text": wikitext, "title": title, "contentmodel": "wikitext", "pst": "1",
                "prop": "text", "disablelimitreport": "1", "disableeditsection": "1", "format": "json",
                "formatversion": "2"}, headers={"User-Agent": self.user_agent}, timeout=TIMEOUT_S)
            r.raise_for_status()
            return str(r.json()["parse"]["text"])
        except (requests.RequestException, ValueError, KeyError, TypeError) as exc:
            raise WinellbotError(f"the wiki did not render the preview ({self.api_url}): {exc}") from exc

    # -- logging in --------------------------------------------------------------------------------
    def oauth_start(self) -> tuple[str, tuple[str, str]]:
        """Where to send the user, and the request token (key, secret) to keep until they return."""
        from mwoauth import ConsumerToken, initiate

        if not (self.key and self.secret):
            raise ConfigError("OAuth login needs WINELLBOT_OAUTH_KEY and WINELLBOT_OAUTH_SECRET (the consumer "
                              "registered on the wiki)")
        try:
            redirect, token = initiate(self.oauth_url, ConsumerToken(self.key, self.secret),
                                       user_agent=self.user_agent)
        except Exception as exc:  # mwoauth's and requests' errors alike
            raise LoginRefused(f"the wiki refused to start the OAuth handshake: {exc}") from exc
        return redirect, (token.key, token.secret)

    def oauth_finish(self, request_token: tuple[str, str], query_string: str) -> str:
        """The user's name, from the wiki's answer (``query_string`` of the callback)."""
        from mwoauth import ConsumerToken, RequestToken, complete, identify

        consumer = ConsumerToken(self.key, self.secret)
        try:
            access = complete(self.oauth_url, consumer, RequestToken(*request_token), query_string,
                              user_agent=self.user_agent)
            identity = identify(self.oauth_url, consumer, access, user_agent=self.user_agent)
        except Exception as exc:
            raise LoginRefused(f"the OAuth handshake did not complete: {exc}") from exc
        name = str(identity.get("username") or "")
        if not name:
            raise LoginRefused("the wiki's identity answer names no user")
        return name

    def local_login(self, username: str, password: str) -> str:
        """The user's name as the wiki spells it, after the wiki's own login accepted the password."""
        if not self.local:
            raise LoginRefused("logging in with a password is allowed only for a wiki on 127.0.0.1; use OAuth")
        with requests.Session() as http:
            token = self._get(http, action="query", meta="tokens", type="login")["query"]["tokens"]["logintoken"]
            try:
                r = http.post(self.api_url, data={
                    "action": "clientlogin", "username": username, "password": password, "logintoken": token,
                    "loginreturnurl": "http://127.0.0.1/", "format": "json", "formatversion": "2"},
                    headers={"User-Agent": self.user_agent}, timeout=TIMEOUT_S)
                answer = r.json().get("clientlogin", {})
            except (requests.RequestException, ValueError) as exc:
                raise LoginRefused(f"the wiki did not answer the login: {exc}") from exc
        if answer.get("status") != "PASS":
            raise LoginRefused(answer.get("message") or "the wiki refused the login")
        return str(answer.get("username") or username)
