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

import asyncio
import contextlib
import secrets
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from server.archive.dialects import (
    DATABASE_ERRORS,
    ArchiveError,
    Dialect,
    Postgres,
    connect_postgres,
    connect_sqlite,
)
from server.archive.schema import SCHEMA_VERSION, statements
from server.config import redacted_url as describe
from server.store.records import AuditView, LedgerRow, LogRow, StreamCheckpoint, StreamId

T = TypeVar("T")

_CHUNK = 500  # values in one IN (...) list

_LEDGER_COLUMNS = "stream, ms, seq, entry_key, kind, player, amount, source, dest, table_id, extra"


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


class Archive:
    """The archive behind ``url``: ``postgresql://...`` (or ``postgres://``), or
    ``sqlite:PATH`` / ``sqlite:///ABSOLUTE/PATH`` (see the module docstring).

    Every method is a coroutine running one transaction in a worker thread, one at a
    time; a failed call rolls back, and a broken connection is opened again at the
    next call. :meth:`close` when done.
    """

    def __init__(self, url: str) -> None:
        self.url = url
        self._dialect: Dialect
        self._path: Path | None = None
        if url.startswith(("postgresql://", "postgres://")):
            self._dialect = Postgres()
            self._connect = connect_postgres(url)
        elif url.startswith("sqlite:"):
            path = url.removeprefix("sqlite:")
            if path.startswith("//"):
                path = path[2:]  # sqlite:///abs/path -> /abs/path
            if not path:
                raise ArchiveError(f"no file in the archive URL {url!r}")
            self._dialect = Dialect()
            self._path = Path(path)
            self._connect = connect_sqlite(self._path)
        else:
            raise ArchiveError(
                f"the archive URL {describe(url)!r} is neither postgresql:// nor sqlite:"
            )
        self._conn: Any = None
        self._ready = False
        self._lock = threading.Lock()

    def exists(self) -> bool:
        """Whether there is a database to read (a SQLite file is made at first use)."""
        return self._path is None or self._path.exists()

    @property
    def dialect(self) -> str:
        """``sqlite`` or ``postgresql``."""
        return self._dialect.name

    # --- plumbing -------------------------------------------------------------------

    def _run(self, work: Callable[[Any], T], *, write: bool) -> T:
        with self._lock:
            if self._conn is None:
                try:
                    self._conn = self._connect()
                except DATABASE_ERRORS as exc:
                    raise ArchiveError(
                        f"cannot open the archive {describe(self.url)}: {exc}"
                    ) from exc
            conn, d = self._conn, self._dialect
            try:
                if not self._ready:
                    self._create(conn)
                (d.begin_write if write else d.begin_read)(conn)
                result = work(conn)
                d.commit(conn)
                return result
            except BaseException:
                try:
                    d.rollback(conn)
                except Exception:  # the connection is broken: open another next time
                    self._drop()
                raise

    async def _call(self, work: Callable[[Any], T], *, write: bool = False) -> T:
        return await asyncio.to_thread(self._run, work, write=write)

    def _drop(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            with contextlib.suppress(Exception):  # a broken connection may fail to close
                conn.close()

    def _create(self, conn: Any) -> None:
        d = self._dialect
        d.begin_create(conn)
        for statement in statements(d.blob):
            conn.execute(statement)
        conn.execute(
            d.sql("INSERT INTO meta (name, value) VALUES (?, ?) ON CONFLICT (name) DO NOTHING"),
            ("schema", str(SCHEMA_VERSION)),
        )
        found = self._q(conn, "SELECT value FROM meta WHERE name = 'schema'")[0][0]
        d.commit(conn)
        if found != str(SCHEMA_VERSION):
            raise ArchiveError(
                f"the archive {describe(self.url)} has the tables of version {found}, this "
                f"server writes version {SCHEMA_VERSION}: give it a new, empty database"
            )
        self._ready = True

    def _q(self, conn: Any, text: str, args: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        return list(conn.execute(self._dialect.sql(text), tuple(args)).fetchall())

    def _x(self, conn: Any, text: str, args: Sequence[Any] = ()) -> None:
        conn.execute(self._dialect.sql(text), tuple(args))

    def _many(self, conn: Any, text: str, rows: Sequence[Sequence[Any]]) -> None:
        if rows:
            cur = conn.cursor()
            cur.executemany(self._dialect.sql(text), [tuple(r) for r in rows])
            cur.close()

    async def close(self) -> None:
        """Close the connection (a later call opens another)."""

        def close() -> None:
            with self._lock:
                self._drop()

        await asyncio.to_thread(close)

    async def identity(self) -> str:
        """This archive's identity, made at its first use (random)."""
        made = secrets.token_hex(8)

        def read(conn: Any) -> str:
            self._x(
                conn,
                "INSERT INTO meta (name, value) VALUES ('identity', ?)"
                " ON CONFLICT (name) DO NOTHING",
                (made,),
            )
            return str(self._q(conn, "SELECT value FROM meta WHERE name = 'identity'")[0][0])

        return await self._call(read, write=True)

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

    async def start_stream(self, first: StreamCheckpoint) -> bool:
        """Store ``first`` as its stream's checkpoint unless it has one already (whether
        it was stored: of two archivers starting a stream at once, the key decides)."""

        def start(conn: Any) -> bool:
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
                    _now_ms(),
                ),
            )
            return bool(inserted.rowcount == 1)

        return await self._call(start, write=True)

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

    async def log_cursor(self, stream: str) -> StreamId | None:
        """The last entry of ``stream`` whose player was noted (None: none yet)."""

        def read(conn: Any) -> StreamId | None:
            found = self._q(conn, "SELECT ms, seq FROM log_cursor WHERE stream = ?", (stream,))
            return (int(found[0][0]), int(found[0][1])) if found else None

        return await self._call(read)

    async def note_log_players(
        self, stream: str, players: Iterable[str], through: StreamId
    ) -> None:
        """Note ``players`` (their game logs may have records to archive) and that the
        entries of ``stream`` up to ``through`` were looked at, in one transaction."""
        names = sorted(set(players) - {""})

        def note(conn: Any) -> None:
            self._many(
                conn,
                "INSERT INTO log_players (player) VALUES (?) ON CONFLICT (player) DO NOTHING",
                [(p,) for p in names],
            )
            self._x(
                conn,
                "INSERT INTO log_cursor (stream, ms, seq) VALUES (?, ?, ?) ON CONFLICT (stream)"
                " DO UPDATE SET ms = excluded.ms, seq = excluded.seq",
                (stream, *through),
            )

        await self._call(note, write=True)

    async def forget_log_players(self, players: Iterable[str]) -> None:
        """``players``' game logs in Redis have nothing more to archive (until their next
        ledger entries note them again)."""
        names = sorted(set(players))

        def forget(conn: Any) -> None:
            self._many(conn, "DELETE FROM log_players WHERE player = ?", [(p,) for p in names])

        if names:
            await self._call(forget, write=True)

    # --- reads ----------------------------------------------------------------------

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
