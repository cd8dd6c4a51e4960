"""Money requests recorded by the commits that applied them.

A commit may carry the client request that caused it (:class:`ClientRequest`): the
store records it in the same atomic step, in the table's slot, keyed by player and
request key, and refuses a later commit carrying it again, so a request the client
sends again (it never heard the reply) never moves chips twice. Before that, the
request is *claimed* in the player's slot (``CLAIM``, :mod:`server.store.chips.transfers`),
so that one rid is one request across every table: the same rid with other fields,
at this table or another, is refused (docs/DESIGN.md, "Money and idempotency").
"""

from __future__ import annotations

import redis.asyncio

from server.store.chips.records import ClientRequest, RequestRecord, read_record
from server.store.keys import Keys

__all__ = ["ClientRequest", "RequestCalls", "RequestRecord", "read_record"]


class RequestCalls:
    """The request method of :class:`~server.store.tables.store.TableStore`, which sets the
    client and the key names."""

    redis: redis.asyncio.Redis
    keys: Keys

    async def request(self, table_id: str, player: str, rid: str) -> RequestRecord | None:
        """``player``'s request ``rid`` as recorded by the commit of ``table_id`` that
        applied it, or None if none did (within
        :data:`~server.store.keys.REQUEST_TTL_MS`)."""
        raw = await self.redis.hmget(
            self.keys.table_request(table_id, player, rid), ["f", "m", "a", "x", "v"]
        )
        return read_record(table_id, raw)
