"""The admin tokens that stand: a token of the operator's API (:mod:`server.admin`) is
good only while its id is recorded here, so that deleting the record revokes it at
once, on every node (the token's signature and expiry are checked apart, without
Redis). One hash of no owner (``pg:admin:tokens``), touched by single-key commands.
"""

from __future__ import annotations

from dataclasses import dataclass

import redis.asyncio

from server.store.client.replies import as_str
from server.store.errors import store_call
from server.store.keys import DEFAULT_KEYS, Keys


@dataclass(frozen=True, slots=True)
class AdminTokenRecord:
    """A standing admin token: its id, the name it was minted for, when it expires and
    when it was minted (epoch seconds)."""

    token_id: str
    name: str
    expires_s: int
    minted_s: int


class AdminTokens:
    """The records of the admin tokens (a bytes client)."""

    def __init__(self, client: redis.asyncio.Redis, *, keys: Keys = DEFAULT_KEYS) -> None:
        self.redis = client
        self.keys = keys

    @store_call
    async def record(self, token: AdminTokenRecord) -> None:
        """Record ``token`` as standing."""
        value = f"{token.name}|{token.expires_s}|{token.minted_s}"
        await self.redis.hset(self.keys.admin_tokens(), token.token_id, value)

    @store_call
    async def standing(self, token_id: str) -> AdminTokenRecord | None:
        """The record of ``token_id``, or None (never minted here, or revoked)."""
        raw = await self.redis.hget(self.keys.admin_tokens(), token_id)
        return None if raw is None else _read(token_id, as_str(raw))

    @store_call
    async def revoke(self, token_id: str) -> bool:
        """Revoke ``token_id``: whether it stood."""
        return bool(await self.redis.hdel(self.keys.admin_tokens(), token_id))

    @store_call
    async def listed(self, now_s: int) -> list[AdminTokenRecord]:
        """The standing tokens not expired at ``now_s``, by expiry; the expired ones'
        records are deleted (they could never be used again)."""
        raw = await self.redis.hgetall(self.keys.admin_tokens())
        records = [_read(as_str(i), as_str(v)) for i, v in raw.items()]
        expired = [r.token_id for r in records if r.expires_s <= now_s]
        if expired:
            await self.redis.hdel(self.keys.admin_tokens(), *expired)
        return sorted((r for r in records if r.expires_s > now_s), key=lambda r: r.expires_s)


def _read(token_id: str, value: str) -> AdminTokenRecord:
    name, expires, minted = value.rsplit("|", 2)
    return AdminTokenRecord(token_id, name, int(expires), int(minted))
