"""Money requests recorded by the commits that applied them.

A commit may carry the client request that caused it
(:class:`~server.store.chips.records.ClientRequest`): the
store records it in the same atomic step, in the table's slot, keyed by player and
request key, and refuses a later commit carrying it again, so a request the client
sends again (it never heard the reply) never moves chips twice. Before that, the
request is *claimed* in the player's slot (``CLAIM``, :mod:`server.store.chips.transfers`),
so that one rid is one request across every table: the same rid with other fields,
at this table or another, is refused (docs/DESIGN.md, "Money and idempotency").
"""

from __future__ import annotations

import redis.asyncio

from server.store.chips.records import RequestRecord, read_record
from server.store.errors import store_call
from server.store.keys import Keys


class Requests:
    """The money requests the tables' commits applied (``store.requests`` of a
    :class:`~server.store.tables.store.TableStore`), read; the commits record them.
    Raises :class:`~server.store.errors.StoreUnavailable` where Redis failed."""

    def __init__(self, client: redis.asyncio.Redis, keys: Keys) -> None:
        self.redis = client
        self.keys = keys

    @store_call
    async def record(self, table_id: str, player: str, rid: str) -> RequestRecord | None:
        """``player``'s request ``rid`` as recorded by the commit of ``table_id`` that
        applied it, or None if none did (within
        :data:`~server.store.keys.REQUEST_TTL_MS`)."""
        raw = await self.redis.hmget(
            self.keys.table_request(table_id, player, rid), ["f", "m", "a", "x", "v"]
        )
        return read_record(table_id, raw)
