"""Configuration: typed defaults, one TOML file over them, secrets from the environment.

The file is found at ``--config``, else ``$WINELLBOT_CONFIG``, else ``winellbot.toml``
in the working directory; a missing file means the embedded defaults. Secrets never
live in the file: the bot password comes from ``WINELLBOT_BOT_PASSWORD`` and the
model API key from ``WINELLBOT_OPENAI_API_KEY`` (or ``OPENAI_API_KEY``).

Every setting declares its domain next to its default with :func:`setting`
(``choices``, a lower bound, a path that must exist, the keys a table may hold);
:func:`validate_settings` checks them all, so a new setting joins the checks with
its one declaration line. The TOML type must match the default's type, and a
boolean is never read as a number.
"""
from __future__ import annotations

import dataclasses
import math
import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from winellbot.errors import ConfigError


@dataclass(frozen=True)
class Domain:
    """The values a setting may take, beyond its type."""

    choices: tuple = ()
    above: float | None = None  # the value must be greater than this
    at_least: float | None = None  # ... or at least this
    at_most: float | None = None  # a sane upper bound: beyond it a value is a typo, or an overflow later
    path: str = ""  # "dir" or "file": a non-empty value must name an existing one
    keys: tuple = ()  # a table's allowed keys

    def check(self, where: str, value: Any) -> None:
        for item in value if isinstance(value, list) else [value]:  # a list: each item
            if self.choices and item not in self.choices:
                raise ConfigError(f"{where} must be one of {', '.join(map(_toml_value, self.choices))}; "
                                  f"got {_toml_value(item)}")
            if self.above is not None and not item > self.above:
                raise ConfigError(f"{where} must be greater than {self.above:g}; got {_toml_value(item)}")
            if self.at_least is not None and not item >= self.at_least:
                raise ConfigError(f"{where} must be at least {self.at_least:g}; got {_toml_value(item)}")
            if self.at_most is not None and not item <= self.at_most:
                raise ConfigError(f"{where} must be at most {self.at_most:g}; got {_toml_value(item)}")
        if self.path and value:
            target = Path(value).expanduser()
            exists = target.is_dir() if self.path == "dir" else target.is_file()
            if not exists:
                kind = "folder" if self.path == "dir" else "file"
                raise ConfigError(f"{where}: no such {kind}: {value}")
        if self.keys:
            unknown = sorted(set(value) - set(self.keys))
            if unknown:
                raise ConfigError(f"{where}: unknown key(s) {', '.join(unknown)}; "
                                  f"allowed: {', '.join(self.keys)}")


def setting(default: Any = dataclasses.MISSING, *, factory: Any = dataclasses.MISSING, **domain: Any):
    """A dataclass field with its domain (see :class:`Domain`) kept in the field's metadata."""
    return field(default=default, default_factory=factory, metadata={"domain": Domain(**domain)})


# The search backends (winellbot.search.backends.BACKENDS, not imported here: that would load them all)
# and the agent's stages, which ``llm.stage_models`` may name.
SEARCH_BACKENDS = ("corpus", "gdelt", "brave", "searxng")
STAGES = ("criteria", "navigator", "extractor", "aggregator", "editor", "judge")


