"""Redis's side of the archive: reading what is old enough to move, and removing it
once the archive holds it.

Moving is exactly-once because the two sides are idempotent and ordered: the archive
stores each ledger entry under its stream and entry id, and each game log under its
player and ordinal (a second copy is absorbed by the primary key); only after the
archive's transaction is committed does Redis drop what it copied, up to the last id
(or ordinal) copied. A crash between the two leaves records in both places, which the
next pass copies again (absorbed) and then removes (docs/DESIGN.md, "The archive").
"""

from __future__ import annotations

import redis.asyncio

from server.store.history import ORDINAL_BYTES
from server.store.keys import DEFAULT_KEYS, Keys
from server.store.records import LedgerRow, StreamId, format_id, next_id
from server.store.replies import as_bytes, stream_entries
from server.store.scripts import TRIM_LOG


class ArchivingCalls:
    """What the archiver asks of Redis (a bytes client)."""

    def __init__(self, client: redis.asyncio.Redis, *, keys: Keys = DEFAULT_KEYS) -> None:
        self.redis = client
        self.keys = keys
        self._trim_log = client.register_script(TRIM_LOG)

    async def old_entries(self, stream: str, before_ms: int, count: int) -> list[LedgerRow]:
        """Up to ``count`` of the oldest entries of ``stream`` appended before
        ``before_ms`` (epoch ms: the entry ids' time), oldest first."""
        reply = await self.redis.xrange(stream, min="-", max=f"({before_ms}-0", count=count)
        return [LedgerRow.from_fields(stream, i, f) for i, f in stream_entries(reply)]

    async def entries_after(
        self,
        stream: str,
        after: StreamId,
        through: str | None,
        count: int = 5000,
        pages: int | None = None,
    ) -> list[LedgerRow]:
        """Every entry of ``stream`` after id ``after`` up to id ``through`` (``+``: the
        last; None: none), read in pages of ``count`` (at most ``pages`` of them)."""
        rows: list[LedgerRow] = []
        if through is None:
            return rows
        start = "(" + format_id(after)
        while True:
            reply = await self.redis.xrange(stream, min=start, max=through, count=count)
            page = [LedgerRow.from_fields(stream, i, f) for i, f in stream_entries(reply)]
            rows += page
            if pages is not None:
                pages -= 1
            if len(page) < count or pages == 0:
                return rows
            start = "(" + format_id(page[-1].entry_id)

    async def trim_stream(self, stream: str, through: StreamId) -> int:
        """Remove every entry of ``stream`` up to id ``through`` (exactly, not ``~``);
        how many were removed."""
        minid = format_id(next_id(through))
        return int(await self.redis.xtrim(stream, minid=minid, approximate=False))

    async def game_log(self, player: str) -> list[tuple[int, bytes]]:
        """``player``'s game logs in Redis, ``(ordinal, record)``, newest first."""
        raw = await self.redis.lrange(self.keys.game_log(player), 0, -1)
        return [
            (int.from_bytes(item[:ORDINAL_BYTES], "big"), item[ORDINAL_BYTES:])
            for item in map(as_bytes, raw)
        ]

    async def trim_game_log(self, player: str, through: int) -> int:
        """Remove ``player``'s game logs numbered up to ``through``, but never the newest
        one; how many were removed."""
        return int(await self._trim_log(keys=[self.keys.game_log(player)], args=[through]))
