"""Chips between an account and a table, crashed at each point between their steps.

A transfer crosses two slots in steps (server/store/chips/transfers.py). Each test runs the
real store against the real Redis (or Redis Cluster) and stops it dead at one point, as
a process killed there would (:class:`Crash` is not an ``Exception``: no handler of the
store runs after it). Then the audit passes at once, counting the chips in transit; a
new holder of the table takes it and recovers; the audit passes again with nothing in
transit, every balance is what exactly one application of the request gives, and the
client's retry of the same request moves nothing more (or applies it, if it never was).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable

import pytest
import pytest_asyncio
import redis.asyncio

from server.store.audit.check import AuditReport, audit
from server.store.chips.records import LOG, ClientRequest, Delivery
from server.store.players.accounts import AccountStore
from server.store.tables.commit_args import CommitResult, CommitStatus, Write
from server.store.tables.store import StoredTable, TableStore
from tests.conftest import evalsha_calls
from tests.server.store.helpers import Crash, CrashingStore, T, buy_in, cash_out

ACCOUNT = 1000


def parts(table: int, held: int = 0, house: int = 0) -> dict[str, bytes]:
    """A table state of these totals (the audit reads them through table_money)."""
    return {"table": b"%d" % table, "held": b"%d" % held, "house": b"%d" % house}


def table_money(stored: StoredTable) -> tuple[int, int, int]:
    p = stored.parts
    return int(p.get("table", b"0")), int(p.get("held", b"0")), int(p.get("house", b"0"))


async def checked(client: redis.asyncio.Redis) -> AuditReport:
    report = await audit(client, table_money)
    assert report.ok, report.explain()
    return report


@pytest_asyncio.fixture
async def stores(
    new_client: Callable[[], redis.asyncio.Redis], redis_client: redis.asyncio.Redis
) -> AsyncIterator[tuple[CrashingStore, TableStore]]:
    """The store that crashes, on its own connection, holding table ``T``; and the
    store of the process that takes the table over, on another."""
    clients = [new_client(), new_client()]
    crashing, taking = CrashingStore(clients[0]), TableStore(clients[1])
    await AccountStore(redis_client).credit("ann", ACCOUNT, "c-ann")
    assert await crashing.leases.acquire(T, "dies", 60_000) == 1
    try:
        yield crashing, taking
    finally:
        for s in (crashing, taking):
            await s.drain()
        for c in clients:
            await c.aclose()


async def take_over(store: TableStore) -> int:
    """The dead holder's lease runs out; the new holder takes the table."""
    await store.redis.delete(store.keys.table_lease(T))
    token = await store.leases.acquire(T, "takes", 60_000)
    assert token is not None
    return token


async def buy(store: TableStore, token: int, after: int, rid: str, amount: int) -> CommitResult:
    return await store.commits.write(
        Write(
            T,
            token=token,
            expected_version=after,
            new_version=after + 1,
            parts=parts(amount),
            entries=[buy_in(f"{T}:v{after + 1}:ann:buy_in", "ann", amount)],
            request=ClientRequest("ann", rid, b"join %d" % amount, b"seat 2"),
        )
    )


async def cash(store: TableStore, token: int, after: int, rid: str, amount: int) -> CommitResult:
    return await store.commits.write(
        Write(
            T,
            token=token,
            expected_version=after,
            new_version=after + 1,
            parts=parts(300 - amount),
            entries=[cash_out(f"{T}:v{after + 1}:ann:cash_out", "ann", amount)],
            request=ClientRequest("ann", rid, b"cash_out %d" % amount),
        )
    )


@pytest.mark.asyncio
@pytest.mark.parametrize("point", ["claim", "commit", "after", "settle", "forget"])
async def test_a_buy_in_crashed_at_each_step(
    stores: tuple[CrashingStore, TableStore], redis_client: redis.asyncio.Redis, point: str
) -> None:
    crashing, taking = stores
    accounts = AccountStore(redis_client)
    crashing.crash_at = point
    stored = point in ("after", "settle", "forget")  # the commit was made
    if point in ("settle", "forget"):  # steps run beside the caller, after the reply
        result = await buy(crashing, 1, 0, "s:1", 300)
        assert result.status is CommitStatus.OK
        assert result.accounts == {"ann": ACCOUNT - 300}
        await crashing.drain()  # where it dies
    else:
        with pytest.raises(Crash):
            await buy(crashing, 1, 0, "s:1", 300)
    before = await checked(redis_client)
    reserved = point != "claim"
    assert before.to_tables == (300 if reserved and not stored else 0)
    assert await accounts.balance("ann") == (ACCOUNT - 300 if reserved else ACCOUNT)

    token = await take_over(taking)
    done = await taking.transfers.recover(T)
    assert done.failed == 0
    assert done.refunded == (1 if not stored else 0)  # an open transfer, reserved or not
    assert done.settled == (1 if stored else 0)  # settled again: that changes nothing
    after = await checked(redis_client)
    assert after.in_transit == 0
    assert not await taking.transfers.pending(T)
    assert await accounts.balance("ann") == (ACCOUNT - 300 if stored else ACCOUNT)
    assert after.tables_total == (300 if stored else 0)

    # The client never heard back: it sends the join again, with its rid.
    version = 1 if stored else 0
    retry = await buy(taking, token, version, "s:1", 300)
    if stored:
        assert retry.status is CommitStatus.REPEATED
        assert retry.request is not None
        assert (retry.request.account, retry.request.memo) == (ACCOUNT - 300, b"seat 2")
    else:
        assert retry.status is CommitStatus.OK
        assert retry.accounts == {"ann": ACCOUNT - 300}
    await taking.drain()
    final = await checked(redis_client)
    assert (final.accounts_total, final.tables_total, final.in_transit) == (ACCOUNT - 300, 300, 0)
    assert final.ledger_complete


