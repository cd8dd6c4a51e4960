"""Players' game logs: capped lists, paged newest first.

Each commit pushes its rounds' records to their players' lists, each record behind an
8-byte ordinal that grows by one per log of the player, so that a page's cursor stays
valid while new rounds arrive (docs/DESIGN.md, "Replay, game logs, sessions").
"""

from __future__ import annotations

from dataclasses import dataclass

import redis.asyncio

from server.store.client.replies import as_bytes
from server.store.errors import store_call
from server.store.keys import Keys
from server.store.lua.tables import HISTORY

ORDINAL_BYTES = 8
"""A game log starts with its ordinal in this many bytes, big endian."""


@dataclass(frozen=True, slots=True)
class HistoryPage:
    """A page of a player's game logs, newest first.

    Each item is ``(ordinal, record)``; ordinals grow by one per log of the player.
    ``next_cursor`` continues with older logs; None when there are no more.
    """

    items: list[tuple[int, bytes]]
    next_cursor: int | None


class History:
    """The players' game logs (``store.history`` of a
    :class:`~server.store.tables.store.TableStore`), read a page at a time; the commits
    deliver them. Raises :class:`~server.store.errors.StoreUnavailable` where Redis
    failed."""

    def __init__(self, client: redis.asyncio.Redis, keys: Keys) -> None:
        self.keys = keys
        self._history = client.register_script(HISTORY)

    @store_call
    async def page(self, player: str, cursor: int | None = None, limit: int = 20) -> HistoryPage:
        """Up to ``limit`` of ``player``'s game logs, newest first, older than ``cursor``
        (None: from the newest). Pages are stable while new logs arrive.
        """
        if limit < 1:
            raise ValueError("limit is positive")
        if cursor is not None and cursor < 1:
            return HistoryPage([], None)
        raw = await self._history(keys=[self.keys.game_log(player)], args=[cursor or 0, limit + 1])
        items = [
            (int.from_bytes(item[:ORDINAL_BYTES], "big"), item[ORDINAL_BYTES:])
            for item in map(as_bytes, raw)
        ]
        if len(items) > limit:
            return HistoryPage(items[:limit], items[limit - 1][0])
        return HistoryPage(items, None)
