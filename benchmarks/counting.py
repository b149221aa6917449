"""Request counting for the benchmarks (instrumentation only, never used by the bot)."""
from __future__ import annotations

import re
from pathlib import Path


def api_lines(log: Path) -> int:
    """Requests to api.php in a ``php -S`` access log so far."""
    try:
        text = log.read_text("utf-8", errors="replace")
    except FileNotFoundError:
        return 0
    return len(re.findall(r"\]: (?:GET|POST) /api\.php", text))


class CountingHTTP:
    """Counts Pywikibot's HTTP requests while active."""

    def __enter__(self) -> CountingHTTP:
        from pywikibot.comms import http

        self.count = 0
        self._module, self._real = http, http.request

        def counting(*args, **kwargs):
            self.count += 1
            return self._real(*args, **kwargs)

        http.request = counting
        return self

    def __exit__(self, *exc: object) -> None:
        self._module.request = self._real
