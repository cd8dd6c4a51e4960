"""A player's game logs across Redis and the archive, as one history.

Redis keeps each player's newest records (the archiver moves the older ones, and
copies before it drops: a record may be in both places for a while); the archive
keeps the rest. Records are numbered per player, so a page reads Redis first, below
the cursor, and goes on in the archive below the oldest record Redis still holds:
each record is read once, and the cursor (a record's number) stays valid while
records move (protocol/PROTOCOL.md, ``history``).
"""

from __future__ import annotations

from protocol import limits as L
from server.archive.database import Archive
from server.gamelog import record_table
from server.store import TableStore


async def history_page(
    tables: TableStore,
    archive: Archive | None,
    player: str,
    cursor: int | None,
    limit: int,
    table_id: str | None = None,
) -> tuple[list[bytes], int | None]:
    """Up to ``limit`` of ``player``'s records numbered below ``cursor`` (None: from the
    newest), newest first, at ``table_id`` only if given; and the cursor of the next
    page (None: there is none; at one table, a full page always has one, which may
    lead to an empty page)."""
    # One more tells whether there is a next page; at one table, a full page is enough.
    want = limit + 1 if table_id is None else limit
    found: list[tuple[int, bytes]] = []
    oldest: int | None = None  # the oldest record read from Redis
    size = want if table_id is None else L.MAX_HISTORY_PAGE
    at = cursor
    while len(found) < want:
        page = await tables.history.page(player, at, size)
        for ordinal, blob in page.items:
            oldest = ordinal
            if table_id is None or record_table(blob) == table_id:
                found.append((ordinal, blob))
        if page.next_cursor is None:
            break
        at = page.next_cursor
    if len(found) < want and archive is not None:
        bounds = [b for b in (cursor, oldest) if b is not None]
        below = min(bounds) if bounds else None
        found += await archive.history(player, below, want - len(found), table_id)
    if len(found) > limit or (table_id is not None and len(found) == limit):
        return [blob for _, blob in found[:limit]], found[limit - 1][0]
    return [blob for _, blob in found], None
