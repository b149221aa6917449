"""The one exception boundary between winellbot and Pywikibot.

Every public method of the reader and the writer runs inside :func:`guarded`, which turns
Pywikibot's exceptions, the network's and a password prompt with no terminal into winellbot's
own (:mod:`winellbot.errors`), each with one line that names the problem:

    the wiki does not answer (refused, timed out, 5xx)   -> WikiUnreachable  stops the cycle
    the login is gone and cannot be regained             -> LoginLost        stops the cycle
    a protected page, a blocked or filtered save         -> PostingRefused   this page only, in one line
                                                            (:func:`refusal`: who refused, the code, why)
    a page deleted or missing                            -> PageGone         this page only
    anything else Pywikibot raises                       -> WikiError        this page only
    a full disk or a read-only folder under Pywikibot's  -> StorageError     stops the cycle, in the one line
    own files (cookie jar, throttle file, API cache)                         of every storage failure

:func:`bounded_wait` turns the operator's ``wiki.max_wait`` into Pywikibot's retry settings, so
that a wiki that does not answer is given up after about that long (Pywikibot's defaults retry
for over twenty minutes), and :func:`quiet_retries` keeps Pywikibot's per-retry tracebacks off
the terminal: the error that ends the retries is reported once, by the caller.
"""
from __future__ import annotations

import contextlib
import functools
import html
import inspect
import logging
import re
import socket
from collections.abc import Callable, Iterator

import requests

from winellbot.errors import LoginLost, PageGone, PostingRefused, WikiError, WikiUnreachable, WinellbotError
from winellbot.state.storage import file_failure

_PROTECTED = {"protectedpage", "cascadeprotected", "protectedtitle", "protectednamespace",
              "protectednamespace-interface", "permissiondenied", "blocked", "autoblocked", "abusefilter-disallowed",
              "spamblacklist", "titleblacklist-forbidden"}
# What refused a save, by the API's error code.
_REFUSED_BY = {
    "spamprotectionmatch": "the wiki's spam filter", "spamprotectiontext": "the wiki's spam filter",
    "spamdetected": "the wiki's spam filter", "spamblacklist": "the wiki's spam blacklist",
    "abusefilter-disallowed": "an abuse filter", "abusefilter-warning": "an abuse filter",
    "titleblacklist-forbidden": "the title blacklist", "blocked": "a block on the bot's account",
    "autoblocked": "a block on the bot's account", "permissiondenied": "the bot's rights",
    "protectednamespace": "the namespace's protection", "protectednamespace-interface": "the namespace's protection",
}
_GONE = {"missingtitle", "pagedeleted", "nocreate-missing", "cantcreate"}
_LOGIN = {"assertuserfailed", "assertbotfailed", "notloggedin", "badtoken", "mwoauth-invalid-authorization",
          "readapidenied", "writeapidenied"}


def translate(exc: BaseException, what: str) -> WinellbotError:
    """The winellbot error for ``exc`` raised while doing ``what`` (a few words: "reading Foo")."""
    from pywikibot import config
    from pywikibot import exceptions as pwb

    if isinstance(exc, WinellbotError):
        return exc
    # its cookie jar, throttle file and API cache
    files = file_failure(exc, "Pywikibot's files beside the state", str(config.base_dir))
    if files is not None and not isinstance(exc, requests.RequestException):
        return files
    code = getattr(exc, "code", "") or ""
    detail = _one_line(exc)
    if isinstance(exc, pwb.LockedPageError) or code in ("protectedpage", "cascadeprotected", "protectedtitle"):
        return PostingRefused(f"{what}: the wiki refused the save: the page is protected ({detail})")
    if isinstance(exc, (pwb.AbuseFilterDisallowedError, pwb.SpamblacklistError, pwb.TitleblacklistError,
                        pwb.OtherPageSaveError)) or code in _PROTECTED or code in _REFUSED_BY:
        return PostingRefused(f"{what}: {refusal(exc)}")
    if isinstance(exc, (pwb.NoPageError, pwb.PageDeletedConflictError, pwb.NoCreateError)) or code in _GONE:
        return PageGone(f"{what}: the page is gone ({detail})")
    if isinstance(exc, (pwb.NoUsernameError, EOFError)) or code in _LOGIN:
        reason = ("Pywikibot asked for a password and there is no terminal to type it: set WINELLBOT_BOT_PASSWORD "
                  "or Pywikibot's password_file") if isinstance(exc, EOFError) else detail
        return LoginLost(f"{what}: not logged in ({reason})")
    if isinstance(exc, (pwb.ApiTimeoutError, pwb.ServerError, pwb.ApiNotAvailableError, pwb.ClientError,
                        requests.RequestException, ConnectionError, socket.timeout, TimeoutError)):
        if isinstance(exc, pwb.ApiTimeoutError) and _RetryChatter.last_error:
            detail = _one_line(_RetryChatter.last_error)
        return WikiUnreachable(f"{what}: the wiki does not answer ({detail})")
    return WikiError(f"{what}: {detail}")


