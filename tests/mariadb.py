"""A real MariaDB server for the tests: Debian's ``mariadb-server`` run unprivileged, no system service.

Use from a test module by importing the fixtures: ``from mariadb import mariadb, mariadb_url  # noqa: F401``.

``mariadb`` (session)
    A :class:`MariaDB`: a server of the session's own, made by ``mariadb-install-db --no-defaults`` in a
    temporary folder and started as ``mariadbd --no-defaults`` with that data folder, its own socket and a
    free port on 127.0.0.1, as the user running the tests; stopped and removed at the end of the session.
    ``mariadb.new_database()`` creates a database (utf8mb4, binary collation) that the test user may use
    and returns its SQLAlchemy URL (``mysql+pymysql://winellbot:...@127.0.0.1:PORT/NAME``).
``mariadb_url`` (function)
    The URL of a fresh database for one test, dropped after it.

When the server's programs are not installed, the tests that use these fixtures are skipped with the
reason and the command that installs them (``scripts/setup.sh dev`` does), as the tests of the local
MediaWiki are (tests/conftest.py); when they are installed and the server does not start, the test
FAILS with the server's own error log.
"""
from __future__ import annotations

import getpass
import itertools
import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pymysql
import pytest

from winellbot.processes import stop_group

PROGRAMS = ("mariadb-install-db", "mariadbd")
SKIP_REASON = "Debian's mariadb-server is not installed (apt-get install mariadb-server; scripts/setup.sh dev does)"
USER, PASSWORD = "winellbot", "winellbot-test-password"
START_TIMEOUT_S = 60


def _program(name: str) -> str | None:
    # mariadbd lives in /usr/sbin, which an unprivileged user's PATH may not hold.
    return shutil.which(name) or shutil.which(name, path="/usr/sbin:/usr/bin")


def mariadb_available() -> bool:
    return all(_program(p) for p in PROGRAMS)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class MariaDB:
    """A MariaDB server in ``folder`` (data, temporary files, socket, pid file, error log), on 127.0.0.1."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.data = folder / "data"
        self.socket = folder / "mariadb.sock"  # short: a socket path has a limit of about 100 bytes
        self.log = folder / "error.log"
        self.port = _free_port()
        self.process: subprocess.Popen | None = None
        self._names = itertools.count(1)

    def start(self) -> None:
        user = getpass.getuser()
        tmp = self.folder / "tmp"  # its own: not the /tmp that other programs clean up
        tmp.mkdir(parents=True, exist_ok=True)
        install = subprocess.run(
            [_program("mariadb-install-db"), "--no-defaults", f"--datadir={self.data}", f"--user={user}",
             f"--tmpdir={tmp}",
             "--auth-root-authentication-method=normal", "--skip-test-db"],
            capture_output=True, text=True, timeout=120)
        if install.returncode != 0:
            pytest.fail(f"mariadb-install-db failed: {install.stdout[-2000:]}{install.stderr[-2000:]}", pytrace=False)
        self.process = subprocess.Popen(
            [_program("mariadbd"), "--no-defaults", f"--datadir={self.data}", f"--tmpdir={tmp}", f"--socket={self.socket}",
             f"--port={self.port}", "--skip-networking=0", "--bind-address=127.0.0.1", f"--user={user}",
             f"--pid-file={self.folder / 'mariadb.pid'}", f"--log-error={self.log}", "--skip-log-bin",
             "--skip-name-resolve", "--performance-schema=0", "--innodb-buffer-pool-size=64M",
             "--innodb-log-file-size=16M", "--innodb-flush-log-at-trx-commit=2", "--max-connections=200"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            try:
                self.root().close()
                break
            except pymysql.err.OperationalError:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    log = self.log.read_text(errors="replace")[-3000:] if self.log.exists() else "(no log)"
                    pytest.fail(f"mariadbd did not start (exit {self.process.returncode}): {log}", pytrace=False)
                time.sleep(0.1)
        with self.root() as conn, conn.cursor() as cur:
            cur.execute("CREATE USER %s@'%%' IDENTIFIED BY %s", (USER, PASSWORD))

    def root(self) -> pymysql.connections.Connection:
        return pymysql.connect(unix_socket=str(self.socket), user="root", autocommit=True, connect_timeout=5)

    def new_database(self) -> str:
        """A new, empty database the test user may use; its SQLAlchemy URL."""
        name = f"wb_{os.getpid()}_{next(self._names)}"
        with self.root() as conn, conn.cursor() as cur:
            cur.execute(f"CREATE DATABASE `{name}` CHARACTER SET utf8mb4 COLLATE utf8mb4_bin")
            cur.execute(f"GRANT ALL PRIVILEGES ON `{name}`.* TO %s@'%%'", (USER,))
        return self.url(name)

    def url(self, database: str) -> str:
        return f"mysql+pymysql://{USER}:{PASSWORD}@127.0.0.1:{self.port}/{database}"

    def drop_database(self, url: str) -> None:
        with self.root() as conn, conn.cursor() as cur:
            cur.execute("SET SESSION lock_wait_timeout = 60")  # a connection left in a transaction fails this, not hangs it
            cur.execute(f"DROP DATABASE IF EXISTS `{url.rsplit('/', 1)[1]}`")

    def stop(self) -> None:
        """mariadbd shuts down cleanly on SIGTERM; its group is killed if it has not within 30 s."""
        if self.process is not None:
            stop_group(self.process.pid, process=self.process, timeout=30.0)


@pytest.fixture(scope="session")
def mariadb() -> Iterator[MariaDB]:
    """A MariaDB server for the session (see module docstring)."""
    if not mariadb_available():
        pytest.skip(SKIP_REASON)
    folder = Path(tempfile.mkdtemp(prefix="wb-mariadb-"))
    server = MariaDB(folder)
    try:
        server.start()
        yield server
    finally:
        server.stop()
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def mariadb_url(mariadb: MariaDB) -> Iterator[str]:
    """A fresh database for one test, dropped after it."""
    url = mariadb.new_database()
    yield url
    mariadb.drop_database(url)
