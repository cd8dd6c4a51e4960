"""Guests in Redis: how many may be created, which are idle, and closing them.

A guest is admitted only while fewer than the limits were created in the current
minute, in total and from the client's address (counters that expire after two
minutes). Every guest is listed in a sorted set scored by its last activity; the
archiver closes those idle longer than the configured time, after copying their game
logs to the archive: their chips go back outside by a ledger entry, and nothing of
them is left in Redis (docs/DESIGN.md, "Guests").
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any

import redis.asyncio

from server.store.history import ORDINAL_BYTES
from server.store.keys import DEFAULT_KEYS, Keys
from server.store.replies import as_bytes, as_int, as_str
from server.store.scripts import CLOSE_GUEST, GUEST_ADMIT
from server.store.tables import DEFAULT_LEDGER_MAXLEN

MINUTE_MS = 60_000
UNKNOWN_ADDRESS = "local"
"""The address counted for a client with none (a unix socket)."""


class Admission(enum.Enum):
    """Whether a new guest may come in, or which limit refused it."""

    OK = "ok"
    TOTAL = "total"
    ADDRESS = "address"


@dataclass(frozen=True, slots=True)
class GuestLimits:
    """Guests created per minute at most: in total, and from one address (0: no limit)."""

    per_minute: int = 0
    per_address: int = 0


def close_key(player: str, now_ms: int) -> str:
    """The ledger key of the entry that takes a closed guest account's chips out."""
    return f"close:{player}:{now_ms}"


class GuestStore:
    """Guest admission, activity and closing (a bytes client)."""

    def __init__(
        self,
        client: redis.asyncio.Redis,
        *,
        keys: Keys = DEFAULT_KEYS,
        ledger_maxlen: int = DEFAULT_LEDGER_MAXLEN,
    ) -> None:
        self.redis = client
        self.keys = keys
        self.ledger_maxlen = ledger_maxlen
        self._admit = client.register_script(GUEST_ADMIT)
        self._close = client.register_script(CLOSE_GUEST)

    async def admit(
        self, player: str, address: str | None, limits: GuestLimits, now_ms: int
    ) -> Admission:
        """Count a new guest ``player`` from ``address`` at ``now_ms`` if the limits of
        the current minute allow it (and list it as active), else say which refused."""
        minute = now_ms // MINUTE_MS
        k = self.keys
        reply = await self._admit(
            keys=[
                k.guests_created(minute),
                k.guests_created(minute, address or UNKNOWN_ADDRESS),
                k.guests(),
            ],
            args=[limits.per_minute, limits.per_address, 2 * MINUTE_MS, player, now_ms],
        )
        return Admission(as_str(reply))

    async def touch(self, player: str, now_ms: int) -> None:
        """Record ``player``'s activity at ``now_ms`` (a guest still listed only)."""
        await self.redis.zadd(self.keys.guests(), {player: now_ms}, xx=True, gt=True)

    async def count(self) -> int:
        """How many guests are listed."""
        return int(await self.redis.zcard(self.keys.guests()))

    async def idle(self, before_ms: int, limit: int) -> list[str]:
        """Up to ``limit`` guests whose last activity is before ``before_ms``, oldest first."""
        found: list[Any] = await self.redis.zrangebyscore(
            self.keys.guests(), "-inf", f"({before_ms}", start=0, num=limit
        )
        return [as_str(p) for p in found]

    async def listed(self) -> list[tuple[str, int]]:
        """Every guest and its last activity (epoch ms), by name."""
        found: list[Any] = await self.redis.zrange(self.keys.guests(), 0, -1, withscores=True)
        return sorted((as_str(p), int(score)) for p, score in found)

    async def close(
        self, player: str, before_ms: int, newest_archived: int, now_ms: int
    ) -> int | None:
        """Close ``player``'s account if it is still a guest idle since before
        ``before_ms`` and the archive holds its game logs up to the newest
        (``newest_archived``, 0: it has none): the chips taken out, or None when it
        was left as it is."""
        k = self.keys
        done, chips = await self._close(
            keys=[
                k.guests(),
                k.account(player),
                k.accounts(),
                k.game_log(player),
                k.ledger_stream(),
                k.money(),
                k.names(),
            ],
            args=[
                player,
                before_ms,
                newest_archived,
                self.ledger_maxlen,
                close_key(player, now_ms),
            ],
        )
        return as_int(chips) if as_int(done) else None

    async def newest_log(self, player: str) -> int:
        """The ordinal of ``player``'s newest game log in Redis (0: none)."""
        head = await self.redis.lindex(self.keys.game_log(player), 0)
        return 0 if head is None else int.from_bytes(as_bytes(head)[:ORDINAL_BYTES], "big")
