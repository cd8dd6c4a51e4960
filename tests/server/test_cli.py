"""The operator's commands: ``paigow-server token``, ``account`` and ``audit``, run as
processes against the test Redis."""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import replace
from pathlib import Path

import pytest
import redis.asyncio

from clients.core import Client as ClientCore
from protocol.messages import Bet, Join
from server.admin import tokens as admin_tokens
from server.app import App
from server.auth import tokens
from server.config import Settings
from server.store.keys import Keys
from server.store.players.accounts import AccountStore
from server.store.players.guests import GuestLimits, GuestStore
from tests.helpers import url
from tests.server.helpers import Client
from tests.server.processes import run_cli

SECRET = "cli-test-secret-0123456789"


def cli(redis_url: str, *args: str) -> tuple[int, str, str]:
    done = run_cli(["--redis-url", redis_url, "--token-secret", SECRET, *args])
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
async def test_accounts_and_audit(redis_url: str, redis_client: redis.asyncio.Redis) -> None:
    code, out, err = cli(redis_url, "account", "list")
    assert (code, out) == (0, "no accounts yet\n")
    assert f"using the Redis at {redis_url} (--redis-url)" in err
    # A player with no account is refused, unless the credit is to open it.
    code, out, err = cli(redis_url, "account", "credit", "alice", "500", "--key", "k1")
    assert (code, out) == (1, "")
    assert "no such account" in err
    assert "--create" in err
    code, out, _ = cli(redis_url, "account", "credit", "alice", "500", "--key", "k1", "--create")
    assert code == 0
    assert out.split() == ["alice", "500", "credited"]
    code, out, _ = cli(redis_url, "account", "credit", "alice", "500", "--key", "k1", "--create")
    assert code == 0
    assert out.startswith("alice\t500\talready applied")
    code, out, err = cli(redis_url, "account", "credit", "bob", "250", "--create")
    assert code == 0
    assert "idempotency key cli-" in err
    code, out, _ = cli(redis_url, "account", "show", "alice")
    assert (code, out) == (0, "player  name  balance\nalice   -         500\n")
    code, out, err = cli(redis_url, "account", "show", "nobody")
    assert code == 1
    assert "no account" in err
    code, _, err = cli(redis_url, "account", "credit", "alice", "0")
    assert code == 2
    assert "positive" in err
    code, out, _ = cli(redis_url, "account", "list")
    assert (code, out) == (
        0,
        "player  name  balance\nalice   -         500\nbob     -         250\n",
    )
    code, out, _ = cli(redis_url, "account", "list", "--json")
    assert code == 0
    assert json.loads(out) == [
        {"player": "alice", "name": None, "balance": 500},
        {"player": "bob", "name": None, "balance": 250},
    ]
    code, out, _ = cli(redis_url, "audit")
    assert code == 0, out
    assert out.strip().endswith("audit passed"), out

    # A balance changed behind the ledger's back: the audit fails and says why.
    await redis_client.hset(Keys().account("alice"), "balance", 900)
    code, out, _ = cli(redis_url, "audit")
    assert code == 1, out
    assert "audit FAILED" in out
    assert "chips do not add up: 750 credited from outside" in out
    assert "alice: balance 900, ledger says 500" in out


@pytest.mark.asyncio
async def test_audit_beside_a_live_table(
    app: App, server_settings: Settings, redis_url: str
) -> None:
    """The audit runs against a server in play (bets held) and passes."""
    client = await Client.hello(url(app))
    try:
        await client.ok(Join, table_id="slow", buy_in=1000)
        await client.ok(Bet, table_id="slow", amount=100)
        await client.phase("slow", "setting")
        done = await asyncio.to_thread(run_cli, ["--redis-url", redis_url, "audit"])
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


def test_a_folder_without_server_data_is_refused_not_filled(tmp_path: Path) -> None:
    """Run where no server keeps its data (the default ``data`` folder relative to
    another directory): the commands say so and exit 2, and create nothing."""
    for command in (["account", "list"], ["audit"], ["token", "--player", "alice"]):
        done = run_cli(command, cwd=tmp_path)
        assert done.returncode == 2, done.stderr
        assert done.stdout == ""
        assert "--data-dir or PAIGOW_DATA_DIR" in done.stderr
        assert "Traceback" not in done.stderr
        assert list(tmp_path.iterdir()) == []  # no ./data, no Redis, no secret
    done = run_cli(["account", "list"], cwd=tmp_path)
    assert f"{tmp_path / 'data'} holds no server's data" in done.stderr


