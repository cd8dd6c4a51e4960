"""The archive in a SQL database: SQLite (a file in the data folder) or PostgreSQL.

One small interface, :class:`Archive`, over both: the same SQL (SQLite 3.24 and later
and PostgreSQL share ``ON CONFLICT`` and row values), through each one's DB-API driver
(the standard library's ``sqlite3``; ``psycopg`` 3), each call one transaction run in
a worker thread so that the event loop never waits on the disk. Every write is
idempotent by its primary key, so a record copied twice is stored once; a stream's
checkpoint row is locked by each transaction that folds entries into it (SQLite:
``BEGIN IMMEDIATE``; PostgreSQL: ``SELECT ... FOR UPDATE``), so two archivers never sum
an entry twice.
Reads for the audit see one snapshot (a read transaction in SQLite's WAL mode;
``REPEATABLE READ`` in PostgreSQL).
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from server.archive.dialects import ArchiveError
from server.archive.noted import NotedPlayers
from server.store import (
    AuditView,
    JackpotCheckpoint,
    LedgerRow,
    LogRow,
    StreamCheckpoint,
    StreamId,
)

_CHUNK = 500  # values in one IN (...) list

_LEDGER_COLUMNS = "stream, ms, seq, entry_key, kind, player, amount, source, dest, table_id, extra"
_JACKPOT_COLUMNS = _LEDGER_COLUMNS.replace("stream", "jackpot", 1)


@dataclass(frozen=True, slots=True)
class ArchiveStats:
    """How much the archive holds."""

    ledger: int
    game_logs: int
    log_players: int
    checkpoints: dict[str, StreamCheckpoint]

    @property
    def folded(self) -> int:
        """Ledger entries summed up in the checkpoints."""
        return sum(cp.entries for cp in self.checkpoints.values())


class Archive(NotedPlayers):
    """The archive behind ``url``: ``postgresql://...`` (or ``postgres://``), or
    ``sqlite:PATH`` / ``sqlite:///ABSOLUTE/PATH`` (see the module docstring).

    Every method is a coroutine running one transaction in a worker thread, one at a
    time; a failed call rolls back, and a broken connection is opened again at the
    next call. :meth:`close` when done.
    """

    # --- the checkpoints ------------------------------------------------------------

    def _checkpoint(self, conn: Any, stream: str, lock: bool) -> StreamCheckpoint | None:
        suffix = self._dialect.lock if lock else ""
        found = self._q(
            conn,
            "SELECT stream, ms, seq, entries, totals, baseline_ms FROM checkpoints"
            " WHERE stream = ?" + suffix,
            (stream,),
        )
        return _read_checkpoint(found[0]) if found else None

    def _checkpoints(self, conn: Any) -> dict[str, StreamCheckpoint]:
        found = self._q(
            conn, "SELECT stream, ms, seq, entries, totals, baseline_ms FROM checkpoints"
        )
        return {r[0]: _read_checkpoint(r) for r in found}

    async def checkpoints(self) -> dict[str, StreamCheckpoint]:
        """Every stream's checkpoint (a stream the archiver never started has none)."""
        return await self._call(self._checkpoints)

    async def start_streams(self, firsts: Sequence[StreamCheckpoint]) -> list[str]:
        """Store each of ``firsts`` as its stream's checkpoint unless it has one already,
        in one transaction; the streams whose checkpoint was stored (of two archivers
        starting a stream at once, the key decides)."""

        def start(conn: Any) -> list[str]:
            stored = []
            made = _now_ms()
            for first in firsts:
                inserted = conn.execute(
                    self._dialect.sql(
                        "INSERT INTO checkpoints"
                        " (stream, ms, seq, entries, totals, baseline_ms, made_ms)"
                        " VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (stream) DO NOTHING"
                    ),
                    (
                        first.stream,
                        *first.position,
                        first.entries,
                        first.totals(),
                        first.baseline_ms,
                        made,
                    ),
                )
                if inserted.rowcount == 1:
                    stored.append(first.stream)
            return stored

        return await self._call(start, write=True) if firsts else []

    # --- writes ---------------------------------------------------------------------

    async def put_ledger(self, rows: Sequence[LedgerRow]) -> int:
        """Store ``rows`` (one stream's, in id order), those stored already aside, and
        add those after the stream's checkpoint to it, in one transaction; how many were
        added. The stream must have a checkpoint (:meth:`start_stream`)."""
        if not rows:
            return 0
        stream = rows[0].stream
        if any(r.stream != stream for r in rows):
            raise ValueError("the rows of one stream at a time")

        def put(conn: Any) -> int:
            cp = self._checkpoint(conn, stream, lock=True)
            if cp is None:
                raise ArchiveError(f"the archive has no checkpoint of {stream} yet")
            self._many(
                conn,
                f"INSERT INTO ledger ({_LEDGER_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
                " ON CONFLICT (stream, ms, seq) DO NOTHING",
                [_ledger_values(r) for r in rows],
            )
            added = cp.fold(rows)
            self._note_duplicates(conn, stream, added)
            self._x(
                conn,
                "UPDATE checkpoints SET ms = ?, seq = ?, entries = ?, totals = ?, made_ms = ?"
                " WHERE stream = ?",
                (*cp.position, cp.entries, cp.totals(), _now_ms(), stream),
            )
            return len(added)

        return await self._call(put, write=True)

    def _note_duplicates(self, conn: Any, stream: str, added: Sequence[LedgerRow]) -> None:
        """Record every archived row of ``stream`` whose key another row of it has, among
        the keys of ``added`` (each copy: the audit names them all)."""
        places: defaultdict[str, set[tuple[str, StreamId]]] = defaultdict(set)
        for key, _, entry_id in self._same_keys(conn, stream, {r.key for r in added}):
            places[key].add((stream, entry_id))
        self._many(
            conn,
            "INSERT INTO duplicates (stream, ms, seq, entry_key) VALUES (?, ?, ?, ?)"
            " ON CONFLICT (stream, ms, seq) DO NOTHING",
            [
                (stream, *entry_id, key)
                for key, found in places.items()
                if len(found) > 1
                for stream, entry_id in sorted(found)
            ],
        )

    def _same_keys(
        self, conn: Any, stream: str, keys: Iterable[str]
    ) -> list[tuple[str, str, StreamId]]:
        """Every archived row of ``stream`` whose key is among ``keys``."""
        wanted = sorted(keys)
        out = []
        for i in range(0, len(wanted), _CHUNK):
            chunk = wanted[i : i + _CHUNK]
            marks = ", ".join("?" * len(chunk))
            for key, ms, seq in self._q(
                conn,
                "SELECT entry_key, ms, seq FROM ledger"
                f" WHERE stream = ? AND entry_key IN ({marks})",
                [stream, *chunk],
            ):
                out.append((key, stream, (int(ms), int(seq))))
        return out

    async def put_logs(self, rows: Sequence[LogRow]) -> None:
        """Store game logs, those stored already aside."""

        def put(conn: Any) -> None:
            self._many(
                conn,
                "INSERT INTO game_logs (player, ordinal, table_id, ended_ms, record)"
                " VALUES (?, ?, ?, ?, ?) ON CONFLICT (player, ordinal) DO NOTHING",
                [(r.player, r.ordinal, r.table_id, r.ended_ms, r.record) for r in rows],
            )

        await self._call(put, write=True)

    # --- the jackpots' ledgers -------------------------------------------------------

    def _jackpot_checkpoints(
        self, conn: Any, jackpot: str | None = None, lock: bool = False
    ) -> dict[str, JackpotCheckpoint]:
        text = (
            "SELECT jackpot, ms, seq, entries, seeded, contributed, paid, unknown, baseline_ms"
            " FROM jackpot_checkpoints"
        )
        args: tuple[Any, ...] = ()
        if jackpot is not None:
            text += " WHERE jackpot = ?" + (self._dialect.lock if lock else "")
            args = (jackpot,)
        return {r[0]: _read_jackpot_checkpoint(r) for r in self._q(conn, text, args)}

    async def jackpot_checkpoints(self) -> dict[str, JackpotCheckpoint]:
        """Every jackpot's checkpoint (a jackpot the archiver never started has none)."""
        return await self._call(self._jackpot_checkpoints)

    async def start_jackpots(self, firsts: Sequence[JackpotCheckpoint]) -> list[str]:
        """Store each of ``firsts`` as its jackpot's checkpoint unless it has one
        already, in one transaction; the jackpots whose checkpoint was stored."""

        def start(conn: Any) -> list[str]:
            stored = []
            for f in firsts:
                inserted = conn.execute(
                    self._dialect.sql(
                        "INSERT INTO jackpot_checkpoints (jackpot, ms, seq, entries, seeded,"
                        " contributed, paid, unknown, baseline_ms, made_ms)"
                        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (jackpot) DO NOTHING"
                    ),
                    (
                        f.jackpot,
                        *f.position,
                        f.entries,
                        f.seeded,
                        f.contributed,
                        f.paid,
                        f.unknown,
                        f.baseline_ms,
                        _now_ms(),
                    ),
                )
                if inserted.rowcount == 1:
                    stored.append(f.jackpot)
            return stored

        return await self._call(start, write=True) if firsts else []

    async def put_jackpot_ledger(self, jackpot: str, rows: Sequence[LedgerRow]) -> int:
        """Store ``rows`` (jackpot ``jackpot``'s ledger entries, in id order), those
        stored already aside, and add those after its checkpoint to it, in one
        transaction (the checkpoint's row locked); how many were added. The jackpot must
        have a checkpoint (:meth:`start_jackpots`)."""
        if not rows:
            return 0

        def put(conn: Any) -> int:
            cp = self._jackpot_checkpoints(conn, jackpot, lock=True).get(jackpot)
            if cp is None:
                raise ArchiveError(f"the archive has no checkpoint of jackpot {jackpot} yet")
            self._many(
                conn,
                f"INSERT INTO jackpot_ledger ({_JACKPOT_COLUMNS})"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
                " ON CONFLICT (jackpot, ms, seq) DO NOTHING",
                [(jackpot, *_ledger_values(r)[1:]) for r in rows],
            )
            added = cp.fold(rows)
            self._x(
                conn,
                "UPDATE jackpot_checkpoints SET ms = ?, seq = ?, entries = ?, seeded = ?,"
                " contributed = ?, paid = ?, unknown = ?, made_ms = ? WHERE jackpot = ?",
                (
                    *cp.position,
                    cp.entries,
                    cp.seeded,
                    cp.contributed,
                    cp.paid,
                    cp.unknown,
                    _now_ms(),
                    jackpot,
                ),
            )
            return len(added)

        return await self._call(put, write=True)

    async def jackpot_rows(
        self, jackpot: str, after: StreamId, through: StreamId, stream: str = ""
    ) -> list[LedgerRow]:
        """Jackpot ``jackpot``'s archived entries after id ``after`` up to ``through``,
        in id order (each row's ``stream``: ``stream``)."""

        def read(conn: Any) -> list[LedgerRow]:
            found = self._q(
                conn,
                f"SELECT {_JACKPOT_COLUMNS} FROM jackpot_ledger WHERE jackpot = ?"
                " AND (ms, seq) > (?, ?) AND (ms, seq) <= (?, ?) ORDER BY ms, seq",
                (jackpot, *after, *through),
            )
            return [_row((stream, *r[1:])) for r in found]

        return await self._call(read)

    async def jackpot_ledger_count(self) -> int:
        """How many jackpot ledger entries the archive holds."""

        def read(conn: Any) -> int:
            return int(self._q(conn, "SELECT count(*) FROM jackpot_ledger")[0][0])

        return await self._call(read)

    # --- reads ----------------------------------------------------------------------

    async def history(
        self, player: str, below: int | None, limit: int, table_id: str | None = None
    ) -> list[tuple[int, bytes]]:
        """Up to ``limit`` of ``player``'s archived game logs numbered below ``below``
        (None: from the newest), newest first, at ``table_id`` only if given."""

        def read(conn: Any) -> list[tuple[int, bytes]]:
            text = "SELECT ordinal, record FROM game_logs WHERE player = ?"
            args: list[Any] = [player]
            if below is not None:
                text += " AND ordinal < ?"
                args.append(below)
            if table_id is not None:
                text += " AND table_id = ?"
                args.append(table_id)
            text += " ORDER BY ordinal DESC LIMIT ?"
            args.append(limit)
            return [(int(o), bytes(r)) for o, r in self._q(conn, text, args)]

        return await self._call(read)

    async def audit_view(
        self,
        after: Mapping[str, StreamId],
        through: Mapping[str, StreamId],
        keys: Mapping[str, Iterable[str]],
    ) -> AuditView:
        """The rows of each stream in ``through`` after its id in ``after`` (default:
        from its start) up to its id in ``through``; every row of a stream whose key is
        in the stream's ``keys`` or among its rows; the duplicates found while
        archiving."""

        def read(conn: Any) -> AuditView:
            rows: list[LedgerRow] = []
            same: list[tuple[str, str, StreamId]] = []
            for stream in sorted(set(through) | set(keys)):
                found: list[LedgerRow] = []
                if stream in through:
                    first = after.get(stream, (0, 0))
                    found = [
                        _row(r)
                        for r in self._q(
                            conn,
                            f"SELECT {_LEDGER_COLUMNS} FROM ledger WHERE stream = ?"
                            " AND (ms, seq) > (?, ?) AND (ms, seq) <= (?, ?) ORDER BY ms, seq",
                            (stream, *first, *through[stream]),
                        )
                    ]
                rows += found
                asked = set(keys.get(stream, ())) | {r.key for r in found}
                same += self._same_keys(conn, stream, asked)
            dups = [
                (key, stream, (int(ms), int(seq)))
                for stream, ms, seq, key in self._q(
                    conn, "SELECT stream, ms, seq, entry_key FROM duplicates"
                )
            ]
            return AuditView(rows, same, dups)

        return await self._call(read)

    async def stats(self) -> ArchiveStats:
        """How many ledger entries and game logs are archived, and the checkpoint."""

        def read(conn: Any) -> ArchiveStats:
            (ledger,) = self._q(conn, "SELECT count(*) FROM ledger")[0]
            (logs,) = self._q(conn, "SELECT count(*) FROM game_logs")[0]
            (players,) = self._q(conn, "SELECT count(*) FROM log_players")[0]
            return ArchiveStats(int(ledger), int(logs), int(players), self._checkpoints(conn))

        return await self._call(read)


