"""The commit's chips against a real Redis (or Redis Cluster): the balances it leaves,
refusals for want of chips, racing tables, player names, and its ledger entries."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable

import pytest
import redis.asyncio

from server.store.archiving.records import LedgerRow, ledger_players
from server.store.client.replies import stream_entries
from server.store.players.accounts import AccountStore
from server.store.tables.commit_args import CommitStatus
from server.store.tables.store import TableStore
from tests.server.store.helpers import T, bet, buy_in, cash_out, lease, ledger_len, next_commit


@pytest.mark.asyncio
async def test_a_commit_returns_the_balances_it_leaves(
    store: TableStore, accounts: AccountStore
) -> None:
    """The balances come from inside the commit, so a reply built from them is never
    stale: a credit that lands before a retry shows in the DUPLICATE's balances."""
    await accounts.credit("ann", 1000, "c-ann")
    await accounts.credit("bob", 50, "c-bob")
    token = await lease(store)
    entries = [buy_in("k1", "ann", 300), cash_out("k2", "bob", 20), bet("k3", "cid", 5)]
    first = await next_commit(store, token, state={"h": b"s1"}, entries=entries, commit_id="c1")
    assert first.status is CommitStatus.OK
    assert first.accounts == {"ann": 700, "bob": 70}  # cid's bet touches no account
    await accounts.credit("ann", 5, "c-ann-2")
    again = await next_commit(store, token, state={"h": b"s1"}, entries=entries, commit_id="c1")
    assert again.status is CommitStatus.DUPLICATE
    assert again.accounts == {"ann": 705, "bob": 70}
    # An entry already applied moves nothing, but its account's balance is still told.
    later = await next_commit(store, token, after=1, state={"h": b"s2"}, entries=entries[:1])
    assert (later.applied, later.skipped) == (0, 1)
    assert later.accounts == {"ann": 705}
    assert await accounts.balance("ann") == 705


@pytest.mark.asyncio
async def test_insufficient_balance_writes_nothing(
    store: TableStore, accounts: AccountStore, redis_client: redis.asyncio.Redis
) -> None:
    await accounts.credit("ann", 100, "c-ann")
    await accounts.credit("bob", 100, "c-bob")
    token = await lease(store)
    alone = await next_commit(store, token, entries=[buy_in("b", "bob", 101)])
    assert alone.status is CommitStatus.INSUFFICIENT
    assert (alone.player, alone.balance, alone.needed) == ("bob", 100, 101)
    assert await ledger_len(redis_client) == 2  # the two credits only
    result = await next_commit(
        store,
        token,
        entries=[buy_in("a", "ann", 60), buy_in("b", "bob", 101)],
        events=[(1, b"e1")],
        logs=[("ann", b"log")],
    )
    assert result.status is CommitStatus.INSUFFICIENT
    assert (result.player, result.balance, result.needed) == ("bob", 100, 101)
    assert await store.load(T) is None
    assert await accounts.balance("ann") == 100
    # Each account reserves its chips on its own: ann's, reserved before bob's was
    # refused, went back (the reservation and its refund are in her ledger).
    assert await redis_client.xlen(store.keys.table_ledger(T)) == 0
    assert await redis_client.xlen(store.keys.account_ledger("ann")) == 3
    assert await store.replay.events_since(T, 0) == []
    assert (await store.history.page("ann")).items == []
    assert not await store.transfers.pending(T)
    # Nothing was marked applied: the same keys go through once affordable.
    ok = await next_commit(store, token, entries=[buy_in("a", "ann", 60), buy_in("b", "bob", 100)])
    assert ok.applied == 2
    assert ok.accounts == {"ann": 40, "bob": 0}


@pytest.mark.asyncio
async def test_each_account_pays_on_its_own_and_a_cash_out_creates_the_account(
    store: TableStore, accounts: AccountStore
) -> None:
    """Chips from an account are reserved before the commit, chips to it delivered
    after: a commit paying an account does not fund that account's buy-in."""
    await accounts.credit("ann", 10, "c1")
    token = await lease(store)
    both = [cash_out("x", "ann", 50), buy_in("y", "ann", 60), cash_out("z", "cid", 7)]
    refused = await next_commit(store, token, entries=both)
    assert refused.status is CommitStatus.INSUFFICIENT
    assert (refused.player, refused.balance, refused.needed) == ("ann", 10, 60)
    result = await next_commit(store, token, entries=[cash_out("x", "ann", 50), both[2]])
    assert result.status is CommitStatus.OK
    assert result.accounts == {"ann": 60, "cid": 7}
    assert await accounts.balance("ann") == 60
    assert await accounts.balance("cid") == 7
    assert ("cid", 7) in await accounts.list_accounts()


