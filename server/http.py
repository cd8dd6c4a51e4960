"""The plain HTTP endpoints, answered on the WebSocket's port before any upgrade:
``/healthz`` (the process runs), ``/readyz`` (the node serves: see
``App.not_ready``) and ``/metrics`` (Prometheus text), and the browser table's static
files (:mod:`server.web`). A WebSocket upgrade, on any path, goes on to the handshake.
"""

from __future__ import annotations

from collections.abc import Callable
from http import HTTPStatus

from websockets.asyncio.server import ServerConnection
from websockets.datastructures import Headers
from websockets.http11 import Request, Response

from server.metrics import Metrics
from server.web import respond as web_respond

ProcessRequest = Callable[[ServerConnection, Request], Response | None]
"""What ``websockets.asyncio.server.serve`` calls as ``process_request``."""


def endpoints(not_ready: Callable[[], str | None], metrics: Metrics) -> ProcessRequest:
    """The ``process_request`` hook answering the endpoints. ``not_ready()``: why the
    node does not serve (``/readyz`` says 503 with it), or None."""

    def respond(connection: ServerConnection, request: Request) -> Response | None:
        path = request.path.split("?", 1)[0]
        if path == "/healthz":
            return connection.respond(HTTPStatus.OK, "ok\n")
        if path == "/readyz":
            why = not_ready()
            if why is not None:
                return connection.respond(HTTPStatus.SERVICE_UNAVAILABLE, why + "\n")
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
