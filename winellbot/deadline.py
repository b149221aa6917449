"""A total deadline for outbound HTTP requests, which a slow server cannot stretch.

A ``requests`` timeout bounds each wait for the next bytes, not the whole answer: a server that
sends one byte every few seconds keeps a request alive for as long as it likes. A :class:`Deadline`
bounds everything done inside its ``with`` block, in this thread, through a session made by
:func:`session`:

    http = deadline.session()
    with Deadline(15, "the wiki (https://example.org/w/api.php)") as d:
        r = http.get(url, timeout=d.timeout(10))

When the time is up, a watchdog thread shuts down the socket of every request the block has under
way, so a blocked read returns at once; the block then raises :class:`DeadlineExceeded`, whose
message is one line naming ``what`` and the deadline. ``d.timeout(per_read)`` gives the (connect,
read) timeouts for a request, neither longer than what is left. Deadlines nest (the nearest end
counts). Requests made through any other session are not watched.
"""
from __future__ import annotations

import socket
import threading
import time

import requests
from requests.adapters import HTTPAdapter
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool

from winellbot.errors import WinellbotError


class DeadlineExceeded(WinellbotError):
    """A block of requests ran past its total deadline and was cut short."""


_active = threading.local()  # .deadlines: the deadlines in force in this thread, outermost first


class Deadline:
    """At most ``seconds`` for the block, in this thread; ``what`` names it in the error."""

    def __init__(self, seconds: float, what: str) -> None:
        if seconds <= 0:
            raise ValueError("a deadline needs a positive number of seconds")
        self.seconds, self.what = float(seconds), what
        self.expired = False
        self._ends = 0.0
        self._lock = threading.Lock()
        self._connections: set = set()
        self._timer: threading.Timer | None = None

    def __enter__(self) -> Deadline:
        self._ends = time.monotonic() + self.seconds
        self._timer = threading.Timer(self.seconds, self._expire)
        self._timer.daemon = True
        self._timer.start()
        stack = getattr(_active, "deadlines", None)
        if stack is None:
            stack = _active.deadlines = []
        stack.append(self)
        return self

    def __exit__(self, kind, exc, tb) -> bool:
        self._timer.cancel()
        _active.deadlines.remove(self)
        with self._lock:
            self._connections.clear()
        if self.expired and exc is not None and not isinstance(exc, DeadlineExceeded):
            if isinstance(exc, (requests.RequestException, OSError, ValueError)):
                raise DeadlineExceeded(f"{self.what} gave up after its deadline of {self.seconds:g} s "
                                       "(the server answered too slowly)") from exc
        return False

    def remaining(self) -> float:
        """Seconds left (0 once the deadline has passed)."""
        return max(0.0, self._ends - time.monotonic())

    def timeout(self, per_read: float) -> tuple[float, float]:
        """The (connect, read) timeouts for the next request: ``per_read``, or less when less is left."""
        left = self.remaining()
        if left <= 0:
            self.expired = True
            raise DeadlineExceeded(f"{self.what} gave up after its deadline of {self.seconds:g} s")
        wait = max(0.001, min(per_read, left))
        return wait, wait

    def watch(self, connection) -> None:
        """Cut ``connection`` (a connection or its socket) short if this deadline passes while it is in use."""
        with self._lock:
            if not self.expired:
                self._connections.add(connection)
                return
        _shut(connection)

    def _expire(self) -> None:
        with self._lock:
            self.expired = True
            watched, self._connections = list(self._connections), set()
        for connection in watched:
            _shut(connection)


def _shut(connection) -> None:
    sock = connection if isinstance(connection, socket.socket) else getattr(connection, "sock", None)
    if sock is None:
        return
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:  # closed meanwhile
        pass


def _watched(cls):
    class Watched(cls):
        def request(self, *args, **kwargs):
            for d in getattr(_active, "deadlines", ()):
                d.watch(self)
            return super().request(*args, **kwargs)

        def getresponse(self, *args, **kwargs):
            # the socket itself: the connection lets go of it when the answer is to close it, the answer does not
            for d in getattr(_active, "deadlines", ()):
                d.watch(self.sock)
            return super().getresponse(*args, **kwargs)

    Watched.__name__ = f"Watched{cls.__name__}"
    return Watched


class _Pool(HTTPConnectionPool):
    ConnectionCls = _watched(HTTPConnection)


class _TLSPool(HTTPSConnectionPool):
    ConnectionCls = _watched(HTTPSConnection)


class _Adapter(HTTPAdapter):
    def init_poolmanager(self, *args, **kwargs) -> None:
        super().init_poolmanager(*args, **kwargs)
        self.poolmanager.pool_classes_by_scheme = {"http": _Pool, "https": _TLSPool}

    def proxy_manager_for(self, proxy, **kwargs):
        manager = super().proxy_manager_for(proxy, **kwargs)
        manager.pool_classes_by_scheme = {"http": _Pool, "https": _TLSPool}
        return manager


def session() -> requests.Session:
    """A ``requests`` session whose requests a :class:`Deadline` in force in the calling thread can cut short."""
    http = requests.Session()
    adapter = _Adapter()
    http.mount("http://", adapter)
    http.mount("https://", adapter)
    return http
