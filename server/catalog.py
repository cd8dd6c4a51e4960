"""The operations on the tables catalog: create, change, close and list tables while
the servers run (docs/DESIGN.md, "The tables catalog"). The operator's commands
(``paigow-server table ...``) and the operator's API call these; every node picks
the change up by itself (:mod:`server.cluster.live`).

Each operation checks its input as the tables file's entries are checked (the same
keys, :func:`server.tables_file.table_config`), then makes one change of the catalog
in Redis, atomic and checked there again (an id taken meanwhile, a table closed
meanwhile). Errors are typed: :class:`BadTableConfig` (nothing written),
:class:`TableExists`, :class:`NoSuchTable`, :class:`TableNotOpen`; a Redis that does
not answer raises the store's :class:`~server.store.StoreUnavailable` (the change may
or may not have been made: each operation is safe to repeat, a repeated create
answering :class:`TableExists`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from server.rules.progressive import PROGRESSIVE
from server.store import (
    Catalog,
    CatalogRefusal,
    CatalogRefused,
    TableCatalog,
    TableStatus,
)
from server.table.state import TableConfig
from server.tables_file import TablesFileError, describe_table, table_config

__all__ = [
    "BadTableConfig",
    "CatalogError",
    "JackpotNotHere",
    "NoSuchTable",
    "TableExists",
    "TableNotOpen",
    "TableStatus",
    "TableView",
    "change_table",
    "close_table",
    "create_table",
    "list_tables",
    "seed_catalog",
]


NOT_READ_YET = (
    "a setting of this table is newer than a live node's release, which could not read "
    "the table: upgrade every node first (deploy/README.md, Upgrades)"
)


class CatalogError(Exception):
    """An operation on the catalog refused; :attr:`code` names why, for an API's
    answers, and the message says it to a person."""

    code = "catalog"


class BadTableConfig(CatalogError, ValueError):
    """Settings that cannot be a table's: an id, key or value out of range, a seat
    count changed. Nothing was written."""

    code = "bad_config"


class JackpotNotHere(BadTableConfig):
    """Create or change a table so that it offers a progressive jackpot, or another
    one: a table offers a jackpot only by being listed in a tables file's
    ``[jackpot.<name>]`` (its seed, rate and wager are the jackpot's, shared by every
    table on it), never by its own ``side_bets.progressive``. Nothing was written."""


class TableExists(CatalogError):
    """Create: a table with this id exists, or existed (ids are never reused)."""

    code = "table_exists"


class NoSuchTable(CatalogError):
    """No table of the catalog has this id."""

    code = "no_such_table"


class TableNotOpen(CatalogError):
    """Change or close a table that is closing or closed: :attr:`status` says which."""

    code = "table_not_open"

    def __init__(self, table_id: str, status: TableStatus) -> None:
        super().__init__(f"table {table_id!r} is {status.value}")
        self.table_id = table_id
        self.status = status


@dataclass(frozen=True, slots=True)
class TableView:
    """One table of the catalog: its id, its status and its settings."""

    table_id: str
    status: TableStatus
    config: TableConfig

    def as_dict(self) -> dict[str, Any]:
        """As plain data (JSON): ``status`` and every key of a ``[[table]]`` entry."""
        return {"status": self.status.value, **describe_table(self.config)}


def _parse(spec: Mapping[str, Any]) -> TableConfig:
    try:
        return table_config(spec, f"table {spec.get('id', '?')!s}")
    except TablesFileError as exc:
        raise BadTableConfig(str(exc)) from exc


def _no_jackpot_named(config: TableConfig, current: TableConfig | None = None) -> None:
    """Raise :class:`JackpotNotHere` if ``config`` offers the progressive wager other
    than ``current`` (the table's settings now; None: a new table) does. A change that
    keeps a tables file's jackpot as it is, or drops it, is taken."""
    offered = dict(config.side_bets).get(PROGRESSIVE)
    kept = None if current is None else dict(current.side_bets).get(PROGRESSIVE)
    if offered is not None and offered != kept:
        raise JackpotNotHere(
            f"table {config.table_id}: side_bets.progressive cannot be set here: a table "
            "offers a progressive jackpot by being listed in the tables file's "
            "[jackpot.<name>] `tables`, which sets its seed, rate and wager for every "
            'table on it (docs/RULES.md, "Progressive jackpot")'
        )


def _keeping_the_jackpot(current: TableConfig, changes: Mapping[str, Any]) -> dict[str, Any]:
    """The table's settings with ``changes`` over them. A ``side_bets`` change names the
    side bets the table offers beside its jackpot: the jackpot stays unless the change
    says ``progressive = false`` (the catalog cannot give a dropped jackpot back, so it is
    never dropped by leaving it out)."""
    merged = {**describe_table(current), **changes}
    side = changes.get("side_bets")
    if not isinstance(side, Mapping):
        return merged
    side = dict(side)
    kept = dict(describe_table(current).get("side_bets", {})).get(PROGRESSIVE)
    if side.get(PROGRESSIVE) is False:
        del side[PROGRESSIVE]
    elif PROGRESSIVE not in side and kept is not None:
        side[PROGRESSIVE] = kept
    merged["side_bets"] = side
    return merged


def _refused(exc: CatalogRefused) -> CatalogError:
    if exc.reason is CatalogRefusal.EXISTS:
        return TableExists(f"a table {exc.table_id!r} exists or existed: ids are not reused")
    if exc.reason is CatalogRefusal.MISSING:
        return NoSuchTable(f"no table {exc.table_id!r}")
    if exc.reason is CatalogRefusal.CLOSING:
        return TableNotOpen(exc.table_id, TableStatus.CLOSING)
    if exc.reason is CatalogRefusal.CLOSED:
        return TableNotOpen(exc.table_id, TableStatus.CLOSED)
    if exc.reason is CatalogRefusal.NOT_READ:  # a node of an earlier release is live
        return BadTableConfig(f"table {exc.table_id}: {NOT_READ_YET}")
    return TableNotOpen(exc.table_id, TableStatus.OPEN)


async def create_table(catalog: TableCatalog, spec: Mapping[str, Any]) -> TableView:
    """Create a table from ``spec``: the keys of a tables file's ``[[table]]`` (``id``,
    ``name``, and any option; the others take their defaults). Every node hosts it
    within about a second (its placement's node holds it, the others forward to it).
    :class:`BadTableConfig` (:class:`JackpotNotHere` for a ``side_bets.progressive``),
    :class:`TableExists`."""
    config = _parse(spec)
    _no_jackpot_named(config)
    try:
        await catalog.create(config)
    except CatalogRefused as exc:
        raise _refused(exc) from None
    return TableView(config.table_id, TableStatus.OPEN, config)


async def change_table(
    catalog: TableCatalog, table_id: str, changes: Mapping[str, Any]
) -> TableView:
    """Change some of an open table's settings (keys as in :func:`create_table`; the
    others stay): limits, timers and rule options apply between rounds, at once or when
    the round in play ends, on every node. The seat count and the id cannot change,
    nor the jackpot a table offers (:class:`JackpotNotHere`): a ``side_bets`` change
    keeps it unless it says ``progressive = false``, and chips its wager cannot be made
    of are refused.
    :class:`BadTableConfig`, :class:`NoSuchTable`, :class:`TableNotOpen`."""
    current = (await catalog.read()).tables.get(table_id)
    if current is None:
        raise NoSuchTable(f"no table {table_id!r}")
    if current.status is not TableStatus.OPEN:
        raise TableNotOpen(table_id, current.status)
    if "id" in changes and changes["id"] != table_id:
        raise BadTableConfig(f"table {table_id}: the id of a table cannot change")
    config = _parse(_keeping_the_jackpot(current.config, changes))
    if config.seats != current.config.seats:
        raise BadTableConfig(
            f"table {table_id}: it has {current.config.seats} seats and keeps them "
            "(seated players would lose their seats)"
        )
    _no_jackpot_named(config, current.config)
    jackpot = dict(config.side_bets).get(PROGRESSIVE)
    if jackpot is not None and jackpot.wager % config.bet_unit:
        raise BadTableConfig(
            f"table {table_id}: its jackpot's wager of {jackpot.wager} is not made of the "
            f"chips this change gives it (multiples of {config.bet_unit})"
        )
    try:
        await catalog.change(config)
    except CatalogRefused as exc:
        raise _refused(exc) from None
    return TableView(table_id, TableStatus.OPEN, config)


async def close_table(catalog: TableCatalog, table_id: str) -> TableView:
    """Close a table: from now on it takes no new seat, rebuy or bet; the round in play
    finishes, every seat stands up with its chips back to its player's account, then
    the table leaves the lobby (status ``closing``, then ``closed``). Closing a table
    already closing changes nothing. :class:`NoSuchTable`, :class:`TableNotOpen` (it
    is closed)."""
    try:
        await catalog.close(table_id)
    except CatalogRefused as exc:
        raise _refused(exc) from None
    found = (await catalog.read()).tables[table_id]
    return TableView(table_id, found.status, found.config)


async def list_tables(catalog: TableCatalog, *, closed: bool = False) -> list[TableView]:
    """The tables of the catalog by id: open and closing ones, and closed ones too
    with ``closed``."""
    read = await catalog.read()
    return [
        TableView(t, e.status, e.config)
        for t, e in sorted(read.tables.items())
        if closed or e.status is not TableStatus.CLOSED
    ]


async def seed_catalog(catalog: TableCatalog, configs: Sequence[TableConfig]) -> Catalog:
    """The catalog, seeded with ``configs`` (a tables file's) if it did not exist: a
    store's first start, or the first start of this version over a store of an older
    one; afterwards the catalog, not the file, says which tables exist."""
    await catalog.seed(configs)
    return await catalog.read()
