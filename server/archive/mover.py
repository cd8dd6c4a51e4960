"""The archiver: one pass moves what is older than the retention window out of Redis.

A pass first asks every ledger stream's first and last entry ids (one script for
``streams`` of them) and reads every stream's log cursor (one query), then visits only
the streams with something to do, in batches of ``streams``, giving the event loop
``rest`` times each batch's time after it (docs/DESIGN.md, "The archive"); in order:

1. Each ledger stream (:func:`~server.store.chips.ledgers.ledger_sources`, the names of
   :meth:`~server.store.keys.Keys.ledger_streams`) the archive has no checkpoint of yet
   gets its first: zero, when the stream holds every entry ever appended to it; else
   its owner's own totals (the table's state, or the account's balance and totals) as
   of the same instant, positioned at the stream's last entry (the stream had been
   trimmed by its length bound before the archive began). Each stream is read as of
   its own instant (a script in its owner's slot, many sent in one pipeline); a batch's
   first checkpoints are stored in one transaction.
2. Each ledger stream whose last entry is past its cursor, in its own id order: the
   players named by the entries appended since are noted (their game logs have new
   records), with how far the stream was read, in one transaction per batch of streams
   (each stream's players with its cursor).
3. Each ledger stream whose first entry is older than the window (ids are ``ms-seq``),
   in batches: the entries appended before the window are
   stored in the archive, and added to the stream's checkpoint, in one transaction;
   once it is committed, Redis drops them (``XTRIM MINID``, exactly). A closed guest's
   ledger, once all in the archive, is deleted.
3b. Each progressive jackpot's ledger (:meth:`~server.store.keys.Keys.jackpot_ledger`),
   likewise: its first checkpoint (zero, or the meter's totals as of the same instant
   if its ledger was trimmed by its bound before), then the entries older than the
   window stored (table ``jackpot_ledger``) and added to its checkpoint in one
   transaction, then dropped from Redis (``XTRIM MINID``, exactly).
4. The game logs of the players noted: the records older than the window (and any
   beyond half the list's cap), from the oldest, but never the newest one (the next
   record's number follows it) nor one its table may still deliver again, are stored,
   then dropped from Redis; a player whose list holds nothing more to move is no
   longer noted.
5. Idle guests: their game logs are stored, then their account is closed in one
   script in the player's slot (its chips go back outside by an entry of its own
   ledger, which a later pass archives).

Every step is repeatable: a crash (or a failure) between storing and dropping leaves
records in both places, and the next pass stores them again (the primary keys absorb
them: a checkpoint adds only entries after its position) and drops them. ``crash``
is called at each point between two steps with the point's name (the tests make it
fail there).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

from server.archive.database import Archive
from server.archive.dialects import ArchiveError
from server.archive.noted import Note
from server.gamelog import record_ended_ms, record_table
from server.store import (
    CREDITED,
    DEFAULT_LOG_CAP,
    REMOVED,
    ZERO_ID,
    ArchivingCalls,
    Closing,
    JackpotCheckpoint,
    LedgerSource,
    LedgerStart,
    LogRow,
    StreamCheckpoint,
    StreamId,
    TableMoney,
    parse_id,
    stored_table,
)
from server.table.ledger import Pot

log = logging.getLogger(__name__)

CRASH_POINTS = (
    "checkpoint-started",
    "ledger-stored",
    "ledger-trimmed",
    "logs-stored",
    "logs-trimmed",
    "guest-logs-stored",
    "guest-closed",
)
"""The points between two steps of a pass, in order (see the module docstring)."""

JACKPOT_CRASH_POINTS = ("jackpot-started", "jackpot-stored", "jackpot-trimmed")
"""The points between two steps of a jackpot ledger's move (step 3b), in order: a pass
reaches them only where a jackpot has started."""

SERVED_REST = 3.0
"""The ``rest`` of a server's archiver: a pass takes at most a quarter of the event
loop's time. Unpaced, the first pass after 9,000 players came in (9,000 new streams)
took about 1.5 s of a loaded node's core in one go; every action waited behind it."""


Bounds = tuple[StreamId | None, StreamId | None]
"""A stream's first and last entry ids (None: it is empty)."""

T = TypeVar("T")


