"""Connecting Pywikibot to a wiki: a local test wiki registered at runtime, or the operator's configured one.

Pywikibot reads its configuration once, at the first ``import pywikibot``, from the folder named by
``PYWIKIBOT_DIR`` -- and only when that folder holds a ``user-config.py`` owned by the running user.
Otherwise it silently falls back to English Wikipedia. So :func:`prepare_pywikibot` must run before
anything imports pywikibot; this module imports it only inside functions for that reason.

Settings passed here (throttle, maxlag, retries, simulate) are written to ``pywikibot.config``, which is
global to the process: the last call wins for every site.
"""

from __future__ import annotations

import os
import re
import sys
import tempfile
import warnings
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlparse

from winellbot import __version__
from winellbot.deadline import DeadlineSession
from winellbot.errors import ConfigError, WikiError
from winellbot.wiki.boundary import boundary, bounded_wait, quiet_retries

if TYPE_CHECKING:
    from pywikibot.site import APISite

USER_CONFIG = "user-config.py"
PASSWORD_FILE = "winellbot-passwords"


def prepare_pywikibot(config_dir: str | os.PathLike[str], *, user_config: str = "") -> Path:
    """Make ``config_dir`` Pywikibot's configuration folder; returns the folder Pywikibot will use.

    Writes a mode-600 ``user-config.py`` (with ``user_config`` as its body; existing files are kept
    but made private) and sets ``PYWIKIBOT_DIR``. When pywikibot was already imported from another
    folder, its configuration cannot move any more: this warns, explains, and returns the folder in use.
    Runtime registration through :func:`connect` works either way.
    """
    folder = Path(config_dir).expanduser().resolve()
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    path = folder / USER_CONFIG
    if not path.exists():
        # Written aside and linked in whole: a job started beside this one finds it complete or not at all.
        tmp = _written_aside(path, user_config or "# written by winellbot.wiki.site.prepare_pywikibot\n")
        try:
            os.link(tmp, path)
        except FileExistsError:
            pass  # that other job was first
        finally:
            os.unlink(tmp)
    os.chmod(path, 0o600)
    if "pywikibot" in sys.modules:
        from pywikibot import config

        active = Path(config.base_dir).resolve()
        if active != folder:
            warnings.warn(
                f"pywikibot was imported before prepare_pywikibot({str(folder)!r}) and keeps reading "
                f"its configuration from {active}. Call prepare_pywikibot() (or set PYWIKIBOT_DIR) "
                "before anything imports pywikibot.", RuntimeWarning, stacklevel=2)
        return active
    os.environ["PYWIKIBOT_DIR"] = str(folder)
    return folder


def configure(*, throttle: float | None = None, maxlag: int | None = None,
              max_retries: int | None = None, retry_wait: float | None = None,
              simulate: bool | None = None, max_wait: float | None = None) -> None:
    """Set process-wide Pywikibot politeness settings; ``None`` leaves a setting as configured.

    ``throttle`` is the minimum seconds between edits (``put_throttle``) and also caps the read delay
    (``minthrottle``); ``maxlag`` is the ``write_maxlag`` sent with edits; ``simulate`` makes every
    write API request a no-op at Pywikibot's lowest layer. ``max_wait`` bounds how long a wiki that
    does not answer is retried (seconds; see :func:`winellbot.wiki.boundary.bounded_wait`), and
    is applied before ``max_retries`` and ``retry_wait``, which override it when given; each request
    to the wiki is then over within a quarter of it in all, however slowly the wiki sends its answer
    (a deadline, winellbot/deadline.py: a timeout bounds only each wait for the next bytes).
    """
    from pywikibot import config

    quiet_retries()
    if max_wait is not None:
        for name, value in bounded_wait(max_wait).items():
            setattr(config, name, value)
        _deadline_per_request(max_wait / 4)

    if throttle is not None:
        config.put_throttle = throttle
        config.minthrottle = min(config.minthrottle, throttle)
    if maxlag is not None:
        config.write_maxlag = maxlag
    if max_retries is not None:
        config.max_retries = max_retries
    if retry_wait is not None:
        config.retry_wait = retry_wait
    if simulate is not None:
        config.simulate = simulate


def _deadline_per_request(seconds: float) -> None:
    """Pywikibot's requests (all through ``pywikibot.comms.http.session``) each over within ``seconds``;
    one cut short is a timeout to Pywikibot, retried as its settings say."""
    from pywikibot.comms import http

    if isinstance(http.session, DeadlineSession):
        http.session.seconds = seconds
        return
    session = DeadlineSession(seconds)
    session.cookies = http.cookie_jar
    http.session = session


def family_name_for(api_url: str) -> str:
    """A stable Pywikibot family name for a wiki address (ASCII letters and digits only)."""
    netloc = urlparse(api_url).netloc.lower()
    return "w" + re.sub(r"[^a-z0-9]", "", netloc)


def register_wiki(api_url: str, family_name: str | None = None) -> str:
    """Register the wiki at ``api_url`` as a Pywikibot family at runtime; returns the family name."""
    from pywikibot import config
    from pywikibot.family import Family

    if not api_url.endswith("/api.php"):
        raise ConfigError(f"expected the URL of api.php, got {api_url!r}")
    name = family_name or family_name_for(api_url)
    known = config.family_files.get(name)
    if known is not None and known != api_url and name in Family._families:
        raise ConfigError(f"family {name!r} is already loaded for {known}; choose another family_name")
    config.family_files[name] = api_url
    return name


