"""A server in wallet mode, played over WebSockets against the reference wallet (a real
HTTP server in a child process): buy-ins are debits, leaving and a seat freed after
its grace period are credits; with the wallet failing, rounds in play settle, buy-ins
are refused with ``wallet_unavailable`` and credits wait, then go. Each test ends with
``paigow-server audit`` (with the wallet's check) passing and ``paigow-server wallet
reconcile`` finding no difference."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis.asyncio

from protocol.messages import Bet, CashOut, Join, Leave, Rebuy
from protocol.structs import Joined
from server.app import App
from server.auth import tokens
from server.config import Settings
from server.store import WalletStore
from tests.helpers import until
from tests.server.conftest import StartApp
from tests.server.helpers import Client
from tests.server.processes import run_cli
from tests.server.wallet.running import SECRET, WalletProcess

__all__ = ["StartApp"]

TOKEN_SECRET = b"test-secret-0123456789"


@pytest.fixture
def wallet(tmp_path: Path) -> Iterator[WalletProcess]:
    process = WalletProcess(tmp_path, opening_balance=None)
    try:
        yield process
    finally:
        process.close()


def wallet_settings(wallet: WalletProcess) -> dict[str, object]:
    return {
        "wallet_url": wallet.url,
        "wallet_secret": SECRET,
        "wallet_timeout_ms": 500,
        "wallet_resolve_after_ms": 1000,
    }


async def player(app: App, name: str) -> Client:
    token = tokens.issue(TOKEN_SECRET, name, 3600, int(time.time()))
    return await Client.hello(f"ws://127.0.0.1:{app.port}/", token=token, label=name)


def cli(settings: Settings, wallet: WalletProcess, *args: str) -> tuple[int, str]:
    assert settings.redis_url is not None
    done = run_cli(
        [
            "--redis-url",
            settings.redis_url,
            "--wallet-url",
            wallet.url,
            "--wallet-secret",
            SECRET,
            *args,
        ]
    )
    return done.returncode, done.stdout + done.stderr


async def assert_clean(settings: Settings, wallet: WalletProcess) -> str:
    """``audit`` passes with the wallet's line, ``wallet reconcile`` finds nothing."""
    code, out = await asyncio.to_thread(cli, settings, wallet, "audit")
    assert code == 0, out
    assert "audit passed" in out
    assert "wallet: debits" in out
    code, out = await asyncio.to_thread(
        cli, settings, wallet, "wallet", "reconcile", "--from", "0", "--to", str(2**53 - 1)
    )
    assert code == 0, out
    assert "0 differences" in out
    return out


@pytest.mark.asyncio
async def test_rounds_settle_while_the_wallet_fails_and_credits_wait(
    start_app: StartApp,
    server_settings: Settings,
    redis_client: redis.asyncio.Redis,
    wallet: WalletProcess,
) -> None:
    await wallet.fund("alice", 5000)
    app = await start_app(**wallet_settings(wallet))
    alice = await player(app, "alice")
    try:
        joined = await alice.ok(Join, table_id="fast", buy_in=1000)
        assert isinstance(joined, Joined)
        assert await wallet.balance("alice") == 4000
        # A rebuy is a debit; a cash-out a credit.
        await alice.ok(Rebuy, table_id="fast", amount=200)
        assert await wallet.balance("alice") == 3800
        await alice.ok(CashOut, table_id="fast", amount=200)

        async def cashed_out() -> bool:
            return await wallet.balance("alice") == 4000

        await until(cashed_out, what="the cash-out credited")
        # A join the table refuses asks the wallet nothing.
        before = len((await wallet.state())["transactions"])
        await alice.error(Join, "bet_limits", table_id="slow", buy_in=123_457)
        assert len((await wallet.state())["transactions"]) == before
        # The wallet fails from now on (500s): the round in play settles all the same.
        await wallet.faults(fail=1_000_000)
        await alice.ok(Bet, table_id="fast", amount=100)
        settled = await alice.phase("fast", "settling", within=20)
        assert settled is not None
        # A buy-in elsewhere needs the wallet: refused, typed and retryable.
        refused = await alice.error(Join, "wallet_unavailable", table_id="slow", buy_in=500)
        assert refused.table_id == "slow"
        # Leaving moves the table's chips to the outbox, where they wait.
        await alice.ok(Leave, table_id="fast")
        store = WalletStore(redis_client)

        async def waiting() -> bool:
            return bool(await store.outbox("alice"))

        await until(waiting, what="the leave's credit in the outbox")
        await asyncio.sleep(1.0)  # retried meanwhile, and failing
        assert await wallet.balance("alice") == 4000
        assert [t.state for t in await store.outbox("alice")] == ["pending"]
        # Retried until acknowledged, once the wallet answers again.
        await wallet.faults(fail=0)

        async def credited() -> bool:
            credits = [t for t in await wallet.applied("alice") if t["kind"] == "credit"]
            return len(credits) == 1

        await until(credited, within=40, what="the credit acknowledged")
        out = await assert_clean(server_settings, wallet)
        code, audit = await asyncio.to_thread(cli, server_settings, wallet, "audit")
        assert code == 0, audit
        house = int(
            next(line for line in audit.splitlines() if line.startswith("house result")).split(
                ": "
            )[1]
        )
        assert await wallet.balance("alice") == 5000 - house, (audit, out)
    finally:
        await alice.close()


@pytest.mark.asyncio
async def test_a_seat_freed_after_its_grace_period_goes_back_to_the_wallet(
    start_app: StartApp, server_settings: Settings, wallet: WalletProcess
) -> None:
    await wallet.fund("bea", 3000)
    app = await start_app(**wallet_settings(wallet))
    bea = await player(app, "bea")
    await bea.ok(Join, table_id="fast", buy_in=800)
    assert await wallet.balance("bea") == 2200
    await bea.close()  # gone: the seat is freed after the table's grace period (5 s)

    async def back() -> bool:
        return await wallet.balance("bea") == 3000

    await until(back, within=40, what="the freed seat's chips back in the wallet")
    await assert_clean(server_settings, wallet)


@pytest.mark.asyncio
async def test_a_guest_plays_with_this_servers_chips_never_the_wallets(
    start_app: StartApp,
    server_settings: Settings,
    redis_client: redis.asyncio.Redis,
    wallet: WalletProcess,
) -> None:
    app = await start_app(**wallet_settings(wallet))
    guest = await Client.hello(f"ws://127.0.0.1:{app.port}/", label="guest")
    try:
        joined = await guest.ok(Join, table_id="fast", buy_in=500)
        assert isinstance(joined, Joined)
        await guest.ok(Leave, table_id="fast")
        # The guest's chips stay in its account here: a sweep never sends them.
        assert await WalletStore(redis_client).sweep(guest.player) == (0, "")
        balance = await redis_client.hget(f"pg:account:{{{guest.player}}}", "balance")
        assert int(balance or 0) > 0
    finally:
        await guest.close()
    assert (await wallet.state())["transactions"] == []
    out = await assert_clean(server_settings, wallet)
    assert "0 differences" in out
