"""A private MediaWiki on 127.0.0.1 for tests, benchmarks and the demo.

One instance is one directory holding LocalSettings.php, the SQLite database, caches and a JSON file with
its credentials. The MediaWiki code itself is Debian's read-only package in /usr/share/mediawiki; every PHP
process learns which instance it serves from the ``MW_CONFIG_FILE`` environment variable.

The admin account is the harness's own way to set up fixtures (:meth:`LocalWiki.edit`,
:meth:`LocalWiki.import_pages`); the bot writes only through Pywikibot with its BotPassword.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from xml.sax.saxutils import escape

import requests

from winellbot.errors import ConfigError, WikiError
from winellbot.processes import stop_group

MEDIAWIKI_ROOT = Path("/usr/share/mediawiki")
DEBIAN_PACKAGES = ("mediawiki", "php-cli", "php-sqlite3", "php-intl", "php-mbstring", "php-xml")
TEMPLATES_DIR = Path(__file__).resolve().parent / "data" / "templates"
BOT_GRANTS = "basic,highvolume,editpage,createeditmovepage"
CREDENTIALS_FILE = "credentials.json"
PID_FILE = "server.pid"


def mediawiki_available(root: Path = MEDIAWIKI_ROOT) -> bool:
    """True when php and Debian's MediaWiki package are installed."""
    return shutil.which("php") is not None and (root / "maintenance" / "install.php").is_file()


def ensure_packages(root: Path = MEDIAWIKI_ROOT) -> None:
    """Install php and MediaWiki with apt-get when they are missing (needs root; for set-up scripts)."""
    if mediawiki_available(root):
        return
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    sudo = [] if os.geteuid() == 0 else ["sudo"]
    subprocess.run([*sudo, "apt-get", "update"], check=True, env=env)
    subprocess.run([*sudo, "apt-get", "install", "-y", "--no-install-recommends", *DEBIAN_PACKAGES],
                   check=True, env=env)


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nobody listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass(frozen=True)
class Credentials:
    """Accounts of one local wiki, stored as JSON (mode 600) in its directory."""

    port: int
    admin_user: str
    admin_password: str
    bot_user: str
    bot_app: str
    bot_password: str  # the 32-character BotPassword; log in as bot_user@bot_app

    @property
    def bot_login(self) -> str:
        """The login name for the BotPassword (``User@app``)."""
        return f"{self.bot_user}@{self.bot_app}"


