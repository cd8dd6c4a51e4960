"""Client requests recorded by the commits that applied them: a repeat changes nothing,
and a rid is one request across tables."""

from __future__ import annotations

import pytest
import redis.asyncio

from server.store.chips.records import ClientRequest, RequestRecord
from server.store.keys import REQUEST_TTL_MS, Keys
from server.store.players.accounts import AccountStore
from server.store.tables.commit_args import CommitStatus
from server.store.tables.store import TableStore
from tests.server.store.helpers import T, buy_in, cash_out, lease, ledger_len, next_commit


@pytest.mark.asyncio
async def test_a_recorded_request_is_refused_and_changes_nothing(
    store: TableStore, accounts: AccountStore, redis_client: redis.asyncio.Redis
) -> None:
    await accounts.credit("ann", 1000, "c-ann")
    token = await lease(store)
    rebuy = ClientRequest("ann", "r1", b"rebuy 300", b"memo-1")
    first = await next_commit(
        store,
        token,
        state={"h": b"s1"},
        entries=[buy_in("t1:v1:ann:rebuy", "ann", 300)],
        events=[(1, b"e1")],
        request=rebuy,
    )
    assert first.status is CommitStatus.OK
    assert first.accounts == {"ann": 700}
    record = await store.requests.record(T, "ann", "r1")
    assert record == RequestRecord(b"rebuy 300", b"memo-1", 700, T, 1)
    assert 0 < await redis_client.pttl(Keys().table_request(T, "ann", "r1")) <= REQUEST_TTL_MS
    await accounts.credit("ann", 50, "c-ann-2")  # the record keeps the balance of then
    ledger = await ledger_len(redis_client)

    # The same player and rid again, in the table's next change: new entry keys (one
    # the account could not even afford), events and a log. Nothing of it is written.
    again = await next_commit(
        store,
        token,
        after=1,
        state={"h": b"s2"},
        entries=[buy_in("t1:v2:ann:rebuy", "ann", 800)],
        events=[(2, b"e2")],
        logs=[("ann", b"log")],
        request=ClientRequest("ann", "r1", b"rebuy 800", b"memo-2"),
    )
    assert again.status is CommitStatus.REPEATED
    assert again.request == record
    assert not again.ok
    assert not again.stale
    stored = await store.load(T)
    assert stored is not None
    assert (stored.version, stored.parts, stored.last_seq) == (1, {"h": b"s1"}, 1)
    assert await accounts.balance("ann") == 750
    assert await ledger_len(redis_client) == ledger
    assert await store.replay.events_since(T, 1) == []
    assert (await store.history.page("ann")).items == []
    assert await store.requests.record(T, "ann", "r1") == record

    # The same rid of another player, and another rid of the same player, are new.
    await accounts.credit("bob", 100, "c-bob")
    bob = await next_commit(
        store,
        token,
        after=1,
        state={"h": b"s2"},
        entries=[buy_in("t1:v2:bob:rebuy", "bob", 100)],
        request=ClientRequest("bob", "r1", b"rebuy 100"),
    )
    assert bob.status is CommitStatus.OK
    assert bob.accounts == {"bob": 0}
    ann = await next_commit(
        store,
        token,
        after=2,
        state={"h": b"s3"},
        entries=[cash_out("t1:v3:ann:cash_out", "ann", 20)],
        request=ClientRequest("ann", "r2", b"cash_out 20"),
    )
    assert ann.status is CommitStatus.OK
    assert ann.accounts == {"ann": 770}


