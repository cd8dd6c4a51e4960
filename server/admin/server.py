"""The operator's HTTP server: the API (:mod:`server.admin.api`) and the console's
static files, on a port of their own (``--admin-port``; off unless set), served with
aiohttp beside the game's WebSocket port.

Every route answers only a request with a good credential (:mod:`server.admin.auth`),
checked by one middleware before any handler runs, except the console's own files
(:data:`PUBLIC_ROUTES`): the page must load for the operator to enter a token, and it
holds no data (the files are the ones in the package). They are served with a strict
Content-Security-Policy (scripts and styles from this origin only, no inline code, no
framing), as the browser table is.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from http import HTTPStatus
from pathlib import Path

from aiohttp import web

from server.admin import operations as ops
from server.admin.api import ApiError, Context, Handler, answer, refusal, routes
from server.admin.auth import CALLER, Authenticator, BearerCheck, Forbidden, Unauthorized
from server.archive import Archive
from server.store import StoreFailure, Stores

log = logging.getLogger(__name__)

STATIC = Path(__file__).resolve().parent / "static"
"""The console's files."""

CONSOLE_FILES = {
    "console.js": "text/javascript; charset=utf-8",
    "console.css": "text/css; charset=utf-8",
}
"""The console's files besides its page, served under ``/static/``, with their types."""

PUBLIC_ROUTES = frozenset({"console", "console-static"})
"""The routes answered without a credential: the console's page and files."""

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
"""The console's Content-Security-Policy (no inline script or style, no eval)."""

API_CSP = "default-src 'none'; frame-ancestors 'none'"
"""An API answer's: nothing in it is ever run or shown as a page."""

MAX_BODY = 64 * 1024
"""The largest request body (bytes): an API call's JSON is small."""


def _headers(response: web.StreamResponse, csp: str) -> None:
    response.headers["Content-Security-Policy"] = csp
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["Referrer-Policy"] = "no-referrer"
    response.headers["X-Frame-Options"] = "DENY"
    response.headers["Cross-Origin-Opener-Policy"] = "same-origin"
    response.headers.setdefault("Cache-Control", "no-store")


def _error(status: HTTPStatus, code: str, message: str, **detail: object) -> web.Response:
    response = answer({"error": {"code": code, "message": message, **detail}}, status)
    if status is HTTPStatus.UNAUTHORIZED:
        response.headers["WWW-Authenticate"] = 'Bearer realm="paigow-admin"'
    return response


class AdminServer:
    """The operator's API and console on one port; :meth:`start`, then :meth:`stop`."""

    def __init__(
        self,
        stores: Stores,
        secret: bytes,
        *,
        table_ids: Callable[[], Sequence[str]],
        instance: str,
        archive: Archive | None = None,
        bearer: BearerCheck | None = None,
        audit_extra: ops.AuditExtra | None = None,
        extra_routes: Sequence[web.RouteDef] = (),
    ) -> None:
        """``secret``: the server's token secret (admin tokens are signed with a key
        derived from it); ``table_ids()``: the tables served now; ``instance``: this
        node's; ``bearer``: the check of bearer tokens that are not admin tokens (the
        operator's JWTs), None to accept admin tokens only; ``audit_extra``: the
        audit's further check (wallet mode's); ``extra_routes``: more
        routes (the tables' creation, change and closing), guarded as the others."""
        self.auth = Authenticator(secret, stores.admin_tokens, bearer)
        self.app = web.Application(middlewares=[self._guard], client_max_size=MAX_BODY)
        ctx = Context(stores, archive, table_ids, instance, audit_extra)
        self.app.add_routes(
            [
                web.get("/", self._page, name="console"),
                web.get("/static/{file}", self._static, name="console-static"),
                *routes(ctx),
                *extra_routes,
            ]
        )
        self._runner: web.AppRunner | None = None
        self._site: web.TCPSite | None = None

    @property
    def port(self) -> int:
        """The port listened on (useful with port 0)."""
        assert self._runner is not None
        address = self._runner.addresses[0]
        port: int = address[1]
        return port

    async def start(self, host: str, port: int) -> None:
        """Listen on ``host``:``port`` (0: any free port)."""
        self._runner = web.AppRunner(self.app, access_log=None, handle_signals=False)
        await self._runner.setup()
        self._site = web.TCPSite(self._runner, host, port)
        await self._site.start()

    async def stop(self) -> None:
        """Stop listening and close the connections; safe to call twice."""
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    @web.middleware
    async def _guard(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        """The credential first (but for the console's files), then the handler; every
        refusal a JSON error."""
        route = request.match_info.route
        public = route.name in PUBLIC_ROUTES
        try:
            if not public:
                CALLER.set(await self.auth.operator(request.headers.get("Authorization")))
            response = await handler(request)
        except Unauthorized as exc:
            response = _error(HTTPStatus.UNAUTHORIZED, exc.code, str(exc))
        except Forbidden as exc:
            response = _error(HTTPStatus.FORBIDDEN, "forbidden", str(exc))
        except web.HTTPException as exc:  # no such route, or method: aiohttp's
            code = {404: "not_found", 405: "method_not_allowed", 413: "too_large"}
            response = _error(
                HTTPStatus(exc.status), code.get(exc.status, "http_error"), exc.reason
            )
        except StoreFailure as exc:
            log.warning("admin API: store failed: %s", exc)
            # A move's outcome is then unknown: the same request with its key, again,
            # is applied at most once.
            response = _error(
                HTTPStatus.SERVICE_UNAVAILABLE,
                "unavailable",
                f"the store did not answer ({exc}); retry with the same key",
            )
        except Exception as exc:
            found: ApiError | None = refusal(exc)
            if found is None:
                raise
            response = _error(found.status, found.code, str(found), **found.detail)
        _headers(response, CSP if public else API_CSP)
        return response

    async def _page(self, request: web.Request) -> web.Response:
        body = (STATIC / "index.html").read_bytes()
        return web.Response(body=body, content_type="text/html", charset="utf-8")

    async def _static(self, request: web.Request) -> web.Response:
        name = request.match_info["file"]
        kind = CONSOLE_FILES.get(name)
        if kind is None:
            return _error(HTTPStatus.NOT_FOUND, "not_found", "no such file")
        content_type, _, charset = kind.partition("; charset=")
        body = (STATIC / name).read_bytes()
        return web.Response(body=body, content_type=content_type, charset=charset or None)
