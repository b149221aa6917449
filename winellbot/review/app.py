"""The review page: a Flask app where reviewers triage the bot's suggestions, one key per decision.

Routes, in the order a reviewer meets them::

    GET  /login               log in: OAuth (the wiki's Extension:OAuth) or, for a wiki on 127.0.0.1, the wiki's login
    POST /oauth/start         -> the wiki, to allow the tool      GET /oauth/callback  <- back from it
    POST /login/local         the wiki's own login (127.0.0.1 only)
    GET  /queue               the queue, best estimate first; filters (query string): page, section, status
    GET  /next                the first suggestion of the queue (with the same filters) not yet decided or skipped
    GET  /s/<id>              one suggestion as its talk post would show it, beside the section now, the source's
                              passage, the whole article, and what else is posted or queued for it
    POST /s/<id>/decide       approve | revise (the reviewer's wording) | approve into another section | adopted |
                              reject (reasons, a note) | skip
    POST /s/<id>/preview, /undo, GET /skipped ...   the reviewer's own hand: winellbot/review/revise.py
    POST /logout

Every page but the login needs a logged-in reviewer whose session the server holds live
(:mod:`winellbot.review.sessions`); every POST needs the session's CSRF token; every decision first
reads the reviewer's standing on the wiki (a block or a lost right counts at once). Only the
configured wiki's suggestions are listed, shown and decided (:mod:`winellbot.review.inputs`). The page writes only the state (:class:`winellbot.state.reviews.ReviewStore`); the bot posts
what was approved. Security headers and cookie settings: :mod:`winellbot.review.security`.
"""
from __future__ import annotations

import time
from urllib.parse import urlencode

from flask import Flask, abort, flash, g, redirect, render_template, request, session, url_for

from winellbot.config import Settings
from winellbot.errors import WinellbotError
from winellbot.review import inputs, revise, security
from winellbot.review.context import where_it_goes
from winellbot.review.present import Shown, present
from winellbot.review.sessions import ReviewSessions
from winellbot.review.visible import without_hidden
from winellbot.review.wiki import LoginRefused, WikiAccount
from winellbot.state.db import State
from winellbot.state.reviews import MAX_NOTE, REASONS, STATUS_FILTERS, Decision, DecisionError, QueueFilter, ReviewStore

PAGE_SIZE = 50
# One key per action (review.js); the same letters are the buttons' access keys.
KEYS = {"approve": "a", "revise": "e", "move": "m", "adopted": "d", "copy": "c", "reject": "r", "skip": "s",
        "undo": "u", "next": "n", "queue": "q"}
REASON_LABELS = {"not_new": "not new", "insignificant": "insignificant", "off_topic": "off topic",
                 "unsupported": "unsupported by the source", "wrong_section": "wrong section",
                 "subjective": "subjective", "unclear": "unclear", "furniture": "page furniture", "too_long": "too long",
                 "other": "other (say why in the note)"}
ARTICLE_SECONDS = 30  # how long an article read from the wiki is reused (working an article's items in turn)


def create_app(settings: Settings, *, wiki: WikiAccount | None = None, secret_key: str | None = None) -> Flask:
    """The review app for the state and wiki of ``settings``."""
    app = Flask(__name__)
    app.config.update(security.cookie_settings(), SECRET_KEY=secret_key or security.secret_key(settings),
                      PERMANENT_SESSION_LIFETIME=settings.review.session_hours * 3600)
    wiki = wiki or account_for(settings)
    app.extensions["winellbot"] = {"settings": settings, "wiki": wiki, "shared_state": None, "articles": {},
                                   "sessions": ReviewSessions(settings, wiki, _state)}
    security.install(app)
    app.add_template_filter(without_hidden)
    app.context_processor(lambda: {"keys": KEYS, "depth": settings.review.depth, "last": _last_decision()})
    _routes(app)

    @app.teardown_appcontext
    def _close(_exc) -> None:
        state = g.pop("state", None)
        if state is not None and state.engine == "sqlite":
            state.db.conn.close()

    return app


def account_for(settings: Settings) -> WikiAccount:
    import os

    return WikiAccount(settings.wiki.api_url, oauth_url=settings.review.oauth_url,
                       consumer_key=os.environ.get("WINELLBOT_OAUTH_KEY", ""),
                       consumer_secret=os.environ.get("WINELLBOT_OAUTH_SECRET", ""),
                       local_login=settings.review.local_login,
                       user_agent=f"winellbot-review (User:{settings.wiki.username})")


def _ext() -> dict:
    from flask import current_app

    return current_app.extensions["winellbot"]


