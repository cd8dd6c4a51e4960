"""The audit passes on a consistent store and explains what is wrong on a broken one."""

from __future__ import annotations

import pytest
import pytest_asyncio
import redis.asyncio

from server.store.audit.check import audit
from server.store.keys import TABLE_PART_PREFIX
from server.store.players.accounts import AccountStore
from server.store.tables.commit_args import Write
from server.store.tables.store import StoredTable, TableStore
from server.table.ledger import Kind, LedgerEntry, Pot

# The tests' own table state: each money total a part, in decimal (the real format
# is the state machine's; the audit only sees it through ``table_money``). A commit
# writes the totals that changed, so the audit reads the sum of several commits.


def state(**totals: int) -> dict[str, bytes]:
    return {name: b"%d" % total for name, total in totals.items()}


def table_money(stored: StoredTable) -> tuple[int, int, int]:
    parts = stored.parts
    return int(parts["table"]), int(parts["held"]), int(parts["house"])


def e(key: str, kind: Kind, player: str, amount: int, source: Pot, dest: Pot) -> LedgerEntry:
    return LedgerEntry(key, kind, player, amount, source, dest)


@pytest_asyncio.fixture
async def played(redis_client: redis.asyncio.Redis) -> TableStore:
    """Two players credited, bought in, one round played and settled."""
    accounts = AccountStore(redis_client)
    tables = TableStore(redis_client)
    await accounts.credit("ann", 1000, "op:ann")
    await accounts.ensure_guest("bob", 500)
    token = await tables.leases.acquire("t1", "node", 10_000)
    assert token is not None
    steps = [
        (
            state(table=500, held=0, house=0),
            [
                e("t1:ann:buyin:1", Kind.BUY_IN, "ann", 300, Pot.ACCOUNT, Pot.TABLE),
                e("t1:bob:buyin:1", Kind.BUY_IN, "bob", 200, Pot.ACCOUNT, Pot.TABLE),
            ],
        ),
        (
            state(table=400, held=100),
            [
                e("t1:r1:ann:bet", Kind.BET, "ann", 50, Pot.TABLE, Pot.HELD),
                e("t1:r1:bob:bet", Kind.BET, "bob", 50, Pot.TABLE, Pot.HELD),
            ],
        ),
        (
            state(table=498, held=0, house=2),
            [
                e("t1:r1:ann:ret", Kind.BET_RETURNED, "ann", 50, Pot.HELD, Pot.TABLE),
                e("t1:r1:ann:win", Kind.WIN, "ann", 50, Pot.HOUSE, Pot.TABLE),
                e("t1:r1:ann:com", Kind.COMMISSION, "ann", 2, Pot.TABLE, Pot.HOUSE),
                e("t1:r1:bob:lost", Kind.BET_LOST, "bob", 50, Pot.HELD, Pot.HOUSE),
            ],
        ),
    ]
    for version, (parts, entries) in enumerate(steps, start=1):
        result = await tables.commits.write(
            Write(
                "t1",
                token=token,
                expected_version=version - 1,
                new_version=version,
                parts=parts,
                entries=entries,
            )
        )
        assert result.ok
    return tables


@pytest.mark.asyncio
async def test_consistent_store_passes(played: TableStore) -> None:
    report = await audit(played.redis, table_money)
    assert report.ok, report.explain()
    assert report.credited == 1500
    assert (report.accounts_total, report.tables_total, report.house_total) == (1000, 498, 2)
    assert report.ledger_complete
    # Each account's credit and buy-in (its half), the table's eight entries.
    assert report.ledger_scanned == 12
    assert report.in_transit == 0
    assert report.explain().endswith("audit passed")


@pytest.mark.asyncio
async def test_empty_store_passes(redis_client: redis.asyncio.Redis) -> None:
    assert (await audit(redis_client, table_money)).ok


@pytest.mark.asyncio
async def test_chips_that_do_not_add_up(played: TableStore) -> None:
    # A table state that lost 10 chips (a bug in the state machine, say).
    await played.redis.hset(played.keys.table_state("t1"), TABLE_PART_PREFIX + "table", b"488")
    report = await audit(played.redis, table_money)
    assert not report.ok
    text = report.explain()
    assert "chips do not add up: 1500 credited" in text
    assert "difference -10" in text
    assert "table total is 488 in the table states, the ledger says 498" in text
    assert text.endswith("audit FAILED (2 problems)")


@pytest.mark.asyncio
async def test_settlement_applied_twice(played: TableStore) -> None:
    # Simulate a double payout written around the store's idempotency.
    r, k = played.redis, played.keys
    await r.xadd(
        k.table_ledger("t1"),
        {
            "key": "t1:r1:ann:win",
            "kind": "win",
            "player": "ann",
            "amount": 50,
            "source": "house",
            "dest": "table",
            "table": "t1",
        },
    )
    await r.hincrby(k.table_state("t1"), "n", 1)
    report = await audit(r, table_money)
    assert not report.ok
    assert list(report.duplicates) == ["t1:r1:ann:win"]
    assert "1 ledger keys applied more than once: t1:r1:ann:win (" in report.explain()


@pytest.mark.asyncio
async def test_account_that_differs_from_the_ledger(played: TableStore) -> None:
    await played.redis.hincrby(played.keys.account("bob"), "balance", -400)
    await played.redis.hincrby(played.keys.account("ann"), "balance", 400)
    report = await audit(played.redis, table_money)
    text = report.explain()
    assert not report.ok
    assert "chips do not add up" not in text  # the sum is right, the split is not
    assert "bob: balance -100, ledger says 300" in text
    assert "negative accounts: bob (-100)" in text


@pytest.mark.asyncio
async def test_trimmed_ledger_is_noted(played: TableStore) -> None:
    await played.redis.xtrim(played.keys.table_ledger("t1"), maxlen=3, approximate=False)
    report = await audit(played.redis, table_money)
    assert report.ok, report.explain()
    assert not report.ledger_complete
    assert "hold 7 of 12 entries" in report.explain()


@pytest.mark.asyncio
async def test_unreadable_state(played: TableStore) -> None:
    await played.redis.hset(played.keys.table_state("t1"), TABLE_PART_PREFIX + "held", b"\xff")
    report = await audit(played.redis, table_money)
    assert not report.ok
    assert "table t1: state unreadable" in report.explain()


@pytest.mark.asyncio
async def test_a_transfer_the_two_sides_disagree_on(played: TableStore) -> None:
    """A buy-in the table took but its account never reserved (its marker gone, as a
    store writing around the transfers would leave it): chips made from nothing."""
    token = await played.leases.holder("t1")
    assert token is not None
    result = await played.commits.write(
        Write(
            "t1",
            token=token[0],
            expected_version=3,
            new_version=4,
            parts=state(table=598),
            entries=[e("t1:ann:rebuy:1", Kind.REBUY, "ann", 100, Pot.ACCOUNT, Pot.TABLE)],
        )
    )
    assert result.ok
    await played.drain()  # settled and forgotten beside the commit
    report = await audit(played.redis, table_money)
    assert report.ok, report.explain()
    # A transfer the table says it received, of which the account knows nothing, with
    # the chips on the account all the same.
    key = played.keys.transfers_in("t1")
    await played.redis.hset(key, "x1", "received:ann:100:0:rebuy")
    await played.redis.hincrby(played.keys.account("ann"), "balance", 100)
    report = await audit(played.redis, table_money)
    assert not report.ok
    text = report.explain()
    assert "transfers the two sides disagree on: t1 received x1 of ann, account says ''" in text
