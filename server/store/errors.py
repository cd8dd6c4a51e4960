"""The store's own error, and the one thing every store asks of its Redis client."""

from __future__ import annotations

import redis.asyncio


class StoreError(RuntimeError):
    """A call that breaks the store's contract (a programming error, not a race)."""


def require_bytes_client(client: redis.asyncio.Redis) -> None:
    """Raise :class:`StoreError` if ``client`` decodes responses to ``str``: the stores
    keep opaque bytes (state parts, events, records)."""
    kwargs = client.connection_pool.connection_kwargs
    if kwargs.get("decode_responses"):
        raise StoreError("the store needs a Redis client with decode_responses=False")
