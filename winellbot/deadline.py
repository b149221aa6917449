"""Deadlines, not timeouts: a wall-clock limit on a whole outbound request, however slowly a server answers.

A read timeout (requests', httpx's, pymysql's) bounds each wait for the next bytes, so a server that sends
one byte now and then holds its caller for as long as it likes. A :class:`Deadline` bounds the whole
request: each socket handed to it is shut down once its seconds have passed, which wakes a thread blocked
on that socket at once, and the caller raises :class:`DeadlinePassed`, one line naming the limit.

Sockets reach a deadline in one of three ways:

* requests: :func:`mount` puts connection classes on a session that hand the socket of every request (a new
  connection or one reused from the pool) to each deadline open on the calling thread (``with
  Deadline(...)``); :func:`within` runs one call under a deadline and words its failure;
  :class:`DeadlineSession` does so for every request it sends (Pywikibot's session is one, wiki/site.py).
  A streamed body is read after ``send`` returns: its reader holds a deadline of its own around the
  whole download (search/fetch.py).
* httpx (the openai client): :func:`httpx_client` sends each request through a transport that opens a
  deadline for it, hands it the request's socket, and closes it when the body has been read.
* anything else with a socket: :meth:`Deadline.watch`.
"""
from __future__ import annotations

import socket
import threading
from collections.abc import Callable
from typing import TypeVar

import requests

T = TypeVar("T")
_local = threading.local()


class DeadlinePassed(requests.Timeout):
    """A request that was not over within its deadline (a Timeout to requests' callers and to Pywikibot)."""


class Deadline:
    """Shuts down every socket it watches once ``seconds`` have passed since it started (a timer thread).

    As a context manager it starts on entry, is open on this thread inside (:func:`watch` hands it
    sockets), and stops on exit; ``expired`` tells whether it cut something short.
    """

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.expired = False
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._timer: threading.Timer | None = None

    def start(self) -> Deadline:
        self._timer = threading.Timer(self.seconds, self._expire)
        self._timer.daemon = True
        self._timer.start()
        return self

    def watch(self, sock: socket.socket | None) -> None:
        """Shut ``sock`` down when the deadline passes (at once if it has)."""
        if sock is None:
            return
        with self._lock:
            self._sockets.append(sock)
            if self.expired:
                _shut(sock)

    def cancel(self) -> None:
        """Stop the timer; the sockets watched so far are left alone from now on."""
        if self._timer is not None:
            self._timer.cancel()
        with self._lock:
            self._sockets.clear()

    def passed(self) -> DeadlinePassed:
        """The error to raise for a request this deadline cut short."""
        return DeadlinePassed(f"no complete answer within {self.seconds:g} s (a total deadline)")

    def __enter__(self) -> Deadline:
        self.start()
        _open().append(self)
        return self

    def __exit__(self, *exc) -> None:
        self.cancel()
        _open().remove(self)

    def _expire(self) -> None:
        with self._lock:
            self.expired = True
            for sock in self._sockets:
                _shut(sock)


def watch(sock: socket.socket | None) -> None:
    """Hand ``sock`` to every deadline open on this thread (none: nothing happens)."""
    for deadline in _open():
        deadline.watch(sock)


def within(seconds: float | None, call: Callable[[], T]) -> T:
    """``call()`` (requests made through a :func:`mount`-ed session) under a deadline of ``seconds``
    (None: no deadline); a call the deadline cut short raises :class:`DeadlinePassed`."""
    if seconds is None:
        return call()
    with Deadline(seconds) as deadline:
        try:
            result = call()
        except (requests.RequestException, OSError) as exc:
            if deadline.expired:
                raise deadline.passed() from exc
            raise
    if deadline.expired:  # a body without a length ends early, silently, when its socket is shut
        raise deadline.passed()
    return result


def mount(session: requests.Session, check: Callable[[socket.socket], None] | None = None) -> requests.Session:
    """``session`` with connections that hand their sockets to this thread's deadlines, for http and https;
    ``check`` is told each new connection's socket first (it closes it and raises to refuse it)."""
    mounted = adapter(check)
    session.mount("http://", mounted)
    session.mount("https://", mounted)
    return session


