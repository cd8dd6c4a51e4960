"""The audit: do the chips add up, and was no ledger entry applied twice or lost?

Checks:

1. *Conservation*: chips credited from outside - chips taken back out (closed guest
   accounts) == account balances + table balances + held bets + the house's result +
   the jackpots' meters and the house's result through them
   (:mod:`server.store.audit.jackpots`) + chips in transit between an account and a
   table or a jackpot (a transfer one side has done and
   the other not yet, :mod:`server.store.chips.transfers`).
2. No account is negative; every transfer a table received was reserved by its
   account, and none the table refused was settled.
3. No ledger key appears twice in one ledger stream (among the entries after the
   stream's checkpoint, and between them and the archive; the archiver records those
   it finds before it).
4. *Replay*: for each table and account, its stream's checkpoint in the archive (the
   sum of its archived entries, :class:`~server.store.archiving.records.StreamCheckpoint`; zero
   without an archive) plus its entries after it, from the archive and from Redis,
   give the account's balance, credited and removed totals, or the table's balances,
   held bets and house result, and count every entry ever appended to the stream (so
   none was lost). A stream trimmed (by its length bound) with no checkpoint leaves its
   replay out of reach: a note.

Each table and each account is read as of one instant (one script in its slot), but
no reading spans them all: a Redis Cluster has none. So the audit reads everything,
then again, until two readings agree on every sign of a chip crossing between a table
and an account (the transfers' records, the accounts' ledger counts, the tables'
transfer counts): then nothing crossed between the two, and the first of them is as
good as one snapshot (docs/DESIGN.md, "Keys ready for Redis Cluster"). Play inside a
table (bets, settlement) moves no chip across, so the audit runs beside live tables;
a store where chips kept crossing in every reading is reported as such.

The table state format belongs to the state machine, so the caller passes
``table_money(stored_table) -> (table_balances, held, house)``; the archive, when there
is one, is passed as an :class:`ArchivedLedger` (:class:`server.archive.Archive`).
Its checkpoints are read before Redis: every entry they sum was appended before.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import redis.asyncio

from server.store.archiving.records import CREDITED, REMOVED
from server.store.audit.jackpots import (
    JackpotReading,
    check_jackpot_ledgers,
    count_jackpots,
    read_jackpots,
)
from server.store.audit.jackpots import sign as jackpots_sign
from server.store.audit.ledgers import ArchivedLedger, LedgerReading, check_ledgers
from server.store.audit.report import AuditReport, listed
from server.store.chips.ledgers import sources
from server.store.chips.records import Delivery, Incoming, read_delivery, read_incoming
from server.store.chips.transfers import OPEN, RECEIVED, VOID
from server.store.client.replies import as_int, as_str
from server.store.errors import require_bytes_client, store_call
from server.store.keys import DEFAULT_KEYS, Keys
from server.store.lua.accounts import ACCOUNT_SNAPSHOT
from server.store.lua.jackpot import JACKPOT_SNAPSHOT
from server.store.lua.tables import TABLE_SNAPSHOT
from server.store.tables.store import StoredTable, stored_table
from server.table.ledger import Pot

__all__ = ["PASSES", "ArchivedLedger", "AuditReport", "TableMoney", "audit"]

TableMoney = Callable[[StoredTable], tuple[int, int, int]]
"""From a stored table: (table balances total, held bets total, house result)."""

PASSES = 8
"""Readings of the whole store before the audit gives up waiting for two that agree."""


@dataclass(slots=True)
class _Table:
    state: StoredTable | None
    entries: int  # ``n``: appended to its ledger
    moved: int  # ``xn``: transfers its commits started or took
    last: str  # its ledger's last id
    incoming: dict[str, tuple[str, Incoming]]
    out: list[Delivery]


@dataclass(slots=True)
class _Account:
    balance: int
    credited: int
    entries: int
    removed: int
    last: str
    markers: dict[str, str]  # transfer id -> the account's marker ('' : none)


@dataclass(slots=True)
class _Reading:
    tables: dict[str, _Table]
    accounts: dict[str, _Account]
    jackpots: dict[str, JackpotReading]

    def sign(self) -> tuple[Any, ...]:
        """What changes whenever a chip crosses between a table and an account."""
        tables = tuple(
            (
                t,
                r.moved,
                tuple(sorted((i, s) for i, (s, _) in r.incoming.items())),
                tuple(sorted(d.transfer_id for d in r.out)),
            )
            for t, r in sorted(self.tables.items())
        )
        accounts = tuple((p, a.entries) for p, a in sorted(self.accounts.items()))
        return tables, accounts, jackpots_sign(self.jackpots)


@store_call
async def audit(
    client: redis.asyncio.Redis,
    table_money: TableMoney,
    *,
    keys: Keys = DEFAULT_KEYS,
    archive: ArchivedLedger | None = None,
) -> AuditReport:
    """Audit the store behind ``client``, and ``archive`` if given (see the module
    docstring); :class:`~server.store.errors.StoreUnavailable` if Redis failed."""
    require_bytes_client(client)
    report = AuditReport()
    # The checkpoints first: every entry they sum was appended before the readings.
    checkpoints = await archive.checkpoints() if archive is not None else {}
    jackpot_checkpoints = await archive.jackpot_checkpoints() if archive is not None else {}
    reading: _Reading | None = None
    for report.readings in range(1, PASSES + 1):
        table_ids, players = await sources(client, keys)
        again = await _read(client, keys, table_ids, players)
        if reading is not None and again.sign() == reading.sign():
            break
        reading = again
    else:
        report.problems.append(
            f"chips crossed between tables and accounts during each of {PASSES} readings: "
            "the sums below may mix two moments; run the audit again"
        )
    assert reading is not None
    legacy = as_int(await client.hget(keys.legacy_money(), "in"))
    _count(report, reading, table_money, legacy)
    await check_jackpot_ledgers(
        client, keys, reading.jackpots, report, checkpoints=jackpot_checkpoints, archive=archive
    )
    await check_ledgers(
        client,
        _ledger_readings(keys, reading, table_money),
        report,
        legacy=legacy,
        checkpoints=checkpoints,
        archive=archive,
    )
    return report


def _ledger_readings(keys: Keys, reading: _Reading, table_money: TableMoney) -> list[LedgerReading]:
    """Each table's and each account's ledger stream as of the reading, with the totals
    its replay must give."""
    out = []
    for table_id, r in sorted(reading.tables.items()):
        expected: dict[str, int] | None = None
        if r.state is not None:
            try:
                on_tables, held, house = table_money(r.state)
            except Exception:  # reported by _count already
                pass
            else:
                expected = {Pot.TABLE.value: on_tables, Pot.HELD.value: held}
                expected[Pot.HOUSE.value] = house
        name = keys.table_ledger(table_id)
        out.append(LedgerReading(name, table_id, True, r.entries, r.last, expected))
    for player, a in sorted(reading.accounts.items()):
        totals = {Pot.ACCOUNT.value: a.balance, CREDITED: a.credited, REMOVED: a.removed}
        name = keys.account_ledger(player)
        out.append(LedgerReading(name, player, False, a.entries, a.last, totals))
    return out


async def _read(
    client: redis.asyncio.Redis, keys: Keys, table_ids: list[str], players: list[str]
) -> _Reading:
    """Every table, then every account with its markers of the tables' transfers."""
    # Loaded first (on every primary of a cluster): a pipeline does not load them.
    snapshot_table = await client.script_load(TABLE_SNAPSHOT)
    snapshot_account = await client.script_load(ACCOUNT_SNAPSHOT)
    async with client.pipeline(transaction=False) as pipe:
        for t in table_ids:
            table_keys = [
                keys.table_state(t),
                keys.transfers_in(t),
                keys.transfers_out(t),
                keys.table_ledger(t),
            ]
            pipe.execute_command("EVALSHA", snapshot_table, len(table_keys), *table_keys)
        raw_tables = await pipe.execute()
    tables = {t: _table(raw) for t, raw in zip(table_ids, raw_tables, strict=True)}
    jackpots = await read_jackpots(client, keys, await client.script_load(JACKPOT_SNAPSHOT))
    asked: dict[str, list[str]] = defaultdict(list)
    for jackpot in jackpots.values():
        for hit in jackpot.out:
            asked[hit.player].append(hit.transfer_id)
    for r in tables.values():
        for _, transfer in r.incoming.values():
            asked[transfer.player].append(transfer.transfer_id)
        for d in r.out:
            asked[d.player].append(d.transfer_id)
    everyone = sorted(set(players) | set(asked))
    async with client.pipeline(transaction=False) as pipe:
        for p in everyone:
            account_keys = [
                keys.account(p),
                keys.account_ledger(p),
                *(keys.account_transfer(p, x) for x in asked[p]),
            ]
            pipe.execute_command("EVALSHA", snapshot_account, len(account_keys), *account_keys)
        raw_accounts = await pipe.execute()
    accounts = {}
    for p, raw in zip(everyone, raw_accounts, strict=True):
        balance, credited, entries, removed, last, *marks = raw
        accounts[p] = _Account(
            as_int(balance),
            as_int(credited),
            as_int(entries),
            as_int(removed),
            as_str(last),
            {x: as_str(m) for x, m in zip(asked[p], marks, strict=True)},
        )
    return _Reading(tables, accounts, jackpots)