class LocalWiki:
    """One MediaWiki instance in ``directory``, served by ``php -S`` on 127.0.0.1:``port``.

    ``port=0`` picks a free port at :meth:`create` (or reuses the one the directory was created with).
    """

    def __init__(self, directory: str | os.PathLike[str], port: int = 0, *,
                 site_name: str = "Test Wiki", admin_user: str = "Admin",
                 bot_user: str = "WinellBot", bot_app: str = "winellbot",
                 mediawiki_root: str | os.PathLike[str] = MEDIAWIKI_ROOT, php: str = "php",
                 start_timeout: float = 30.0) -> None:
        self.directory = Path(directory).resolve()
        self._port = port
        self.site_name = site_name
        self.admin_user = admin_user
        self.bot_user = bot_user
        self.bot_app = bot_app
        self.root = Path(mediawiki_root)
        self.php = php
        self.start_timeout = start_timeout
        self._process: subprocess.Popen[bytes] | None = None
        self._admin: _AdminSession | None = None

    # -- addresses -------------------------------------------------------------------------------

    @property
    def port(self) -> int:
        """The port this instance is (or will be) served on."""
        if not self._port and self.credentials_path.is_file():
            self._port = self.credentials.port
        if not self._port:
            raise ConfigError(f"no port yet for {self.directory}: call create() first")
        return self._port

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def api_url(self) -> str:
        return f"{self.base_url}/api.php"

    def page_url(self, title: str) -> str:
        """The URL a reader would open for ``title``."""
        return f"{self.base_url}/index.php?title={requests.utils.quote(title.replace(' ', '_'))}"

    @property
    def settings_path(self) -> Path:
        return self.directory / "LocalSettings.php"

    @property
    def credentials_path(self) -> Path:
        return self.directory / CREDENTIALS_FILE

    @property
    def credentials(self) -> Credentials:
        """The accounts written by :meth:`create`."""
        try:
            return Credentials(**json.loads(self.credentials_path.read_text("utf-8")))
        except FileNotFoundError:
            raise ConfigError(f"{self.directory} holds no local wiki: call create() first") from None

    def exists(self) -> bool:
        """True when :meth:`create` has completed in this directory."""
        return self.settings_path.is_file() and self.credentials_path.is_file()

    # -- creation --------------------------------------------------------------------------------

    def create(self) -> Credentials:
        """Install a fresh wiki with an admin and a bot account; a no-op when one already exists."""
        if self.exists():
            return self.credentials
        if not mediawiki_available(self.root):
            raise ConfigError("php or MediaWiki missing: run ensure_packages() or apt-get install "
                              + " ".join(DEBIAN_PACKAGES))
        self.directory.mkdir(parents=True, exist_ok=True)
        if not self._port:
            self._port = free_port()
        admin_password = "Adm-" + secrets.token_urlsafe(18)
        (self.directory / "data").mkdir(exist_ok=True)
        self._maintenance(
            "install.php", "--dbtype", "sqlite", "--dbpath", str(self.directory / "data"),
            "--dbname", "wiki", "--server", f"http://127.0.0.1:{self._port}", "--scriptpath", "",
            "--confpath", str(self.directory), "--lang", "en", "--pass", admin_password,
            "--extensions", "ParserFunctions,Cite", self.site_name, self.admin_user, settings=False)
        with self.settings_path.open("a", encoding="utf-8") as handle:
            handle.write(self._extra_settings())
        bot_password = secrets.token_hex(16)  # MediaWiki wants exactly 32 characters here
        self._maintenance("createAndPromote.php", "--bot", self.bot_user, "Bot-" + secrets.token_urlsafe(18))
        self._maintenance("createBotPassword.php", "--appid", self.bot_app, "--grants", BOT_GRANTS,
                          self.bot_user, bot_password)
        credentials = Credentials(port=self._port, admin_user=self.admin_user,
                                  admin_password=admin_password, bot_user=self.bot_user,
                                  bot_app=self.bot_app, bot_password=bot_password)
        self._write_private(self.credentials_path, json.dumps(asdict(credentials), indent=2))
        return credentials

    def _extra_settings(self) -> str:
        directory = self.directory.as_posix()
        # A per-port cookie prefix: browsers and Pywikibot ignore ports, so two wikis would share sessions.
        return f"""
# --- added by winellbot.localwiki ---
$wgUploadDirectory = "{directory}/images";
$wgCacheDirectory = "{directory}/cache";
$wgEnableEmail = false;
$wgEnableUploads = false;
$wgCookiePrefix = "winell{self._port}";
$wgGroupPermissions['bot']['noratelimit'] = true;
$wgGroupPermissions['sysop']['noratelimit'] = true;
$wgRateLimits = [];
$wgShowExceptionDetails = true;
# No object cache in the server's memory, whatever PHP extensions the machine has (install.php picks APCu where
# php-apcu is installed): sessions stay in the database, where the maintenance scripts' revocations reach them.
$wgMainCacheType = CACHE_NONE;
"""

    @staticmethod
    def _write_private(path: Path, text: str) -> None:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)

    def _env(self) -> dict[str, str]:
        return dict(os.environ, MW_CONFIG_FILE=str(self.settings_path))

    def _maintenance(self, script: str, *args: str, settings: bool = True,
                     stdout: int | None = None) -> str:
        """Run one maintenance script of this instance; raise WikiError with its output on failure."""
        command = [self.php, str(self.root / "maintenance" / script), *args]
        env = self._env() if settings else {k: v for k, v in os.environ.items() if k != "MW_CONFIG_FILE"}
        result = subprocess.run(command, env=env, cwd=self.directory, capture_output=stdout is None,
                                stdout=stdout, text=True, check=False)
        if result.returncode != 0:
            raise WikiError(f"{script} failed ({result.returncode}): {result.stdout or ''}{result.stderr or ''}")
        return result.stdout or ""

    # -- serving ---------------------------------------------------------------------------------

    def start(self) -> None:
        """Serve the wiki with ``php -S`` in its own session and wait until api.php answers."""
        if self.is_running():
            return
        if not self.exists():
            raise ConfigError(f"{self.directory} holds no local wiki: call create() first")
        if self._answers():  # php -S could not bind, and the wiki already there would pass for this one
            raise WikiError(f"port {self.port} is already served by another wiki (another checkout's demo?); "
                            f"stop it, or create {self.directory} again on another port (the demo: "
                            f"winellbot demo --port N --dir OTHER_FOLDER; --port 0 takes any free port)")
        log = open(self.directory / "server.log", "ab")  # noqa: SIM115 - handed to the child process
        try:
            self._process = subprocess.Popen(
                [self.php, "-d", "opcache.revalidate_freq=0", "-S", f"127.0.0.1:{self.port}",
                 "-t", str(self.root), str(self.root / "maintenance" / "dev" / "includes" / "router.php")],
                env=self._env(), cwd=self.directory, stdin=subprocess.DEVNULL, stdout=log,
                stderr=subprocess.STDOUT, start_new_session=True)
        finally:
            log.close()
        (self.directory / PID_FILE).write_text(str(self._process.pid))
        deadline = time.monotonic() + self.start_timeout
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                raise WikiError(f"php -S exited with {self._process.returncode}; see "
                                f"{self.directory / 'server.log'}")
            if self._answers():
                return
            time.sleep(0.1)
        self.stop()
        raise WikiError(f"the local wiki on port {self.port} did not answer within {self.start_timeout} s")

    def _answers(self) -> bool:
        try:
            reply = requests.get(self.api_url, params={"action": "query", "meta": "siteinfo",
                                                      "format": "json"}, timeout=5)
            return reply.ok and "query" in reply.json()
        except (requests.RequestException, ValueError):
            return False

    def _server_pid(self) -> int | None:
        if self._process is not None:
            return self._process.pid
        try:
            return int((self.directory / PID_FILE).read_text().strip())
        except (FileNotFoundError, ValueError):
            return None

    def is_running(self) -> bool:
        """True when this instance's server process is alive and api.php answers."""
        pid = self._server_pid()
        if pid is None:
            return False
        if self._process is not None:
            alive = self._process.poll() is None
        else:
            alive = _pid_alive(pid)
        return alive and self._answers()

    def stop(self) -> bool:
        """Stop the server: its whole process group, since PHP forks workers (winellbot/processes.py).

        Returns whether a server was running (False: nothing to stop).
        """
        running = stop_group(self._server_pid(), process=self._process, timeout=5.0)
        self._process = None
        (self.directory / PID_FILE).unlink(missing_ok=True)
        self._admin = None
        return running

    # -- fixtures (admin path) -------------------------------------------------------------------

    def admin(self) -> _AdminSession:
        """A logged-in admin API session (the harness's own fixture path, never the bot's)."""
        if self._admin is None:
            creds = self.credentials
            self._admin = _AdminSession(self.api_url, creds.admin_user, creds.admin_password)
        return self._admin

    def edit(self, title: str, text: str, summary: str = "fixture") -> int:
        """Save ``text`` to ``title`` as the admin through the API; returns the new revision id."""
        return self.admin().edit(title, text, summary)

    def delete(self, title: str, reason: str = "fixture") -> None:
        """Delete a page as the admin."""
        self.admin().call(action="delete", title=title, reason=reason)

    def protect(self, title: str, level: str = "sysop") -> None:
        """Protect a page (edit and move) at ``level`` as the admin; it may not exist yet."""
        self.admin().call(action="protect", title=title, protections=f"edit={level}|move={level}",
                          expiry="infinite", reason="fixture")

    def create_user(self, name: str, password: str, *, groups: tuple[str, ...] = ()) -> None:
        """An ordinary account (a reviewer of the demo or the tests), in ``groups`` besides the implicit
        ones (a new account is autoconfirmed at once on a default MediaWiki); a no-op for one that exists."""
        args = [f"--custom-groups={','.join(groups)}"] if groups else []
        try:
            self._maintenance("createAndPromote.php", *args, name, password)
        except WikiError as exc:
            if "already exists" not in str(exc) and "Account exists" not in str(exc):
                raise

    def block(self, name: str, reason: str = "fixture") -> None:
        """Block a user (as the admin)."""
        self.admin().call(action="block", user=name, expiry="infinite", reason=reason)

    def unblock(self, name: str) -> None:
        self.admin().call(action="unblock", user=name, reason="fixture")

    def revoke_bot_login(self) -> None:
        """Invalidate the bot's BotPasswords and sessions: its login is lost and cannot be regained."""
        self._maintenance("invalidateBotPasswords.php", "--user", self.bot_user)
        self._maintenance("invalidateUserSessions.php", "--user", self.bot_user)

    def import_pages(self, pages: Mapping[str, str], summary: str = "fixture import", *,
                     link_updates: bool = True) -> int:
        """Create many pages at once with importDump.php (fast path for benchmarks); returns the count.

        Link tables are updated by the import, so ``embeddedin`` sees templates at once; categories
        that come from templates still need :meth:`run_jobs`. ``link_updates=False`` skips them
        (faster; for pages whose links and templates nothing will query).
        """
        if not pages:
            return 0
        dump = self.directory / "import.xml"
        dump.write_text(_export_xml(pages, self.admin_user, summary), encoding="utf-8")
        try:
            flags = () if link_updates else ("--no-updates",)
            self._maintenance("importDump.php", "--quiet", *flags, str(dump))
        finally:
            dump.unlink(missing_ok=True)
        return len(pages)

    def install_templates(self, folder: str | os.PathLike[str] = TEMPLATES_DIR) -> list[str]:
        """Save every ``*.wiki`` file in ``folder`` as ``Template:<name>``; returns the titles.

        The file name is the template name with spaces as underscores (``Cite_news.wiki``).
        """
        titles = []
        for path in sorted(Path(folder).glob("*.wiki")):
            title = "Template:" + path.stem.replace("_", " ")
            self.edit(title, path.read_text("utf-8"), "install template")
            titles.append(title)
        return titles

    def purge(self, titles: list[str]) -> None:
        """Re-render pages and their link tables (after an import, links to pages imported later
        would otherwise show as missing, and templates installed later as raw names)."""
        for i in range(0, len(titles), 50):
            self.admin().purge(titles[i:i + 50])

    def run_jobs(self) -> None:
        """Run MediaWiki's job queue (api.php requests never do; categories via templates need it)."""
        self._maintenance("runJobs.php", "--quiet")

    def dump(self, path: str | os.PathLike[str]) -> Path:
        """Write a full-history XML dump of the wiki to ``path`` (readable by mwxml)."""
        target = Path(path)
        with target.open("w", encoding="utf-8") as handle:
            self._maintenance("dumpBackup.php", "--full", "--quiet", stdout=handle.fileno())
        return target