@pytest.mark.asyncio
async def test_racing_commits_for_the_same_chips(
    new_client: Callable[[], redis.asyncio.Redis], accounts: AccountStore
) -> None:
    """Two tables (two owners, two connections) buy in with the same account at once."""
    await accounts.credit("ann", 100, "c1")
    clients = [new_client(), new_client()]
    try:
        stores = [TableStore(c) for c in clients]
        tokens = [await s.leases.acquire(f"t{i}", f"n{i}", 10_000) for i, s in enumerate(stores)]

        async def buy(i: int) -> CommitStatus:
            token = tokens[i]
            assert token is not None
            entries = [buy_in(f"t{i}:buyin", "ann", 70)]
            result = await next_commit(stores[i], token, table=f"t{i}", entries=entries)
            return result.status

        for _ in range(20):
            outcomes = await asyncio.gather(buy(0), buy(1))
            assert sorted(o.value for o in outcomes) == ["insufficient", "ok"]
            assert await accounts.balance("ann") == 30
            # Reset for the next round of the race.
            for i, s in enumerate(stores):
                await s.drain()
                await s.redis.delete(s.keys.table_state(f"t{i}"))
                await s.redis.delete(s.keys.applied(f"t{i}", 0))
            await s.redis.hset(s.keys.account("ann"), "balance", 100)
    finally:
        for c in clients:
            await c.aclose()


@pytest.mark.asyncio
async def test_player_names_are_checked_before_they_become_keys(store: TableStore) -> None:
    token = await lease(store)
    with pytest.raises(ValueError, match="player name"):
        await next_commit(store, token, entries=[buy_in("k", "x:y", 1)])
    with pytest.raises(ValueError, match="player name"):
        await next_commit(store, token, logs=[("{bad}", b"r")])
    assert await store.load(T) is None


@pytest.mark.asyncio
async def test_a_commits_ledger_entries_are_packed_and_read_as_named_ones(
    store: TableStore, accounts: AccountStore, redis_client: redis.asyncio.Redis
) -> None:
    """A commit writes each ledger entry as one msgpack field; it reads back as the
    same row as an entry of named fields (as earlier versions wrote) would."""
    await accounts.credit("ann", 1000, "c1")
    token = await lease(store)
    entries = [buy_in("t1:r0:ann:buyin", "ann", 300), bet("t1:r1:ann:bet", "ann", 50)]
    assert (await next_commit(store, token, entries=entries)).ok
    stream = store.keys.table_ledger(T)
    written = stream_entries(await redis_client.xrange(stream))
    assert [set(fields) for _, fields in written] == [{"m"}, {"m"}]
    rows = [LedgerRow.from_fields(stream, i, f) for i, f in written]
    assert [(r.key, r.kind, r.player, r.amount, r.source, r.dest, r.table_id) for r in rows] == [
        ("t1:r0:ann:buyin", "buy_in", "ann", 300, "account", "table", T),
        ("t1:r1:ann:bet", "bet", "ann", 50, "table", "held", T),
    ]
    xfer = json.loads(rows[0].extra)["xfer"]
    assert xfer.startswith(f"{T}.1.0.{token}.")
    assert rows[1].extra == ""
    # The same entry written with named fields reads as the same row.
    named = {
        "key": "t1:r0:ann:buyin", "kind": "buy_in", "player": "ann", "amount": "300",
        "source": "account", "dest": "table", "table": T, "xfer": xfer,
    }  # fmt: skip
    as_named = LedgerRow.from_fields(
        stream, written[0][0], {k: v.encode() for k, v in named.items()}
    )
    assert as_named == rows[0]
    # What the archive notes of them, read without rows, is what the rows say, whichever
    # way an entry was written (named fields, or without a player: the house's).
    await redis_client.xadd(stream, {k: v.encode() for k, v in {**named, "player": "bob"}.items()})
    await redis_client.xadd(stream, {"key": b"t1:r2:house", "kind": b"fee", "amount": b"1"})
    reply = await redis_client.xrange(stream)
    every = [LedgerRow.from_fields(stream, i, f) for i, f in stream_entries(reply)]
    assert ledger_players(reply) == ({r.player for r in every}, every[-1].entry_id, 4)
    assert ledger_players(reply) == ({"ann", "bob", ""}, every[-1].entry_id, 4)
    assert ledger_players(await redis_client.xrange(stream, count=1)) == (
        {"ann"},
        every[0].entry_id,
        1,
    )
    assert ledger_players([]) == (set(), None, 0)
