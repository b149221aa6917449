"""URL hygiene for fetching: canonical cache keys and the guard against server-side request forgery.

A search result is text from the open web, so its URL may point anywhere:
``http://169.254.169.254/`` (cloud metadata), ``http://localhost:8080/admin``,
``file:///etc/passwd``, or a public name that resolves to a private address.
:class:`UrlGuard` refuses all of those before a request is made, and
:func:`guarded_adapter` checks again the address a socket actually connected
to, so a DNS answer that changes between the check and the connection (DNS
rebinding) is caught too.
"""
from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable
from urllib.parse import SplitResult, quote, unquote_plus, urlsplit, urlunsplit

from winellbot.deadline import adapter
from winellbot.errors import FetchError, UnsafeURLError

Resolver = Callable[[str, int], list[str]]

SCHEMES = ("http", "https")
_DEFAULT_PORTS = {"http": 80, "https": 443}

#: Query parameters that only track the reader; dropped from the canonical URL.
TRACKING_PARAMS = frozenset({
    "fbclid", "gclid", "dclid", "gbraid", "wbraid", "msclkid", "yclid", "igshid", "mc_cid", "mc_eid",
    "_ga", "_gl", "_hsenc", "_hsmi", "mkt_tok", "ocid", "cmpid", "smid", "spm", "ns_mchannel",
    "ns_source", "ns_campaign", "ns_linkname", "ns_fee", "at_medium", "at_campaign", "guccounter",
})
TRACKING_PREFIXES = ("utm_", "pk_", "mtm_", "vero_", "oly_")

_NAT64 = ipaddress.ip_network("64:ff9b::/96")


def _is_tracking(name: str) -> bool:
    name = unquote_plus(name).lower()
    return name in TRACKING_PARAMS or name.startswith(TRACKING_PREFIXES)


def _split_http(url: str) -> tuple[SplitResult, str, int | None]:
    """The parts, lower-cased scheme and port of an http(s) URL; :class:`UnsafeURLError` otherwise."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise UnsafeURLError(f"malformed URL {url!r}: {exc}") from exc
    scheme = parts.scheme.lower()
    if scheme not in SCHEMES:
        raise UnsafeURLError(f"refusing non-http(s) URL {url!r}")
    return parts, scheme, port


def canonical_url(url: str) -> str:
    """The cache key of a web page: one spelling for the many ways a URL can be written.

    Lower-cases scheme and host, drops the default port, user info, the
    fragment and tracking parameters (``utm_*``, ``fbclid`` ...), keeps the
    other parameters byte for byte and in order, and writes the empty path as
    ``/`` and any other path without its trailing slash. Raises
    :class:`UnsafeURLError` for anything but an http(s) URL with a host.
    """
    parts, scheme, port = _split_http(url.strip())
    host = (parts.hostname or "").rstrip(".")
    if not host:
        raise UnsafeURLError(f"URL without a host: {url!r}")
    if ":" in host:
        host = f"[{host}]"
    netloc = host if port in (None, _DEFAULT_PORTS[scheme]) else f"{host}:{port}"
    path = parts.path or "/"
    if len(path) > 1:
        path = path.rstrip("/") or "/"
    query = "&".join(p for p in parts.query.split("&") if p and not _is_tracking(p.split("=", 1)[0]))
    return urlunsplit((scheme, netloc, path, query, ""))


def citation_url(url: str) -> str | None:
    """``url`` made safe to cite in wikitext, or None when it is not an http(s) URL with a host.

    Every character that could end a bracketed link or a template parameter, or carry markup,
    is percent-encoded (spaces, brackets, braces, pipes, angle brackets, quotes, ``~`` of a
    signature, the ``__`` of a magic word); what it points at stays the same.
    """
    url = url.strip()
    try:
        parts, _, _ = _split_http(url)
    except UnsafeURLError:
        return None
    if not parts.hostname or parts.username is not None or parts.password is not None:
        return None
    encoded = quote(url, safe="/:?#&=%+,;@!$*()-._")
    return encoded.replace("~", "%7E").replace("__", "_%5F")  # quote() never encodes "~" or "_"


def is_public_address(address: str) -> bool:
    """Whether an IP address is globally routable (the only kind a fetch may reach).

    Private, loopback, link-local, multicast, reserved, unspecified, shared
    (100.64/10) and site-local addresses are not; for IPv6 that embeds an IPv4
    address (IPv4-mapped ``::ffff:a.b.c.d``, NAT64, 6to4) the embedded address
    is judged. Anything that does not parse is not public.
    """
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return False
    if isinstance(ip, ipaddress.IPv6Address):
        embedded = ip.ipv4_mapped or ip.sixtofour
        if embedded is None and ip in _NAT64:
            embedded = ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
        if embedded is not None:
            return is_public_address(str(embedded))
        if ip.is_site_local:
            return False
    if (ip.is_private or ip.is_loopback or ip.is_link_local or ip.is_multicast or ip.is_reserved
            or ip.is_unspecified):
        return False
    return ip.is_global


def resolve_host(host: str, port: int) -> list[str]:
    """Every address ``host`` resolves to (the system resolver)."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        raise FetchError(f"cannot resolve {host}: {exc}") from exc
    return sorted({str(info[4][0]) for info in infos})


