"""What the review page reads from the wiki, and how it knows who the reviewer is.

The review page never writes to the wiki. It reads, over the wiki's API:
a user's groups, rights and block (:meth:`WikiAccount.standing`, before every decision, so a block
takes effect at the next action, not the next login) and an article's current text (to show the
section as it stands now).

Who the reviewer is comes from one of two logins:

* **OAuth 1.0a** (Extension:OAuth on Wikimedia wikis), each request signed by requests-oauthlib (as
  mwoauth does, whose token types and parser it uses; mwoauth's own calls have no timeout):
  :meth:`WikiAccount.oauth_start` sends the user to the wiki to allow the tool,
  :meth:`WikiAccount.oauth_finish` turns the wiki's answer into an access token and reads the user's
  name from the identify endpoint (a JWT signed with the consumer's secret, checked as mwoauth checks
  it). The access token is not kept: the page acts on no one's behalf.
* **The wiki's own login API** (``action=clientlogin`` with a username and password), only for a
  wiki on 127.0.0.1 (the demo and the tests: a local MediaWiki has no OAuth extension):
  :meth:`WikiAccount.local_login`.

Every exchange with the wiki (a read, a login, each step of the OAuth handshake) has a total deadline
(``deadline_s``, :mod:`winellbot.deadline`) besides the timeout of each read: a server that trickles
its answer cannot hold one of the page's threads longer than that; the page then answers with one line
saying so (:class:`WikiTooSlow`).
"""
from __future__ import annotations

import re
import time
from dataclasses import dataclass
from urllib.parse import parse_qs, urlencode, urlsplit, urlunsplit

import requests

from winellbot.deadline import DeadlinePassed, mount, within
from winellbot.errors import ConfigError, WinellbotError

TIMEOUT_S = 10  # for each read
DEADLINE_S = 15.0  # for a whole exchange with the wiki: a read, a login, an OAuth step
JWT_LEEWAY_S = 10.0
LOCAL_HOSTS = frozenset({"127.0.0.1"})


class LoginRefused(WinellbotError):
    """The wiki did not confirm who the user is (a wrong password, a broken handshake, no such user)."""


