"""The operator's commands: ``paigow-server token``, ``account`` and ``audit``, run as
processes against the test Redis."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest
import redis.asyncio

from protocol.messages import Bet, Join
from server.app import App
from server.auth import tokens
from server.config import Settings
from server.store.embedded import EmbeddedRedis
from server.store.keys import Keys
from tests.helpers import url
from tests.server.helpers import Client, run_cli

SECRET = "cli-test-secret-0123456789"


def cli(redis_server: EmbeddedRedis, *args: str) -> tuple[int, str, str]:
    done = run_cli(["--redis-url", redis_server.url, "--token-secret", SECRET, *args])
    return done.returncode, done.stdout, done.stderr


def test_token_is_signed_and_expires() -> None:
    before = int(time.time())
    done = run_cli(["--token-secret", SECRET, "token", "--player", "alice", "--ttl", "90s"])
    after = int(time.time())
    assert done.returncode == 0, done.stderr
    token = done.stdout.strip()
    # Issued somewhere between before and after (the command may start slowly): valid
    # until 90 s after that, whenever it was.
    assert tokens.verify(SECRET.encode(), token, before + 89) == "alice"
    with pytest.raises(tokens.TokenExpired):
        tokens.verify(SECRET.encode(), token, after + 91)
    with pytest.raises(tokens.TokenBadSignature):
        tokens.verify(b"another-secret-0123456789", token, before)
    bad = run_cli(["--token-secret", SECRET, "token", "--player", "no:colons"])
    assert bad.returncode == 2
    assert "player name" in bad.stderr
    bad = run_cli(["--token-secret", SECRET, "token", "--player", "alice", "--ttl", "soon"])
    assert bad.returncode != 0


@pytest.mark.asyncio
async def test_accounts_and_audit(
    redis_server: EmbeddedRedis, redis_client: redis.asyncio.Redis
) -> None:
    code, out, _ = cli(redis_server, "account", "list")
    assert (code, out) == (0, "")
    code, out, _ = cli(redis_server, "account", "credit", "alice", "500", "--key", "k1")
    assert code == 0
    assert out.split() == ["alice", "500", "credited"]
    code, out, _ = cli(redis_server, "account", "credit", "alice", "500", "--key", "k1")
    assert code == 0
    assert out.startswith("alice\t500\talready applied")
    code, out, _ = cli(redis_server, "account", "credit", "bob", "250")
    assert code == 0
    code, out, _ = cli(redis_server, "account", "show", "alice")
    assert (code, out) == (0, "alice\t500\n")
    code, out, err = cli(redis_server, "account", "show", "nobody")
    assert code == 1
    assert "no account" in err
    code, _, err = cli(redis_server, "account", "credit", "alice", "0")
    assert code == 2
    assert "positive" in err
    code, out, _ = cli(redis_server, "account", "list")
    assert (code, out) == (0, "alice\t500\nbob\t250\n")
    code, out, _ = cli(redis_server, "audit")
    assert code == 0, out
    assert out.strip().endswith("audit passed"), out

    # A balance changed behind the ledger's back: the audit fails and says why.
    await redis_client.hset(Keys().account("alice"), "balance", 900)
    code, out, _ = cli(redis_server, "audit")
    assert code == 1, out
    assert "audit FAILED" in out
    assert "chips do not add up: 750 credited from outside" in out
    assert "alice: balance 900, ledger says 500" in out


@pytest.mark.asyncio
async def test_audit_beside_a_live_table(
    app: App, server_settings: Settings, redis_server: EmbeddedRedis
) -> None:
    """The audit runs against a server in play (bets held) and passes."""
    client = await Client.hello(url(app))
    try:
        await client.ok(Join, table_id="slow", buy_in=1000)
        await client.ok(Bet, table_id="slow", amount=100)
        await client.phase("slow", "setting")
        done = await asyncio.to_thread(run_cli, ["--redis-url", redis_server.url, "audit"])
        assert done.returncode == 0, done.stdout
        assert "held bets: 100" in done.stdout
    finally:
        await client.close()


def test_audit_that_cannot_reach_redis_exits_2_not_1(tmp_path: Path) -> None:
    missing = f"unix://{tmp_path / 'no-such.sock'}"
    done = run_cli(["--redis-url", missing, "audit"])
    assert done.returncode == 2
    assert "paigow-server:" in done.stderr
    assert "Traceback" not in done.stderr
