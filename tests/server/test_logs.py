"""The server's log: probes are quiet, the level and the JSON format are settings."""

from __future__ import annotations

import asyncio
import io
import json
import logging
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta

import pytest

from protocol.messages import Join
from server.app import App, browser_url
from server.logs import (
    WEBSOCKETS_LOGGER,
    ContextFields,
    LogFormat,
    LogLevel,
    QuietProbes,
    bind,
    log_fields,
    setup_logging,
)
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


@pytest.mark.asyncio
async def test_static_files_are_debug_and_errors_info(app: App, log_to: LogTo) -> None:
    stream = log_to("info", "text")
    for path in ("/", "/no-such-file.js"):
        await asyncio.to_thread(http_get, app.port, path)
    server = app.server
    assert server is not None
    await until(lambda: "404" in stream.getvalue(), what="the 404 to be logged")
    text = stream.getvalue()
    assert "HTTP response sent (200 OK)" not in text  # the page itself: debug
    assert "HTTP response sent (404 Not Found)" in text  # an error stays at info
    stream = log_to("debug", "json")
    await asyncio.to_thread(http_get, app.port, "/")
    await asyncio.to_thread(http_get, app.port, "/healthz")
    await until(lambda: stream.getvalue().count("HTTP response sent") >= 2, what="the answers")
    sent = [
        json.loads(line) for line in stream.getvalue().splitlines() if "HTTP response sent" in line
    ]
    assert {r["level"] for r in sent} == {"DEBUG"}


@pytest.mark.asyncio
async def test_json_lines_name_node_table_round_player_and_request(app: App, log_to: LogTo) -> None:
    stream = log_to("debug", "json")
    client = await Client.hello(url(app))
    try:
        await client.ok(Join, table_id="fast", buy_in=500)
    finally:
        await client.close()
    lines = [json.loads(line) for line in stream.getvalue().splitlines()]
    [committed] = [
        r for r in lines if r["message"].startswith("committed") and r.get("request") == "Join"
    ]
    assert committed["node"] == app.name
    assert committed["table"] == "fast"
    assert isinstance(committed["round"], int)
    assert committed["player"] == client.player
    assert isinstance(committed["rid"], str)
    # The request's fields end with it; the connection's own records still name the node.
    closing = [r for r in lines if r["message"] == "connection closed"]
    assert closing
    assert all("request" not in r for r in closing)


def test_context_fields_nest_and_end() -> None:
    records: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)

    handler = Keep()
    handler.addFilter(ContextFields())
    logger = logging.getLogger("tests.context-fields")
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        with log_fields(table="jade"):
            with log_fields(player="p1"):
                bind(round=3)
                logger.info("inside")
                logger.info("explicit", extra={"table": "lotus"})
            logger.info("outer")
        logger.info("outside")
    finally:
        logger.removeHandler(handler)
    fields = [{f: getattr(r, f, None) for f in ("table", "player", "round")} for r in records]
    assert fields == [
        {"table": "jade", "player": "p1", "round": 3},
        {"table": "lotus", "player": "p1", "round": 3},  # extra= wins
        {"table": "jade", "player": None, "round": None},
        {"table": None, "player": None, "round": None},
    ]


@pytest.mark.parametrize(
    ("host", "opened"),
    [
        ("0.0.0.0", "http://localhost:8765/"),
        ("::", "http://localhost:8765/"),
        ("127.0.0.1", "http://127.0.0.1:8765/"),
        ("::1", "http://[::1]:8765/"),
        ("table.example", "http://table.example:8765/"),
    ],
)
def test_the_address_a_person_opens(host: str, opened: str) -> None:
    assert browser_url(host, 8765) == opened