@dataclass
class WikiSettings:
    # Empty api_url: use the operator's Pywikibot user-config.py (production on Wikipedia).
    api_url: str = ""
    family_name: str = ""  # Pywikibot family name for api_url; empty: derived from the URL
    username: str = "WinellBot"
    bot_password_app: str = "winellbot"
    # A file holding the BotPassword, read when WINELLBOT_BOT_PASSWORD is not set (the demo writes one
    # for its private wiki; on a real wiki prefer the environment, e.g. `toolforge envvars`).
    bot_password_file: str = setting("", path="file")
    optin_template: str = "Winellbot"
    watchlist_page: str = ""  # e.g. "User:WinellBot/Watchlist"; empty: none
    shutoff_page: str = ""  # empty: User:<username>/Shutoff
    # "per-article" (User:BOT/Queue/Title) or "single" (User:BOT/Queue)
    queue_mode: str = setting("per-article", choices=("per-article", "single"))
    queue_prefix: str = ""  # empty: User:<username>/Queue
    maxlag: int = setting(5, above=0, at_most=60)  # seconds; Wikipedia's recommended value for bots
    put_throttle: float = setting(10.0, at_least=0, at_most=600)  # seconds between saves
    new_section_interval_days: int = setting(7, at_least=0, at_most=365)  # at most one new talk section per page per N days
    simulate: bool = False
    # How long a wiki that does not answer is waited for (seconds, retries included) before the
    # cycle stops with one line; Pywikibot's own default retries for over 20 minutes.
    max_wait: float = setting(60.0, above=0, at_most=3600)
    content_namespaces: list[int] = setting(factory=lambda: [0], at_least=0, at_most=100_000)  # only these are articles
    message_type: str = "winellbot"  # what {{bots|optout=...}} names to opt out of this bot's messages
    # The wiki's language (ISO 639-1 code): a suggestion whose text is in another is held (gates/language.py)
    language: str = "en"

    @property
    def shutoff(self) -> str:
        return self.shutoff_page or f"User:{self.username}/Shutoff"

    @property
    def queue(self) -> str:
        return self.queue_prefix or f"User:{self.username}/Queue"

    @property
    def outcomes_page(self) -> str:
        """Where ``winellbot outcomes --publish`` saves its table."""
        return f"User:{self.username}/Outcomes"

    def control_pages(self) -> dict[str, str]:
        """The bot's own control pages (title -> what it is): the review queue never writes one."""
        pages = {f"User:{self.username}": "the bot's user page", self.shutoff: "the shutoff page (wiki.shutoff_page)",
                 self.outcomes_page: "the outcomes report"}
        if self.watchlist_page:
            pages[self.watchlist_page] = "the watchlist page (wiki.watchlist_page)"
        return pages


@dataclass
class ScheduleSettings:
    interval_minutes: int = setting(360, above=0, at_most=525_600)  # how often `winellbot run` starts a cycle
    recheck_days: float = setting(7.0, at_least=0, at_most=3650)  # a page is due again this long after its last run
    max_pages_per_cycle: int = setting(200, at_least=1, at_most=1_000_000)


@dataclass
class PipelineSettings:
    """The one table of pipeline defaults: the bot and the backtest both build from it."""

    # "openai": the LLM agent; "hybrid": the agent reading the passages the offline stages found
    backend: str = setting("offline", choices=("offline", "openai", "hybrid"))
    max_suggestions: int = setting(5, at_least=1, at_most=50)
    # The aggregation loop's bounds. A model's round costs several calls, so the agent reads few
    # documents; the offline stages cost little per document and find most when they read every
    # one the search returns (docs/results.md, "Loop bounds of the offline backend").
    max_iterations: int = setting(8, at_least=1, at_most=200)
    max_empty: int = setting(3, at_least=1, at_most=200)
    offline_max_iterations: int = setting(40, at_least=1, at_most=1000)
    offline_max_empty: int = setting(10, at_least=1, at_most=1000)
    # Sentence embeddings (all-MiniLM-L6-v2) are computed once per text and kept here; empty:
    # beside the state database (winellbot.sqlite -> winellbot.embeddings.sqlite).
    embedding_cache: str = ""
    model_threads: int = setting(2, at_least=1, at_most=256)  # torch threads for the embedding model (more than the cores only contend)
    # The acceptability score that decides what is posted (winellbot/gates/acceptability.py): an
    # operator's refit instead of the shipped model, and a bar other than the model's own (-1).
    acceptability_model: str = setting("", path="file")
    acceptability_threshold: float = setting(-1.0, at_least=-1.0, at_most=1.0)

    def embedding_cache_path(self, state_path: str) -> Path:
        return Path(self.embedding_cache) if self.embedding_cache else Path(state_path).with_suffix(".embeddings.sqlite")


@dataclass
class SearchSettings:
    backend: str = setting("corpus", choices=SEARCH_BACKENDS)
    corpus_dir: str = setting("", path="dir")  # empty: the bundled fictional sample news
    window_days: int = setting(30, at_least=1, at_most=36_500)  # only sources newer than the last check, or this many days
    base_url: str = ""  # for searxng, or to point a backend at another host
    api_key_env: str = "WINELLBOT_SEARCH_API_KEY"
    allow_private_urls: bool = False  # the fetcher's SSRF guard; tests allow loopback
    # The most one search request or one source page may take in all (seconds), however slowly the server
    # sends its answer; what gives up is one line and the page's work goes on without it.
    deadline: float = setting(30.0, above=0, at_most=3600)


