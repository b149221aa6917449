"""A browser's view of the review page for its tests: a Flask test client over https (the session
cookie is Secure), and the CSRF token of a page it was given."""
from __future__ import annotations

import lxml.html


def client_of(app):
    c = app.test_client()
    c.environ_base["wsgi.url_scheme"] = "https"
    return c


def token(page_html: bytes) -> str:
    return lxml.html.fromstring(page_html).xpath('//input[@name="csrf"]/@value')[0]