@pytest.mark.asyncio
@pytest.mark.parametrize("point", ["claim", "commit", "after", "deliver", "forget"])
async def test_a_cash_out_crashed_at_each_step(
    stores: tuple[CrashingStore, TableStore], redis_client: redis.asyncio.Redis, point: str
) -> None:
    crashing, taking = stores
    accounts = AccountStore(redis_client)
    assert (await buy(crashing, 1, 0, "s:1", 300)).ok
    await crashing.drain()
    crashing.crash_at = point
    if point == "forget":  # after the account is paid: beside the caller, after the reply
        assert (await cash(crashing, 1, 1, "s:2", 120)).accounts == {"ann": ACCOUNT - 180}
        await crashing.drain()
    else:
        with pytest.raises(Crash):
            await cash(crashing, 1, 1, "s:2", 120)
    stored = point in ("after", "deliver", "forget")
    paid = point == "forget"
    before = await checked(redis_client)
    assert before.to_accounts == (120 if stored and not paid else 0)
    assert before.tables_total == (180 if stored else 300)

    token = await take_over(taking)
    done = await taking.transfers.recover(T)
    assert (done.failed, done.delivered) == (0, 1 if stored else 0)
    after = await checked(redis_client)
    assert after.in_transit == 0
    assert not await taking.transfers.pending(T)
    assert await accounts.balance("ann") == ACCOUNT - 300 + (120 if stored else 0)

    retry = await cash(taking, token, 2 if stored else 1, "s:2", 120)
    if stored:
        assert retry.status is CommitStatus.REPEATED
        assert retry.request is not None
        assert retry.request.account is None  # known to the account: the payout's marker
        assert await taking.transfers.paid_balance(T, "ann", retry.request.payout) == ACCOUNT - 180
    else:
        assert retry.status is CommitStatus.OK
        assert retry.accounts == {"ann": ACCOUNT - 180}
    await taking.drain()
    final = await checked(redis_client)
    assert (final.accounts_total, final.tables_total, final.in_transit) == (ACCOUNT - 180, 180, 0)


@pytest.mark.asyncio
@pytest.mark.parametrize("point", ["refund", "forget"])
async def test_a_refused_buy_in_crashed_while_giving_the_chips_back(
    stores: tuple[CrashingStore, TableStore], redis_client: redis.asyncio.Redis, point: str
) -> None:
    """The account reserved, the commit was refused (a stale version): the transfer is
    made void, then refunded, then forgotten; a crash between any two of them."""
    crashing, taking = stores
    accounts = AccountStore(redis_client)
    crashing.crash_at = point
    with pytest.raises(Crash):
        await buy(crashing, 1, 5, "s:1", 300)  # the table is at version 0, not 5
    before = await checked(redis_client)
    refunded = point == "forget"
    assert before.to_tables == (0 if refunded else 300)
    assert await accounts.balance("ann") == (ACCOUNT if refunded else ACCOUNT - 300)
    await take_over(taking)
    done = await taking.transfers.recover(T)
    assert done.refunded == 1  # done again at the account, it changes nothing
    assert await accounts.balance("ann") == ACCOUNT
    after = await checked(redis_client)
    assert after.in_transit == 0
    assert not await taking.transfers.pending(T)


@pytest.mark.asyncio
async def test_a_late_reservation_after_the_refund_is_refused(
    stores: tuple[CrashingStore, TableStore], redis_client: redis.asyncio.Redis
) -> None:
    """A paused holder opens a transfer and pauses before its account reserves it; the
    next holder makes it void and, finding nothing reserved, refuses it for good: the
    paused holder's reservation, when it comes, takes nothing."""
    crashing, taking = stores
    crashing.crash_at = "claim"
    with pytest.raises(Crash):
        await buy(crashing, 1, 0, "s:1", 300)
    ((state, transfer),) = (await taking.transfers.pending(T)).incoming.values()
    assert state == "open"
    await take_over(taking)
    assert (await taking.transfers.recover(T)).refunded == 1
    late = await crashing.transfers.claim(T, "ann", None, transfer)
    assert late.status == "FINISHED"
    assert await AccountStore(redis_client).balance("ann") == ACCOUNT
    await checked(redis_client)


