"""Money requests recorded by the commits that applied them.

A commit may carry the client request that caused it (:class:`ClientRequest`): the
store records it in the same atomic step, in the table's slot, keyed by player and
request key, and refuses a later commit carrying it again, so a request the client
sends again (it never heard the reply) never moves chips twice. Before that, the
request is *claimed* in the player's slot (``CLAIM``, :mod:`server.store.transfers`),
so that one rid is one request across every table: the same rid with other fields,
at this table or another, is refused (docs/DESIGN.md, "Money and idempotency").
"""

from __future__ import annotations

from collections.abc import Sequence
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
    ``memo``, ``account`` (the player's balance right after that commit; None when
    only the account knew it: then ``payout`` names the transfer that paid the player
    out, whose marker holds it) and the commit's ``table_id`` and ``version``."""

    fingerprint: bytes
    memo: bytes
    account: int | None
    table_id: str
    version: int
    payout: str = ""


def read_record(table_id: str, fields: Sequence[object]) -> RequestRecord | None:
    """The record in ``fields`` (fingerprint, memo, account, payout, version as the
    scripts and :meth:`RequestCalls.request` read them), or None without a fingerprint."""
    fingerprint, memo, account, payout, version = fields
    if fingerprint is None or fingerprint is False:
        return None
    account_text = as_str(account) if isinstance(account, bytes | str) else ""
    return RequestRecord(
        fingerprint=as_bytes(fingerprint),  # type: ignore[arg-type]
        memo=as_bytes(memo) if isinstance(memo, bytes | str) else b"",
        account=int(account_text) if account_text else None,
        table_id=table_id,
        version=as_int(version),
        payout=as_str(payout) if isinstance(payout, bytes | str) else "",
    )


class RequestCalls:
    """The request method of :class:`~server.store.tables.TableStore`, which sets the
    client and the key names."""

    redis: redis.asyncio.Redis
    keys: Keys

    async def request(self, table_id: str, player: str, rid: str) -> RequestRecord | None:
        """``player``'s request ``rid`` as recorded by the commit of ``table_id`` that
        applied it, or None if none did (within
        :data:`~server.store.keys.REQUEST_TTL_MS`)."""
        raw = await self.redis.hmget(
            self.keys.table_request(table_id, player, rid), ["f", "m", "a", "x", "v"]
        )
        return read_record(table_id, raw)