def _chunks(items: Sequence[T], size: int) -> Iterator[Sequence[T]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _no_crash(point: str) -> None:
    del point


def wall_ms() -> int:
    """Epoch milliseconds (entry ids and game logs are stamped with them)."""
    return int(time.time() * 1000)


@dataclass(slots=True)
class PassReport:
    """What one pass moved."""

    ledger: int = 0  # entries stored and added to the checkpoint
    trimmed: int = 0  # entries dropped from Redis
    jackpot_ledger: int = 0  # jackpot ledger entries stored and added to their checkpoint
    jackpot_trimmed: int = 0  # jackpot ledger entries dropped from Redis
    logs: int = 0  # game logs dropped from Redis once stored
    guests_closed: int = 0
    chips_out: int = 0  # chips of closed guest accounts, taken back out
    guests: int = 0  # guests listed after the pass

    def moved(self) -> bool:
        """Whether anything moved."""
        return bool(self.trimmed or self.jackpot_trimmed or self.logs or self.guests_closed)

    def summary(self) -> str:
        """One line for a log."""
        return (
            f"archived {self.ledger} ledger entries (dropped {self.trimmed} from Redis), "
            f"{self.jackpot_ledger} jackpot ledger entries (dropped {self.jackpot_trimmed}), "
            f"{self.logs} game logs; closed {self.guests_closed} idle guests "
            f"({self.chips_out} chips out); {self.guests} guests"
        )


class Archiver:
    """Moves ledger entries and game logs older than ``after_ms`` from Redis (through
    ``calls``, the store's archiving side) to ``archive``, and closes guests idle for
    ``guest_idle_ms`` (None: never). ``table_money`` reads a stored table's money (for
    a stream's first checkpoint).
    ``batch``: entries or players per step; ``streams``: streams per step (a pipeline
    of Redis calls, a transaction of the archive). ``log_cap``: the game logs' cap in Redis
    (records beyond half of it move whatever their age, before the cap drops them).
    ``rest``: after each step the pass waits ``rest`` times as long as the step took
    (0: it only yields to the event loop), so that a pass takes at most ``1 / (1 +
    rest)`` of the loop's time, however much it has to visit (:data:`SERVED_REST`).
    """

    def __init__(
        self,
        calls: ArchivingCalls,
        archive: Archive,
        table_money: TableMoney,
        *,
        after_ms: int,
        guest_idle_ms: int | None = None,
        batch: int = 1000,
        streams: int = 200,
        log_cap: int = DEFAULT_LOG_CAP,
        clock: Callable[[], int] = wall_ms,
        crash: Callable[[str], None] = _no_crash,
        rest: float = 0.0,
        pause: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        if after_ms < 0 or batch < 1 or streams < 1 or rest < 0:
            raise ValueError(
                "the window and the rest are not negative, and a batch holds something"
            )
        self.archive = archive
        self.table_money = table_money
        self.after_ms = after_ms
        self.guest_idle_ms = guest_idle_ms
        self.batch = batch
        self.streams = streams
        self.log_keep = max(1, log_cap // 2)
        self.clock = clock
        self.crash = crash
        self.rest = rest
        self._pause = pause
        self._since = 0.0  # time.perf_counter() when the step under way began
        self.calls = calls
        self.guests = calls.guests
        self._started = False
        self._known: set[str] = set()  # streams the archive has a checkpoint of

    async def run_once(self) -> PassReport:
        """One pass (see the module docstring): everything old enough now is moved."""
        now = self.clock()
        cutoff = now - self.after_ms
        report = PassReport()
        self._since = time.perf_counter()
        await self._start()
        found = await self.calls.ledger_sources()
        bounds = await self._bounds(found)
        await self._start_streams([s for s in found if s.stream not in self._known])
        await self._note_players(found, bounds)
        for source in found:
            first = bounds[source.stream][0]
            if first is not None and first[0] < cutoff:  # ids are ms-seq: its ms is its age
                await self._move_ledger(source, cutoff, report)
                await self._breathe()
        await self._move_jackpots(cutoff, report)
        await self._move_logs(cutoff, report)
        if self.guest_idle_ms is not None:
            await self._close_guests(now - self.guest_idle_ms, now, report)
        report.guests = await self.guests.count()
        return report

    async def _breathe(self) -> None:
        """Between two steps of a pass: give the event loop ``rest`` times the step's
        time (a node's first pass after thousands of players came visits every new
        stream: 1.5 s of its core at once delayed every action that long)."""
        took = time.perf_counter() - self._since
        await self._pause(took * self.rest)
        self._since = time.perf_counter()

    async def _bounds(self, found: Sequence[LedgerSource]) -> dict[str, Bounds]:
        """Each stream's first and last entry ids, ``streams`` at a time."""
        bounds: dict[str, Bounds] = {}
        for chunk in _chunks(found, self.streams):
            names = [s.stream for s in chunk]
            bounds.update(zip(names, await self.calls.bounds(names), strict=True))
            await self._breathe()
        return bounds

    # --- 1. the checkpoints ---------------------------------------------------------

    async def _start(self) -> None:
        if self._started:
            return
        # One Redis, one archive: records moved to two would be found in neither.
        mine = await self.archive.identity()
        theirs = await self.calls.archive_of_record(mine)
        if theirs != mine:
            raise ArchiveError(
                f"this Redis's records go to another archive ({theirs}, not {mine}): "
                "give every node the same --archive-url (PostgreSQL for several nodes)"
            )
        self._known = set(await self.archive.checkpoints())
        self._started = True

    async def _start_streams(self, new: Sequence[LedgerSource]) -> None:
        """The first checkpoint of each of ``new``, ``streams`` at a time: each stream
        read as of one instant (a script in its owner's slot), then a batch's checkpoints
        stored in one transaction."""
        for chunk in _chunks(new, self.streams):
            starts = await self.calls.ledger_starts(chunk)
            firsts = [self.first_checkpoint(s, f) for s, f in zip(chunk, starts, strict=True)]
            stored = set(await self.archive.start_streams(firsts))
            totals = sum(1 for f in firsts if f.stream in stored and f.baseline_ms is not None)
            if stored:
                log.info(
                    "archive: %d streams start, %d of them from their owner's totals",
                    len(stored),
                    totals,
                )
            self._known.update(s.stream for s in chunk)
            self.crash("checkpoint-started")
            await self._breathe()

    def first_checkpoint(self, source: LedgerSource, start: LedgerStart) -> StreamCheckpoint:
        """Zero if the stream holds every entry ever appended to it, else its owner's
        totals as of the same instant, positioned at the stream's last entry."""
        if start.complete:
            return StreamCheckpoint(source.stream)
        pots: Counter[str] = Counter()
        if source.table:
            state = stored_table(start.owner)
            if state is not None:
                on_tables, held, house = self.table_money(state)
                pots.update({Pot.TABLE.value: on_tables, Pot.HELD.value: held})
                pots[Pot.HOUSE.value] = house
        else:
            fields = start.account_totals()
            pots[Pot.ACCOUNT.value] = fields.get("balance", 0)
            pots[CREDITED] = fields.get("in", 0)
            pots[REMOVED] = fields.get("out", 0)
        return StreamCheckpoint(
            source.stream,
            position=parse_id(start.last) if start.last else (0, 0),
            entries=start.appended,
            pots=pots,
            baseline_ms=self.clock(),
        )

    # --- 2. who has new game logs ---------------------------------------------------

    async def _note_players(
        self, found: Sequence[LedgerSource], bounds: Mapping[str, Bounds]
    ) -> None:
        """Note the players of the entries after each stream's cursor: only streams
        whose last entry is past it are read, ``streams`` at a time (a page of ``batch``
        entries each), and a batch's players and cursors are written in one transaction."""
        cursors = await self.archive.log_cursors()
        todo: list[tuple[str, StreamId]] = []
        for source in found:
            last = bounds[source.stream][1]
            after = cursors.get(source.stream, ZERO_ID)
            if last is not None and last > after:
                todo.append((source.stream, after))
        while todo:
            more: list[tuple[str, StreamId]] = []
            for chunk in _chunks(todo, self.streams):
                pages = await self.calls.players_after(chunk, self.batch)
                notes: list[Note] = []
                for (stream, _), (players, last, read) in zip(chunk, pages, strict=True):
                    if last is not None:
                        notes.append((stream, players, last))
                        if read == self.batch:  # more after this page
                            more.append((stream, last))
                await self.archive.note_log_players(notes)
                await self._breathe()
            todo = more

    # --- 3. the ledger --------------------------------------------------------------

    async def _move_ledger(self, source: LedgerSource, cutoff: int, report: PassReport) -> None:
        stream, moved = source.stream, False
        while True:
            rows = await self.calls.old_entries(stream, cutoff, self.batch)
            if rows:
                report.ledger += await self.archive.put_ledger(rows)
                self.crash("ledger-stored")
                report.trimmed += await self.calls.trim_stream(stream, rows[-1].entry_id)
                self.crash("ledger-trimmed")
                moved = True
            if len(rows) < self.batch:
                break
        if moved and not source.table:  # a closed guest's, all archived: nothing stays
            await self.calls.drop_closed_ledger(source.owner)

    # --- 3b. the jackpots' ledgers ---------------------------------------------------

    async def _move_jackpots(self, cutoff: int, report: PassReport) -> None:
        names = await self.calls.jackpots()
        if not names:
            return
        known = set(await self.archive.jackpot_checkpoints())
        new = [n for n in names if n not in known]
        for chunk in _chunks(new, self.streams):
            starts = await self.calls.jackpot_starts(chunk)
            await self.archive.start_jackpots(
                [self.first_jackpot_checkpoint(n, s) for n, s in zip(chunk, starts, strict=True)]
            )
            self.crash("jackpot-started")
            await self._breathe()
        streams = [self.calls.jackpot_ledger(n) for n in names]
        for name, (first, _) in zip(names, await self.calls.bounds(streams), strict=True):
            if first is not None and first[0] < cutoff:
                await self._move_jackpot(name, cutoff, report)
                await self._breathe()

    def first_jackpot_checkpoint(self, name: str, start: LedgerStart) -> JackpotCheckpoint:
        """Zero if the jackpot's ledger holds every entry ever appended to it, else the
        meter's totals as of the same instant, positioned at the ledger's last entry."""
        if start.complete:
            return JackpotCheckpoint(name)
        totals = start.account_totals()  # the jackpot's hash, by name
        return JackpotCheckpoint(
            name,
            position=parse_id(start.last) if start.last else ZERO_ID,
            entries=start.appended,
            seeded=totals.get("seeded", 0),
            contributed=totals.get("contributed", 0),
            paid=totals.get("paid", 0),
            baseline_ms=self.clock(),
        )

    async def _move_jackpot(self, name: str, cutoff: int, report: PassReport) -> None:
        stream = self.calls.jackpot_ledger(name)
        while True:
            rows = await self.calls.old_entries(stream, cutoff, self.batch)
            if rows:
                report.jackpot_ledger += await self.archive.put_jackpot_ledger(name, rows)
                self.crash("jackpot-stored")
                report.jackpot_trimmed += await self.calls.trim_stream(stream, rows[-1].entry_id)
                self.crash("jackpot-trimmed")
            if len(rows) < self.batch:
                return

    # --- 4. game logs ---------------------------------------------------------------

    async def _move_logs(self, cutoff: int, report: PassReport) -> None:
        after = ""
        on_their_way: dict[str, set[bytes]] = {}  # per table, read once a pass
        while True:
            players = await self.archive.log_players(after, self.batch)
            done = []
            for chunk in _chunks(players, self.streams):  # their lists read in one pipeline
                for player, items in zip(chunk, await self.calls.game_logs(chunk), strict=True):
                    if await self._move_log(player, items, cutoff, report, on_their_way):
                        done.append(player)
                await self._breathe()
            await self.archive.forget_log_players(done)
            if len(players) < self.batch:
                return
            after = players[-1]

    async def _move_log(
        self,
        player: str,
        items: Sequence[tuple[int, bytes]],
        cutoff: int,
        report: PassReport,
        on_their_way: dict[str, set[bytes]],
    ) -> bool:
        """Move ``player``'s old game logs among ``items`` (the list in Redis, newest
        first, read before); whether nothing more is left to move."""
        older = items[1:]  # the newest one stays
        rows: list[LogRow] = []
        # From the oldest, while old enough (or too many): the run moved is the list's
        # tail, so that dropping "up to the last ordinal moved" drops only these.
        for ordinal, record in reversed(older):
            ended = record_ended_ms(record)
            if ended >= cutoff and len(items) - len(rows) <= self.log_keep:
                break
            table_id = record_table(record) or ""
            if table_id not in on_their_way:
                on_their_way[table_id] = await self.calls.logs_on_their_way([table_id])
            if record in on_their_way[table_id]:
                # Its table may deliver it again: the player's list must still show it
                # (delivered once by its record among the newest), until the table
                # forgets it.
                break
            rows.append(LogRow(player, ordinal, table_id, ended, record))
        if rows:
            await self.archive.put_logs(rows)
            self.crash("logs-stored")
            report.logs += await self.calls.trim_game_log(player, rows[-1].ordinal)
            self.crash("logs-trimmed")
        return len(rows) == len(older)

    # --- 5. idle guests -------------------------------------------------------------

    async def _close_guests(self, before: int, now: int, report: PassReport) -> None:
        left = 0  # idle guests left listed this pass (a game log came meanwhile)
        while True:
            idle = await self.guests.idle(before, self.batch, skip=left)
            for player in idle:
                items = await self.calls.game_log(player)
                rows = [
                    LogRow(player, o, record_table(r) or "", record_ended_ms(r), r)
                    for o, r in items
                ]
                if rows:
                    await self.archive.put_logs(rows)
                self.crash("guest-logs-stored")
                newest = items[0][0] if items else 0
                closed = await self.guests.close(player, before, newest, now)
                self.crash("guest-closed")
                if closed.outcome is Closing.CLOSED:
                    report.guests_closed += 1
                    report.chips_out += closed.value
                elif closed.outcome is Closing.LOGS:
                    left += 1
                await self._breathe()
            if len(idle) < self.batch:
                return
