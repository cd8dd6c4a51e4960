"""Money requests recorded by the commits that applied them.

A commit may carry the client request that caused it (:class:`ClientRequest`): the
store records it in the same atomic step, keyed by player and request key, and refuses
a later commit carrying it again, so a request the client sends again (it never heard
the reply) never moves chips twice (docs/DESIGN.md, "Money and idempotency").
"""

from __future__ import annotations

from dataclasses import dataclass

import redis.asyncio

from server.store.keys import Keys
from server.store.replies import as_bytes, as_int, as_str


@dataclass(frozen=True, slots=True)
class ClientRequest:
    """The client request a commit carries: ``player``'s request ``rid``.

    Rids are chosen by clients, so they are unique per player at best (the server
    passes one scoped by session): the record is keyed by both. ``fingerprint`` (not
    empty) says what was asked, so that a repeat can be told from another request
    reusing the rid; ``memo`` is what the reply needs besides the player's account
    balance (opaque to the store).
    """

    player: str
    rid: str
    fingerprint: bytes
    memo: bytes = b""


@dataclass(frozen=True, slots=True)
class RequestRecord:
    """A request as recorded by the commit that applied it: its ``fingerprint`` and
    ``memo``, ``account`` (the player's balance right after that commit) and the
    commit's ``table_id`` and ``version``."""

    fingerprint: bytes
    memo: bytes
    account: int
    table_id: str
    version: int


class RequestCalls:
    """The request method of :class:`~server.store.tables.TableStore`, which sets the
    client and the key names."""

    redis: redis.asyncio.Redis
    keys: Keys

    async def request(self, player: str, rid: str) -> RequestRecord | None:
        """``player``'s request ``rid`` as recorded by the commit that applied it, or
        None if no commit did (within :data:`~server.store.keys.REQUEST_TTL_MS`)."""
        raw = await self.redis.hmget(self.keys.request(player, rid), ["f", "m", "a", "t", "v"])
        fingerprint, memo, account, table_id, version = raw
        if fingerprint is None:
            return None
        return RequestRecord(
            fingerprint=as_bytes(fingerprint),
            memo=as_bytes(memo or b""),
            account=as_int(account),
            table_id=as_str(table_id or b""),
            version=as_int(version),
        )