@dataclass
class LLMSettings:
    # "openai": any OpenAI-compatible server at base_url; "local": llama.cpp's server started by
    # the bot on 127.0.0.1 with local_model (empty: the bundled SmolLM2-135M-Instruct GGUF), no key
    backend: str = setting("openai", choices=("openai", "local"))
    local_model: str = setting("", path="file")  # a GGUF file
    local_n_ctx: int = setting(4096, at_least=256, at_most=131_072)
    local_threads: int = setting(0, at_least=0, at_most=256)  # 0: up to 2
    # how a JSON schema is sent: "auto" (learned per server), "json_schema" (OpenAI, vLLM, Ollama),
    # "json_object_schema" (llama.cpp), "json_object" or "text"
    response_format: str = setting("auto", choices=("auto", "json_schema", "json_object_schema", "json_object",
                                                    "text"))
    base_url: str = "https://api.openai.com/v1"
    model: str = "gpt-4.1-mini"
    # The paper used a strong model for criteria and a small one for aggregation.
    stage_models: dict[str, str] = setting(factory=lambda: {"criteria": "gpt-4.1"}, keys=STAGES)
    token_budget: int = setting(200_000, at_least=1, at_most=1_000_000_000)  # per run
    timeout: float = setting(60.0, above=0, at_most=3600)
    max_retries: int = setting(4, at_least=0, at_most=20)
    # "local": the fine-tuned editor shipped with winellbot (winellbot/data/editor), in-process
    editor_backend: str = setting("llm", choices=("llm", "transformers", "local", "offline"))
    editor_model_dir: str = setting("", path="dir")  # "transformers": the model; "local": another adapter

    @property
    def api_key(self) -> str:
        return os.environ.get("WINELLBOT_OPENAI_API_KEY") or os.environ.get("OPENAI_API_KEY", "")


STATE_URL_SCHEMES = ("mysql+pymysql",)  # the driver the state's server code is written for (state/sqldb.py)


@dataclass
class StateSettings:
    path: str = "winellbot.sqlite"
    # A MariaDB database for the state (ToolsDB on Toolforge), as a SQLAlchemy URL:
    # "mysql+pymysql://user:password@host/database", or with the credentials read from a MySQL
    # option file: "mysql+pymysql://host/database?read_default_file=~/replica.my.cnf". Empty:
    # WINELLBOT_STATE_URL if set (a URL holding a password belongs there), else the SQLite file at path.
    url: str = ""
    # "auto": WAL on a local disk, the rollback journal (delete) on NFS and other network filesystems
    journal_mode: str = setting("auto", choices=("auto", "wal", "delete", "truncate"))
    # The free space (MB) the SQLite state's folder must have before a post is saved to the wiki: a post
    # whose record could not be written is not made (winellbot/state/intents.py)
    min_free_mb: float = setting(16.0, at_least=0, at_most=1_000_000)

    @property
    def server_url(self) -> str:
        """The database the state lives in: ``url``, else ``WINELLBOT_STATE_URL`` (a URL holding a password
        belongs in the environment, e.g. ``toolforge envvars``, as the other secrets do); empty: SQLite at ``path``."""
        return self.url or os.environ.get("WINELLBOT_STATE_URL", "")


@dataclass
class PostingSettings:
    # "fact": the new fact in one line, the source's words, the section and a ready citation, no
    # article prose; "edit": the paragraph edit with a preview; "auto": fact on English Wikipedia
    # (whose guidance restricts LLM-written article text), edit elsewhere.
    style: str = setting("auto", choices=("auto", "fact", "edit"))
    max_per_page_per_week: int = setting(2, at_least=0, at_most=100)  # suggestions posted per article in any 7 days
    max_per_wiki_per_day: int = setting(10, at_least=0, at_most=10_000)  # suggestions posted on the wiki in any 24 hours
    # A posted suggestion neither adopted into the article nor decided by a trusted reviewer this
    # many days after it was posted counts as expired (winellbot outcomes).
    expire_days: float = setting(60.0, above=0, at_most=3650)
    # A status set on a suggestion's box by an IP (or a temporary account) counts as a reviewer's verdict.
    trust_anonymous: bool = False