class UrlGuard:
    """Decides whether a URL may be requested; raises :class:`UnsafeURLError` if not.

    ``allow_private`` lets every private and loopback address through (tests,
    or an intranet deployment); ``allowed_networks`` (CIDR strings) lets only
    those through, for example ``("127.0.0.1/32",)`` for a local test server.
    The scheme and user-info checks always apply. ``resolver`` maps (host,
    port) to addresses; tests inject one.
    """

    def __init__(self, *, allow_private: bool = False, allowed_networks: tuple[str, ...] = (),
                 resolver: Resolver | None = None) -> None:
        self.allow_private = allow_private
        self.allowed_networks = tuple(ipaddress.ip_network(n, strict=False) for n in allowed_networks)
        self.resolver = resolver or resolve_host

    def check(self, url: str) -> None:
        """Raise unless ``url`` is http(s), has no credentials, and every address of its host is public."""
        parts, scheme, port = _split_http(url)
        if parts.username is not None or parts.password is not None:
            raise UnsafeURLError(f"refusing URL with credentials: {parts.hostname}")
        host = parts.hostname
        if not host:
            raise UnsafeURLError(f"URL without a host: {url!r}")
        if self.allow_private:
            return
        addresses = self.resolver(host, port or _DEFAULT_PORTS[scheme])
        if not addresses:
            raise FetchError(f"{host} resolves to no address")
        for address in addresses:
            self.check_address(address, host)

    def check_address(self, address: str, host: str = "") -> None:
        """Raise unless ``address`` is public, in an allowed network, or private addresses are allowed."""
        if self.allow_private or is_public_address(address) or self._in_allowed(address):
            return
        raise UnsafeURLError(f"refusing {host or address}: non-public address {address}")

    def _in_allowed(self, address: str) -> bool:
        try:
            ip = ipaddress.ip_address(address.split("%", 1)[0])
        except ValueError:
            return False
        return any(ip.version == net.version and ip in net for net in self.allowed_networks)


def guarded_adapter(guard: UrlGuard):
    """A requests adapter that re-checks the address each new connection actually reached.

    The check in :meth:`UrlGuard.check` resolves the name once; the HTTP library
    resolves it again when it connects. This adapter closes that gap. Proxies
    are not used with it (the peer would be the proxy). Its sockets are handed to
    the deadlines open on the thread (winellbot/deadline.py).
    """
    def checked(sock: socket.socket) -> None:
        try:
            guard.check_address(str(sock.getpeername()[0]))
        except UnsafeURLError:
            sock.close()
            raise

    return adapter(checked)
