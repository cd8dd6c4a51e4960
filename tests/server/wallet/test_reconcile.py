"""``paigow-server wallet reconcile`` and the audit's wallet check, as an operator runs
them, against the reference wallet: a transaction one side has and the other not is
printed, and both exit 1; once the two agree, both exit 0."""

from __future__ import annotations

import asyncio

import pytest
import redis.asyncio

from server.store import WalletStore
from server.wallet import Funding, WalletClient
from tests.server.processes import run_cli
from tests.server.wallet.running import SECRET, WalletProcess

EVER = str(2**53 - 1)


def command(redis_url: str, wallet: WalletProcess, *args: str) -> tuple[int, str]:
    common = ["--redis-url", redis_url, "--wallet-url", wallet.url, "--wallet-secret", SECRET]
    done = run_cli([*common, *args])
    return done.returncode, done.stdout


@pytest.mark.asyncio
async def test_every_difference_is_printed_and_fails_the_command(
    redis_url: str, redis_client: redis.asyncio.Redis, wallet: WalletProcess
) -> None:
    funding = Funding(WalletStore(redis_client), WalletClient(wallet.url, SECRET))
    try:
        hold = await funding.debit("kim", "s1:1", 300, "buy_in")
        assert hold is not None
        await funding.release(hold, taken=False)
        await funding.stop()  # waits for the sweep and the credit sent with it
        code, out = await asyncio.to_thread(
            command, redis_url, wallet, "wallet", "reconcile", "--from", "0", "--to", EVER
        )
        assert code == 0, out
        # A debit the wallet made that this server never asked for.
        async with WalletClient(wallet.url, SECRET) as client:
            await client.debit("stray-1", "kim", 50, "buy_in")
        code, out = await asyncio.to_thread(
            command, redis_url, wallet, "wallet", "reconcile", "--from", "0", "--to", EVER
        )
        assert code == 1, out
        assert "stray-1 (kim): here nothing; wallet debit 50 applied" in out
        assert "1 differences" in out
        # ISO 8601 windows: one that ends before everything finds nothing.
        code, out = await asyncio.to_thread(
            command, redis_url, wallet, "wallet", "reconcile",
            "--from", "2000-01-01T00:00", "--to", "2000-01-02T00:00",
        )  # fmt: skip
        assert code == 0, out
        code, out = await asyncio.to_thread(command, redis_url, wallet, "audit")
        assert code == 1, out
        assert "PROBLEM: the wallet does not add up" in out
    finally:
        await funding.stop()
