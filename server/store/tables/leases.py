"""Table leases in Redis: taken with a fencing token, renewed, released.

A process owns a table while it holds the table's lease, ``<token>:<owner>`` with a
time to live; each new owner gets a larger fencing token from the table's counter, and
every commit is checked against it (docs/DESIGN.md, "Leases and fencing tokens"). The
renewals of many tables go in one script call (one per slot on a Redis Cluster, where a
script touches one slot: they share one pipeline per node). Takings and renewals go in
pipelines of their own, never queued behind the commits': a lease taken or renewed
seconds late has run out.
"""

from __future__ import annotations

import asyncio
import functools
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

import redis.asyncio

from server.store.client.batching import ScriptBatcher
from server.store.client.connection import is_cluster, key_slot
from server.store.client.replies import as_int, as_str
from server.store.errors import Unreplicated, store_call
from server.store.keys import Keys
from server.store.lua.tables import LEASE_ACQUIRE, LEASE_RELEASE, LEASE_RENEW


class Leases:
    """The tables' leases (``store.leases`` of a
    :class:`~server.store.tables.store.TableStore`): taken, renewed and given up through
    ``batch``, a pipeline of their own (the module docstring), read through ``client``.
    Raises :class:`~server.store.errors.StoreUnavailable` where Redis failed."""

    def __init__(self, client: redis.asyncio.Redis, keys: Keys, batch: ScriptBatcher) -> None:
        self.redis = client
        self.keys = keys
        self.batch = batch
        """The lease takings' and renewals' own batcher."""
        self._acquire = client.register_script(LEASE_ACQUIRE)
        self._renew = client.register_script(LEASE_RENEW)
        self._release = client.register_script(LEASE_RELEASE)

    @store_call
    async def acquire(self, table_id: str, owner: str, ttl_ms: int) -> int | None:
        """Take the table if nobody holds it: the new fencing token, else None.

        Tokens of a table only grow. Holding the lease already also gives None (use
        :meth:`renew`). With replication, a lease no replica acknowledged is
        given back (None): the next owner after a failover must get a larger token,
        and acknowledging it also acknowledges every write before it.
        """
        k = self.keys
        keys = [k.table_lease(table_id), k.table_fence(table_id), k.table_state(table_id)]
        try:
            token = await self.batch.call(self._acquire, keys, [owner, ttl_ms], durable=True)
        except Unreplicated as exc:
            if exc.reply is not None:
                await self.release(table_id, owner, as_int(exc.reply))
            return None
        if token is None:
            return None
        # Listed for the audit before the table's first commit can hold a chip (a
        # single-key command: the set has a slot of its own).
        await self.redis.sadd(k.tables(), table_id)
        return int(token)

    @store_call
    async def renew_many(
        self, owner: str, leases: Sequence[tuple[str, int]], ttl_ms: int
    ) -> list[bool]:
        """Extend each ``(table_id, token)`` lease of ``owner`` to ``ttl_ms`` from now, in
        one script call; per lease, whether it is still ours (if not, nothing is done).

        A lease that ran out is still ours if nobody took the table since (its fencing
        counter is still at ``token``) and we did not give it up: it is set again."""
        if not leases:
            return []
        k = self.keys
        tables = [table_id for table_id, _ in leases]
        args: list[Any] = [f"{token}:{owner}" for _, token in leases]

        names = [_renewal_keys(k, table_id) for table_id in tables]

        def keys(index: Sequence[int]) -> list[str]:
            return [
                *(names[i][0] for i in index),
                *(names[i][1] for i in index),
                *(names[i][2] for i in index),
            ]

        if not is_cluster(self.redis):
            every = range(len(tables))
            done = await self.batch.call(self._renew, keys(every), [*args, ttl_ms])
            return [bool(ours) for ours in done]
        by_slot: dict[int, list[int]] = defaultdict(list)
        for i, table_id in enumerate(tables):
            by_slot[key_slot(k.table_lease(table_id))].append(i)
        replies = await asyncio.gather(
            *(
                self.batch.call(self._renew, keys(index), [*(args[i] for i in index), ttl_ms])
                for index in by_slot.values()
            )
        )
        ours = [False] * len(tables)
        for index, done in zip(by_slot.values(), replies, strict=True):
            for i, still in zip(index, done, strict=True):
                ours[i] = bool(still)
        return ours

    @store_call
    async def renew(self, table_id: str, owner: str, token: int, ttl_ms: int) -> bool:
        """:meth:`renew_many` for one lease."""
        return (await self.renew_many(owner, [(table_id, token)], ttl_ms))[0]

    @store_call
    async def release(self, table_id: str, owner: str, token: int) -> bool:
        """Give the table up; False if the lease was no longer ours (nothing done)."""
        k = self.keys
        done = await self._release(
            keys=[k.table_lease(table_id), k.table_state(table_id)], args=[f"{token}:{owner}"]
        )
        return bool(done)

    @store_call
    async def ttl_ms(self, table_id: str) -> int:
        """Milliseconds the table's lease has left: -2 when nobody holds it."""
        left: int = await self.redis.pttl(self.keys.table_lease(table_id))
        return left

    @store_call
    async def holders(self, table_ids: Sequence[str]) -> list[tuple[int, str] | None]:
        """:meth:`holder` of each table, in one call."""
        if not table_ids:
            return []
        raws = await self.redis.mget([self.keys.table_lease(t) for t in table_ids])
        return [None if raw is None else _holder(raw) for raw in raws]

    @store_call
    async def holder(self, table_id: str) -> tuple[int, str] | None:
        """``(token, owner)`` of the current lease, or None."""
        raw = await self.redis.get(self.keys.table_lease(table_id))
        return None if raw is None else _holder(raw)


@functools.lru_cache(maxsize=1 << 14)
def _renewal_keys(k: Keys, table_id: str) -> tuple[str, str, str]:
    # Cached: a node renews every lease it holds three times a lease's life.
    return k.table_lease(table_id), k.table_fence(table_id), k.table_state(table_id)


@functools.lru_cache(maxsize=1 << 14)
def _holder(raw: bytes | str) -> tuple[int, str]:
    # Cached: a node reads every table's lease twice a second (its membership's
    # heartbeat), and a lease's value changes only when the table changes hands.
    token, _, owner = as_str(raw).partition(":")
    return int(token), owner
