"""Wallet mode's money path against the reference wallet (a real HTTP server in a child
process) and a real Redis: the debit's intent and the credits' outbox through each
fault, every test ending with the audit clean and the reconciliation empty."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
import redis.asyncio

from protocol.errors import ErrorCode
from server.store import WalletStore, wallet_audit
from server.table.errors import TableError
from server.wallet import Funding, WalletClient
from server.wallet.funding import Hold
from server.wallet.reconcile import reconcile
from tests.helpers import until
from tests.server.helpers import audit_report
from tests.server.wallet.running import SECRET, WalletProcess

START = 100_000
EVER = 2**53 - 1


@pytest_asyncio.fixture
async def funding(
    redis_client: redis.asyncio.Redis, wallet: WalletProcess
) -> AsyncIterator[Funding]:
    f = Funding(
        WalletStore(redis_client),
        WalletClient(wallet.url, SECRET, timeout_s=0.5),
        resolve_after_ms=0,
        tick_s=0.05,
        sweep_every_s=0.2,
        backoff_s=(0.05, 0.3),
    )
    try:
        yield f
    finally:
        await f.stop()


async def assert_clean(
    redis_client: redis.asyncio.Redis, wallet: WalletProcess, f: Funding
) -> None:
    """The audit (with the wallet's check) passes and the reconciliation is empty."""
    report = await audit_report(redis_client)
    applied = await wallet.applied()
    await wallet_audit(
        redis_client,
        report,
        wallet_debits=sum(t["amount"] for t in applied if t["kind"] == "debit"),
        wallet_credits=sum(t["amount"] for t in applied if t["kind"] == "credit"),
    )
    assert report.ok, report.explain()
    assert report.wallet is not None
    async with WalletClient(wallet.url, SECRET) as client:
        assert await reconcile(f.store, client, 0, EVER) == []


async def settle_all(f: Funding, player: str) -> None:
    """Run the workers until the player has nothing left under way."""

    async def done() -> bool:
        await f.work_once()
        return not await f.store.outbox(player) and not await f.store.open_intents(player)

    await until(done, what="the wallet's work done")


async def held(f: Funding, player: str, request_key: str, amount: int, reason: str) -> Hold:
    """A debit the wallet applied, its chips held for the request."""
    hold = await f.debit(player, request_key, amount, reason)
    assert hold is not None
    return hold


async def give_back(f: Funding, hold: Hold) -> None:
    """The request let its chips go unused: released, and the workers run until the
    player's credit has gone back to the wallet."""
    await f.release(hold, taken=False)
    await settle_all(f, hold.player)


async def account_balance(redis_client: redis.asyncio.Redis, player: str) -> int:
    raw = await redis_client.hget(f"pg:account:{{{player}}}", "balance")
    return int(raw or 0)


@pytest.mark.asyncio
async def test_a_debit_held_then_returned_goes_back_as_one_credit(
    redis_client: redis.asyncio.Redis, wallet: WalletProcess, funding: Funding
) -> None:
    hold = await held(funding, "ann", "s1:1", 300, "buy_in")
    assert await wallet.balance("ann") == START - 300
    assert await account_balance(redis_client, "ann") == 300
    # Held: a sweep now leaves the chips for the request.
    assert await funding.store.sweep("ann") == (0, "")
    await give_back(funding, hold)
    assert await wallet.balance("ann") == START
    kinds = [(t["kind"], t["amount"]) for t in await wallet.applied("ann")]
    assert kinds == [("debit", 300), ("credit", 300)]
    assert await account_balance(redis_client, "ann") == 0
    await assert_clean(redis_client, wallet, funding)


@pytest.mark.asyncio
async def test_refused_for_funds_moves_nothing(
    redis_client: redis.asyncio.Redis, wallet: WalletProcess, funding: Funding
) -> None:
    await wallet.fund("bob", 50)
    with pytest.raises(TableError) as refused:
        await funding.debit("bob", "s1:1", 300, "buy_in")
    assert refused.value.code is ErrorCode.INSUFFICIENT_BALANCE
    assert await wallet.balance("bob") == 50
    assert await account_balance(redis_client, "bob") == 0
    await assert_clean(redis_client, wallet, funding)


@pytest.mark.asyncio
async def test_a_timeout_then_a_late_debit_is_found_and_given_back(
    redis_client: redis.asyncio.Redis, wallet: WalletProcess, funding: Funding
) -> None:
    # The wallet answers after the client gave up (0.5 s): the debit lands late.
    await wallet.faults(delay_ms=1500)
    with pytest.raises(TableError) as unknown:
        await funding.debit("cat", "s1:1", 400, "buy_in")
    assert unknown.value.code is ErrorCode.WALLET_UNAVAILABLE
    assert await account_balance(redis_client, "cat") == 0
    assert [i.amount for i in await funding.store.open_intents("cat")] == [400]
    await until(lambda: wallet.applied("cat"), what="the late debit applied")
    await wallet.faults(delay_ms=0)
    # Recovery asks the status: applied, so its chips come in and go back.
    await settle_all(funding, "cat")
    assert await wallet.balance("cat") == START
    assert [(t["kind"], t["amount"]) for t in await wallet.applied("cat")] == [
        ("debit", 400),
        ("credit", 400),
    ]
    await assert_clean(redis_client, wallet, funding)


@pytest.mark.asyncio
async def test_a_timeout_then_the_retry_reuses_the_transaction(
    redis_client: redis.asyncio.Redis, wallet: WalletProcess, funding: Funding
) -> None:
    await wallet.faults(delay_ms=1500)
    with pytest.raises(TableError):
        await funding.debit("dan", "s1:7", 200, "rebuy")
    await wallet.faults(delay_ms=0)
    # The client's retry of the same request: the same transaction id, applied once.
    hold = await held(funding, "dan", "s1:7", 200, "rebuy")
    await until(lambda: asyncio.sleep(0.1, True), within=2)
    debits = [t for t in await wallet.applied("dan") if t["kind"] == "debit"]
    assert [t["transaction_id"] for t in debits] == [hold.txid]
    assert await account_balance(redis_client, "dan") == 200
    await give_back(funding, hold)
    assert await wallet.balance("dan") == START
    await assert_clean(redis_client, wallet, funding)


@pytest.mark.asyncio
async def test_no_answer_and_never_applied_is_cancelled_for_good(
    redis_client: redis.asyncio.Redis, wallet: WalletProcess, funding: Funding
) -> None:
    await wallet.faults(fail=2)  # the debit and its status: 500, nothing done
    with pytest.raises(TableError) as unknown:
        await funding.debit("eve", "s1:1", 300, "buy_in")
    assert unknown.value.code is ErrorCode.WALLET_UNAVAILABLE
    [intent] = await funding.store.open_intents("eve")
    await settle_all(funding, "eve")
    # Cancelled at the wallet: the same id sent late is refused, nothing applied.
    async with WalletClient(wallet.url, SECRET) as client:
        status = await client.status(intent.txid)
        assert status is not None
        assert status.status == "cancelled"
    assert await wallet.applied("eve") == []
    # The request again: a new attempt, a new transaction id, applied.
    hold = await held(funding, "eve", "s1:1", 300, "buy_in")
    assert hold.txid != intent.txid
    await give_back(funding, hold)
    assert await wallet.balance("eve") == START
    await assert_clean(redis_client, wallet, funding)


@pytest.mark.asyncio
async def test_an_answer_lost_after_commit_is_one_debit(
    redis_client: redis.asyncio.Redis, wallet: WalletProcess, funding: Funding
) -> None:
    await wallet.faults(drop_after_commit=1)
    hold = await funding.debit("fay", "s1:1", 500, "buy_in")
    assert hold is not None  # the status said applied
    # A duplicate of the request meanwhile asks the wallet nothing more.
    again = await funding.debit("fay", "s1:1", 500, "buy_in")
    assert again == hold
    assert [t["kind"] for t in await wallet.applied("fay")] == ["debit"]
    assert await account_balance(redis_client, "fay") == 500
    # The same amount asked under another request is another debit; another amount
    # under this one is refused.
    with pytest.raises(TableError) as reused:
        await funding.debit("fay", "s1:1", 600, "buy_in")
    assert reused.value.code is ErrorCode.RID_REUSED
    await give_back(funding, hold)
    assert await wallet.balance("fay") == START
    await assert_clean(redis_client, wallet, funding)


@pytest.mark.asyncio
async def test_credits_wait_through_500s_and_go_in_order(
    redis_client: redis.asyncio.Redis, wallet: WalletProcess, funding: Funding
) -> None:
    holds = []
    for i, amount in enumerate((100, 200, 300)):
        hold = await held(funding, "gus", f"s1:{i}", amount, "buy_in")
        holds.append(hold)
    await wallet.faults(fail=1000)
    for hold in holds:
        # Each release sweeps what the account keeps: three credits, queued in order.
        await funding.store.release(hold.player, hold.base, hold.txid, taken=False)
        await funding.store.sweep("gus")
    queued = [t.amount for t in await funding.store.outbox("gus")]
    assert queued == [100, 200, 300]
    for _ in range(5):
        assert not await funding.send("gus", now=1e12)
    assert [t.amount for t in await funding.store.outbox("gus")] == [100, 200, 300]
    # Pending credits are counted by the audit: it passes.
    report = await audit_report(redis_client)
    assert report.ok, report.explain()
    # Buy-ins meanwhile are refused, typed and retryable.
    with pytest.raises(TableError) as refused:
        await funding.debit("gus", "s1:9", 100, "buy_in")
    assert refused.value.code is ErrorCode.WALLET_UNAVAILABLE
    await wallet.faults(fail=0)
    # Back, before the outbox is sent: the reconciliation lists the three credits.
    async with WalletClient(wallet.url, SECRET) as client:
        waiting = await reconcile(funding.store, client, 0, EVER)
    assert [d.ours for d in waiting if "credit" in d.ours] == [
        "credit 100 pending",
        "credit 200 pending",
        "credit 300 pending",
    ]
    await settle_all(funding, "gus")
    credits = [t["amount"] for t in await wallet.applied("gus") if t["kind"] == "credit"]
    assert credits == [100, 200, 300]
    assert await wallet.balance("gus") == START
    await assert_clean(redis_client, wallet, funding)


@pytest.mark.asyncio
async def test_the_wallet_down_for_a_while_then_back(
    redis_client: redis.asyncio.Redis, wallet: WalletProcess, funding: Funding
) -> None:
    hold = await held(funding, "hal", "s1:1", 700, "buy_in")
    await wallet.faults(down=True)
    await funding.release(hold, taken=False)
    with pytest.raises(TableError) as refused:
        await funding.debit("hal", "s1:2", 100, "buy_in")
    assert refused.value.code is ErrorCode.WALLET_UNAVAILABLE
    funding.start()
    # Down for a while: the workers keep trying (backing off), nothing is lost.
    await asyncio.sleep(1.5)
    assert [t.amount for t in await funding.store.outbox("hal")] == [700]
    assert funding.counters.credit_failures >= 2
    await wallet.faults(down=False)

    async def drained() -> bool:
        return not await funding.store.outbox("hal") and not await funding.store.open_intents("hal")

    await until(drained, what="the outbox sent and the open debit resolved")
    assert await wallet.balance("hal") == START
    await assert_clean(redis_client, wallet, funding)


@pytest.mark.asyncio
async def test_late_and_duplicate_acknowledgements_change_nothing(
    redis_client: redis.asyncio.Redis, wallet: WalletProcess, funding: Funding
) -> None:
    hold = await held(funding, "ivy", "s1:1", 250, "buy_in")
    await give_back(funding, hold)
    [credit] = [t for t in await funding.store.transactions(["ivy"]) if t.kind == "credit"]
    assert not await funding.store.ack("ivy", credit.txid)  # acknowledged again
    async with WalletClient(wallet.url, SECRET) as client:
        await client.credit(credit.txid, "ivy", 250, "cash_out")  # sent again: deduped
        await client.debit(hold.txid, "ivy", 250, "buy_in")  # a late duplicate debit
    assert await funding.store.apply("ivy", hold.base, hold.txid, hold=True) == "returned"
    assert await wallet.balance("ivy") == START
    assert len(await wallet.applied("ivy")) == 2
    await assert_clean(redis_client, wallet, funding)


@pytest.mark.asyncio
async def test_chips_held_for_a_request_that_died_go_back(
    redis_client: redis.asyncio.Redis, wallet: WalletProcess, funding: Funding
) -> None:
    # Applied and held, then the request's process is gone before the table's commit
    # (no release ever comes): recovery releases the hold, the chips go back.
    hold = await held(funding, "jay", "s1:1", 450, "buy_in")
    assert await funding.store.sweep("jay") == (0, "")  # held: not swept
    await settle_all(funding, "jay")
    assert await funding.store.intent_state("jay", hold.base) == "returned"
    assert await wallet.balance("jay") == START
    assert await account_balance(redis_client, "jay") == 0
    await assert_clean(redis_client, wallet, funding)
