"""The store's own errors, and the one thing every store asks of its Redis client."""

from __future__ import annotations

import re

import redis.asyncio
from redis.exceptions import ResponseError

_NOREPLICAS = re.compile(r"(?:^|-)NOREPLICAS ")
"""Redis's refusal, at the start of the reply (Redis 7, Valkey) or after the script's
name (Redis 6.2: ``@user_script: 1: -NOREPLICAS ...``)."""


class StoreError(RuntimeError):
    """A call that breaks the store's contract (a programming error, not a race)."""


class Unreplicated(Exception):
    """A write the primary applied but no replica acknowledged within the wait, while
    the primary has replicas: a failover now could lose it, so it is not acknowledged
    (docs/DESIGN.md, "Redis failures"). ``reply`` is what the primary answered."""

    def __init__(self, reply: object) -> None:
        super().__init__("no replica acknowledged the write in time")
        self.reply = reply


class WritesRefused(ResponseError):
    """The primary refused a script's writes: it has fewer replicas in reach than its
    ``min-replicas-to-write`` (Redis's ``NOREPLICAS``). A script does its checks before
    its first write, and that write is the one refused, so nothing was written. A
    ``ResponseError``, so that whatever handles Redis's errors handles it as before."""

    @staticmethod
    def of(reply: object) -> WritesRefused | None:
        """The error for a script's ``reply``, if it is Redis's ``NOREPLICAS``."""
        if isinstance(reply, ResponseError) and _NOREPLICAS.search(str(reply)):
            return WritesRefused(str(reply))
        return None


def require_bytes_client(client: redis.asyncio.Redis) -> None:
    """Raise :class:`StoreError` if ``client`` decodes responses to ``str``: the stores
    keep opaque bytes (state parts, events, records)."""
    if isinstance(client, redis.asyncio.RedisCluster):
        kwargs = client.get_connection_kwargs()
    else:
        kwargs = client.connection_pool.connection_kwargs
    if kwargs.get("decode_responses"):
        raise StoreError("the store needs a Redis client with decode_responses=False")
