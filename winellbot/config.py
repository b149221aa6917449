"""Configuration: typed defaults, one TOML file over them, secrets from the environment.

The file is found at ``--config``, else ``$WINELLBOT_CONFIG``, else ``winellbot.toml``
in the working directory; a missing file means the embedded defaults. Secrets never
live in the file: the bot password comes from ``WINELLBOT_BOT_PASSWORD`` and the
model API key from ``WINELLBOT_OPENAI_API_KEY`` (or ``OPENAI_API_KEY``).
"""
from __future__ import annotations

import dataclasses
import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from winellbot.errors import ConfigError


@dataclass
class WikiSettings:
    # Empty api_url: use the operator's Pywikibot user-config.py (production on Wikipedia).
    api_url: str = ""
    family_name: str = ""  # Pywikibot family name for api_url; empty: derived from the URL
    username: str = "WinellBot"
    bot_password_app: str = "winellbot"
    optin_template: str = "Winellbot"
    watchlist_page: str = ""  # e.g. "User:WinellBot/Watchlist"; empty: none
    shutoff_page: str = ""  # empty: User:<username>/Shutoff
    queue_mode: str = "per-article"  # "per-article" (User:BOT/Queue/Title) or "single" (User:BOT/Queue)
    queue_prefix: str = ""  # empty: User:<username>/Queue
    maxlag: int = 5  # seconds; Wikipedia's recommended value for bots
    put_throttle: float = 10.0  # seconds between saves
    new_section_interval_days: int = 7  # at most one new talk section per page per this many days
    simulate: bool = False

    @property
    def shutoff(self) -> str:
        return self.shutoff_page or f"User:{self.username}/Shutoff"

    @property
    def queue(self) -> str:
        return self.queue_prefix or f"User:{self.username}/Queue"


@dataclass
class ScheduleSettings:
    interval_minutes: int = 360  # how often `winellbot run` starts a cycle
    recheck_days: float = 7.0  # a page is due again this long after its last run
    max_pages_per_cycle: int = 200


@dataclass
class PipelineSettings:
    """The one table of pipeline defaults: the bot and the backtest both build from it."""

    backend: str = "offline"  # "offline" | "openai"
    max_suggestions: int = 5
    # The aggregation loop's bounds. A model's round costs several calls, so the agent reads few
    # documents; the offline stages cost little per document and find most when they read every
    # one the search returns (dev backtest, 20 documents per task: 8/3 rounds C_soft 12.8%,
    # 20/5 14.4%, 40/10 15.0%).
    max_iterations: int = 8
    max_empty: int = 3
    offline_max_iterations: int = 40
    offline_max_empty: int = 10


@dataclass
class SearchSettings:
    backend: str = "corpus"  # "corpus" | "gdelt" | "brave" | "searxng"
    corpus_dir: str = ""  # empty: the bundled fictional sample news
    window_days: int = 30  # only sources newer than the last check, or this many days
    base_url: str = ""  # for searxng, or to point a backend at another host
    api_key_env: str = "WINELLBOT_SEARCH_API_KEY"
    allow_private_urls: bool = False  # the fetcher's SSRF guard; tests allow loopback


@dataclass
class LLMSettings:
    base_url: str = "https://api.openai.com/v1"
    model: str = "gpt-4.1-mini"
    # The paper used a strong model for criteria and a small one for aggregation.
    stage_models: dict[str, str] = field(default_factory=lambda: {"criteria": "gpt-4.1"})
    token_budget: int = 200_000  # per run
    timeout: float = 60.0
    max_retries: int = 4
    editor_backend: str = "llm"  # "llm" | "transformers" | "offline"
    editor_model_dir: str = ""  # for editor_backend = "transformers"

    @property
    def api_key(self) -> str:
        return os.environ.get("WINELLBOT_OPENAI_API_KEY") or os.environ.get("OPENAI_API_KEY", "")


@dataclass
class StateSettings:
    path: str = "winellbot.sqlite"


@dataclass
class LoggingSettings:
    file: str = ""  # a log file, rotated by size; empty: stderr only (``--log-file`` overrides)
    level: str = "info"  # what goes to the file: debug | info | warning | error
    max_bytes: int = 5_000_000  # rotate when the file reaches this size
    backup_count: int = 5  # rotated files kept (winellbot.log.1 ... .5)


@dataclass
class Settings:
    wiki: WikiSettings = field(default_factory=WikiSettings)
    schedule: ScheduleSettings = field(default_factory=ScheduleSettings)
    pipeline: PipelineSettings = field(default_factory=PipelineSettings)
    search: SearchSettings = field(default_factory=SearchSettings)
    llm: LLMSettings = field(default_factory=LLMSettings)
    state: StateSettings = field(default_factory=StateSettings)
    logging: LoggingSettings = field(default_factory=LoggingSettings)

    @property
    def bot_password(self) -> str:
        return os.environ.get("WINELLBOT_BOT_PASSWORD", "")


def _apply(section: Any, values: dict, where: str) -> None:
    known = {f.name: f for f in dataclasses.fields(section)}
    for key, value in values.items():
        if key not in known:
            raise ConfigError(f"unknown setting {where}.{key}")
        default = getattr(section, key)
        if default is not None and not isinstance(value, type(default)) and not (
            isinstance(default, float) and isinstance(value, int)
        ):
            raise ConfigError(f"{where}.{key} should be {type(default).__name__}, got {value!r}")
        setattr(section, key, value)


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
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"config file {path} is not valid TOML: {exc}") from exc
    for source in (data, overrides or {}):
        for name, values in source.items():
            if not hasattr(settings, name) or not isinstance(values, dict):
                raise ConfigError(f"unknown config section [{name}]")
            _apply(getattr(settings, name), values, name)
    return settings


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
    return '"' + str(value).replace("\\", "\\\\").replace('"', '\\"') + '"'
