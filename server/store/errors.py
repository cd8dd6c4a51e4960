"""The store's own errors, and the one thing every store asks of its Redis client."""

from __future__ import annotations

import redis.asyncio


class StoreError(RuntimeError):
    """A call that breaks the store's contract (a programming error, not a race)."""


class Unreplicated(Exception):
    """A write the primary applied but no replica acknowledged within the wait, while
    the primary has replicas: a failover now could lose it, so it is not acknowledged
    (docs/DESIGN.md, "Redis failures"). ``reply`` is what the primary answered."""

    def __init__(self, reply: object) -> None:
        super().__init__("no replica acknowledged the write in time")
        self.reply = reply


def require_bytes_client(client: redis.asyncio.Redis) -> None:
    """Raise :class:`StoreError` if ``client`` decodes responses to ``str``: the stores
    keep opaque bytes (state parts, events, records)."""
    if isinstance(client, redis.asyncio.RedisCluster):
        kwargs = client.get_connection_kwargs()
    else:
        kwargs = client.connection_pool.connection_kwargs
    if kwargs.get("decode_responses"):
        raise StoreError("the store needs a Redis client with decode_responses=False")
