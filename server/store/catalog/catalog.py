"""The tables catalog in Redis: every table created, its settings and its status, the
truth of which tables the nodes host (docs/DESIGN.md, "The tables catalog").

One hash (:meth:`~server.store.keys.Keys.catalog`) holds it all, so that each script
runs in one slot: ``rev``, a number every change grows, ``c.<t>`` a table's settings
(the store's config map, as a table's own config part is stored) and ``s.<t>`` its
status. A table is ``open``, then ``closing`` (its holder finishes the round in play
and stands every seat up), then ``closed`` (its holder said so once nothing was left
on it: the nodes stop hosting it). A closed table stays in the catalog: its id is
never given to another table, whose ledger would follow the closed one's.

Every change is one script (``CATALOG_WRITE``), checked before it writes, which grows
``rev`` and publishes the table's id on the catalog's channel; the nodes read the
catalog again when they hear it, and read ``rev`` every second besides, so that a
notice lost (pub/sub is at most once) is only late. A tables file seeds the catalog
once, when it does not exist (``CATALOG_SEED``).
"""

from __future__ import annotations

import enum
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import msgpack
import redis.asyncio

from server.store.client.replies import as_bytes, as_int, as_str
from server.store.errors import StoreError, require_bytes_client, store_call
from server.store.keys import DEFAULT_KEYS, Keys
from server.store.lua.catalog import CATALOG_SEED, CATALOG_WRITE
from server.store.nodes.formats import SIDE_WAGERS, TABLE_CONFIG_FIELDS
from server.store.pubsub.channel import ChannelListener
from server.store.tables.parts import config_fields_beyond, config_from_plain, config_to_plain
from server.table.state import TableConfig


class TableStatus(enum.StrEnum):
    """Where a table of the catalog is in its life."""

    OPEN = "open"
    CLOSING = "closing"  # its round in play finishes, then its seats stand up
    CLOSED = "closed"  # nothing left on it: hosted nowhere


class CatalogRefusal(enum.StrEnum):
    """Why the catalog refused a change (nothing was written)."""

    EXISTS = "EXISTS"  # create: the id is taken (by a table of any status)
    MISSING = "MISSING"  # no table has that id
    CLOSING = "CLOSING"  # change: the table is closing
    CLOSED = "CLOSED"  # change or close: the table is closed
    OPEN = "OPEN"  # closed: nobody closed the table
    # create or change: settings a live node of an earlier release cannot read (never
    # from the script: checked before it, server/store/nodes/formats.py)
    NOT_READ = "NOT_READ"


class CatalogRefused(Exception):
    """A change the catalog refused, nothing written: :attr:`reason` says why."""

    def __init__(self, reason: CatalogRefusal, table_id: str) -> None:
        super().__init__(f"{table_id}: {reason.value.lower()}")
        self.reason = reason
        self.table_id = table_id


@dataclass(frozen=True, slots=True)
class CatalogTable:
    """One table of the catalog: its settings and its status."""

    config: TableConfig
    status: TableStatus


@dataclass(frozen=True, slots=True)
class Catalog:
    """The whole catalog as read at one moment: its revision and its tables by id."""

    rev: int
    tables: Mapping[str, CatalogTable]

    @property
    def exists(self) -> bool:
        """Whether the catalog was ever written (seeded or changed)."""
        return self.rev > 0

    def hosted(self) -> dict[str, CatalogTable]:
        """The tables the nodes host: open and closing ones, by id."""
        return {t: e for t, e in self.tables.items() if e.status is not TableStatus.CLOSED}


def _pack(config: TableConfig) -> bytes:
    packed: bytes = msgpack.packb(config_to_plain(config))
    return packed


