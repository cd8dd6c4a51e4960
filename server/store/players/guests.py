"""Guests in Redis: how many may be created, which are idle, and closing them.

A guest is admitted only while fewer than the limits were created in the current
minute, in total and from the client's address: one hash per minute holds both counts
(one key, so one slot of a Redis Cluster), and expires after two minutes. A guest's
account says it is a guest's and when it was last active (``guest``, ``seen``, in the
player's slot); the guests' sorted set (a key of no owner, changed by single-key
commands) lists them by last activity, for the archiver to find the idle ones. The
archiver closes a guest idle longer than the configured time, after copying its game
logs to the archive: one script in the player's slot checks the account's own ``seen``
and moves its chips back outside by an entry of its own ledger, leaving a small record
of the account (its totals, for the audit); then the guests' set and the display names
forget it (docs/DESIGN.md, "Guests").
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any

import redis.asyncio

from server.store.client.replies import as_int, as_str
from server.store.errors import store_call
from server.store.keys import ALL_ADDRESSES, DEFAULT_KEYS, Keys, address_field
from server.store.lua.guests import CLOSE_GUEST, GUEST_ADMIT, GUEST_TOUCH
from server.store.tables.store import DEFAULT_LEDGER_MAXLEN

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


class Closing(enum.Enum):
    """What :meth:`GuestStore.close` found."""

    CLOSED = "closed"  # closed now
    GONE = "gone"  # no account, or closed before
    MEMBER = "member"  # not a guest's account
    ACTIVE = "active"  # active since
    LOGS = "logs"  # a game log the archive does not hold yet


@dataclass(frozen=True, slots=True)
class Closed:
    """:meth:`GuestStore.close`'s answer: what it found, and the chips taken out (for
    :attr:`Closing.CLOSED`) or the last activity (for :attr:`Closing.ACTIVE`)."""

    outcome: Closing
    value: int = 0


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
        self._touch = client.register_script(GUEST_TOUCH)
        self._close = client.register_script(CLOSE_GUEST)

    @store_call
    async def admit(
        self, player: str, address: str | None, limits: GuestLimits, now_ms: int
    ) -> Admission:
        """Count a new guest ``player`` from ``address`` at ``now_ms`` if the limits of
        the current minute allow it, and list it as active; else say which refused.
        (Its account, opened next, says it is a guest's.)"""
        reply = await self._admit(
            keys=[self.keys.guests_created(now_ms // MINUTE_MS)],
            args=[
                limits.per_minute,
                limits.per_address,
                2 * MINUTE_MS,
                ALL_ADDRESSES,
                address_field(address or UNKNOWN_ADDRESS),
            ],
        )
        admission = Admission(as_str(reply))
        if admission is Admission.OK:
            # Listed before its account exists: a guest listed with no account is
            # forgotten by the archiver, an account never listed would never close.
            await self.redis.zadd(self.keys.guests(), {player: now_ms}, nx=True)
        return admission

    @store_call
    async def touch(self, player: str, now_ms: int) -> None:
        """Record ``player``'s activity at ``now_ms`` (an open guest account only)."""
        if await self._touch(keys=[self.keys.account(player)], args=[now_ms]):
            await self.redis.zadd(self.keys.guests(), {player: now_ms}, xx=True, gt=True)

    @store_call
    async def count(self) -> int:
        """How many guests are listed."""
        return int(await self.redis.zcard(self.keys.guests()))

    @store_call
    async def idle(self, before_ms: int, limit: int, skip: int = 0) -> list[str]:
        """Up to ``limit`` guests listed as last active before ``before_ms``, oldest
        first, after the first ``skip`` of them."""
        found: list[Any] = await self.redis.zrangebyscore(
            self.keys.guests(), "-inf", f"({before_ms}", start=skip, num=limit
        )
        return [as_str(p) for p in found]

    @store_call
    async def listed(self) -> list[tuple[str, int]]:
        """Every guest and its last activity (epoch ms), by name."""
        found: list[Any] = await self.redis.zrange(self.keys.guests(), 0, -1, withscores=True)
        return sorted((as_str(p), int(score)) for p, score in found)

    @store_call
    async def close(self, player: str, before_ms: int, newest_archived: int, now_ms: int) -> Closed:
        """Close ``player``'s account if it is a guest's idle since before ``before_ms``
        and the archive holds its game logs up to the newest (``newest_archived``, 0: it
        has none); then (or if it is gone, or not a guest's) forget it in the guests'
        set and the display names. A guest active since is listed with that activity."""
        k = self.keys
        outcome, value = await self._close(
            keys=[k.account(player), k.account_ledger(player), k.game_log(player)],
            args=[
                player,
                before_ms,
                newest_archived,
                self.ledger_maxlen,
                close_key(player, now_ms),
                now_ms,
            ],
        )
        closed = Closed(Closing(as_str(outcome)), as_int(value))
        if closed.outcome in (Closing.CLOSED, Closing.GONE):
            # Single-key commands, after the script: a crash between them leaves the
            # guest listed, and the next pass finds it gone and forgets it then.
            await self.redis.hdel(k.names(), player)
        if closed.outcome in (Closing.CLOSED, Closing.GONE, Closing.MEMBER):
            await self.redis.zrem(k.guests(), player)
        elif closed.outcome is Closing.ACTIVE:
            await self.redis.zadd(k.guests(), {player: closed.value}, xx=True, gt=True)
        return closed
