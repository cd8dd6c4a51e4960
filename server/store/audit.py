"""The audit: do the chips add up, and was no ledger entry applied twice?

Checks, on one consistent snapshot of the store (taken in a transaction, so the
audit may run beside live tables):

1. *Conservation*: chips credited from outside == account balances + table balances
   + held bets + the house's result.
2. No account is negative.
3. No ledger key appears twice in the ledger stream.
4. When the ledger stream was never trimmed (it holds every entry ever appended),
   replaying it gives each account's balance and the table, held and house totals,
   and its credits sum to the credited total.

The table state format belongs to the state machine, so the caller passes
``table_money(stored_table) -> (table_balances, held, house)``.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field

import redis.asyncio
from redis.exceptions import WatchError

from server.store.accounts import CREDIT_KIND, OUTSIDE
from server.store.keys import DEFAULT_KEYS, Keys
from server.store.replies import as_int, as_str, stream_entries
from server.store.tables import StoredTable, require_bytes_client, stored_table
from server.table.ledger import Pot

TableMoney = Callable[[StoredTable], tuple[int, int, int]]
"""From a stored table: (table balances total, held bets total, house result)."""

_PAGE = 5000
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
    ledger_scanned: int = 0  # found in the stream
    ledger_complete: bool = False
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


async def audit(
    client: redis.asyncio.Redis, table_money: TableMoney, *, keys: Keys = DEFAULT_KEYS
) -> AuditReport:
    """Audit the store behind ``client`` (see the module docstring)."""
    require_bytes_client(client)
    report = AuditReport()
    players, table_ids, balances, states, money, last = await _snapshot(client, keys)
    report.accounts = len(players)
    report.tables = len(table_ids)
    report.credited = money.get("in", 0)
    report.ledger_entries = money.get("entries", 0)

    negative = [f"{p} ({b})" for p, b in zip(players, balances, strict=True) if b < 0]
    if negative:
        report.problems.append(f"negative accounts: {_listed(negative)}")
    report.accounts_total = sum(balances)
    for table_id, state in zip(table_ids, states, strict=True):
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

    if report.credited != report.held_everywhere:
        report.problems.append(
            f"chips do not add up: {report.credited} credited from outside, but accounts "
            f"{report.accounts_total} + table balances {report.tables_total} + held bets "
            f"{report.held_total} + house {report.house_total} = {report.held_everywhere} "
            f"(difference {report.held_everywhere - report.credited:+d})"
        )

    await _check_ledger(client, keys, last, report, dict(zip(players, balances, strict=True)))
    return report


async def _snapshot(
    client: redis.asyncio.Redis, keys: Keys
) -> tuple[list[str], list[str], list[int], list[StoredTable | None], dict[str, int], str | None]:
    """Accounts, tables, balances, states, money totals and the last ledger id, all
    as of one instant: every chip movement is one script, so a transaction sees
    none or all of it; WATCH retries if an account or table appears meanwhile.
    """
    async with client.pipeline(transaction=True) as pipe:
        while True:
            try:
                await pipe.watch(keys.accounts(), keys.tables())
                players = sorted(as_str(m) for m in await pipe.smembers(keys.accounts()))
                table_ids = sorted(as_str(m) for m in await pipe.smembers(keys.tables()))
                pipe.multi()  # type: ignore[no-untyped-call]
                for player in players:
                    pipe.hget(keys.account(player), "balance")
                for table_id in table_ids:
                    pipe.hgetall(keys.table_state(table_id))
                pipe.hgetall(keys.money())
                pipe.xrevrange(keys.ledger_stream(), max="+", min="-", count=1)
                replies = await pipe.execute()
                break
            except WatchError:
                continue
    n = len(players)
    balances = [as_int(b) for b in replies[:n]]
    states = [stored_table(fields) for fields in replies[n : n + len(table_ids)]]
    money = {as_str(k): as_int(v) for k, v in replies[-2].items()}
    newest = stream_entries(replies[-1])
    last = newest[0][0] if newest else None
    return players, table_ids, balances, states, money, last


async def _check_ledger(
    client: redis.asyncio.Redis,
    keys: Keys,
    last: str | None,
    report: AuditReport,
    balances: dict[str, int],
) -> None:
    """Scan the ledger stream up to ``last``: duplicates always, replay if complete."""
    seen: dict[str, list[str]] = defaultdict(list)
    replay_accounts: Counter[str] = Counter()
    pots: Counter[str] = Counter()
    credits_in = 0
    start = "-"
    while last is not None:
        page = stream_entries(
            await client.xrange(keys.ledger_stream(), min=start, max=last, count=_PAGE)
        )
        for entry_id, fields in page:
            report.ledger_scanned += 1
            key = fields["key"].decode()
            seen[key].append(entry_id)
            amount = int(fields["amount"])
            source = fields["source"].decode()
            dest = fields["dest"].decode()
            pots[source] -= amount
            pots[dest] += amount
            player = fields["player"].decode()
            if source == Pot.ACCOUNT:
                replay_accounts[player] -= amount
            if dest == Pot.ACCOUNT:
                replay_accounts[player] += amount
            if source == OUTSIDE and fields["kind"].decode() == CREDIT_KIND:
                credits_in += amount
        if len(page) < _PAGE:
            break
        start = "(" + page[-1][0]

    report.duplicates = {k: ids for k, ids in seen.items() if len(ids) > 1}
    if report.duplicates:
        listed = [f"{k} ({', '.join(ids)})" for k, ids in sorted(report.duplicates.items())]
        report.problems.append(
            f"{len(report.duplicates)} ledger keys applied more than once: {_listed(listed)}"
        )

    report.ledger_complete = report.ledger_scanned == report.ledger_entries
    if not report.ledger_complete:
        report.notes.append(
            f"the ledger stream holds {report.ledger_scanned} of {report.ledger_entries} "
            "entries ever appended (trimmed): duplicates older than its first entry and "
            "the replay checks are out of reach"
        )
        return
    if credits_in != report.credited:
        report.problems.append(
            f"the ledger's credits sum to {credits_in}, the credited total is {report.credited}"
        )
    wrong = [
        f"{p}: balance {balances.get(p, 0)}, ledger says {replay_accounts[p]}"
        for p in sorted(set(balances) | set(replay_accounts))
        if balances.get(p, 0) != replay_accounts[p]
    ]
    if wrong:
        report.problems.append(f"account balances differ from the ledger: {_listed(wrong)}")
    for pot, stored in (
        (Pot.TABLE, report.tables_total),
        (Pot.HELD, report.held_total),
        (Pot.HOUSE, report.house_total),
    ):
        if pots[pot.value] != stored:
            report.problems.append(
                f"{pot.value} total is {stored} in the table states, the ledger says "
                f"{pots[pot.value]}"
            )