def _table(raw: Any) -> _Table:
    fields_raw, ins, outs, last = raw
    fields = dict(zip(fields_raw[::2], fields_raw[1::2], strict=True))
    named = {as_str(k): v for k, v in fields.items()}
    pairs = dict(zip(ins[::2], ins[1::2], strict=True))
    out_pairs = dict(zip(outs[::2], outs[1::2], strict=True))
    return _Table(
        state=stored_table(fields),
        entries=as_int(named.get("n")),
        moved=as_int(named.get("xn")),
        last=as_str(last),
        incoming={as_str(i): read_incoming(as_str(i), v) for i, v in pairs.items()},
        out=[read_delivery(as_str(i), v) for i, v in out_pairs.items()],
    )


def _count(report: AuditReport, reading: _Reading, table_money: TableMoney, legacy: int) -> None:
    """Checks 1 and 2."""
    accounts = reading.accounts
    report.accounts = len(accounts)
    report.tables = sum(r.state is not None for r in reading.tables.values())
    report.credited = legacy + sum(a.credited for a in accounts.values())
    report.removed = sum(a.removed for a in accounts.values())
    report.accounts_total = sum(a.balance for a in accounts.values())
    negative = [f"{p} ({a.balance})" for p, a in sorted(accounts.items()) if a.balance < 0]
    if negative:
        report.problems.append(f"negative accounts: {listed(negative)}")
    odd: list[str] = []
    for table_id, r in sorted(reading.tables.items()):
        if r.state is not None:
            try:
                on_tables, held, house = table_money(r.state)
            except Exception as exc:  # any decoding failure is a finding, not a crash
                report.problems.append(f"table {table_id}: state unreadable ({exc!r})")
            else:
                report.tables_total += on_tables
                report.held_total += held
                report.house_total += house
        for d in r.out:
            if not accounts[d.player].markers[d.transfer_id].startswith("applied:"):
                report.to_accounts += d.amount
        for xid, (state, t) in r.incoming.items():
            marker = accounts[t.player].markers[xid]
            reserved = marker.startswith("reserved:")
            if state in (OPEN, VOID) and reserved:
                report.to_tables += t.amount
            elif state == RECEIVED and not (reserved or marker == "settled"):
                odd.append(f"{table_id} received {xid} of {t.player}, account says {marker!r}")
            elif state in (OPEN, VOID) and marker == "settled":
                odd.append(f"{table_id} holds {xid} of {t.player} {state}, account settled it")
    if odd:
        report.problems.append(f"transfers the two sides disagree on: {listed(odd)}")
    count_jackpots(report, reading.jackpots, {p: a.markers for p, a in accounts.items()})
    if report.credited - report.removed != report.held_everywhere:
        taken = f" - {report.removed} taken back out" if report.removed else ""
        report.problems.append(
            f"chips do not add up: {report.credited} credited from outside{taken}, but "
            f"accounts {report.accounts_total} + table balances {report.tables_total} + held "
            f"bets {report.held_total} + house {report.house_total} + "
            f"{_jackpots_text(report)}in transit "
            f"{report.in_transit} = {report.held_everywhere} "
            f"(difference {report.held_everywhere - report.credited + report.removed:+d})"
        )


def _jackpots_text(report: AuditReport) -> str:
    if not report.jackpots:
        return ""
    return f"meters {report.meters_total} + house through jackpots {report.jackpot_house_total} + "
