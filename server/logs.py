"""The server's log: one line per record on standard error, as plain text or as JSON
(one object per line, as container log collectors read), from a level up.

Probes and files are not news: ``/healthz``, ``/readyz`` and ``/metrics`` are asked
every few seconds by orchestrators and scrapers, a page load of the browser table asks
for a few dozen static files, and ``websockets`` would log two lines for each ("HTTP
response sent", "connection closed"). :class:`QuietProbes` logs those two at ``debug``;
every WebSocket connection, and every HTTP answer that is an error, at ``info`` as before.

Each JSON line carries the fields of where it was logged: ``node`` (the process's node
name), ``table`` and ``round`` (a table's task, a commit), ``player`` (a connection, once
it said who it is), ``request`` and ``rid`` (a client request being answered). They are
context variables (:func:`log_fields`, :func:`bind`), so an asyncio task inherits those of
the code that started it and a request's fields end with it.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from contextvars import ContextVar, Token
from types import MappingProxyType
from typing import Final, Literal, TextIO

from pythonjsonlogger.core import RESERVED_ATTRS
from pythonjsonlogger.json import JsonFormatter

LogFormat = Literal["text", "json"]
LogLevel = Literal["debug", "info", "warning", "error"]

TEXT_FORMAT: Final = "%(asctime)s %(levelname)s %(name)s: %(message)s"
PROBE_PATHS: Final = frozenset({"/healthz", "/readyz", "/metrics"})
"""The paths asked by probes and scrapers, whose requests are logged only at ``debug``."""
WEBSOCKETS_LOGGER: Final = "websockets.server"
FIELDS: Final = ("node", "table", "round", "player", "request", "rid")
"""The context fields a record may carry (see the module docstring)."""

_NONE: Final[Mapping[str, object]] = MappingProxyType({})
_fields: ContextVar[Mapping[str, object]] = ContextVar("paigow_log_fields", default=_NONE)


def bind(**fields: object) -> None:
    """Add ``fields`` to every record logged from here on by the current task (and by
    the tasks it starts from now)."""
    _fields.set({**_fields.get(), **fields})


class log_fields:  # lower case: it reads as a function, `with log_fields(table=...)`
    """Add ``fields`` to the records logged inside the block (by this task, and by the
    tasks started in it); what :func:`bind` adds inside ends with the block too. A class,
    not a generator: it is entered on every client request."""

    __slots__ = ("_fields", "_token")

    def __init__(self, **fields: object) -> None:
        self._fields = fields
        self._token: Token[Mapping[str, object]] | None = None

    def __enter__(self) -> None:
        self._token = _fields.set({**_fields.get(), **self._fields})

    def __exit__(self, *exc: object) -> None:
        if self._token is not None:
            _fields.reset(self._token)


def current_fields() -> Mapping[str, object]:
    """The fields the current context adds to a record."""
    return _fields.get()


class ContextFields(logging.Filter):
    """Copies the context's fields (:func:`bind`, :func:`log_fields`) onto each record,
    where the record has none of that name (``extra=`` wins)."""

    def filter(self, record: logging.LogRecord) -> bool:
        for name, value in _fields.get().items():
            if name not in record.__dict__:
                setattr(record, name, value)
        return True


class QuietProbes(logging.Filter):
    """Logs at ``debug`` the records ``websockets`` makes of an HTTP request answered
    without an upgrade (a probe, at any status; a static file, or any other answer below
    400), and drops them unless its logger is enabled for ``debug``. ``websockets`` tags
    each record of a connection with the connection (``record.websocket``), whose
    request names the path and whose response, once sent, its status."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno != logging.INFO or not _plain_http(record):
            return True
        record.levelno, record.levelname = logging.DEBUG, "DEBUG"
        return logging.getLogger(record.name).isEnabledFor(logging.DEBUG)


def _plain_http(record: logging.LogRecord) -> bool:
    """Whether ``record`` is of a probe's request, or of a successful HTTP answer that
    was no WebSocket upgrade (a static file)."""
    connection = getattr(record, "websocket", None)
    try:
        request = getattr(connection, "request", None)
        response = getattr(connection, "response", None)
    except ReferenceError:  # a weak proxy to a connection already gone
        return False
    path = getattr(request, "path", None)
    if isinstance(path, str) and path.split("?", 1)[0] in PROBE_PATHS:
        return True
    status = getattr(response, "status_code", None)
    return isinstance(status, int) and status != 101 and status < 400


def formatter(log_format: LogFormat) -> logging.Formatter:
    """Plain text, or one JSON object per record (``time`` in ISO 8601, UTC; ``level``,
    ``logger``, ``message``, and any extra field a record carries)."""
    if log_format == "json":
        return JsonFormatter(
            "{levelname}{name}{message}",
            style="{",
            rename_fields={"levelname": "level", "name": "logger"},
            timestamp="time",  # ISO 8601, UTC
            # A connection's records carry the connection itself: not a field to print.
            reserved_attrs=[*RESERVED_ATTRS, "websocket", "taskName"],
        )
    return logging.Formatter(TEXT_FORMAT)


def setup_logging(
    level: LogLevel = "info", log_format: LogFormat = "text", stream: TextIO | None = None
) -> logging.Handler:
    """Send every record from ``level`` up to ``stream`` (standard error) in ``log_format``,
    in place of any handler the root logger had; returns the handler."""
    handler = logging.StreamHandler(stream)
    handler.setFormatter(formatter(log_format))
    handler.addFilter(ContextFields())
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level.upper())
    probes = logging.getLogger(WEBSOCKETS_LOGGER)
    if not any(isinstance(f, QuietProbes) for f in probes.filters):
        probes.addFilter(QuietProbes())
    return handler
