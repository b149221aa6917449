"""The review page as Toolforge's Python webservice runs it: uWSGI loads ``app`` from
``$HOME/www/python/src/app.py`` (a link to this file made by webservice-setup.sh).

Settings: ``$WINELLBOT_CONFIG`` (default ``$HOME/winellbot.toml``), the same file the bot's jobs read,
so the page and the jobs share the state (ToolsDB) and the wiki. Secrets from ``toolforge envvars``:
WINELLBOT_OAUTH_KEY, WINELLBOT_OAUTH_SECRET (the OAuth consumer), WINELLBOT_REVIEW_SECRET_KEY (signs
sessions), WINELLBOT_STATE_URL when the state's URL holds a password.
"""
import os

from winellbot.config import load_settings
from winellbot.review.app import create_app
from winellbot.review.revise import warm

app = create_app(load_settings(os.environ.get("WINELLBOT_CONFIG", os.path.expanduser("~/winellbot.toml"))))
warm()  # the checks of a reviewer's text load their language model now, not at the first submit
