"""What makes the review page safe as a web page; each rule has a test that fails without it
(tests/test_review_app.py, test_review_sessions.py, test_review_inputs.py).

* **Login**: every page but the login's needs a reviewer whose session the server holds live
  (:func:`login_required`; :mod:`winellbot.review.sessions`).
* **CSRF**: every POST carries the token kept in the session (``csrf``), compared in constant time
  before any handler runs; a POST without it, or with another, is refused with 400, and that answer
  sets no cookie (a token is made only for a page a browser GETs).
* **Size**: a request's body at most :data:`MAX_REQUEST_BYTES`, a form field at most
  :data:`MAX_FIELD_BYTES`: more is refused with 413 before it is read into memory.
* **Invisible characters**: the filter ``visible`` shows bidi controls and zero-width characters as
  markers in every text the templates show from a source, a model or the wiki.
* **Headers** on every answer: a Content-Security-Policy that lets the page load scripts, styles and
  images only from the tool itself (no inline script or style, no plugins, no framing, forms only
  to the tool), ``X-Content-Type-Options: nosniff``, ``Referrer-Policy: same-origin`` and
  ``X-Frame-Options: DENY``. ``Server-Timing`` gives the server's own time for the answer.
* **Cookies**: the session cookie is ``Secure``, ``HttpOnly`` and ``SameSite=Lax`` (Lax, not Strict:
  the wiki's OAuth redirect back to the tool is a top-level navigation that must carry it).
* **Escaping**: every text from a source, a model or the wiki is escaped by the templates
  (Jinja's autoescape; no template marks anything safe), and a link is made only from a safe
  http(s) URL.
"""
from __future__ import annotations

import functools
import hmac
import os
import secrets
import time
from pathlib import Path

from flask import Flask, abort, current_app, g, request, session

from winellbot.review.visible import visible

CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
       "form-action 'self'; base-uri 'none'; frame-ancestors 'none'")
SECRET_ENV = "WINELLBOT_REVIEW_SECRET_KEY"
MAX_REQUEST_BYTES = 1_000_000  # a whole request's body; a decision's form is a few hundred bytes
MAX_FIELD_BYTES = 100_000  # one form field (a revised text is a few kB)
MAX_FORM_PARTS = 100


def cookie_settings() -> dict:
    """The cookie's flags, and the limits on what a request may send (refused with 413 before any of
    it is parsed into memory)."""
    return {"SESSION_COOKIE_SECURE": True, "SESSION_COOKIE_HTTPONLY": True, "SESSION_COOKIE_SAMESITE": "Lax",
            "SESSION_COOKIE_NAME": "winellbot_review",
            "MAX_CONTENT_LENGTH": MAX_REQUEST_BYTES, "MAX_FORM_MEMORY_SIZE": MAX_FIELD_BYTES,
            "MAX_FORM_PARTS": MAX_FORM_PARTS}


def secret_key(settings) -> str:
    """The key that signs sessions: ``WINELLBOT_REVIEW_SECRET_KEY``, else a file beside the state,
    made once (mode 600), so a restarted page keeps its reviewers logged in."""
    value = os.environ.get(SECRET_ENV)
    if value:
        return value
    path = Path(settings.state.path).expanduser().resolve().parent / "review-secret.key"
    try:
        return path.read_text("ascii").strip()
    except FileNotFoundError:
        path.parent.mkdir(parents=True, exist_ok=True)
        key = secrets.token_hex(32)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:  # another process made it meanwhile
            return path.read_text("ascii").strip()
        with os.fdopen(fd, "w") as fh:
            fh.write(key + "\n")
        return key


def new_token() -> str:
    return secrets.token_urlsafe(32)


def login_required(view):
    """Only for a reviewer whose session the server holds live and whose standing is good
    (:class:`winellbot.review.sessions.ReviewSessions`)."""
    @functools.wraps(view)
    def wrapped(*args, **kwargs):
        refused = current_app.extensions["winellbot"]["sessions"].refused()
        if refused is not None:
            return refused
        return view(*args, **kwargs)
    return wrapped


def install(app: Flask) -> None:
    """The CSRF check before every POST, the headers after every answer, and the filter ``visible``
    (:mod:`winellbot.review.visible`)."""
    app.jinja_env.filters["visible"] = visible

    @app.before_request
    def _check() -> None:
        g.started = time.perf_counter()
        if request.method == "POST":
            sent, kept = request.form.get("csrf", ""), session.get("csrf", "")
            if not kept or not sent or not hmac.compare_digest(sent, kept):
                abort(400, "the form's security token is missing or stale: reload the page and try again")

    @app.context_processor
    def _token() -> dict:
        # Only a page a browser asks for makes a token: the answer to a refused POST (a cross-site form,
        # whose browser sent no cookie) must not set a fresh cookie over the reviewer's.
        if "csrf" not in session and request.method == "GET":
            session["csrf"] = new_token()
        return {"csrf_token": session.get("csrf", ""), "user": session.get("user", "")}

    @app.after_request
    def _headers(response):
        response.headers["Content-Security-Policy"] = CSP
        response.headers["X-Content-Type-Options"] = "nosniff"
        response.headers["Referrer-Policy"] = "same-origin"
        response.headers["X-Frame-Options"] = "DENY"
        response.headers.setdefault("Cache-Control", "no-store")
        if "started" in g:
            response.headers["Server-Timing"] = f"app;dur={(time.perf_counter() - g.started) * 1000:.1f}"
        return response