class _AdminSession:
    """Minimal API client for the admin account (fixtures only)."""

    def __init__(self, api_url: str, user: str, password: str) -> None:
        self.api_url = api_url
        self.http = requests.Session()
        token = self._get(action="query", meta="tokens", type="login")["query"]["tokens"]["logintoken"]
        reply = self._post(action="clientlogin", username=user, password=password, logintoken=token,
                           loginreturnurl="http://127.0.0.1/")
        if reply.get("clientlogin", {}).get("status") != "PASS":
            raise WikiError(f"admin login failed: {reply}")
        self._csrf = self._get(action="query", meta="tokens")["query"]["tokens"]["csrftoken"]

    def _get(self, **params: str) -> dict:
        return self._check(self.http.get(self.api_url, params={**params, "format": "json"}, timeout=60))

    def _post(self, **params: str) -> dict:
        return self._check(self.http.post(self.api_url, data={**params, "format": "json"}, timeout=60))

    @staticmethod
    def _check(reply: requests.Response) -> dict:
        reply.raise_for_status()
        data = reply.json()
        if "error" in data:
            raise WikiError(f"API error: {data['error']}")
        return data

    def edit(self, title: str, text: str, summary: str) -> int:
        """Save a page; returns the new revision id (or the current one when nothing changed)."""
        reply = self._post(action="edit", title=title, text=text, summary=summary, token=self._csrf,
                           bot="1")
        result = reply["edit"]
        if result.get("result") != "Success":
            raise WikiError(f"admin edit of {title!r} failed: {result}")
        return int(result.get("newrevid") or self._latest_revid(title))

    def purge(self, titles: list[str]) -> None:
        self._post(action="purge", titles="|".join(titles), forcelinkupdate="1")

    def call(self, **params: str) -> dict:
        """POST any write action with the admin's token (fixtures only)."""
        return self._post(**params, token=self._csrf)

    def _latest_revid(self, title: str) -> int:
        pages = self._get(action="query", prop="info", titles=title, formatversion="2")["query"]["pages"]
        return int(pages[0]["lastrevid"])


