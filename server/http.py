"""The plain HTTP endpoints, answered on the WebSocket's port before any upgrade:
``/healthz`` (the process runs), ``/readyz`` (this node serves every table: each one is
held, here or by another live node, and the node is not draining) and ``/metrics``
(Prometheus text). Any other path goes on to the WebSocket handshake.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from http import HTTPStatus

from websockets.asyncio.server import ServerConnection
from websockets.datastructures import Headers
from websockets.http11 import Request, Response

from server.metrics import Metrics

ProcessRequest = Callable[[ServerConnection, Request], Response | None]
"""What ``websockets.asyncio.server.serve`` calls as ``process_request``."""


def endpoints(waiting_for: Callable[[], Sequence[str] | None], metrics: Metrics) -> ProcessRequest:
    """The ``process_request`` hook answering the endpoints. ``waiting_for()``: the
    tables not served yet (None: the node is draining)."""

    def respond(connection: ServerConnection, request: Request) -> Response | None:
        path = request.path.split("?", 1)[0]
        if path == "/healthz":
            return connection.respond(HTTPStatus.OK, "ok\n")
        if path == "/readyz":
            waiting = waiting_for()
            if waiting is None:
                return connection.respond(HTTPStatus.SERVICE_UNAVAILABLE, "draining\n")
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
        return None

    return respond
