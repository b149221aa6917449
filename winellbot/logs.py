"""Where the bot's log goes: stderr always, and a rotating file when one is configured.

A continuous job on Toolforge keeps its stdout and stderr with the jobs framework; the log file
(``--log-file`` or ``[logging] file``) is for operators who want the bot's own record on disk,
rotated by size so that it never fills the tool's quota.
"""
from __future__ import annotations

import logging
import logging.handlers
from pathlib import Path

from winellbot.errors import ConfigError

FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
_FILE_HANDLER_NAME = "winellbot-file"


def configure(*, verbose: bool = False) -> None:
    """stderr logging: progress with ``verbose``, else warnings and errors only."""
    logging.basicConfig(level=logging.INFO if verbose else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s")


def add_file(path: str | Path, *, level: str = "info", max_bytes: int = 5_000_000,
             backup_count: int = 5) -> Path:
    """Also log to ``path``, rotated at ``max_bytes`` with ``backup_count`` old files kept.

    Called again (another command in the same process), it replaces the earlier file handler.
    """
    target = Path(path).expanduser()
    target.parent.mkdir(parents=True, exist_ok=True)
    handler = logging.handlers.RotatingFileHandler(target, maxBytes=max_bytes, backupCount=backup_count,
                                                   encoding="utf-8")
    handler.name = _FILE_HANDLER_NAME
    handler.setLevel(_level(level))
    handler.setFormatter(logging.Formatter(FORMAT))
    root = logging.getLogger()
    for old in [h for h in root.handlers if h.name == _FILE_HANDLER_NAME]:
        root.removeHandler(old)
        old.close()
    # The root logger lets through what the most talkative handler wants; stderr keeps its own level.
    for h in root.handlers:
        if h.level == logging.NOTSET:
            h.setLevel(root.level)
    root.setLevel(min(root.level, handler.level))
    root.addHandler(handler)
    return target


def _level(name: str) -> int:
    level = logging.getLevelName(name.upper())
    if not isinstance(level, int):
        raise ConfigError(f"unknown log level {name!r} (debug, info, warning, error)")
    return level