def _state() -> State:
    """The state for this request: a SQLite connection of its own, or the one pool of a server."""
    if "state" not in g:
        s = _ext()["settings"]
        if s.state.server_url:
            if _ext()["shared_state"] is None:
                _ext()["shared_state"] = State(url=s.state.server_url)
            g.state = _ext()["shared_state"]
        else:
            g.state = State(s.state.path, journal_mode=s.state.journal_mode)
    return g.state


def _filters() -> QueueFilter:
    return inputs.queue_filter(request.args, _wiki())


def _wiki() -> str:
    """The wiki this page reviews for, as the state names it; the only one whose suggestions it shows."""
    return inputs.wiki_name(_ext()["settings"].wiki.api_url)


def _query(f: QueueFilter) -> str:
    # the wiki is always the page's own: not repeated in links
    shown = {k: v for k, v in vars(f).items() if v and k != "wiki"}
    return urlencode({k: v for k, v in shown.items() if not (k == "status" and v == "open")})


def _with_query(url: str, f: QueueFilter) -> str:
    """``url`` keeping the queue's filters ``f`` (none when they are the defaults)."""
    query = _query(f)
    return f"{url}?{query}" if query else url


def _routes(app: Flask) -> None:
    _login_routes(app)
    _review_routes(app)
    revise.register(app, state=_state, shown_for=_shown_for, item_page=_item_page, may_decide=_may_decide,
                    login_required=security.login_required)
    _error_pages(app)


def _depth(f: QueueFilter) -> int:
    """Open suggestions shown per article: all of one article's when the queue is worked article by article."""
    return 10**6 if f.page else _ext()["settings"].review.depth


def _last_decision() -> dict | None:
    """The reviewer's latest decision not undone (offered to undo on every page), or None."""
    if not session.get("user"):
        return None
    try:
        return ReviewStore(_state()).last_decision(session["user"])
    except WinellbotError:
        return None


def _may_decide() -> None:
    _ext()["sessions"].require_standing(session["user"])  # read anew: a block counts at once


def _login_routes(app: Flask) -> None:
    @app.get("/")
    def index():
        return redirect(url_for("queue"))

    @app.get("/favicon.ico")
    def favicon():
        return redirect(url_for("static", filename="favicon.svg"))

    @app.get("/login")
    def login():
        return render_template("login.html", local=_ext()["wiki"].local, oauth=bool(_ext()["wiki"].key))

    @app.post("/oauth/start")
    def oauth_start():
        if not (_ext()["wiki"].key and _ext()["wiki"].secret):
            flash("Logging in with OAuth is not configured on this tool (its operators set WINELLBOT_OAUTH_KEY "
                  "and WINELLBOT_OAUTH_SECRET).")
            return redirect(url_for("login"), code=303)
        redirect_to, token = _ext()["wiki"].oauth_start()
        session["request_token"] = list(token)
        return redirect(redirect_to)

    @app.get("/oauth/callback")
    def oauth_callback():
        token = session.pop("request_token", None)
        if not token:
            abort(400, "no OAuth handshake was started in this browser")
        name = _ext()["wiki"].oauth_finish(tuple(token), request.query_string.decode("ascii", "replace"))
        return _logged_in(name)

    @app.post("/login/local")
    def local_login():
        name = _ext()["wiki"].local_login(request.form.get("username", ""), request.form.get("password", ""))
        return _logged_in(name)

    @app.post("/logout")
    def logout():
        _ext()["sessions"].end("logged out")
        return redirect(url_for("login"))