class TableCatalog:
    """The catalog in one Redis (a bytes client); see the module docstring. Its calls
    raise :class:`~server.store.errors.StoreUnavailable` where Redis failed, and
    :class:`CatalogRefused` for a change it refused."""

    def __init__(self, client: redis.asyncio.Redis, keys: Keys = DEFAULT_KEYS) -> None:
        require_bytes_client(client)
        self.redis = client
        self.keys = keys
        self._seed = client.register_script(CATALOG_SEED)
        self._write = client.register_script(CATALOG_WRITE)

    @store_call
    async def seed(self, configs: Sequence[TableConfig]) -> bool:
        """Write ``configs`` as the catalog's open tables if the catalog does not exist
        yet; whether it did so (False: the catalog existed, and is left as it was)."""
        args: list[bytes | str | int] = [self.keys.catalog_channel(), int(time.time() * 1000)]
        for config in configs:
            args += [config.table_id, _pack(config)]
        return as_int(await self._seed(keys=[self.keys.catalog()], args=args)) == 1

    @store_call
    async def read(self) -> Catalog:
        """The whole catalog (revision 0 and no table if it does not exist)."""
        raw = await self.redis.hgetall(self.keys.catalog())
        fields = {as_str(k): as_bytes(v) for k, v in raw.items()}
        tables = {}
        for name, value in fields.items():
            if not name.startswith("s."):
                continue
            table_id = name[2:]
            blob = fields.get(f"c.{table_id}")
            if blob is None:
                raise StoreError(f"catalog: table {table_id!r} has a status and no settings")
            config = config_from_plain(msgpack.unpackb(blob, raw=False))
            tables[table_id] = CatalogTable(config, TableStatus(value.decode()))
        return Catalog(as_int(fields.get("rev", b"0")), tables)

    @store_call
    async def rev(self) -> int:
        """The catalog's revision: it grows with every change (0: no catalog)."""
        found = await self.redis.hget(self.keys.catalog(), "rev")
        return 0 if found is None else as_int(found)

    async def create(self, config: TableConfig) -> int:
        """Add ``config``'s table, open; the catalog's new revision.
        :class:`CatalogRefused` (``EXISTS``) if its id was ever used."""
        return await self._change("create", config.table_id, await self._settings(config))

    async def change(self, config: TableConfig) -> int:
        """Give ``config``'s table these settings; the new revision. Refused if the
        table is missing, closing or closed."""
        return await self._change("change", config.table_id, await self._settings(config))

    async def close(self, table_id: str) -> int:
        """Start closing ``table_id`` (a table already closing: nothing to do); the
        revision. Refused if the table is missing or closed."""
        return await self._change("close", table_id, b"")

    async def closed(self, table_id: str) -> int:
        """Say that closing ``table_id`` is done (its holder's call, once nothing is
        left on it; done already: nothing to do); the revision. Refused if the table
        is missing or open."""
        return await self._change("closed", table_id, b"")

    @store_call
    async def _settings(self, config: TableConfig) -> bytes:
        """``config`` packed; :class:`CatalogRefused` (``NOT_READ``) if it has a setting
        added since 0.1.0 away from its default while the stored format of such
        settings is not switched on (a node that cannot read it may be live)."""
        if config_fields_beyond(config) and not await self.redis.sismember(
            self.keys.formats(), TABLE_CONFIG_FIELDS
        ):
            raise CatalogRefused(CatalogRefusal.NOT_READ, config.table_id)
        # Its seats and results may be written in arrays 0.1.0 refuses (longer).
        if config.side_bets and not await self.redis.sismember(self.keys.formats(), SIDE_WAGERS):
            raise CatalogRefused(CatalogRefusal.NOT_READ, config.table_id)
        return _pack(config)

    @store_call
    async def _change(self, op: str, table_id: str, config: bytes) -> int:
        args: list[bytes | str] = [op, table_id, config, self.keys.catalog_channel()]
        status, rev = await self._write(keys=[self.keys.catalog()], args=args)
        if as_str(status) != "OK":
            raise CatalogRefused(CatalogRefusal(as_str(status)), table_id)
        return as_int(rev)

    def notices(self, heard: Callable[[str], None]) -> ChannelListener:
        """A listener (not started) that calls ``heard(table_id)`` each time the
        catalog changes from now on (an empty id: seeded), on any node."""
        return ChannelListener(
            self.redis,
            self.keys.catalog_channel(),
            lambda data: heard(as_str(data)),
            "catalog-notices",
        )
