"""A browser's view of the review page for its tests: a Flask test client over https (the session
cookie is Secure), and the CSRF token of a page it was given."""
from __future__ import annotations

import lxml.html

from winellbot.config import Settings


def client_of(app):
    c = app.test_client()
    c.environ_base["wsgi.url_scheme"] = "https"
    return c


def token(page_html: bytes) -> str:
    return lxml.html.fromstring(page_html).xpath('//input[@name="csrf"]/@value')[0]


def page_settings(local_wiki, tmp_path) -> Settings:
    """Settings of a review page for the local wiki, its bot, and a SQLite state in ``tmp_path``."""
    settings = Settings()
    settings.wiki.api_url = local_wiki.api_url
    settings.wiki.username = local_wiki.credentials.bot_user
    settings.state.path = str(tmp_path / "state.sqlite")
    return settings