@pytest.mark.asyncio
async def test_the_commands_find_the_server_on_its_data_folder(
    server_settings: Settings, redis_client: redis.asyncio.Redis, tmp_path: Path
) -> None:
    """With the server running on its embedded Redis, the commands use that Redis (found
    through the data folder) and say so; with it stopped, its data, started for them."""
    data = tmp_path / "server-data"
    settings = replace(server_settings, redis_url=None, data_dir=data, token_secret=None)
    server = App(settings)
    await server.start()
    try:
        # Connected (and so seated, whatever the time) until the server stops: an away
        # player is stood up after the table's grace period (5 s), its buy-in back in
        # its account, and on a loaded machine one command took longer than that.
        async with ClientCore(url(server), name="Pat") as player:
            await player.join("fast", 300)
            player_id = player.player_id
            done = await asyncio.to_thread(run_cli, ["--data-dir", str(data), "account", "list"])
            assert done.returncode == 0, done.stderr
            assert f"using the Redis of the server running on {data}" in done.stderr
            [header, row] = done.stdout.splitlines()
            assert header.split() == ["player", "name", "balance"]
            assert row.split() == [player_id, "Pat", "9700"]
            done = await asyncio.to_thread(
                run_cli, ["--data-dir", str(data), "token", "--player", "al"]
            )
            assert done.returncode == 0, done.stderr
            assert f"signing with the secret kept in {data / 'token-secret'}" in done.stderr
            secret = (data / "token-secret").read_text().strip().encode()
            assert tokens.verify(secret, done.stdout.strip(), int(time.time())) == "al"
            await server.stop()
    finally:
        await server.stop()
    done = await asyncio.to_thread(run_cli, ["--data-dir", str(data), "account", "list", "--json"])
    assert done.returncode == 0, done.stderr
    assert (
        f"no server is running on {data}: using its Redis data in {data / 'redis'}" in done.stderr
    )
    assert json.loads(done.stdout) == [{"player": player_id, "name": "Pat", "balance": 9700}]


@pytest.mark.asyncio
async def test_account_list_guests_counts_them(
    redis_url: str, redis_client: redis.asyncio.Redis
) -> None:
    guests, accounts = GuestStore(redis_client), AccountStore(redis_client)
    for i, player in enumerate(("g-a", "g-b")):
        await guests.admit(player, "192.0.2.1", GuestLimits(), 1_700_000_000_000 + i)
        await accounts.ensure_guest(player, 100 * (i + 1))
    await accounts.credit("alice", 5, "op:1")  # not a guest
    listing = ("account", "list", "--guests")
    code, out, err = await asyncio.to_thread(cli, redis_url, *listing, "--json")
    assert code == 0, err
    assert json.loads(out) == [
        {"player": "g-a", "active": "2023-11-14T22:13:20Z", "balance": 100},
        {"player": "g-b", "active": "2023-11-14T22:13:20Z", "balance": 200},
    ]
    code, out, _ = await asyncio.to_thread(cli, redis_url, *listing)
    assert code == 0
    assert out.rstrip().endswith("2 guests")


@pytest.mark.asyncio
async def test_debit_reverse_and_the_ledger(
    redis_url: str, redis_client: redis.asyncio.Redis
) -> None:
    """``account debit`` and ``account reverse``: the API's moves, once per key."""
    code, out, _ = cli(redis_url, "account", "credit", "ann", "300", "--create", "--json")
    assert code == 0
    first = json.loads(out)
    code, out, _ = cli(
        redis_url, "account", "credit", "ann", "5000", "--key", "typo", "--reason", "meant 500"
    )
    assert (code, out) == (0, "ann\t5300\tcredited\n")
    code, out, _ = cli(redis_url, "account", "ledger", "ann", "--json")
    assert code == 0
    rows = json.loads(out)
    assert [r["kind"] for r in rows] == ["credit", "credit"]
    assert rows[0]["extra"]["reason"] == "meant 500"
    assert rows[0]["extra"]["by"].startswith("cli:")
    wrong = rows[0]["entry"]
    args = ["account", "reverse", "ann", wrong, "--reason", "typo", "--key", "undo-1"]
    code, out, _ = cli(redis_url, *args)
    assert (code, out) == (0, "ann\t300\treversed\n")
    code, out, _ = cli(redis_url, *args)
    assert (code, out) == (0, "ann\t300\talready applied (same key)\n")
    code, _, err = cli(redis_url, *args[:-1], "undo-2")
    assert code == 1
    assert "reversed before" in err
    code, _, err = cli(redis_url, "account", "debit", "ann", "301", "--reason", "fix")
    assert code == 1
    assert "fewer chips" in err
    code, out, _ = cli(redis_url, "account", "debit", "ann", "100", "--reason", "fix", "--json")
    assert code == 0
    assert json.loads(out)["balance"] == 200
    code, _, err = cli(redis_url, "account", "debit", "nobody", "1", "--reason", "fix")
    assert code == 1
    assert "no such account" in err
    code, _, err = cli(redis_url, "account", "reverse", "ann", "bad", "--reason", "r")
    assert code == 2
    assert "ledger entry" in err
    assert first["entry"] != wrong
    code, out, _ = cli(redis_url, "audit")
    assert code == 0, out
    assert "taken back out: 5100" in out


def test_admin_tokens_are_minted_listed_and_revoked(redis_url: str) -> None:
    code, token, err = cli(redis_url, "admin", "token", "--name", "ops", "--ttl", "1h")
    assert code == 0, err
    token = token.strip()
    assert token.startswith("pgadmin1.")
    token_id = admin_tokens.read(SECRET.encode(), token, int(time.time())).token_id
    assert f"admin token {token_id} for ops" in err
    code, out, _ = cli(redis_url, "admin", "list")
    assert code == 0
    assert token_id in out
    assert "ops" in out
    code, out, _ = cli(redis_url, "admin", "revoke", token_id)
    assert (code, out) == (0, f"{token_id}: revoked\n")
    code, out, _ = cli(redis_url, "admin", "list")
    assert (code, out) == (0, "no tokens\n")
    code, _, err = cli(redis_url, "admin", "revoke", token_id)
    assert code == 1
    code, _, err = cli(redis_url, "admin", "token", "--name", "bad name")
    assert code == 2
    # No live node by that name (none runs here): refused, nothing published.
    code, _, err = cli(redis_url, "nodes", "drain", "node-9")
    assert code == 1
    assert "no live node named 'node-9'" in err
