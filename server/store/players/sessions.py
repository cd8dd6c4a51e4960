"""Resumable sessions: who a resume token speaks for, while the session lives.

A session is a hash ``session:<id>`` (see :mod:`server.store.keys`) holding the
player, their display name, whether they are a guest, when the credential that opened
it expires (``exp``) and when it was opened (``at``), with a TTL renewed at every
hello. The TTL may reach past ``exp``: a session that ended with its credential is kept,
so that a new credential of the same player resumes it (the gateway refuses it without
one). A resume token names the session, never the player directly, so a session that
has expired cannot be resumed (``welcome.resumed`` is false).

An operator ends a player's sessions by recording the time (``player:{p}:revoked``): a
session opened before it is refused at its next resume, and every node closes the
player's connections when told on the ``sessions:revoked`` channel
(docs/DESIGN.md, "Sessions").
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass

import redis.asyncio

from server.store.client.replies import as_int, as_str
from server.store.errors import store_call
from server.store.keys import DEFAULT_KEYS, Keys
from server.store.pubsub.channel import ChannelListener

SESSION_TTL_S = 3600


@dataclass(frozen=True, slots=True)
class Session:
    """A stored session. ``expires_ms``: when the credential that opened it expires
    (epoch ms; None in a session stored before sessions had one); ``opened_ms``: when
    it was opened."""

    session_id: str
    player: str
    name: str
    guest: bool
    expires_ms: int | None = None
    opened_ms: int = 0


class SessionStore:
    """Sessions in Redis (a bytes client). Its calls raise
    :class:`~server.store.errors.StoreUnavailable` where Redis failed."""

    def __init__(
        self, client: redis.asyncio.Redis, *, keys: Keys = DEFAULT_KEYS, ttl_s: int = SESSION_TTL_S
    ) -> None:
        self.redis = client
        self.keys = keys
        self.ttl_s = ttl_s

    @store_call
    async def save(self, session: Session) -> None:
        """Store (or renew) ``session`` for ``ttl_s`` seconds (past its credential's
        expiry too: see the module's docstring), and keep the player's display name (no
        TTL: ``paigow-server account list`` shows it)."""
        key = self.keys.session(session.session_id)
        ttl_ms = self.ttl_s * 1000
        mapping: dict[bytes | bytearray | memoryview[int] | str | int | float, str | int] = {
            "player": session.player,
            "name": session.name,
            "guest": int(session.guest),
            "at": session.opened_ms,
        }
        if session.expires_ms is not None:
            mapping["exp"] = session.expires_ms
        # The session in a transaction of its own (one key: one slot of a Redis
        # Cluster), the name beside it: the names hash has a slot of its own.
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.hset(key, mapping=mapping)
            pipe.pexpire(key, ttl_ms)
            await asyncio.gather(
                pipe.execute(), self.redis.hset(self.keys.names(), session.player, session.name)
            )

    @store_call
    async def load(self, session_id: str) -> Session | None:
        """The live session ``session_id``, or None when it is unknown or expired."""
        raw = await self.redis.hgetall(self.keys.session(session_id))
        if not raw:
            return None
        fields = {as_str(k): as_str(v) for k, v in raw.items()}
        return Session(
            session_id,
            fields["player"],
            fields["name"],
            fields["guest"] == "1",
            expires_ms=int(fields["exp"]) if "exp" in fields else None,
            opened_ms=int(fields.get("at", "0")),
        )

    @store_call
    async def revoke(self, player: str, now_ms: int) -> int:
        """End ``player``'s sessions opened before ``now_ms``: refused at their next
        resume, and their connections closed on every node subscribed to
        :meth:`~server.store.keys.Keys.revocations` (how many heard it)."""
        await self.redis.set(self.keys.revoked(player), now_ms)
        return int(await self.redis.publish(self.keys.revocations(), player))

    @store_call
    async def revoked_at(self, player: str) -> int | None:
        """When ``player``'s sessions were last ended (epoch ms), or None."""
        raw = await self.redis.get(self.keys.revoked(player))
        return None if raw is None else as_int(raw)

    def revocations(self, heard: Callable[[str], None]) -> ChannelListener:
        """A listener (not started) that calls ``heard(player)`` for each player whose
        sessions :meth:`revoke` ends from now on, on any node."""
        return ChannelListener(
            self.redis, self.keys.revocations(), lambda data: heard(as_str(data)), "revocations"
        )
