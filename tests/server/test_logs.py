"""The server's log: probes are quiet, the level and the JSON format are settings."""

from __future__ import annotations

import asyncio
import io
import json
import logging
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta

import pytest

from server.app import App
from server.logs import WEBSOCKETS_LOGGER, LogFormat, LogLevel, QuietProbes, setup_logging
from tests.helpers import until, url
from tests.server.helpers import Client
from tests.server.processes import http_get

LogTo = Callable[[LogLevel, LogFormat], io.StringIO]


@pytest.fixture
def log_to() -> Iterator[LogTo]:
    """``log_to(level, format)``: the server's logging as ``paigow-server`` sets it up,
    into a string; pytest's own handlers and levels are put back afterwards."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    probes = logging.getLogger(WEBSOCKETS_LOGGER)

    def setup(level: LogLevel, log_format: LogFormat) -> io.StringIO:
        stream = io.StringIO()
        setup_logging(level, log_format, stream)
        return stream

    try:
        yield setup
    finally:
        for handler in list(root.handlers):
            root.removeHandler(handler)
        for handler in handlers:
            root.addHandler(handler)
        root.setLevel(level)
        for f in [f for f in probes.filters if isinstance(f, QuietProbes)]:
            probes.removeFilter(f)


async def _probe_then_connect(app: App, stream: io.StringIO) -> str:
    """Ask /healthz, /readyz and /metrics, then open and close a WebSocket; the log once
    the WebSocket's close is written (every probe's connection is closed by then)."""
    for path in ("/healthz", "/readyz", "/metrics"):
        status, _ = await asyncio.to_thread(http_get, app.port, path)
        assert status == 200
    server = app.server
    assert server is not None
    await until(lambda: len(server.connections) == 0, what="the probes to close")
    client = await Client.hello(url(app))
    await client.close()
    await until(lambda: stream.getvalue().count("connection closed") >= 1, what="the close")
    return stream.getvalue()


@pytest.mark.asyncio
async def test_probes_are_not_logged_at_info(app: App, log_to: LogTo) -> None:
    stream = log_to("info", "text")
    text = await _probe_then_connect(app, stream)
    assert "HTTP response sent" not in text
    assert text.count("connection closed") == 1  # the WebSocket's, not the probes'
    assert "connection open" in text


@pytest.mark.asyncio
async def test_probes_are_logged_at_debug(app: App, log_to: LogTo) -> None:
    stream = log_to("debug", "text")
    text = await _probe_then_connect(app, stream)
    assert text.count("HTTP response sent (200 OK)") == 3


@pytest.mark.asyncio
async def test_json_lines_and_the_level(app: App, log_to: LogTo) -> None:
    stream = log_to("warning", "json")
    logging.getLogger("server.test").warning("table %s: a %s", "fast", "warning")
    logging.getLogger("server.test").info("not at warning")
    [line] = stream.getvalue().splitlines()
    record = json.loads(line)
    assert record["level"] == "WARNING"
    assert record["logger"] == "server.test"
    assert record["message"] == "table fast: a warning"
    assert datetime.fromisoformat(record["time"]).utcoffset() == timedelta(0)  # ISO, UTC
    stream = log_to("info", "json")
    await _probe_then_connect(app, stream)
    lines = [json.loads(line) for line in stream.getvalue().splitlines()]
    assert {"connection open", "connection closed"} <= {r["message"] for r in lines}
    assert all("websocket" not in r for r in lines)
