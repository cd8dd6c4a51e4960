"""The archiver: one pass moves what is older than the retention window out of Redis.

A pass, in order (docs/DESIGN.md, "The archive"):

1. The first pass ever stores the first checkpoint: zero, when the ledger streams
   hold every entry ever appended; else Redis's own totals and balances as of one
   snapshot (the ledger before it had been trimmed by its length bound).
2. Each ledger stream (:meth:`~server.store.keys.Keys.ledger_streams`), in its own id
   order: the players named by the entries appended since the last pass are noted
   (their game logs have new records), with how far the stream was read.
3. Each ledger stream again, in batches: the entries appended before the window are
   stored in the archive, and added to the checkpoint, in one transaction; once it is
   committed, Redis drops them (``XTRIM MINID``, exactly).
4. The game logs of the players noted: the records older than the window (and any
   beyond half the list's cap), from the oldest, but never the newest one (the next
   record's number follows it), are stored, then dropped from Redis; a player whose
   list holds nothing more to move is no longer noted.
5. Idle guests: their game logs are stored, then their account is closed in one
   script (its chips go back outside by a ledger entry, which a later pass archives).

Every step is repeatable: a crash (or a failure) between storing and dropping leaves
records in both places, and the next pass stores them again (the primary keys absorb
them: the checkpoint adds only entries after its position) and drops them. ``crash``
is called at each point between two steps with the point's name (the tests make it
fail there).
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

import redis.asyncio

from server.archive.database import Archive
from server.archive.dialects import ArchiveError
from server.gamelog import record_ended_ms, record_table
from server.store.accounts import OUTSIDE
from server.store.archiving import ArchivingCalls
from server.store.audit import TableMoney, snapshot
from server.store.guests import GuestStore
from server.store.keys import DEFAULT_KEYS, Keys
from server.store.records import ACCOUNT, Checkpoint, LogRow, parse_id
from server.store.replies import as_str
from server.store.tables import DEFAULT_LOG_CAP
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
    logs: int = 0  # game logs dropped from Redis once stored
    guests_closed: int = 0
    chips_out: int = 0  # chips of closed guest accounts, taken back out
    guests: int = 0  # guests listed after the pass

    def moved(self) -> bool:
        """Whether anything moved."""
        return bool(self.trimmed or self.logs or self.guests_closed)

    def summary(self) -> str:
        """One line for a log."""
        return (
            f"archived {self.ledger} ledger entries (dropped {self.trimmed} from Redis), "
            f"{self.logs} game logs; closed {self.guests_closed} idle guests "
            f"({self.chips_out} chips out); {self.guests} guests"
        )


class Archiver:
    """Moves ledger entries and game logs older than ``after_ms`` from ``client`` (a
    bytes client) to ``archive``, and closes guests idle for ``guest_idle_ms`` (None:
    never). ``table_money`` reads a stored table's money (for the first checkpoint).
    ``batch``: entries or players per step. ``log_cap``: the game logs' cap in Redis
    (records beyond half of it move whatever their age, before the cap drops them).
    """

    def __init__(
        self,
        client: redis.asyncio.Redis,
        archive: Archive,
        table_money: TableMoney,
        *,
        after_ms: int,
        guest_idle_ms: int | None = None,
        keys: Keys = DEFAULT_KEYS,
        batch: int = 1000,
        log_cap: int = DEFAULT_LOG_CAP,
        clock: Callable[[], int] = wall_ms,
        crash: Callable[[str], None] = _no_crash,
    ) -> None:
        if after_ms < 0 or batch < 1:
            raise ValueError("the window is not negative and a batch holds something")
        self.redis = client
        self.archive = archive
        self.table_money = table_money
        self.after_ms = after_ms
        self.guest_idle_ms = guest_idle_ms
        self.keys = keys
        self.batch = batch
        self.log_keep = max(1, log_cap // 2)
        self.clock = clock
        self.crash = crash
        self.calls = ArchivingCalls(client, keys=keys)
        self.guests = GuestStore(client, keys=keys)
        self._started = False

    async def run_once(self) -> PassReport:
        """One pass (see the module docstring): everything old enough now is moved."""
        now = self.clock()
        cutoff = now - self.after_ms
        report = PassReport()
        await self._start()
        streams = await self._streams()
        for stream in streams:
            await self._note_players(stream)
        for stream in streams:
            await self._move_ledger(stream, cutoff, report)
        await self._move_logs(cutoff, report)
        if self.guest_idle_ms is not None:
            await self._close_guests(now - self.guest_idle_ms, now, report)
        report.guests = await self.guests.count()
        return report

    # --- 1. the first checkpoint ----------------------------------------------------

    async def _start(self) -> None:
        if self._started:
            return
        # One Redis, one archive: records moved to two would be found in neither.
        mine = await self.archive.identity()
        key = self.keys.archive_identity()
        await self.redis.set(key, mine, nx=True)
        theirs = await self.redis.get(key)
        if theirs is not None and as_str(theirs) != mine:
            raise ArchiveError(
                f"this Redis's records go to another archive ({as_str(theirs)}, not {mine}): "
                "give every node the same --archive-url (PostgreSQL for several nodes)"
            )
        if await self.archive.checkpoint() is None:
            first = await self.first_checkpoint()
            if await self.archive.start_checkpoint(first):
                kind = "zero" if first.baseline_ms is None else "Redis's totals"
                log.info("archive: first checkpoint (%s)", kind)
            self.crash("checkpoint-started")
        self._started = True

    async def first_checkpoint(self) -> Checkpoint:
        """Zero if the ledger streams hold every entry ever appended, else Redis's
        totals as of one snapshot, positioned at each stream's last entry."""
        snap = await snapshot(self.redis, self.keys)
        if snap.complete:
            return Checkpoint()
        pots: Counter[str] = Counter()
        for state in snap.states:
            if state is not None:
                on_tables, held, house = self.table_money(state)
                pots[Pot.TABLE.value] += on_tables
                pots[Pot.HELD.value] += held
                pots[Pot.HOUSE.value] += house
        credited, removed = snap.money.get("in", 0), snap.money.get("out", 0)
        pots[ACCOUNT] = sum(snap.balances)
        pots[OUTSIDE] = removed - credited
        return Checkpoint(
            positions={s: parse_id(last) for s, (last, _) in snap.streams.items() if last},
            entries=snap.money.get("entries", 0),
            credited=credited,
            removed=removed,
            pots=pots,
            balances=Counter(dict(zip(snap.players, snap.balances, strict=True))),
            baseline_ms=self.clock(),
        )

    async def _streams(self) -> list[str]:
        tables = [as_str(t) for t in await self.redis.smembers(self.keys.tables())]
        players = [as_str(p) for p in await self.redis.smembers(self.keys.accounts())]
        return self.keys.ledger_streams(sorted(tables), sorted(players))

    # --- 2. who has new game logs ---------------------------------------------------

    async def _note_players(self, stream: str) -> None:
        after = await self.archive.log_cursor(stream) or (0, 0)
        while True:
            rows = await self.calls.entries_after(stream, after, "+", count=self.batch, pages=1)
            if not rows:
                return
            after = rows[-1].entry_id
            await self.archive.note_log_players(stream, {r.player for r in rows}, after)
            if len(rows) < self.batch:
                return

    # --- 3. the ledger --------------------------------------------------------------

    async def _move_ledger(self, stream: str, cutoff: int, report: PassReport) -> None:
        while True:
            rows = await self.calls.old_entries(stream, cutoff, self.batch)
            if not rows:
                return
            report.ledger += await self.archive.put_ledger(rows)
            self.crash("ledger-stored")
            report.trimmed += await self.calls.trim_stream(stream, rows[-1].entry_id)
            self.crash("ledger-trimmed")
            if len(rows) < self.batch:
                return

    # --- 4. game logs ---------------------------------------------------------------

    async def _move_logs(self, cutoff: int, report: PassReport) -> None:
        after = ""
        while True:
            players = await self.archive.log_players(after, self.batch)
            done = [p for p in players if await self._move_log(p, cutoff, report)]
            await self.archive.forget_log_players(done)
            if len(players) < self.batch:
                return
            after = players[-1]

    async def _move_log(self, player: str, cutoff: int, report: PassReport) -> bool:
        """Move ``player``'s old game logs; whether nothing more is left to move."""
        items = await self.calls.game_log(player)  # newest first
        older = items[1:]  # the newest one stays
        rows: list[LogRow] = []
        # From the oldest, while old enough (or too many): the run moved is the list's
        # tail, so that dropping "up to the last ordinal moved" drops only these.
        for ordinal, record in reversed(older):
            ended = record_ended_ms(record)
            if ended >= cutoff and len(items) - len(rows) <= self.log_keep:
                break
            rows.append(LogRow(player, ordinal, record_table(record) or "", ended, record))
        if rows:
            await self.archive.put_logs(rows)
            self.crash("logs-stored")
            report.logs += await self.calls.trim_game_log(player, rows[-1].ordinal)
            self.crash("logs-trimmed")
        return len(rows) == len(older)

    # --- 5. idle guests -------------------------------------------------------------

    async def _close_guests(self, before: int, now: int, report: PassReport) -> None:
        while True:
            idle = await self.guests.idle(before, self.batch)
            closed = report.guests_closed
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
                chips = await self.guests.close(player, before, newest, now)
                self.crash("guest-closed")
                if chips is not None:
                    report.guests_closed += 1
                    report.chips_out += chips
            if len(idle) < self.batch or report.guests_closed == closed:
                return
