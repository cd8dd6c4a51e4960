"""The archiver's lease: which process runs the archiver (one at a time).

Every server process runs an archive service; the one holding this lease
(:meth:`~server.store.keys.Keys.archiver_lease`, renewed at each pass) runs the passes,
and the others only wait to take it over. ``paigow-server archive`` takes the same
lease for one pass. The lease saves work, not money: two archivers at once would still
move each record once (docs/DESIGN.md, "The archive").
"""

from __future__ import annotations

import asyncio
import time

import redis.asyncio

from server.store.client.replies import as_str
from server.store.errors import store_call
from server.store.keys import DEFAULT_KEYS, Keys
from server.store.lua.tables import KEY_RELEASE, KEY_RENEW


def lease_ms(every_ms: int) -> int:
    """The archiver's lease for passes every ``every_ms``: a few passes long, so that
    a pass renews it in time."""
    return max(3_000, 3 * every_ms)


class ArchiverLease:
    """The archiver's lease for ``owner`` (a bytes client). Its calls raise
    :class:`~server.store.errors.StoreUnavailable` where Redis failed."""

    def __init__(
        self, client: redis.asyncio.Redis, owner: str, ttl_ms: int, *, keys: Keys = DEFAULT_KEYS
    ) -> None:
        self.redis = client
        self.owner = owner
        self.ttl_ms = ttl_ms
        self.key = keys.archiver_lease()
        self._renew = client.register_script(KEY_RENEW)
        self._release = client.register_script(KEY_RELEASE)

    @store_call
    async def hold(self) -> bool:
        """Take the lease if it is free, or renew it if it is ours: whether we hold it."""
        if await self.redis.set(self.key, self.owner, nx=True, px=self.ttl_ms):
            return True
        renewed = await self._renew(keys=[self.key], args=[self.owner, self.ttl_ms])
        return bool(renewed[0])

    async def wait(self, within_s: float, every_s: float = 0.2) -> bool:
        """Take the lease, waiting up to ``within_s`` for another holder's to expire."""
        deadline = time.monotonic() + within_s
        while not await self.hold():
            if time.monotonic() >= deadline:
                return False
            await asyncio.sleep(every_s)
        return True

    @store_call
    async def holder(self) -> str | None:
        """Who holds the lease now."""
        raw = await self.redis.get(self.key)
        return None if raw is None else as_str(raw)

    @store_call
    async def release(self) -> None:
        """Give the lease up if it is ours."""
        await self._release(keys=[self.key], args=[self.owner])