class WikiTooSlow(WinellbotError):
    """An exchange with the wiki was not over within its total deadline (one line, naming it)."""


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
                 local_login: bool = False, user_agent: str = "winellbot-review",
                 deadline_s: float = DEADLINE_S) -> None:
        if not api_url:
            raise ConfigError("the review page needs [wiki] api_url: the wiki it reads reviewers and articles from")
        self.api_url = api_url
        self.oauth_url = oauth_url or index_url(api_url)
        self.key, self.secret = consumer_key, consumer_secret
        self.user_agent = user_agent
        self.local = local_login and urlsplit(api_url).hostname in LOCAL_HOSTS
        self.deadline_s = deadline_s

    def _exchange(self, what: str, call, refused: type[WinellbotError] = WinellbotError):
        """``call(http)`` (a session whose requests the deadline watches) within ``deadline_s`` in all;
        a failure is one line: :class:`WikiTooSlow` past the deadline, else ``refused``."""
        with mount(requests.Session()) as http:
            try:
                return within(self.deadline_s, lambda: call(http))
            except DeadlinePassed as exc:
                raise WikiTooSlow(f"{what} gave up: {exc}, from {urlsplit(self.api_url).netloc}") from exc
            except (requests.RequestException, ValueError, KeyError, TypeError) as exc:
                raise refused(f"{what}: the wiki did not answer ({self.api_url}): {_one_line(exc)}") from exc

    # -- reading -----------------------------------------------------------------------------------
    def _get(self, http: requests.Session, **params) -> dict:
        r = http.get(self.api_url, params={**params, "format": "json", "formatversion": "2"},
                     headers={"User-Agent": self.user_agent}, timeout=TIMEOUT_S)
        r.raise_for_status()
        return r.json()

    def _read(self, what: str, **params) -> dict:
        return self._exchange(f"reading {what}", lambda http: self._get(http, **params))

    def standing(self, name: str) -> Standing:
        """The user's groups, rights and block, read now."""
        data = self._read("the reviewer's standing", action="query", list="users", ususers=name,
                          usprop="groups|rights|blockinfo")
        users = data.get("query", {}).get("users", [])
        if not users or users[0].get("missing") or users[0].get("invalid"):
            return Standing(name, False)
        u = users[0]
        blocked = (u.get("blockreason") or "blocked") if "blockid" in u else ""
        return Standing(u["name"], True, frozenset(u.get("groups", ())), frozenset(u.get("rights", ())), blocked)

    def article_text(self, title: str) -> tuple[str, int | None] | None:
        """An article's current wikitext and revision id, or None when it does not exist."""
        data = self._read("the article", action="query", prop="revisions", titles=title, rvprop="ids|content",
                          rvslots="main")
        pages = data.get("query", {}).get("pages", [])
        if not pages or pages[0].get("missing") or not pages[0].get("revisions"):
            return None
        rev = pages[0]["revisions"][0]
        return rev["slots"]["main"].get("content", ""), rev.get("revid")

    def parse_preview(self, wikitext: str, title: str) -> str:
        """The wiki's HTML for ``wikitext`` as it would render on page ``title`` (``action=parse``, which
        reads and saves nothing; signatures expanded as a save would), within the deadline. MediaWiki's
        sanitizer makes the HTML safe to show; the page's CSP runs no script of it anyway."""
        def parse(http: requests.Session) -> str:
            r = http.post(self.api_url, data={
                "action": "parse", "text": wikitext, "title": title, "contentmodel": "wikitext", "pst": "1",
                "prop": "text", "disablelimitreport": "1", "disableeditsection": "1", "format": "json",
                "formatversion": "2"}, headers={"User-Agent": self.user_agent}, timeout=TIMEOUT_S)
            r.raise_for_status()
            return str(r.json()["parse"]["text"])

        return self._exchange("rendering the preview", parse)

    # -- logging in --------------------------------------------------------------------------------
    def oauth_start(self) -> tuple[str, tuple[str, str]]:
        """Where to send the user, and the request token (key, secret) to keep until they return."""
        from mwoauth.functions import process_request_token
        from requests_oauthlib import OAuth1

        if not (self.key and self.secret):
            raise ConfigError("OAuth login needs WINELLBOT_OAUTH_KEY and WINELLBOT_OAUTH_SECRET (the consumer "
                              "registered on the wiki)")
        try:
            r = self._oauth("starting the OAuth handshake", "initiate",
                            OAuth1(self.key, client_secret=self.secret, callback_uri="oob"))
            token = process_request_token(r.text)
        except WikiTooSlow:
            raise
        except Exception as exc:  # mwoauth's, oauthlib's and requests' errors alike
            raise LoginRefused(f"the wiki refused to start the OAuth handshake: {_one_line(exc)}") from exc
        query = urlencode({"title": "Special:OAuth/authenticate", "oauth_token": token.key,
                           "oauth_consumer_key": self.key})
        return f"{self.oauth_url}?{query}", (token.key, token.secret)

    def oauth_finish(self, request_token: tuple[str, str], query_string: str) -> str:
        """The user's name, from the wiki's answer (``query_string`` of the callback): the verifier
        exchanged for an access token, then the identify endpoint's JWT, checked (signature with the
        consumer's secret, audience, issuer, issue time, and the nonce of this very request)."""
        try:
            access = self._access_token(request_token, query_string)
            identity = self._identify(access)
        except WikiTooSlow:
            raise
        except Exception as exc:
            raise LoginRefused(f"the OAuth handshake did not complete: {_one_line(exc)}") from exc
        name = str(identity.get("username") or "")
        if not name:
            raise LoginRefused("the wiki's identity answer names no user")
        return name

    def _oauth(self, what: str, step: str, auth) -> requests.Response:
        """POST to ``Special:OAuth/<step>`` signed by ``auth``, within the deadline."""
        return self._exchange(what, lambda http: http.post(
            self.oauth_url, params={"title": f"Special:OAuth/{step}"}, auth=auth,
            headers={"User-Agent": self.user_agent}, timeout=TIMEOUT_S))

    def _access_token(self, request_token: tuple[str, str], query_string: str) -> tuple[str, str]:
        from requests_oauthlib import OAuth1

        back = parse_qs(query_string)
        if not back.get("oauth_token") or not back.get("oauth_verifier"):
            raise ValueError("the callback carries no token and verifier")
        if back["oauth_token"][0] != request_token[0]:
            raise ValueError("the callback names another request token than this browser's")
        r = self._oauth("finishing the OAuth handshake", "token",
                        OAuth1(self.key, client_secret=self.secret, resource_owner_key=request_token[0],
                               resource_owner_secret=request_token[1], verifier=back["oauth_verifier"][0]))
        got = parse_qs(r.text)
        if not got.get("oauth_token") or not got.get("oauth_token_secret"):
            raise ValueError(f"the wiki gave no access token ({r.text[:100]!r})")
        return got["oauth_token"][0], got["oauth_token_secret"][0]

    def _identify(self, access: tuple[str, str]) -> dict:
        import jwt
        from requests_oauthlib import OAuth1

        r = self._oauth("identifying the user", "identify",
                        OAuth1(self.key, client_secret=self.secret, resource_owner_key=access[0],
                               resource_owner_secret=access[1]))
        identity = jwt.decode(r.content, self.secret, audience=self.key, algorithms=["HS256"], leeway=JWT_LEEWAY_S)
        issuer, expected = urlsplit(str(identity.get("iss", ""))).netloc, urlsplit(self.oauth_url).netloc
        if issuer != expected:
            raise ValueError(f"the identity was issued by {issuer!r}, not {expected!r}")
        if float(identity.get("iat", 0)) > time.time() + JWT_LEEWAY_S:
            raise ValueError("the identity is dated in the future")
        header = r.request.headers.get("Authorization", b"")
        sent = re.search(r'oauth_nonce="(.*?)"', header.decode() if isinstance(header, bytes) else header)
        if sent is None or identity.get("nonce") != sent.group(1):
            raise ValueError("the identity answers another request (its nonce is not this request's)")
        return identity

    def local_login(self, username: str, password: str) -> str:
        """The user's name as the wiki spells it, after the wiki's own login accepted the password."""
        if not self.local:
            raise LoginRefused("logging in with a password is allowed only for a wiki on 127.0.0.1; use OAuth")
        def login(http: requests.Session) -> dict:
            token = self._get(http, action="query", meta="tokens", type="login")["query"]["tokens"]["logintoken"]
            r = http.post(self.api_url, data={
                "action": "clientlogin", "username": username, "password": password, "logintoken": token,
                "loginreturnurl": "http://127.0.0.1/", "format": "json", "formatversion": "2"},
                headers={"User-Agent": self.user_agent}, timeout=TIMEOUT_S)
            return r.json().get("clientlogin", {})

        answer = self._exchange("logging in on the wiki", login, refused=LoginRefused)
        if answer.get("status") != "PASS":
            raise LoginRefused(answer.get("message") or "the wiki refused the login")
        return str(answer.get("username") or username)


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())[:300]
