"""The archive's list of players whose game logs in Redis may have records to archive,
and how far each ledger stream was read to find them (the ``log_players`` and
``log_cursor`` tables of :mod:`server.archive.schema`).

A stream's cursor and the players named by its entries up to it are written in one
transaction, so that an entry is never counted as read while its player is not noted
(:class:`~server.archive.mover.Archiver`, step 2).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from server.archive.connection import Connection
from server.store import StreamId

Note = tuple[str, Iterable[str], StreamId]
"""A stream, the players named by its entries read, and the last entry read."""


class NotedPlayers(Connection):
    """The noted players and the streams' cursors (one transaction a call)."""

    async def log_cursors(self) -> dict[str, StreamId]:
        """Each stream's last entry whose player was noted (a stream read never is
        absent)."""

        def read(conn: Any) -> dict[str, StreamId]:
            found = self._q(conn, "SELECT stream, ms, seq FROM log_cursor")
            # Both drivers give text as str and BIGINT as int. No conversion: one row a
            # stream, and this runs holding the interpreter's lock the event loop needs.
            return {s: (ms, seq) for s, ms, seq in found}

        return await self._call(read)

    async def note_log_players(self, notes: Sequence[Note]) -> None:
        """For each ``(stream, players, through)`` of ``notes``: note ``players`` (their
        game logs may have records to archive) and that the entries of ``stream`` up to
        ``through`` were looked at; all in one transaction."""
        names = sorted({p for _, players, _ in notes for p in players} - {""})

        def note(conn: Any) -> None:
            self._many(
                conn,
                "INSERT INTO log_players (player) VALUES (?) ON CONFLICT (player) DO NOTHING",
                [(p,) for p in names],
            )
            self._many(
                conn,
                "INSERT INTO log_cursor (stream, ms, seq) VALUES (?, ?, ?) ON CONFLICT (stream)"
                " DO UPDATE SET ms = excluded.ms, seq = excluded.seq",
                [(stream, *through) for stream, _, through in notes],
            )

        if notes:
            await self._call(note, write=True)

    async def forget_log_players(self, players: Iterable[str]) -> None:
        """``players``' game logs in Redis have nothing more to archive (until their next
        ledger entries note them again)."""
        names = sorted(set(players))

        def forget(conn: Any) -> None:
            self._many(conn, "DELETE FROM log_players WHERE player = ?", [(p,) for p in names])

        if names:
            await self._call(forget, write=True)

    async def log_players(self, after: str, limit: int) -> list[str]:
        """Up to ``limit`` players named after ``after``, in order, whose game logs in
        Redis may have records to archive."""

        def read(conn: Any) -> list[str]:
            found = self._q(
                conn,
                "SELECT player FROM log_players WHERE player > ? ORDER BY player LIMIT ?",
                (after, limit),
            )
            return [p for (p,) in found]

        return await self._call(read)