@pytest.mark.asyncio
async def test_game_logs_crashed_on_their_way_are_delivered_once_in_order(
    stores: tuple[CrashingStore, TableStore], redis_client: redis.asyncio.Redis
) -> None:
    crashing, taking = stores
    crashing.crash_at = "deliver"
    for version in (1, 2):  # both rounds stored, both deliveries die
        with pytest.raises(Crash):
            await crashing.commits.write(
                Write(
                    T,
                    token=1,
                    expected_version=version - 1,
                    new_version=version,
                    parts=parts(0),
                    logs=[("ann", b"round %d" % version), ("bob", b"b%d" % version)],
                )
            )
    assert (await taking.history.page("ann")).items == []
    logs = (await taking.transfers.pending(T)).logs
    assert sorted(d.player for d in logs) == ["ann", "ann", "bob", "bob"]
    assert all(isinstance(d, Delivery) and d.is_log for d in logs)
    token = await take_over(taking)
    await taking.transfers.recover(T)
    assert (await taking.history.page("ann")).items == [(2, b"round 2"), (1, b"round 1")]
    await taking.transfers.recover(T)  # nothing left; done again, nothing twice
    assert len((await taking.history.page("bob")).items) == 2
    # Delivered, then dead before the table forgot them: delivered again, kept once.
    dying = CrashingStore(taking.redis)
    dying.crash_at = "forget"
    round_3 = [("ann", b"round 3"), ("bob", b"b3")]
    result = await dying.commits.write(
        Write(T, token=token, expected_version=2, new_version=3, parts=parts(0), logs=round_3)
    )
    assert result.ok
    await dying.drain()
    assert len((await taking.transfers.pending(T)).logs) == 2
    await taking.transfers.recover(T)
    assert not await taking.transfers.pending(T)
    assert [o for o, _ in (await taking.history.page("ann")).items] == [3, 2, 1]
    assert len((await taking.history.page("bob")).items) == 3
    await checked(redis_client)


@pytest.mark.asyncio
async def test_game_logs_kept_one_a_field_by_earlier_versions_are_delivered(
    store: TableStore, redis_client: redis.asyncio.Redis
) -> None:
    """Earlier versions kept each game log on its way in a field of its own (named by
    its transfer id, the packed delivery): such logs left at an upgrade are delivered
    and forgotten by the new holder's recovery, beside the entries of today."""
    token = await take_over(store)
    old = [Delivery(f"{T}.1.{i}.1.c", p, LOG, record=b"old %s" % p.encode()) for i, p in
           enumerate(("ann", "bob"))]  # fmt: skip
    await redis_client.hset(store.keys.logs_out(T), mapping={d.transfer_id: d.pack() for d in old})
    result = await store.commits.write(
        Write(
            T,
            token=token,
            expected_version=0,
            new_version=1,
            parts=parts(0),
            logs=[("ann", b"new")],
        )
    )
    assert result.ok
    await store.drain()  # the commit's own log is delivered, and forgotten
    found = await store.transfers.pending(T)
    assert sorted(d.transfer_id for d in found.logs) == [old[0].transfer_id, old[1].transfer_id]
    assert set(found.log_entries) == {old[0].transfer_id, old[1].transfer_id}
    await store.transfers.recover(T)
    assert not await store.transfers.pending(T)
    assert [r for _, r in (await store.history.page("ann")).items] == [b"old ann", b"new"]
    assert [r for _, r in (await store.history.page("bob")).items] == [b"old bob"]


@pytest.mark.asyncio
async def test_a_round_is_delivered_to_its_players_in_one_call_each_item_once(
    store: TableStore,
    accounts: AccountStore,
    redis_client: redis.asyncio.Redis,
    redis_cluster: object,
) -> None:
    """Game logs and chips for several players: one script call on one Redis (one a
    player on a Redis Cluster, their keys in as many slots); delivered again, nothing
    twice, each player's balances as the first delivery left them."""
    await accounts.credit("ann", 100, "c-ann")
    await accounts.credit("bob", 50, "c-bob")
    items = {
        "ann": [
            Delivery("t.1.0", "ann", "cash_out", 30, "k-ann"),
            Delivery("t.1.1", "ann", LOG, record=b"ann's round"),
        ],
        "bob": [Delivery("t.1.2", "bob", LOG, record=b"bob's round")],
        "cy": [Delivery("t.1.3", "cy", LOG, record=b"cy's round")],
    }
    assert await store.transfers.deliver_all(T, items) == {"ann": [130, 0], "bob": [0], "cy": [0]}
    calls = await evalsha_calls(redis_client)  # the script loaded by the first
    assert await store.transfers.deliver_all(T, items) == {"ann": [130, 0], "bob": [0], "cy": [0]}
    assert await evalsha_calls(redis_client) - calls == (3 if redis_cluster else 1)
    assert await accounts.balance("ann") == 130
    for player in items:
        assert [r for _, r in (await store.history.page(player)).items] == [
            f"{player}'s round".encode()
        ]