class DeadlineSession(requests.Session):
    """A requests session whose every request (redirects and an unstreamed body included) is over
    within ``seconds``, or raises :class:`DeadlinePassed`."""

    def __init__(self, seconds: float | None) -> None:
        super().__init__()
        self.seconds = seconds
        mount(self)

    def send(self, request, **kwargs):
        return within(self.seconds, lambda: super(DeadlineSession, self).send(request, **kwargs))


def adapter(check: Callable[[socket.socket], None] | None = None):
    """A requests adapter whose connections hand their sockets to this thread's deadlines (see :func:`mount`)."""
    from requests.adapters import HTTPAdapter
    from urllib3.connection import HTTPConnection, HTTPSConnection
    from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool

    def handed(sock: socket.socket) -> socket.socket:
        if check is not None:
            check(sock)
        watch(sock)
        return sock

    class _Http(HTTPConnection):
        def _new_conn(self):
            return handed(super()._new_conn())

        def getresponse(self, *args, **kwargs):  # a connection reused from the pool: its socket too
            watch(self.sock)
            return super().getresponse(*args, **kwargs)

    class _Https(HTTPSConnection):
        def _new_conn(self):
            return handed(super()._new_conn())

        def getresponse(self, *args, **kwargs):
            watch(self.sock)
            return super().getresponse(*args, **kwargs)

    class _HttpPool(HTTPConnectionPool):
        ConnectionCls = _Http

    class _HttpsPool(HTTPSConnectionPool):
        ConnectionCls = _Https

    class _DeadlineAdapter(HTTPAdapter):
        def init_poolmanager(self, *args, **kwargs):
            super().init_poolmanager(*args, **kwargs)
            self.poolmanager.pool_classes_by_scheme = {"http": _HttpPool, "https": _HttpsPool}

    return _DeadlineAdapter()


def httpx_client(seconds: float, **kwargs):
    """An ``httpx.Client`` whose every request, body included, is over within ``seconds``, or raises
    ``httpx.ReadTimeout`` saying so. Connections are not kept between requests, so that each request's
    socket is its own to shut."""
    import httpx

    class _Stream(httpx.SyncByteStream):
        def __init__(self, inner, deadline: Deadline) -> None:
            self.inner, self.deadline = inner, deadline

        def __iter__(self):
            try:
                yield from self.inner
            except httpx.HTTPError as exc:
                if self.deadline.expired:
                    raise httpx.ReadTimeout(str(self.deadline.passed())) from exc
                raise
            if self.deadline.expired:
                raise httpx.ReadTimeout(str(self.deadline.passed()))

        def close(self) -> None:
            self.deadline.cancel()
            self.inner.close()

    class _Transport(httpx.HTTPTransport):
        def handle_request(self, request):
            deadline = Deadline(seconds).start()
            request.extensions = {**request.extensions, "trace": _tracer(deadline)}
            try:
                response = super().handle_request(request)
            except httpx.HTTPError as exc:
                deadline.cancel()
                if deadline.expired:
                    raise httpx.ReadTimeout(str(deadline.passed()), request=request) from exc
                raise
            except BaseException:
                deadline.cancel()
                raise
            response.stream = _Stream(response.stream, deadline)
            return response

    limits = httpx.Limits(max_keepalive_connections=0)
    return httpx.Client(transport=_Transport(limits=limits), **kwargs)


def _tracer(deadline: Deadline):
    def trace(event: str, info: dict) -> None:
        if event in ("connection.connect_tcp.complete", "connection.connect_unix_socket.complete"):
            stream = info.get("return_value")
            deadline.watch(stream.get_extra_info("socket") if stream is not None else None)
    return trace


def _open() -> list[Deadline]:
    if not hasattr(_local, "open"):
        _local.open = []
    return _local.open


def _shut(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)  # wakes a thread blocked in recv(), unlike close()
    except OSError:
        pass
