"""The audit: do the chips add up, and was no ledger entry applied twice or lost?

Checks, on one consistent snapshot of the store (taken in a transaction, so the
audit may run beside live tables):

1. *Conservation*: chips credited from outside - chips taken back out == account
   balances + table balances + held bets + the house's result.
2. No account is negative.
3. No ledger key appears twice (among the entries after the checkpoint, and between
   them and the archive; the archiver records those it finds before it).
4. *Replay*: the checkpoint (the sum of the archived ledger up to a position per
   stream, :class:`~server.store.records.Checkpoint`; with no archive, zero) plus the
   entries after it, from the archive and from Redis, give each account's balance, the
   table, held and house totals, the credited and removed totals and the count of
   entries ever appended (so none was lost). Without an archive, a ledger stream that
   was trimmed (by its length bound) leaves the replay out of reach: a note.

The table state format belongs to the state machine, so the caller passes
``table_money(stored_table) -> (table_balances, held, house)``; the archive, when
there is one, is passed as an :class:`ArchivedLedger` (:class:`server.archive.Archive`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Protocol

import redis.asyncio
from redis.exceptions import WatchError

from server.store.archiving import ArchivingCalls
from server.store.keys import DEFAULT_KEYS, Keys
from server.store.records import AuditView, Checkpoint, LedgerRow, StreamId, format_id, parse_id
from server.store.replies import as_int, as_str, stream_entries
from server.store.tables import StoredTable, require_bytes_client, stored_table
from server.table.ledger import Pot

TableMoney = Callable[[StoredTable], tuple[int, int, int]]
"""From a stored table: (table balances total, held bets total, house result)."""

_SHOWN = 10  # problems of one kind listed before "and N more"


@dataclass(slots=True)
class AuditReport:
    """The audit's findings; ``ok`` when ``problems`` is empty."""

    credited: int = 0
    accounts_total: int = 0
    tables_total: int = 0
    held_total: int = 0
    house_total: int = 0
    accounts: int = 0
    tables: int = 0
    ledger_entries: int = 0  # ever appended
    ledger_scanned: int = 0  # replayed: found after the checkpoint, in Redis or the archive
    ledger_complete: bool = False  # the checkpoint and the entries after it count them all
    checkpoint_entries: int = 0  # summed up in the checkpoint
    duplicates: dict[str, list[str]] = field(default_factory=dict)  # key -> stream ids
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Whether every check passed."""
        return not self.problems

    @property
    def held_everywhere(self) -> int:
        """Accounts + table balances + held bets + house result."""
        return self.accounts_total + self.tables_total + self.held_total + self.house_total

    def explain(self) -> str:
        """A human-readable report, the verdict last."""
        lines = [
            f"credited from outside: {self.credited}",
            f"accounts ({self.accounts}): {self.accounts_total}",
            f"table balances ({self.tables} tables): {self.tables_total}",
            f"held bets: {self.held_total}",
            f"house result: {self.house_total}",
            f"sum: {self.held_everywhere}",
            f"ledger: {self.ledger_scanned} entries scanned of {self.ledger_entries} appended"
            + (
                f" ({self.checkpoint_entries} summed up in the archive's checkpoint)"
                if self.checkpoint_entries
                else ""
            ),
        ]
        lines += [f"note: {n}" for n in self.notes]
        lines += [f"PROBLEM: {p}" for p in self.problems]
        lines.append("audit passed" if self.ok else f"audit FAILED ({len(self.problems)} problems)")
        return "\n".join(lines)


def _listed(items: list[str]) -> str:
    more = len(items) - _SHOWN
    shown = ", ".join(items[:_SHOWN])
    return f"{shown} and {more} more" if more > 0 else shown


class ArchivedLedger(Protocol):
    """The archive, as the audit reads it (:class:`server.archive.Archive`)."""

    async def checkpoint(self) -> Checkpoint | None: ...

    async def audit_view(
        self,
        after: Mapping[str, StreamId],
        through: Mapping[str, StreamId],
        keys: Iterable[str],
    ) -> AuditView: ...


@dataclass(slots=True)
class Snapshot:
    """The store as of one instant: accounts (sorted) and their balances, tables
    (sorted) and their stored states, the money totals, and per ledger stream its last
    entry id (None: empty) and length."""

    players: list[str]
    balances: list[int]
    table_ids: list[str]
    states: list[StoredTable | None]
    money: dict[str, int]
    streams: dict[str, tuple[str | None, int]]

    @property
    def complete(self) -> bool:
        """Whether the ledger streams hold every entry ever appended."""
        return sum(n for _, n in self.streams.values()) == self.money.get("entries", 0)


async def snapshot(client: redis.asyncio.Redis, keys: Keys = DEFAULT_KEYS) -> Snapshot:
    """The store as of one instant (:class:`Snapshot`): every chip movement is one
    script, so a transaction sees none or all of it; WATCH retries if an account or a
    table appears meanwhile."""
    async with client.pipeline(transaction=True) as pipe:
        while True:
            try:
                await pipe.watch(keys.accounts(), keys.tables())
                players = sorted(as_str(m) for m in await pipe.smembers(keys.accounts()))
                table_ids = sorted(as_str(m) for m in await pipe.smembers(keys.tables()))
                streams = keys.ledger_streams(table_ids, players)
                pipe.multi()  # type: ignore[no-untyped-call]
                for player in players:
                    pipe.hget(keys.account(player), "balance")
                for table_id in table_ids:
                    pipe.hgetall(keys.table_state(table_id))
                pipe.hgetall(keys.money())
                for stream in streams:
                    pipe.xrevrange(stream, max="+", min="-", count=1)
                    pipe.xlen(stream)
                replies = await pipe.execute()
                break
            except WatchError:
                continue
    n, t, s = len(players), len(table_ids), len(streams)
    money_at = n + t
    tail = replies[money_at + 1 :]
    last = {}
    for i, stream in enumerate(streams):
        newest = stream_entries(tail[2 * i])
        last[stream] = (newest[0][0] if newest else None, as_int(tail[2 * i + 1]))
    assert len(tail) == 2 * s
    return Snapshot(
        players=players,
        balances=[as_int(b) for b in replies[:n]],
        table_ids=table_ids,
        states=[stored_table(fields) for fields in replies[n:money_at]],
        money={as_str(k): as_int(v) for k, v in replies[money_at].items()},
        streams=last,
    )


async def audit(
    client: redis.asyncio.Redis,
    table_money: TableMoney,
    *,
    keys: Keys = DEFAULT_KEYS,
    archive: ArchivedLedger | None = None,
) -> AuditReport:
    """Audit the store behind ``client``, and ``archive`` if given (see the module
    docstring)."""
    require_bytes_client(client)
    report = AuditReport()
    # The checkpoint first: every entry it sums was appended before the snapshot.
    checkpoint = await archive.checkpoint() if archive is not None else None
    snap = await snapshot(client, keys)
    report.accounts = len(snap.players)
    report.tables = len(snap.table_ids)
    report.credited = snap.money.get("in", 0)
    removed = snap.money.get("out", 0)
    report.ledger_entries = snap.money.get("entries", 0)

    balances = dict(zip(snap.players, snap.balances, strict=True))
    negative = [f"{p} ({b})" for p, b in balances.items() if b < 0]
    if negative:
        report.problems.append(f"negative accounts: {_listed(negative)}")
    report.accounts_total = sum(snap.balances)
    for table_id, state in zip(snap.table_ids, snap.states, strict=True):
        if state is None:
            report.problems.append(f"table {table_id} is listed but has no state")
            continue
        try:
            on_tables, held, house = table_money(state)
        except Exception as exc:  # any decoding failure is a finding, not a crash
            report.problems.append(f"table {table_id}: state unreadable ({exc!r})")
            continue
        report.tables_total += on_tables
        report.held_total += held
        report.house_total += house

    if report.credited - removed != report.held_everywhere:
        taken = f" - {removed} taken back out" if removed else ""
        report.problems.append(
            f"chips do not add up: {report.credited} credited from outside{taken}, but "
            f"accounts {report.accounts_total} + table balances {report.tables_total} + held "
            f"bets {report.held_total} + house {report.house_total} = "
            f"{report.held_everywhere} "
            f"(difference {report.held_everywhere - report.credited + removed:+d})"
        )

    cp = checkpoint if checkpoint is not None else Checkpoint()
    rows, places = await _ledger_after(client, keys, snap, cp, archive)
    _check_duplicates(report, places, several=len(snap.streams) > 1)
    report.checkpoint_entries = cp.entries
    cp.fold(rows)
    report.ledger_scanned = len(rows)
    report.ledger_complete = cp.entries == report.ledger_entries
    if not report.ledger_complete:
        if checkpoint is None:
            report.notes.append(
                f"the ledger stream holds {report.ledger_scanned} of {report.ledger_entries} "
                "entries ever appended (trimmed): duplicates older than its first entry and "
                "the replay checks are out of reach"
            )
        else:
            report.problems.append(
                f"{report.ledger_entries} ledger entries were appended, but the checkpoint "
                f"({checkpoint.entries}) and the entries after it ({len(rows)}) count "
                f"{cp.entries}: entries lost"
            )
        return report
    if checkpoint is not None and checkpoint.baseline_ms is not None:
        report.notes.append(
            "the replay starts from a checkpoint of Redis's own totals, taken when the "
            "archive began (the ledger before it had been trimmed)"
        )
    _check_replay(report, cp, balances, removed)
    return report


async def _ledger_after(
    client: redis.asyncio.Redis,
    keys: Keys,
    snap: Snapshot,
    cp: Checkpoint,
    archive: ArchivedLedger | None,
) -> tuple[list[LedgerRow], dict[str, set[tuple[str, StreamId]]]]:
    """The entries after ``cp`` up to the snapshot, each once, in each stream's order
    (Redis read first: whatever the archiver moves meanwhile is in the archive when it
    is read next), and where each of their keys appears (stream, id)."""
    through = {s: parse_id(last) for s, (last, _) in snap.streams.items() if last is not None}
    calls = ArchivingCalls(client, keys=keys)
    found: dict[tuple[str, StreamId], LedgerRow] = {}
    for stream, (last, _) in snap.streams.items():
        for row in await calls.entries_after(stream, cp.position(stream), last):
            found[row.stream, row.entry_id] = row
    view = AuditView([], [], [])
    if archive is not None:
        view = await archive.audit_view(cp.positions, through, {r.key for r in found.values()})
    for row in view.rows:
        found.setdefault((row.stream, row.entry_id), row)
    rows = [found[k] for k in sorted(found)]
    places: dict[str, set[tuple[str, StreamId]]] = defaultdict(set)
    for row in rows:
        places[row.key].add((row.stream, row.entry_id))
    for key, stream, entry_id in view.same_keys:
        if key in places:
            places[key].add((stream, entry_id))
    for key, stream, entry_id in view.duplicates:
        places[key].add((stream, entry_id))
    return rows, places


def _check_duplicates(
    report: AuditReport, places: Mapping[str, set[tuple[str, StreamId]]], *, several: bool
) -> None:
    def named(stream: str, entry_id: StreamId) -> str:
        return f"{stream}:{format_id(entry_id)}" if several else format_id(entry_id)

    report.duplicates = {
        key: [named(*p) for p in sorted(found)]
        for key, found in sorted(places.items())
        if len(found) > 1
    }
    if report.duplicates:
        listed = [f"{k} ({', '.join(ids)})" for k, ids in report.duplicates.items()]
        report.problems.append(
            f"{len(report.duplicates)} ledger keys applied more than once: {_listed(listed)}"
        )


def _check_replay(
    report: AuditReport, cp: Checkpoint, balances: Mapping[str, int], removed: int
) -> None:
    """Compare the checkpoint with the replay folded in to what the store holds."""
    if cp.credited != report.credited:
        report.problems.append(
            f"the ledger's credits sum to {cp.credited}, the credited total is {report.credited}"
        )
    if cp.removed != removed:
        report.problems.append(
            f"the ledger takes {cp.removed} chips back out, the total taken out is {removed}"
        )
    wrong = [
        f"{p}: balance {balances.get(p, 0)}, ledger says {cp.balances[p]}"
        for p in sorted(set(balances) | {p for p, b in cp.balances.items() if b})
        if balances.get(p, 0) != cp.balances[p]
    ]
    if wrong:
        report.problems.append(f"account balances differ from the ledger: {_listed(wrong)}")
    for pot, stored in (
        (Pot.TABLE, report.tables_total),
        (Pot.HELD, report.held_total),
        (Pot.HOUSE, report.house_total),
    ):
        if cp.pots[pot.value] != stored:
            report.problems.append(
                f"{pot.value} total is {stored} in the table states, the ledger says "
                f"{cp.pots[pot.value]}"
            )