@pytest.mark.asyncio
async def test_a_refused_commit_records_no_request(
    store: TableStore, accounts: AccountStore
) -> None:
    await accounts.credit("ann", 100, "c-ann")
    token = await lease(store)
    request = ClientRequest("ann", "r1", b"join 200", b"")

    async def attempt(amount: int, expected: int = 0) -> CommitStatus:
        result = await next_commit(
            store,
            token,
            after=expected,
            entries=[buy_in(f"k{amount}", "ann", amount)],
            request=request,
        )
        return result.status

    assert await attempt(200) is CommitStatus.INSUFFICIENT
    assert await attempt(50, expected=3) is CommitStatus.STALE_VERSION
    assert await store.requests.record(T, "ann", "r1") is None
    assert await attempt(50) is CommitStatus.OK  # so the request may still apply
    assert await accounts.balance("ann") == 50
    record = await store.requests.record(T, "ann", "r1")
    assert record is not None
    assert (record.account, record.memo, record.version) == (50, b"", 1)


@pytest.mark.asyncio
async def test_a_request_without_money_still_reports_the_requesters_balance(
    store: TableStore, accounts: AccountStore
) -> None:
    """A leave during a round moves nothing yet; its reply still states the account."""
    await accounts.credit("ann", 40, "c-ann")
    token = await lease(store)
    result = await next_commit(store, token, request=ClientRequest("ann", "leave-1", b"leave"))
    assert result.status is CommitStatus.OK
    assert result.accounts == {"ann": 40}
    with pytest.raises(ValueError, match="fingerprint"):
        await next_commit(
            store, token, after=1, state={"h": b"t"}, request=ClientRequest("ann", "x", b"")
        )


@pytest.mark.asyncio
async def test_a_rid_is_claimed_once_across_tables(
    store: TableStore, accounts: AccountStore
) -> None:
    """The record is the table's, the claim the player's: the same rid with other
    fields at another table is refused (REUSED), nothing written; with the same fields
    at the same table it is a repeat."""
    await accounts.credit("ann", 1000, "c-ann")
    token = await lease(store)
    other = await store.leases.acquire("t2", "n", 10_000)
    assert other is not None
    rebuy = ClientRequest("ann", "s:7", b"rebuy t1 100", b"m")
    first = await next_commit(
        store, token, entries=[buy_in("t1:v1:ann:rebuy", "ann", 100)], request=rebuy
    )
    assert first.status is CommitStatus.OK
    elsewhere = await next_commit(
        store,
        other,
        table="t2",
        entries=[buy_in("t2:v1:ann:rebuy", "ann", 100)],
        request=ClientRequest("ann", "s:7", b"rebuy t2 100", b"m"),
    )
    assert elsewhere.status is CommitStatus.REUSED
    assert await store.load("t2") is None
    assert await accounts.balance("ann") == 900
    assert await store.transfers.claimed("ann", "s:7") == (b"rebuy t1 100", T)
    again = await next_commit(
        store, token, after=1, entries=[buy_in("t1:v2:ann:rebuy", "ann", 100)], request=rebuy
    )
    assert again.status is CommitStatus.REPEATED
    assert again.request == RequestRecord(b"rebuy t1 100", b"m", 900, T, 1)
    assert await accounts.balance("ann") == 900


@pytest.mark.asyncio
async def test_a_repeat_of_a_cash_out_tells_the_balance_its_payout_left(
    store: TableStore, accounts: AccountStore
) -> None:
    """A cash-out's balance is known to the account only: the record names the
    transfer that paid it, and the account's marker keeps the balance it left."""
    await accounts.credit("ann", 100, "c-ann")
    token = await lease(store)
    out = ClientRequest("ann", "s:1", b"cash_out 30")
    first = await next_commit(
        store, token, entries=[cash_out("t1:v1:ann:cash_out", "ann", 30)], request=out
    )
    assert first.accounts == {"ann": 130}
    await accounts.credit("ann", 5, "c-ann-2")
    record = await store.requests.record(T, "ann", "s:1")
    assert record is not None
    assert record.account is None
    assert await store.transfers.paid_balance(T, "ann", record.payout) == 130
    again = await next_commit(store, token, after=1, entries=[], request=out)
    assert again.status is CommitStatus.REPEATED
    assert again.request == record
