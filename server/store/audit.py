"""The audit: do the chips add up, and was no ledger entry applied twice?

Checks:

1. *Conservation*: chips credited from outside == account balances + table balances
   + held bets + the house's result + chips in transit between an account and a
   table (a transfer one side has done and the other not yet,
   :mod:`server.store.transfers`).
2. No account is negative; every transfer a table received was reserved by its
   account, and none the table refused was settled.
3. No ledger key appears twice in one ledger stream.
4. For each table and account whose ledger stream was never trimmed (it holds every
   entry ever appended), replaying it gives the account's balance and credited total,
   or the table's balances, held bets and house result.

Each table and each account is read as of one instant (one script in its slot), but
no reading spans them all: a Redis Cluster has none. So the audit reads everything,
then again, until two readings agree on every sign of a chip crossing between a table
and an account (the transfers' records, the accounts' ledger counts, the tables'
transfer counts): then nothing crossed between the two, and the first of them is as
good as one snapshot (docs/DESIGN.md, "Keys ready for Redis Cluster"). Play inside a
table (bets, settlement) moves no chip across, so the audit runs beside live tables;
a store where chips kept crossing in every reading is reported as such.

The table state format belongs to the state machine, so the caller passes
``table_money(stored_table) -> (table_balances, held, house)``.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import redis.asyncio

from server.store.account_scripts import ACCOUNT_SNAPSHOT
from server.store.accounts import CREDIT_KIND, OUTSIDE
from server.store.keys import DEFAULT_KEYS, Keys
from server.store.ledgers import read_ledger, sources
from server.store.replies import as_int, as_str
from server.store.scripts import TABLE_SNAPSHOT
from server.store.tables import StoredTable, require_bytes_client, stored_table
from server.store.transfers import (
    OPEN,
    RECEIVED,
    VOID,
    Delivery,
    Incoming,
    read_delivery,
    read_incoming,
)
from server.table.ledger import Pot

TableMoney = Callable[[StoredTable], tuple[int, int, int]]
"""From a stored table: (table balances total, held bets total, house result)."""

PASSES = 8
"""Readings of the whole store before the audit gives up waiting for two that agree."""

_SHOWN = 10  # problems of one kind listed before "and N more"


@dataclass(slots=True)
class AuditReport:
    """The audit's findings; ``ok`` when ``problems`` is empty."""

    credited: int = 0
    accounts_total: int = 0
    tables_total: int = 0
    held_total: int = 0
    house_total: int = 0
    to_accounts: int = 0  # in transit: paid out by tables, not yet in the accounts
    to_tables: int = 0  # in transit: reserved by accounts, not yet on the tables
    accounts: int = 0
    tables: int = 0
    ledger_entries: int = 0  # ever appended, over every stream
    ledger_scanned: int = 0  # found in the streams
    ledger_complete: bool = False
    readings: int = 0
    duplicates: dict[str, list[str]] = field(default_factory=dict)  # key -> stream ids
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Whether every check passed."""
        return not self.problems

    @property
    def in_transit(self) -> int:
        """Chips between an account and a table."""
        return self.to_accounts + self.to_tables

    @property
    def held_everywhere(self) -> int:
        """Accounts + table balances + held bets + house result + in transit."""
        return (
            self.accounts_total
            + self.tables_total
            + self.held_total
            + self.house_total
            + self.in_transit
        )

    def explain(self) -> str:
        """A human-readable report, the verdict last."""
        lines = [
            f"credited from outside: {self.credited}",
            f"accounts ({self.accounts}): {self.accounts_total}",
            f"table balances ({self.tables} tables): {self.tables_total}",
            f"held bets: {self.held_total}",
            f"house result: {self.house_total}",
            f"in transit: {self.in_transit} ({self.to_accounts} to accounts, "
            f"{self.to_tables} to tables)",
            f"sum: {self.held_everywhere}",
            f"ledger: {self.ledger_scanned} entries scanned of {self.ledger_entries} appended",
        ]
        lines += [f"note: {n}" for n in self.notes]
        lines += [f"PROBLEM: {p}" for p in self.problems]
        lines.append("audit passed" if self.ok else f"audit FAILED ({len(self.problems)} problems)")
        return "\n".join(lines)


def _listed(items: list[str]) -> str:
    more = len(items) - _SHOWN
    shown = ", ".join(items[:_SHOWN])
    return f"{shown} and {more} more" if more > 0 else shown


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
    last: str
    markers: dict[str, str]  # transfer id -> the account's marker ('' : none)


@dataclass(slots=True)
class _Reading:
    tables: dict[str, _Table]
    accounts: dict[str, _Account]

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
        return tables, accounts


async def audit(
    client: redis.asyncio.Redis, table_money: TableMoney, *, keys: Keys = DEFAULT_KEYS
) -> AuditReport:
    """Audit the store behind ``client`` (see the module docstring)."""
    require_bytes_client(client)
    report = AuditReport()
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
    await _check_ledgers(client, keys, reading, report, table_money, legacy)
    return report


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
    asked: dict[str, list[str]] = defaultdict(list)
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
        balance, credited, entries, last, *marks = raw
        accounts[p] = _Account(
            as_int(balance),
            as_int(credited),
            as_int(entries),
            as_str(last),
            {x: as_str(m) for x, m in zip(asked[p], marks, strict=True)},
        )
    return _Reading(tables, accounts)


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
    report.accounts_total = sum(a.balance for a in accounts.values())
    negative = [f"{p} ({a.balance})" for p, a in sorted(accounts.items()) if a.balance < 0]
    if negative:
        report.problems.append(f"negative accounts: {_listed(negative)}")
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
        report.problems.append(f"transfers the two sides disagree on: {_listed(odd)}")
    if report.credited != report.held_everywhere:
        report.problems.append(
            f"chips do not add up: {report.credited} credited from outside, but accounts "
            f"{report.accounts_total} + table balances {report.tables_total} + held bets "
            f"{report.held_total} + house {report.house_total} + in transit "
            f"{report.in_transit} = {report.held_everywhere} "
            f"(difference {report.held_everywhere - report.credited:+d})"
        )


async def _check_ledgers(
    client: redis.asyncio.Redis,
    keys: Keys,
    reading: _Reading,
    report: AuditReport,
    table_money: TableMoney,
    legacy: int,
) -> None:
    """Checks 3 and 4, each stream up to its last entry of the reading."""
    complete = True
    wrong: list[str] = []
    duplicates: dict[str, list[str]] = {}
    for table_id, r in sorted(reading.tables.items()):
        pots, seen, scanned = await _scan(client, keys.table_ledger(table_id), r.last, report)
        duplicates |= {k: ids for k, ids in seen.items() if len(ids) > 1}
        report.ledger_entries += r.entries
        if scanned != r.entries:
            complete = False
        elif r.state is not None and not legacy:
            try:
                stored = table_money(r.state)
            except Exception:  # reported by _count already
                continue
            for pot, value in zip((Pot.TABLE, Pot.HELD, Pot.HOUSE), stored, strict=True):
                if pots[pot.value] != value:
                    wrong.append(
                        f"{pot.value} total is {value} in the table states, the ledger says "
                        f"{pots[pot.value]}"
                        if len(reading.tables) == 1
                        else f"table {table_id}: {pot.value} is {value}, its ledger says "
                        f"{pots[pot.value]}"
                    )
    for player, a in sorted(reading.accounts.items()):
        pots, seen, scanned = await _scan(client, keys.account_ledger(player), a.last, report)
        duplicates |= {k: ids for k, ids in seen.items() if len(ids) > 1}
        report.ledger_entries += a.entries
        if scanned != a.entries:
            complete = False
        elif not legacy:
            if pots[Pot.ACCOUNT.value] != a.balance:
                wrong.append(
                    f"{player}: balance {a.balance}, ledger says {pots[Pot.ACCOUNT.value]}"
                )
            if pots["credited"] != a.credited:
                wrong.append(f"{player}: credited {a.credited}, ledger says {pots['credited']}")
    report.duplicates = duplicates
    if duplicates:
        listed = [f"{k} ({', '.join(ids)})" for k, ids in sorted(duplicates.items())]
        report.problems.append(
            f"{len(duplicates)} ledger keys applied more than once: {_listed(listed)}"
        )
    if wrong:
        report.problems.append(f"balances differ from the ledgers: {_listed(wrong)}")
    report.ledger_complete = complete and not legacy
    if not complete:
        report.notes.append(
            f"the ledger streams hold {report.ledger_scanned} of {report.ledger_entries} "
            "entries ever appended (trimmed): duplicates older than a stream's first entry "
            "and the replay of a trimmed stream are out of reach"
        )
    if legacy:
        report.notes.append(
            f"{legacy} chips were credited before the ledgers were split by table and "
            "account, from a ledger already trimmed: the ledgers are not replayed"
        )


async def _scan(
    client: redis.asyncio.Redis, stream: str, last: str, report: AuditReport
) -> tuple[Counter[str], dict[str, list[str]], int]:
    """Replay ``stream`` up to ``last``: each pot's total (and ``credited``), the stream
    ids of each key, and how many entries were read."""
    pots: Counter[str] = Counter()
    seen: dict[str, list[str]] = defaultdict(list)
    scanned = 0
    if not last:
        return pots, seen, 0
    async for entry_id, fields in read_ledger(client, stream, end=last):
        scanned += 1
        seen[fields["key"].decode()].append(entry_id)
        amount = int(fields["amount"])
        source = fields["source"].decode()
        pots[source] -= amount
        pots[fields["dest"].decode()] += amount
        if source == OUTSIDE and fields["kind"].decode() == CREDIT_KIND:
            pots["credited"] += amount
    report.ledger_scanned += scanned
    return pots, seen, scanned
