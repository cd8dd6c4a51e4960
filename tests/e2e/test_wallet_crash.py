"""A server process killed with SIGKILL between the wallet's answer to a buy-in's debit
and the debit's intent applied in Redis (a seam set only by tests/e2e/wallet_seam.py).

The wallet has taken the chips; the table has not. Either the player's retry of the
same request (the same rid, on the resumed session) reaches the next server, which asks
the wallet about the same transaction id and seats the player with that one debit; or
nobody retries, and the next server's recovery asks the wallet, finds the debit and
gives its chips back. Each ends with the audit clean and the reconciliation empty.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis.asyncio

from protocol.codec import encode
from protocol.messages import Join, Leave, OkReply
from protocol.structs import Joined
from server.auth import tokens
from tests.helpers import until
from tests.server.helpers import Client
from tests.server.processes import ROOT, ServerProcess, run_cli, server_args
from tests.server.wallet.running import SECRET, WalletProcess

TOKEN_SECRET = "process-test-secret-0123456789"
EVER = str(2**53 - 1)
TABLES = """
[[table]]
id = "k"
name = "Kill"
min_buy_in = 100
max_buy_in = 5000
betting_ms = 30000
"""


class SeamProcess(ServerProcess):
    """The server with the crash seam set (``python -m tests.e2e.wallet_seam``)."""

    def __init__(self, args: list[str], log: Path) -> None:
        self.log = log
        self._log_file = log.open("ab")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tests.e2e.wallet_seam", *args],
            cwd=ROOT,
            stdin=subprocess.DEVNULL,
            stdout=self._log_file,
            stderr=subprocess.STDOUT,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        self.port = None


@pytest.fixture
def wallet(tmp_path: Path) -> Iterator[WalletProcess]:
    process = WalletProcess(tmp_path, opening_balance=None)
    try:
        yield process
    finally:
        process.close()


def args(redis_url: str, tmp_path: Path, wallet: WalletProcess, resolve_after_ms: int) -> list[str]:
    tables = tmp_path / "tables.toml"
    tables.write_text(TABLES)
    extra = [
        "--wallet-url", wallet.url, "--wallet-secret", SECRET,
        "--wallet-timeout-ms", "1000", "--wallet-resolve-after-ms", str(resolve_after_ms),
    ]  # fmt: skip
    return server_args(
        redis_url, tables, tmp_path / "data", secret=TOKEN_SECRET, lease_ms=1000, extra=extra
    )


def assert_clean(redis_url: str, wallet: WalletProcess) -> None:
    common = ["--redis-url", redis_url, "--wallet-url", wallet.url, "--wallet-secret", SECRET]
    audit = run_cli([*common, "audit"])
    assert audit.returncode == 0, audit.stdout + audit.stderr
    assert "audit passed" in audit.stdout
    reconcile = run_cli([*common, "wallet", "reconcile", "--from", "0", "--to", EVER])
    assert reconcile.returncode == 0, reconcile.stdout + reconcile.stderr
    assert "0 differences" in reconcile.stdout


async def crash_mid_buy_in(
    redis_url: str,
    tmp_path: Path,
    wallet: WalletProcess,
    processes: list[ServerProcess],
    resolve_after_ms: int,
) -> Client:
    """A buy-in whose server dies between the wallet's answer and Redis; the player's
    connection (closed by the crash), for its resume token."""
    await wallet.fund("carl", 5000)
    seam = SeamProcess(args(redis_url, tmp_path, wallet, resolve_after_ms), tmp_path / "seam.log")
    processes.append(seam)
    await seam.started()
    token = tokens.issue(TOKEN_SECRET.encode(), "carl", 3600, int(time.time()))
    carl = await Client.hello(seam.url, token=token, label="carl")
    await carl.send(encode(Join(rid="buy-1", table_id="k", buy_in=1000)))
    assert await seam.exited() == -9
    await carl.close()
    # The wallet took the chips; nothing here has them.
    assert [t["kind"] for t in await wallet.applied("carl")] == ["debit"]
    assert await wallet.balance("carl") == 4000
    return carl


@pytest.mark.asyncio
async def test_killed_after_the_wallet_answered_then_the_retry_is_seated_once(
    redis_url: str,
    redis_client: redis.asyncio.Redis,  # flushed first
    tmp_path: Path,
    wallet: WalletProcess,
    processes: list[ServerProcess],
) -> None:
    carl = await crash_mid_buy_in(redis_url, tmp_path, wallet, processes, 120_000)
    assert carl.welcome is not None
    server = ServerProcess(args(redis_url, tmp_path, wallet, 120_000), tmp_path / "next.log")
    processes.append(server)
    await server.started()
    token = tokens.issue(TOKEN_SECRET.encode(), "carl", 3600, int(time.time()))
    again = await Client.hello(
        server.url, token=token, resume_token=carl.welcome.resume_token, label="carl"
    )
    try:
        # The same request again: the same transaction id, taken once by the wallet.
        await again.send(encode(Join(rid="buy-1", table_id="k", buy_in=1000)))
        [reply] = await again.wait(lambda: again.replies.get("buy-1"), 20)
        assert isinstance(reply, OkReply), reply
        assert isinstance(reply.result, Joined)
        assert [t["kind"] for t in await wallet.applied("carl")] == ["debit"]
        assert await wallet.balance("carl") == 4000
        await again.ok(Leave, table_id="k")

        async def back() -> bool:
            return await wallet.balance("carl") == 5000

        await until(back, within=20, what="the leave credited")
    finally:
        await again.close()
    await asyncio.to_thread(assert_clean, redis_url, wallet)


@pytest.mark.asyncio
async def test_killed_after_the_wallet_answered_then_recovery_gives_it_back(
    redis_url: str,
    redis_client: redis.asyncio.Redis,  # flushed first
    tmp_path: Path,
    wallet: WalletProcess,
    processes: list[ServerProcess],
) -> None:
    await crash_mid_buy_in(redis_url, tmp_path, wallet, processes, 1000)
    server = ServerProcess(args(redis_url, tmp_path, wallet, 1000), tmp_path / "next.log")
    processes.append(server)
    await server.started()

    async def back() -> bool:
        return await wallet.balance("carl") == 5000

    await until(back, within=30, what="the recovered debit given back")
    kinds = [t["kind"] for t in await wallet.applied("carl")]
    assert kinds == ["debit", "credit"]
    await asyncio.to_thread(assert_clean, redis_url, wallet)
