"""The server's log: one line per record on standard error, as plain text or as JSON
(one object per line, as container log collectors read), from a level up.

Probes are not news: ``/healthz``, ``/readyz`` and ``/metrics`` are asked every few
seconds by orchestrators and scrapers, and ``websockets`` would log two lines for each
("HTTP response sent", "connection closed"). :class:`QuietProbes` drops those two
unless the level is ``debug``; every other connection is logged as before.
"""

from __future__ import annotations

import logging
from typing import Final, Literal, TextIO

from pythonjsonlogger.core import RESERVED_ATTRS
from pythonjsonlogger.json import JsonFormatter

LogFormat = Literal["text", "json"]
LogLevel = Literal["debug", "info", "warning", "error"]

TEXT_FORMAT: Final = "%(asctime)s %(levelname)s %(name)s: %(message)s"
PROBE_PATHS: Final = frozenset({"/healthz", "/readyz", "/metrics"})
"""The paths asked by probes and scrapers, whose requests are logged only at ``debug``."""
WEBSOCKETS_LOGGER: Final = "websockets.server"


class QuietProbes(logging.Filter):
    """Drops the records ``websockets`` makes of a probe's request, unless its logger is
    enabled for ``debug``. ``websockets`` tags each record of a connection with the
    connection (``record.websocket``), whose request names the path."""

    def filter(self, record: logging.LogRecord) -> bool:
        if logging.getLogger(record.name).isEnabledFor(logging.DEBUG):
            return True
        connection = getattr(record, "websocket", None)
        try:
            request = getattr(connection, "request", None)
        except ReferenceError:  # a weak proxy to a connection already gone
            return True
        path = getattr(request, "path", None)
        return not (isinstance(path, str) and path.split("?", 1)[0] in PROBE_PATHS)


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
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level.upper())
    probes = logging.getLogger(WEBSOCKETS_LOGGER)
    if not any(isinstance(f, QuietProbes) for f in probes.filters):
        probes.addFilter(QuietProbes())
    return handler
