"""Who is logged in on the review page, as the server sees it (the rows: :mod:`winellbot.state.sessions`).

The signed cookie names the reviewer and a session token; a request counts as the reviewer's only
while the state holds that session live (:class:`ReviewSessions`):

* **logout** ends it on the server: a copy of the cookie taken before logs no one in after;
* **idle and absolute timeouts** (``[review] session_idle_minutes``, ``session_hours``) end it;
* **standing**: every page reads the reviewer's standing on the wiki again when the last reading is
  older than :data:`STANDING_TTL_S` (every decision reads it anew); a block or a lost right found
  then ends every session of the reviewer, and the page answers 403.
"""
from __future__ import annotations

from collections.abc import Callable

from flask import abort, flash, redirect, session, url_for

from winellbot.review.wiki import WikiAccount
from winellbot.state.sessions import SessionStore

STANDING_TTL_S = 30.0  # a page trusts a reading of the reviewer's standing this long; a decision never does


class ReviewSessions:
    """The page's sessions on the state that ``state()`` gives for the request, for ``wiki``'s reviewers."""

    def __init__(self, settings, wiki: WikiAccount, state: Callable[[], object]) -> None:
        self.settings, self.wiki, self.state = settings, wiki, state

    def _store(self) -> SessionStore:
        r = self.settings.review
        return SessionStore(self.state(), idle_s=r.session_idle_minutes * 60, absolute_s=r.session_hours * 3600)

    def begin(self, name: str, csrf: str) -> None:
        """Log ``name`` in (their standing was just read): a fresh cookie and a new session on the server."""
        token = self._store().start(name)
        session.clear()
        session.update(user=name, csrf=csrf, sid=token)

    def refused(self):
        """None when the request's reviewer is logged in and in good standing; else the answer to give
        (to the login page when the session is not live; 403 when the wiki refuses the reviewer now)."""
        name = session.get("user")
        if not name:
            return redirect(url_for("login"))
        store = self._store()
        checked = store.check(session.get("sid", ""), name)
        if not checked.live:
            session.clear()
            flash(f"Please log in again: {checked.why}.")
            return redirect(url_for("login"))
        if store.now() - checked.standing_read >= STANDING_TTL_S:
            self.require_standing(name)
            store.standing_read(session["sid"])
        return None

    def require_standing(self, name: str) -> None:
        """Read ``name``'s standing now; a reviewer who may not review is logged out everywhere (403)."""
        ok, why = self.wiki.standing(name).may_review(self.settings.review.reviewers)
        if not ok:
            self._store().end_reviewer(name, why)
            session.clear()
            abort(403, why)

    def end(self, why: str) -> None:
        """Log the request's reviewer out (this session only), on the server and in the cookie."""
        if session.get("sid"):
            self._store().end(session["sid"], why)
        session.clear()