def refusal(exc: BaseException) -> str:
    """One line saying what refused a save and why, in the wiki's own words: "the wiki's spam filter
    refused the save (spamprotectionmatch: The following text is what triggered our spam filter: ...)".
    Pywikibot words a refusal over several lines, an API error's help text included; this keeps the
    refuser, the wiki's code and its reason, and drops the rest."""
    from pywikibot import exceptions as pwb

    reason = getattr(exc, "reason", None)  # OtherPageSaveError: the wiki's error, or Pywikibot's own words
    cause = reason if isinstance(reason, BaseException) else exc
    code = getattr(cause, "code", "") or ""
    if isinstance(cause, pwb.SpamblacklistError):
        code, said = "spamblacklist", f"blacklisted: {cause.url}"
    elif isinstance(cause, pwb.AbuseFilterDisallowedError):
        code, said = "abusefilter-disallowed", cause.info
    elif isinstance(cause, pwb.TitleblacklistError):
        code, said = "titleblacklist-forbidden", "the title is blacklisted"
    elif code:
        said = getattr(cause, "info", "") or ""
    else:
        said = str(reason if reason is not None else exc)
    said = " ".join(html.unescape(re.sub(r"<[^>]+>", " ", str(said))).split()) or type(cause).__name__
    return f"{_REFUSED_BY.get(code, 'the wiki')} refused the save ({f'{code}: ' if code else ''}{said})"


def is_wiki_error(exc: BaseException) -> bool:
    from pywikibot import exceptions as pwb

    return isinstance(exc, (pwb.Error, requests.RequestException, ConnectionError, socket.timeout, TimeoutError,
                            EOFError)) or file_failure(exc, "") is not None


@contextlib.contextmanager
def boundary(what: str) -> Iterator[None]:
    """Run a block of Pywikibot calls; their errors leave it as winellbot errors."""
    try:
        yield
    except WinellbotError:
        raise
    except BaseException as exc:
        if not is_wiki_error(exc):
            raise
        raise translate(exc, what) from exc


def guarded(what: str | Callable[..., str]) -> Callable:
    """Decorate a reader or writer method with :func:`boundary`; ``what`` may be a function of
    the method's arguments (``lambda self, title, *a, **k: f"posting to {title}"``)."""
    def decorate(fn: Callable) -> Callable:
        def label(args, kwargs) -> str:
            return what(*args, **kwargs) if callable(what) else what

        if inspect.isgeneratorfunction(fn):
            @functools.wraps(fn)
            def generator(*args, **kwargs):
                with boundary(label(args, kwargs)):
                    yield from fn(*args, **kwargs)
            return generator

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with boundary(label(args, kwargs)):
                return fn(*args, **kwargs)
        return wrapper
    return decorate


def bounded_wait(max_wait: float) -> dict[str, float | int | tuple[float, float]]:
    """Pywikibot settings that give up on a wiki that does not answer after about ``max_wait`` s.

    Three attempts whose sockets time out after a quarter of it each, with waits of a twelfth and
    a sixth between them: at most ``max_wait`` in all, even against a server that never answers.
    """
    quarter = max_wait / 4
    return {"max_retries": 2, "retry_wait": max_wait / 12, "retry_max": max_wait / 6,
            "socket_timeout": (min(6.05, quarter), min(45.0, quarter))}


class _RetryChatter(logging.Filter):
    """Drops Pywikibot's per-retry tracebacks and notes (retries, re-logins) unless winellbot logs
    verbosely, and keeps
    the last retried error's own line: Pywikibot's final "Maximum retries" says nothing of why."""

    last_error = ""

    def filter(self, record: logging.LogRecord) -> bool:
        message = str(record.msg)
        chatter = message.startswith(("Traceback (most recent call last)", "An error occurred for uri")) or (
            "Waiting" in message and "before retrying" in message) or "Forcing re-login" in message
        if message.startswith("Traceback"):
            lines = [line for line in message.strip().splitlines() if line.strip()]
            _RetryChatter.last_error = lines[-1] if lines else ""
        return not chatter or logging.getLogger("winellbot").isEnabledFor(logging.INFO)


def quiet_retries() -> None:
    """Install the retry filter on Pywikibot's logger (once)."""
    logger = logging.getLogger("pywiki")
    if not any(isinstance(f, _RetryChatter) for f in logger.filters):
        logger.addFilter(_RetryChatter())


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    if "Connection refused" in text:
        return "connection refused"
    if "(a total deadline)" in text:  # winellbot/deadline.py, through Pywikibot's retries
        return text[text.index("no complete answer"):] if "no complete answer" in text else "timed out"
    if "Read timed out" in text or "ConnectTimeout" in text or "timed out" in text:
        return "timed out"
    return text[:300]