@dataclass
class ReviewSettings:
    """Reviewed before posted (winellbot/review/, docs/review.md)."""

    # "reviewed": a suggestion the gates pass waits in the review queue and reaches the wiki only once a
    # reviewer approves it (an article whose opt-in template says review=no is posted directly);
    # "direct": posted as soon as the gates pass it, as before the review page existed.
    mode: str = setting("reviewed", choices=("reviewed", "direct"))
    depth: int = setting(3, at_least=1, at_most=50)  # per article, at most this many suggestions open in the queue at once, best estimate first
    # Wiki groups or rights, any one of which lets a logged-in user decide (blocked users never may).
    reviewers: list[str] = setting(factory=lambda: ["autoconfirmed"])
    poll_seconds: float = setting(20.0, at_least=1, at_most=3600)  # how often a running job posts what reviewers approved
    # The wiki's index.php for OAuth 1.0a (Extension:OAuth); empty: beside [wiki] api_url. The consumer's key
    # and secret come from WINELLBOT_OAUTH_KEY and WINELLBOT_OAUTH_SECRET.
    oauth_url: str = ""
    # Logging in with the wiki's own login API (username and password) instead of OAuth: honoured only
    # for a wiki on 127.0.0.1 (the demo and the tests), refused for any other.
    local_login: bool = True
    # A reviewer's session on the review page ends on the server after this long without a request
    # (minutes), and at the latest this long after its login (hours), whatever the cookie says.
    session_idle_minutes: float = setting(60.0, at_least=1, at_most=1440)
    session_hours: float = setting(12.0, above=0, at_most=168)


@dataclass
class LoggingSettings:
    file: str = ""  # a log file, rotated by size; empty: stderr only (``--log-file`` overrides)
    level: str = setting("info", choices=("debug", "info", "warning", "error"))  # what goes to the file
    max_bytes: int = setting(5_000_000, at_least=1, at_most=10_000_000_000)  # rotate when the file reaches this size
    backup_count: int = setting(5, at_least=0, at_most=1000)  # rotated files kept (winellbot.log.1 ... .5)


@dataclass
class Settings:
    wiki: WikiSettings = field(default_factory=WikiSettings)
    schedule: ScheduleSettings = field(default_factory=ScheduleSettings)
    pipeline: PipelineSettings = field(default_factory=PipelineSettings)
    search: SearchSettings = field(default_factory=SearchSettings)
    llm: LLMSettings = field(default_factory=LLMSettings)
    state: StateSettings = field(default_factory=StateSettings)
    logging: LoggingSettings = field(default_factory=LoggingSettings)
    posting: PostingSettings = field(default_factory=PostingSettings)
    review: ReviewSettings = field(default_factory=ReviewSettings)

    @property
    def bot_password(self) -> str:
        """``WINELLBOT_BOT_PASSWORD``, else the first line of ``[wiki] bot_password_file``."""
        value = os.environ.get("WINELLBOT_BOT_PASSWORD", "")
        if value or not self.wiki.bot_password_file:
            return value
        try:
            return Path(self.wiki.bot_password_file).expanduser().read_text("utf-8").strip()
        except OSError as exc:
            raise ConfigError(f"wiki.bot_password_file {self.wiki.bot_password_file}: {exc}") from exc


def _apply(section: Any, values: dict, where: str) -> None:
    known = {f.name: f for f in dataclasses.fields(section)}
    for key, value in values.items():
        if key not in known:
            raise ConfigError(f"unknown setting {where}.{key}")
        _check_type(f"{where}.{key}", getattr(section, key), value)
        setattr(section, key, value)


def _check_type(where: str, default: Any, value: Any) -> None:
    """``value`` must have the default's type; an int passes for a float, a boolean never for a number."""
    if default is None:
        return
    expected = type(default)
    ok = isinstance(value, expected) or (expected is float and isinstance(value, int))
    if isinstance(value, bool) and expected is not bool:
        ok = False
    if not ok:
        note = " (a boolean is not a number)" if isinstance(value, bool) and expected in (int, float) else ""
        raise ConfigError(f"{where} should be {expected.__name__}, got {_toml_value(value)}{note}")
    if isinstance(value, float) and not math.isfinite(value):
        raise ConfigError(f"{where} must be a finite number, got {_toml_value(value)}")
    if isinstance(value, list) and default:  # each item of a list has the type of the default's items
        for item in value:
            _check_type(f"{where} item", default[0], item)