def connect(api_url: str, username: str | None = None, password: str | None = None, *,
            app: str | None = None, family_name: str | None = None, throttle: float | None = None,
            maxlag: int | None = None, max_retries: int | None = None, retry_wait: float | None = None,
            simulate: bool = False, max_wait: float | None = None) -> APISite:
    """A Pywikibot site for the wiki at ``api_url``, logged in with a BotPassword when given one.

    ``username`` is the account name and ``app`` the BotPassword's app id (``username`` may also be
    given as ``User@app``). The password goes into a mode-600 password file in Pywikibot's folder,
    which is the only way Pywikibot takes passwords without prompting.
    """
    import pywikibot

    configure(throttle=throttle, maxlag=maxlag, max_retries=max_retries, retry_wait=retry_wait,
              simulate=simulate, max_wait=max_wait)
    name = register_wiki(api_url, family_name)
    if username and "@" in username and app is None:
        username, app = username.split("@", 1)
    with boundary(f"connecting to {api_url}"):
        if username:
            pywikibot.config.usernames[name][name] = username
            if password:
                _store_password(name, username, password, app)
        site = pywikibot.Site(code=name, fam=name, user=username)
        describe_bot(site, username)
        _apply_throttle(site, throttle)
        if username and password:
            site.login()
            if site.user() != username:
                raise WikiError(f"login to {api_url} as {username} did not take (logged in as {site.user()})")
    return site


def operator_site(*, login: bool = True, simulate: bool | None = None, max_wait: float | None = None) -> APISite:
    """The operator's configured site (``pywikibot.Site()``), e.g. English Wikipedia in production.

    Needs ``PYWIKIBOT_DIR`` (or ``~/.pywikibot``) with the operator's own ``user-config.py`` and
    password file; nothing is registered or written here.
    """
    import pywikibot

    configure(simulate=simulate, max_wait=max_wait)
    user_config = Path(pywikibot.config.base_dir) / USER_CONFIG
    if not user_config.is_file():
        raise ConfigError(f"no user-config.py in {pywikibot.config.base_dir}: set PYWIKIBOT_DIR")
    with boundary("connecting to the site of Pywikibot's user-config.py"):
        site = pywikibot.Site()
        describe_bot(site, site.username())
        if login:
            site.login()
    return site


def describe_bot(site: APISite, username: str | None) -> str:
    """Name the bot's user page in the User-Agent of every request this process makes.

    Wikimedia's User-Agent policy asks bots for a way to reach their operator; Pywikibot puts
    ``user_agent_description`` into its User-Agent. Returns the user page's URL (built from the
    family, without asking the wiki).
    """
    import pywikibot

    url = user_page_url(site, username)
    if url:
        pywikibot.config.user_agent_description = f"winellbot/{__version__}; {url}"
    return url


def user_page_url(site: APISite, username: str | None) -> str:
    """The bot's user page on ``site`` ("" without a user name), built from the family alone."""
    from urllib.parse import quote

    if not username:
        return ""
    title = quote("User:" + username.replace(" ", "_"), safe=":/")
    return f"{site.protocol()}://{site.hostname()}{site.path()}?title={title}"


def _apply_throttle(site: APISite, throttle: float | None) -> None:
    # Pywikibot caches Site objects, and their throttle copies the config when created.
    if throttle is not None:
        site.throttle.writedelay = throttle
        site.throttle.mindelay = min(site.throttle.mindelay, throttle)


def _written_aside(path: Path, text: str) -> str:
    """``text`` written to a new mode-600 file beside ``path`` (its name hidden), to be linked or moved
    over ``path`` in whole; returns that file's path."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)
    return tmp


def _store_password(family: str, username: str, password: str, app: str | None) -> None:
    """Upsert one line for (family, user) in the mode-600 password file and point Pywikibot at it.

    Safe for jobs started together on one Pywikibot folder: writers take turns (a lock file), an
    unchanged line is not written again, and a changed file replaces the old one whole, so a job
    reading it while logging in never sees it empty or half written."""
    import fcntl

    from pywikibot import config

    path = Path(config.base_dir) / PASSWORD_FILE
    secret = f"BotPassword({app!r}, {password!r})" if app else repr(password)
    entry = f"({family!r}, {family!r}, {username!r}, {secret})"
    prefix = f"({family!r}, {family!r}, {username!r}, "
    fd = os.open(path.with_name(PASSWORD_FILE + ".lock"), os.O_WRONLY | os.O_CREAT, 0o600)
    with os.fdopen(fd, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        lines = path.read_text("utf-8").splitlines() if path.exists() else []
        if entry not in lines or len([line for line in lines if line.startswith(prefix)]) > 1:
            lines = [line for line in lines if not line.startswith(prefix)] + [entry]
            os.replace(_written_aside(path, "\n".join(lines) + "\n"), path)
    os.chmod(path, 0o600)
    config.password_file = str(path)