@contextlib.contextmanager
def serving(folder: str | os.PathLike[str], *, port: int = 0, templates: bool = True) -> Iterator[LocalWiki]:
    """A new local wiki in ``folder``, created and started (with the bot's templates unless ``templates``
    is False); stopped on the way out, however the block is left (run it inside
    :func:`winellbot.processes.stopping_on_signals` for SIGTERM too)."""
    wiki = LocalWiki(folder, port)
    try:
        wiki.create()
        wiki.start()
        if templates:
            wiki.install_templates()
        yield wiki
    finally:
        wiki.stop()


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # a zombie child of ours still "exists"; reap it if it is ours
    try:
        done, _ = os.waitpid(pid, os.WNOHANG)
        return done == 0
    except ChildProcessError:
        return True


def _export_xml(pages: Mapping[str, str], user: str, summary: str) -> str:
    """A minimal MediaWiki export document that importDump.php accepts."""
    timestamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    parts = ['<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.11/" version="0.11" xml:lang="en">']
    for title, text in pages.items():
        parts.append(
            f"<page><title>{escape(title)}</title><revision><timestamp>{timestamp}</timestamp>"
            f"<contributor><username>{escape(user)}</username></contributor>"
            f"<comment>{escape(summary)}</comment><model>wikitext</model><format>text/x-wiki</format>"
            f'<text xml:space="preserve">{escape(text)}</text></revision></page>')
    parts.append("</mediawiki>")
    return "\n".join(parts)