def validate_settings(settings: Settings) -> Settings:
    """Check every setting against its type and declared domain; raise :class:`ConfigError` naming
    the setting and the allowed values. Returns ``settings``."""
    for section_field in dataclasses.fields(settings):
        section = getattr(settings, section_field.name)
        defaults = type(section)()
        for f in dataclasses.fields(section):
            where = f"{section_field.name}.{f.name}"
            value = getattr(section, f.name)
            _check_type(where, getattr(defaults, f.name), value)
            domain = f.metadata.get("domain")
            if domain is not None:
                domain.check(where, value)
    _check_queue(settings.wiki)
    _check_state_url(settings.state)
    return settings


def _check_queue(w: WikiSettings) -> None:
    """The review queue (its pages and index: ``queue``, and ``queue/<article>`` per article) may not be,
    nor hold beneath it, one of the bot's control pages; titles compared as MediaWiki spells them
    (underscores, spacing, the namespace's case, a first letter in capitals)."""
    queue = _title_key(w.queue)
    for page, what in w.control_pages().items():
        key = _title_key(page)
        if key == queue or key.startswith(queue + "/"):
            how = "" if key == queue else f" as the queue page of an article named {_toml_value(key[len(queue) + 1:])}"
            default = f"User:{w.username}/Queue"
            hint = f", e.g. {_toml_value(default)}" if _title_key(default) != queue else ""
            raise ConfigError(f"wiki.queue_prefix {_toml_value(w.queue)} would make the review queue write {what}, "
                              f"{page}{how}: give the queue a page of its own{hint}")


def _title_key(title: str) -> str:
    """A page title as the wiki compares it, without asking the wiki (so local namespace names and
    aliases are left as they are: the writer checks again on the wiki's own titles)."""
    text = " ".join(title.replace("_", " ").split()).lstrip(":").strip()
    namespace, colon, rest = text.partition(":")
    if not colon:
        namespace, rest = "", text
    rest = rest.strip()
    return f"{namespace.strip().lower()}:{rest[:1].upper()}{rest[1:]}"


def _check_state_url(state: StateSettings) -> None:
    """A state URL names a MariaDB database; a SQLite state is ``[state] path``, never a URL."""
    url = state.server_url
    scheme = url.split("://", 1)[0].lower() if "://" in url else ""
    if url and scheme not in STATE_URL_SCHEMES:
        where = "state.url" if state.url else "WINELLBOT_STATE_URL"
        hint = "; for a SQLite state set [state] path instead" if scheme.startswith("sqlite") else ""
        raise ConfigError(f"{where} must name a MariaDB database, mysql+pymysql://USER:PASSWORD@HOST/DATABASE; got "
                          f"a URL of {scheme or 'no'} scheme{hint}")


def load_settings(path: str | Path | None = None, overrides: dict | None = None) -> Settings:
    """Defaults, then the TOML file (if any), then ``overrides`` ({"section": {"key": value}})."""
    settings = Settings()
    path = path or os.environ.get("WINELLBOT_CONFIG")
    if path is None and Path("winellbot.toml").exists():
        path = "winellbot.toml"
    data: dict = {}
    if path is not None:
        try:
            data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
        except FileNotFoundError as exc:
            raise ConfigError(f"config file not found: {path}") from exc
        except IsADirectoryError as exc:
            raise ConfigError(f"config file {path} is a folder: name the TOML file in it") from exc
        except OSError as exc:  # no permission to read it, and the like
            raise ConfigError(f"config file {path} cannot be read: {exc.strerror or exc}") from exc
        except UnicodeDecodeError as exc:
            raise ConfigError(f"config file {path} is not UTF-8 text (a binary file?): byte {exc.start} cannot be "
                              "read") from exc
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"config file {path} is not valid TOML: {exc}") from exc
    for source in (data, overrides or {}):
        for name, values in source.items():
            if not hasattr(settings, name) or not isinstance(values, dict):
                raise ConfigError(f"unknown config section [{name}]")
            _apply(getattr(settings, name), values, name)
    return validate_settings(settings)


def dump_settings(settings: Settings) -> str:
    """The settings as TOML text (for `winellbot status` and the demo's config file)."""
    lines = []
    for section in dataclasses.fields(settings):
        lines.append(f"[{section.name}]")
        for f in dataclasses.fields(getattr(settings, section.name)):
            lines.append(f"{f.name} = {_toml_value(getattr(getattr(settings, section.name), f.name))}")
        lines.append("")
    return "\n".join(lines)


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {_toml_value(v)}" for k, v in value.items()) + " }"
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    return '"' + str(value).replace("\\", "\\\\").replace('"', '\\"') + '"'