def _review_routes(app: Flask) -> None:
    @app.get("/queue")
    @security.login_required
    def queue():
        f, store = _filters(), ReviewStore(_state())
        depth = _depth(f)
        total = store.count(f, depth=depth, reviewer=session["user"])
        offset = inputs.offset(request.args.get("offset", 0, type=int), total, PAGE_SIZE)
        rows = store.queue(f, depth=depth, limit=PAGE_SIZE, offset=offset, reviewer=session["user"])
        return render_template("queue.html", rows=rows, total=total, offset=offset, page_size=PAGE_SIZE, f=f,
                               facets=store.facets(), statuses=list(STATUS_FILTERS), query=_query(f), keys=KEYS)

    @app.get("/next")
    @security.login_required
    def next_item():
        f = _filters()
        rows = ReviewStore(_state()).queue(f, depth=_depth(f), limit=1, reviewer=session["user"])
        if not rows:
            flash("Nothing left to review here.")
            return redirect(_with_query(url_for("queue"), f))
        return redirect(_with_query(url_for("item", suggestion_id=rows[0]["id"]), f))

    @app.get("/s/<suggestion_id>")
    @security.login_required
    def item(suggestion_id: str):
        return _item_page(_shown_for(suggestion_id)[2])

    @app.post("/s/<suggestion_id>/decide")
    @security.login_required
    def decide(suggestion_id: str):
        user = session["user"]
        _may_decide()
        asked = request.form.get("verdict", "")
        if asked in ("revise", "move"):  # of this wiki (else 404), with the article's sections now
            shown = _shown_for(suggestion_id)[2]
        else:  # of this wiki, else 404: nothing more is read for a plain decision
            inputs.of_this_wiki(_state().suggestion(suggestion_id), _wiki(), suggestion_id)
        note = " ".join(request.form.get("note", "").split())[:MAX_NOTE]
        if asked == "revise":
            form = revise.revision_from(request.form, shown, _ext()["settings"].wiki.language)
            if form.problems:
                return _item_page(shown, revision=form), 422
            decision = revise.decision_of(form, suggestion_id, user, shown)
        else:
            verdict, section = asked, None
            if asked == "move":  # approve into another section: one of the article's own, read now
                verdict, section = "approve", inputs.target_section(shown.outline, request.form.get("to_section", ""))
            reasons = tuple(request.form.getlist("reasons")) if verdict == "reject" else ()
            decision = Decision(suggestion_id, user, verdict, reasons, section, note=note)
        try:
            done = ReviewStore(_state()).decide(decision)
        except DecisionError as exc:
            abort(400, str(exc))
        flash(_said(suggestion_id, done, asked) if done.taken else f"Not recorded: {done.why}.")
        return redirect(_with_query(url_for("next_item"), _filters()), code=303)


def _error_pages(app: Flask) -> None:
    @app.errorhandler(LoginRefused)
    def refused(exc):
        flash(f"Login refused: {exc}")
        return render_template("login.html", local=_ext()["wiki"].local, oauth=bool(_ext()["wiki"].key)), 403

    @app.errorhandler(WinellbotError)
    def failed(exc):
        return render_template("error.html", code=502, message=str(exc)), 502

    for code in (400, 403, 404, 413):
        app.register_error_handler(code, lambda exc, code=code: (
            render_template("error.html", code=code, message=getattr(exc, "description", str(exc))), code))


def _logged_in(name: str):
    ok, why = _ext()["wiki"].standing(name).may_review(_ext()["settings"].review.reviewers)
    if not ok:
        raise LoginRefused(why)
    _ext()["sessions"].begin(name, security.new_token())
    return redirect(url_for("next_item"), code=303)


def _item_page(shown: Shown, **extra):
    f = _filters()
    return render_template("item.html", s=shown, f=f, query=_query(f), keys=KEYS, show_keys=shown.status == "proposed",
                           reasons=[(r, REASON_LABELS[r], str(i + 1)) for i, r in enumerate(REASONS)], **extra)


def _shown_for(suggestion_id: str):
    """The suggestion's state row, the suggestion, and what the item page shows of it."""
    state, s = _state(), _ext()["settings"]
    row = inputs.of_this_wiki(state.suggestion(suggestion_id), _wiki(), suggestion_id)
    current = _article(row["page"])
    source = state.source(row["url"]) if row.get("url") else None
    suggestion = state.load_suggestion(row)
    shown = present(row, suggestion, bot_user=s.wiki.username, style=s.posting.style,
                    hostname=_hostname(s), current=current, source_text=(source or {}).get("text"),
                    reviews=ReviewStore(state).decisions(suggestion_id))
    return row, suggestion, where_it_goes(shown, state, s)


def _article(title: str) -> tuple[str, int | None] | None:
    """The article's text and revision now, read from the wiki at most every :data:`ARTICLE_SECONDS`
    (an article's items reviewed in turn read it once); None when the wiki does not answer."""
    kept = _ext()["articles"]
    hit = kept.get(title)
    if hit is not None and time.monotonic() - hit[0] < ARTICLE_SECONDS:
        return hit[1]
    try:
        current = _ext()["wiki"].article_text(title)
    except WinellbotError:
        return None  # shown from what the state kept; the page says so
    if len(kept) > 200:
        kept.clear()
    kept[title] = (time.monotonic(), current)
    return current


def _hostname(settings: Settings) -> str:
    from urllib.parse import urlsplit

    return urlsplit(settings.wiki.api_url).hostname or ""


def _said(suggestion_id: str, done, verdict: str) -> str:
    what = {"approve": "approved: the bot posts it at its next poll", "move": "approved into the section chosen",
            "revise": "approved in your wording: the bot posts it at its next poll, naming you as its author",
            "adopted": "recorded as added to the article by you", "reject": "rejected", "skip": "skipped"}
    return f"Suggestion {suggestion_id[:10]} {what.get(verdict, done.status)}."
