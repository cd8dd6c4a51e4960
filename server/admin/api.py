"""The operator's HTTP API, version 1: JSON in and out under :data:`PREFIX`, every
route behind a credential (:mod:`server.admin.auth`), every refusal a JSON error with
a code (``{"error": {"code": ..., "message": ...}}``).

Routes (docs/DESIGN.md, "The operator's API and console", lists them with their
answers): ``whoami``; ``players`` (search), ``players/{player}`` (look-up),
``players/{player}/ledger``, ``players/{player}/credit``, ``.../debit``,
``.../reverse``, ``.../sessions/revoke``; ``audit``; ``nodes``,
``nodes/{name}/drain``; ``tables``, ``tables/{table}``. Tables are created, changed
and closed by routes given to :class:`~server.admin.server.AdminServer` as
``extra_routes`` (``POST tables``, ``PATCH``/``DELETE tables/{table}``), which the same
middleware guards.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any

from aiohttp import web

from server.admin import operations as ops
from server.admin.auth import CALLER
from server.archive import Archive
from server.auth.tokens import check_player
from server.store import Move, MoveRefused, Refusal, Stores

PREFIX = "/api/v1"

STATUS = {
    Refusal.KEY_REUSED: HTTPStatus.CONFLICT,
    Refusal.UNKNOWN_PLAYER: HTTPStatus.NOT_FOUND,
    Refusal.CLOSED: HTTPStatus.CONFLICT,
    Refusal.INSUFFICIENT: HTTPStatus.CONFLICT,
    Refusal.NO_ENTRY: HTTPStatus.NOT_FOUND,
    Refusal.NOT_A_CREDIT: HTTPStatus.CONFLICT,
    Refusal.REVERSED: HTTPStatus.CONFLICT,
}
"""The HTTP status of each refusal of a move (its code is the refusal's value)."""


class ApiError(Exception):
    """An answer refused with ``status`` and a JSON error ``code``; ``detail``: more
    fields of the error object."""

    def __init__(
        self, status: HTTPStatus, code: str, message: str, detail: dict[str, Any] | None = None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.detail = detail or {}


def answer(body: Any, status: HTTPStatus = HTTPStatus.OK) -> web.Response:
    """A JSON answer."""
    return web.json_response(body, status=status.value)


@dataclass(frozen=True, slots=True)
class Context:
    """What the handlers work with: the stores, the archive (audit), the tables this
    server serves (``table_ids()``) and this node's instance (who relays a drain)."""

    stores: Stores
    archive: Archive | None
    table_ids: Callable[[], Sequence[str]]
    instance: str
    audit_extra: ops.AuditExtra | None = None


Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def _player(request: web.Request) -> str:
    name = request.match_info["player"]
    try:
        return check_player(name)
    except ValueError as exc:
        raise ApiError(HTTPStatus.BAD_REQUEST, "bad_player", str(exc)) from None


async def json_object(request: web.Request) -> dict[str, Any]:
    """The request's body, a JSON object; else :class:`ApiError` ``bad_json``."""
    try:
        body = await request.json()
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise ApiError(HTTPStatus.BAD_REQUEST, "bad_json", "the body is not JSON") from None
    if not isinstance(body, dict):
        raise ApiError(HTTPStatus.BAD_REQUEST, "bad_json", "the body is a JSON object")
    return body


def _field(body: dict[str, Any], name: str, kind: type, default: Any = None) -> Any:
    value = body.get(name, default)
    if value is None or not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise ApiError(
            HTTPStatus.BAD_REQUEST, "bad_field", f"{name!r}: a {kind.__name__} is needed"
        )
    return value


def routes(ctx: Context) -> list[web.RouteDef]:
    """The API's routes over ``ctx``."""

    async def whoami(request: web.Request) -> web.Response:
        op = CALLER.get()
        return answer(
            {"name": op.name, "via": op.via, "token_id": op.token_id, "expires_s": op.expires_s}
        )

    async def players(request: web.Request) -> web.Response:
        return answer({"players": await ops.search(ctx.stores, request.query.get("q", ""))})

    async def player(request: web.Request) -> web.Response:
        return answer(await ops.player_view(ctx.stores, _player(request)))

    async def ledger(request: web.Request) -> web.Response:
        name = _player(request)
        try:
            count = int(request.query.get("count", str(ops.LEDGER_PAGE)))
        except ValueError:
            raise ApiError(HTTPStatus.BAD_REQUEST, "bad_field", "count: a number") from None
        before = request.query.get("before", "+")
        if await ctx.stores.accounts.balance(name) is None:
            raise ops.NotFound("unknown_player", f"no account {name!r}")
        return answer({"player": name, "ledger": await ops.ledger(ctx.stores, name, count, before)})

    def moving(kind: Move) -> Handler:
        async def handle(request: web.Request) -> web.Response:
            name = _player(request)
            body = await json_object(request)
            op = CALLER.get()
            args: dict[str, Any] = {
                "key": _field(body, "key", str),
                "reason": _field(body, "reason", str),
            }
            if kind is Move.REVERSAL:
                args["entry"] = _field(body, "entry", str)
            else:
                args["amount"] = _field(body, "amount", int)
            if kind is Move.CREDIT:
                args["create"] = _field(body, "create", bool, False)
            done = await ops.move(ctx.stores, kind, name, by=op.name, **args)
            return answer(done, HTTPStatus.CREATED if done["applied"] else HTTPStatus.OK)

        return handle

    async def revoke(request: web.Request) -> web.Response:
        return answer(await ops.revoke_sessions(ctx.stores, _player(request)))

    async def audit(request: web.Request) -> web.Response:
        return answer(await ops.audit(ctx.stores, ctx.archive, ctx.audit_extra))

    async def nodes(request: web.Request) -> web.Response:
        return answer(await ops.nodes(ctx.stores, ctx.table_ids()))

    async def drain(request: web.Request) -> web.Response:
        done = await ops.drain(ctx.stores, request.match_info["name"], ctx.instance)
        return answer(done, HTTPStatus.ACCEPTED)

    async def tables(request: web.Request) -> web.Response:
        return answer({"tables": await ops.tables(ctx.stores, ctx.table_ids())})

    async def table(request: web.Request) -> web.Response:
        table_id = request.match_info["table"]
        if table_id not in ctx.table_ids():
            raise ops.NotFound("unknown_table", f"no table {table_id!r}")
        (found,) = await ops.tables(ctx.stores, [table_id])
        return answer(found)

    p = PREFIX
    return [
        web.get(f"{p}/whoami", whoami, name="whoami"),
        web.get(f"{p}/players", players, name="players"),
        web.get(f"{p}/players/{{player}}", player, name="player"),
        web.get(f"{p}/players/{{player}}/ledger", ledger, name="ledger"),
        web.post(f"{p}/players/{{player}}/credit", moving(Move.CREDIT), name="credit"),
        web.post(f"{p}/players/{{player}}/debit", moving(Move.DEBIT), name="debit"),
        web.post(f"{p}/players/{{player}}/reverse", moving(Move.REVERSAL), name="reverse"),
        web.post(f"{p}/players/{{player}}/sessions/revoke", revoke, name="revoke"),
        web.get(f"{p}/audit", audit, name="audit"),
        web.get(f"{p}/nodes", nodes, name="nodes"),
        web.post(f"{p}/nodes/{{name}}/drain", drain, name="drain"),
        web.get(f"{p}/tables", tables, name="tables"),
        web.get(f"{p}/tables/{{table}}", table, name="table"),
    ]


def refusal(exc: Exception) -> ApiError | None:
    """The API error for an exception the operations raise, or None (not theirs)."""
    if isinstance(exc, ApiError):
        return exc
    if isinstance(exc, MoveRefused):
        detail: dict[str, Any] = {"balance": exc.balance, "amount": exc.amount}
        if exc.entry:
            detail["entry"] = exc.entry
        return ApiError(STATUS[exc.reason], exc.reason.value, str(exc), detail)
    if isinstance(exc, ops.NotFound):
        return ApiError(HTTPStatus.NOT_FOUND, exc.code, str(exc))
    if isinstance(exc, ops.Refused):
        return ApiError(HTTPStatus.CONFLICT, exc.code, str(exc))
    if isinstance(exc, ValueError):
        return ApiError(HTTPStatus.BAD_REQUEST, "bad_request", str(exc))
    return None
