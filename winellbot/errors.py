"""Exceptions of winellbot.

    WinellbotError
     +-- ConfigError            bad or missing configuration
     +-- WikiError              talking to the wiki failed
     |    +-- UnsafeWriteError  a write outside talk namespaces / the bot's userspace
     |    +-- ShutoffError      the shutoff page says stop
     |    +-- PostingRefused    {{bots}}/{{nobots}}, protection or a rate limit forbids this post
     |    +-- PageGone          the page (or its article) is missing or was deleted
     |    +-- WikiDown          the wiki cannot be used at all: the cycle stops
     |         +-- WikiUnreachable  it does not answer (after the bounded wait)
     |         +-- LoginLost        the login is gone and cannot be regained
     +-- StateError             the state refused an operation (a SQLite file or a database server)
     |    +-- StorageError      its file or server cannot be read or written: the cycle stops
     +-- SearchError            a search backend failed
     +-- FetchError             a source could not be fetched or extracted (recorded, never fatal)
     |    +-- UnsafeURLError    the URL points at a private address or a non-http scheme
     +-- ModelError             a model backend failed
     |    +-- MalformedReply    the reply did not match the schema (after retries)
     |    +-- BudgetExceeded    the run's token budget is spent
     +-- ArticleParseError      the page could not be parsed into sections
     +-- TaskError              a backtest task file is malformed

Errors about one page are caught per page, recorded in state, and the run goes on.
"""


class WinellbotError(Exception):
    """Root of all winellbot errors."""


class ConfigError(WinellbotError):
    pass


class WikiError(WinellbotError):
    pass


class UnsafeWriteError(WikiError):
    pass


class ShutoffError(WikiError):
    pass


class PostingRefused(WikiError):
    pass


class PageGone(WikiError):
    pass


class WikiDown(WikiError):
    pass


class WikiUnreachable(WikiDown):
    pass


class LoginLost(WikiDown):
    pass


class StateError(WinellbotError):
    pass


class StorageError(StateError):
    """The state's storage cannot be used: a damaged, empty or read-only file, a full or failing disk, a
    database server that does not answer. One line naming the file (or server) and what to do; a cycle stops."""


class NoStateYet(StateError):
    """A read-only open of a database server on which no job has made the state yet (no tables)."""


class SearchError(WinellbotError):
    pass


class FetchError(WinellbotError):
    pass


class UnsafeURLError(FetchError):
    pass


class ModelError(WinellbotError):
    pass


class MalformedReply(ModelError):
    pass


class BudgetExceeded(ModelError):
    pass


class ArticleParseError(WinellbotError):
    pass


class TaskError(WinellbotError):
    pass
