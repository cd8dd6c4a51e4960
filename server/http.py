"""The plain HTTP endpoints, answered on the WebSocket's port before any upgrade:
``/healthz`` (the process runs), ``/readyz`` (every table is hosted here) and
``/metrics`` (Prometheus text), and the browser table's static files
(:mod:`server.web`). A WebSocket upgrade, on any path, goes on to the handshake.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from http import HTTPStatus

from websockets.asyncio.server import ServerConnection
from websockets.datastructures import Headers
from websockets.http11 import Request, Response

from server.host import TableHost
from server.metrics import Metrics
from server.web import respond as web_respond

ProcessRequest = Callable[[ServerConnection, Request], Response | None]
"""What ``websockets.asyncio.server.serve`` calls as ``process_request``."""


def endpoints(hosts: Mapping[str, TableHost], metrics: Metrics) -> ProcessRequest:
    """The ``process_request`` hook answering the endpoints for ``hosts`` and ``metrics``."""

    def respond(connection: ServerConnection, request: Request) -> Response | None:
        path = request.path.split("?", 1)[0]
        if path == "/healthz":
            return connection.respond(HTTPStatus.OK, "ok\n")
        if path == "/readyz":
            waiting = [t for t, h in hosts.items() if not h.ready]
            if waiting:
                text = "not ready: " + ", ".join(waiting) + "\n"
                return connection.respond(HTTPStatus.SERVICE_UNAVAILABLE, text)
            return connection.respond(HTTPStatus.OK, "ready\n")
        if path == "/metrics":
            body = metrics.render()
            headers = Headers(
                [
                    ("Content-Type", "text/plain; version=0.0.4; charset=utf-8"),
                    ("Content-Length", str(len(body))),
                ]
            )
            return Response(HTTPStatus.OK, "OK", headers, body)
        return web_respond(request)  # the browser table; None for an upgrade

    return respond
