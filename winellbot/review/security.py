"""What makes the review page safe as a web page; each rule has a test that fails without it
(tests/test_review_app.py).

* **Login**: every page but the login's needs a reviewer in the session (:func:`login_required`).
* **CSRF**: every POST carries the token kept in the session (``csrf``), compared in constant time
  before any handler runs; a POST without it, or with another, is refused with 400.
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

from flask import Flask, abort, g, redirect, request, session, url_for

CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
       "form-action 'self'; base-uri 'none'; frame-ancestors 'none'")
SECRET_ENV = "WINELLBOT_REVIEW_SECRET_KEY"


def cookie_settings() -> dict:
    return {"SESSION_COOKIE_SECURE": True, "SESSION_COOKIE_HTTPONLY": True, "SESSION_COOKIE_SAMESITE": "Lax",
            "SESSION_COOKIE_NAME": "winellbot_review", "PERMANENT_SESSION_LIFETIME": 12 * 3600}


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
    @functools.wraps(view)
    def wrapped(*args, **kwargs):
        if not session.get("user"):
            return redirect(url_for("login"))
        return view(*args, **kwargs)
    return wrapped


def install(app: Flask) -> None:
    """The CSRF check before every POST, and the headers after every answer."""

    @app.before_request
    def _check() -> None:
        g.started = time.perf_counter()
        if request.method == "POST":
            sent, kept = request.form.get("csrf", ""), session.get("csrf", "")
            if not kept or not sent or not hmac.compare_digest(sent, kept):
                abort(400, "the form's security token is missing or stale: reload the page and try again")

    @app.context_processor
    def _token() -> dict:
        if "csrf" not in session:
            session["csrf"] = new_token()
        return {"csrf_token": session["csrf"], "user": session.get("user", "")}

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
