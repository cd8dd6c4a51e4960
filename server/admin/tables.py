"""The operator API's routes that change the tables catalog (:mod:`server.catalog`):
``GET catalog`` (every table of the catalog with its status; ``?all=1`` the closed
too), ``POST tables`` (create: the body is a tables file's ``[[table]]`` entry as a
JSON object), ``PATCH tables/{table}`` (change: the keys that change) and
``DELETE tables/{table}`` (close: the round in play ends, every seat's chips go back,
the table leaves the lobby). Every node picks a change up within about a second.

Refusals: 400 ``bad_config`` (nothing written), 409 ``table_exists`` (ids are never
reused), 404 ``no_such_table``, 409 ``table_not_open`` (closing or closed).
"""

from __future__ import annotations

import logging
from http import HTTPStatus

from aiohttp import web

from server.admin.api import PREFIX, ApiError, answer, json_object
from server.admin.auth import CALLER
from server.catalog import (
    BadTableConfig,
    CatalogError,
    JackpotNotHere,
    NoSuchTable,
    TableExists,
    TableNotOpen,
    change_table,
    close_table,
    create_table,
    list_tables,
)
from server.store import TableCatalog

log = logging.getLogger(__name__)

STATUS: dict[type[CatalogError], HTTPStatus] = {
    BadTableConfig: HTTPStatus.BAD_REQUEST,
    JackpotNotHere: HTTPStatus.BAD_REQUEST,  # a bad_config: side_bets.progressive
    TableExists: HTTPStatus.CONFLICT,
    NoSuchTable: HTTPStatus.NOT_FOUND,
    TableNotOpen: HTTPStatus.CONFLICT,
}
"""The HTTP status of each refusal of the catalog (its code is the error's ``code``)."""


def _refused(exc: CatalogError) -> ApiError:
    return ApiError(STATUS.get(type(exc), HTTPStatus.CONFLICT), exc.code, str(exc))


def catalog_routes(catalog: TableCatalog) -> list[web.RouteDef]:
    """The routes creating, changing, closing and listing the tables of ``catalog``
    (given to :class:`~server.admin.server.AdminServer` as ``extra_routes``)."""

    async def listed(request: web.Request) -> web.Response:
        closed = request.query.get("all", "") in ("1", "true")
        views = await list_tables(catalog, closed=closed)
        return answer({"tables": [v.as_dict() for v in views]})

    async def create(request: web.Request) -> web.Response:
        spec = await json_object(request)
        try:
            view = await create_table(catalog, spec)
        except CatalogError as exc:
            raise _refused(exc) from None
        log.info("table %s created by %s", view.table_id, CALLER.get().name)
        return answer(view.as_dict(), HTTPStatus.CREATED)

    async def change(request: web.Request) -> web.Response:
        table_id = request.match_info["table"]
        changes = await json_object(request)
        try:
            view = await change_table(catalog, table_id, changes)
        except CatalogError as exc:
            raise _refused(exc) from None
        log.info("table %s changed by %s: %s", table_id, CALLER.get().name, sorted(changes))
        return answer(view.as_dict())

    async def close(request: web.Request) -> web.Response:
        table_id = request.match_info["table"]
        try:
            view = await close_table(catalog, table_id)
        except CatalogError as exc:
            raise _refused(exc) from None
        log.info("table %s closed by %s", table_id, CALLER.get().name)
        return answer(view.as_dict(), HTTPStatus.ACCEPTED)

    p = PREFIX
    return [
        web.get(f"{p}/catalog", listed, name="catalog"),
        web.post(f"{p}/tables", create, name="table-create"),
        web.patch(f"{p}/tables/{{table}}", change, name="table-change"),
        web.delete(f"{p}/tables/{{table}}", close, name="table-close"),
    ]
