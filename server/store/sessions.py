"""Resumable sessions: who a resume token speaks for, while the session lives.

A session is a hash ``session:{id}`` (see :mod:`server.store.keys`) holding the
player, their display name and whether they are a guest, with a TTL renewed at
every hello. A resume token names the session, never the player directly, so a
session that has expired cannot be resumed (``welcome.resumed`` is false).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

import redis.asyncio

from server.store.keys import DEFAULT_KEYS, Keys
from server.store.replies import as_str

SESSION_TTL_S = 3600


@dataclass(frozen=True, slots=True)
class Session:
    """A stored session."""

    session_id: str
    player: str
    name: str
    guest: bool


class SessionStore:
    """Sessions in Redis (a bytes client)."""

    def __init__(
        self, client: redis.asyncio.Redis, *, keys: Keys = DEFAULT_KEYS, ttl_s: int = SESSION_TTL_S
    ) -> None:
        self.redis = client
        self.keys = keys
        self.ttl_s = ttl_s

    async def save(self, session: Session) -> None:
        """Store (or renew) ``session`` for ``ttl_s`` seconds, and keep the player's
        display name (no TTL: ``paigow-server account list`` shows it)."""
        key = self.keys.session(session.session_id)
        mapping: dict[bytes | bytearray | memoryview[int] | str | int | float, str | int] = {
            "player": session.player,
            "name": session.name,
            "guest": int(session.guest),
        }
        # The session in a transaction of its own (one key: one slot of a Redis
        # Cluster), the name beside it: the names hash has a slot of its own.
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.hset(key, mapping=mapping)
            pipe.expire(key, self.ttl_s)
            await asyncio.gather(
                pipe.execute(), self.redis.hset(self.keys.names(), session.player, session.name)
            )

    async def load(self, session_id: str) -> Session | None:
        """The live session ``session_id``, or None when it is unknown or expired."""
        raw = await self.redis.hgetall(self.keys.session(session_id))
        if not raw:
            return None
        fields = {as_str(k): as_str(v) for k, v in raw.items()}
        return Session(session_id, fields["player"], fields["name"], fields["guest"] == "1")
