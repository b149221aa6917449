"""Pywikibot family for a winellbot local test wiki (``scripts/localwiki.py``) on 127.0.0.1.

The port comes from the environment variable ``WINELLBOT_LOCALWIKI_PORT`` (default 8080), read when
Pywikibot loads the family. Register it in user-config.py::

    family_files['localwiki'] = '/path/to/winellbot/families/localwiki_family.py'
    family = mylang = 'localwiki'
    usernames['localwiki']['localwiki'] = 'WinellBot'
"""

import os

from pywikibot import family


class Family(family.SingleSiteFamily):
    """A MediaWiki served by ``php -S`` at http://127.0.0.1:PORT with api.php at the root."""

    name = 'localwiki'
    domain = f"127.0.0.1:{os.environ.get('WINELLBOT_LOCALWIKI_PORT', '8080')}"

    def protocol(self, code):
        """Plain http: the local server has no TLS (Pywikibot defaults to https)."""
        return 'http'

    def scriptpath(self, code):
        """api.php sits at the document root (Pywikibot defaults to /w)."""
        return ''