def _now_ms() -> int:
    return int(time.time() * 1000)


def _read_checkpoint(r: Sequence[Any]) -> StreamCheckpoint:
    stream, ms, seq, entries, totals, baseline_ms = r
    return StreamCheckpoint(
        stream=stream,
        position=(int(ms), int(seq)),
        entries=int(entries),
        pots=StreamCheckpoint.read_totals(totals),
        baseline_ms=None if baseline_ms is None else int(baseline_ms),
    )


def _read_jackpot_checkpoint(r: Sequence[Any]) -> JackpotCheckpoint:
    jackpot, ms, seq, entries, seeded, contributed, paid, unknown, baseline_ms = r
    return JackpotCheckpoint(
        jackpot=jackpot,
        position=(int(ms), int(seq)),
        entries=int(entries),
        seeded=int(seeded),
        contributed=int(contributed),
        paid=int(paid),
        unknown=int(unknown),
        baseline_ms=None if baseline_ms is None else int(baseline_ms),
    )


def _row(r: Sequence[Any]) -> LedgerRow:
    stream, ms, seq, key, kind, player, amount, source, dest, table_id, extra = r
    return LedgerRow(
        stream=stream,
        entry_id=(int(ms), int(seq)),
        key=key,
        kind=kind,
        player=player,
        amount=int(amount),
        source=source,
        dest=dest,
        table_id=table_id,
        extra=extra,
    )


def _ledger_values(r: LedgerRow) -> tuple[Any, ...]:
    """A row's values in the order of the ledger's columns."""
    ms, seq = r.entry_id
    return (
        r.stream,
        ms,
        seq,
        r.key,
        r.kind,
        r.player,
        r.amount,
        r.source,
        r.dest,
        r.table_id,
        r.extra,
    )
