"""``paigow-server jackpot``: the meters as the store holds them, and the hits left
between the meter and an account delivered."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import redis.asyncio

from server.store.jackpot.meters import JackpotStore
from tests.server.processes import run_cli

TABLES = """
[[table]]
id = "north"
name = "North"

[jackpot.grand]
seed = 500
contribution_bps = 5000
tables = ["north"]
"""


def cli(redis_url: str, tables: Path, *args: str) -> tuple[int, str, str]:
    done = run_cli(["--redis-url", redis_url, "--tables-file", str(tables), "jackpot", *args])
    return done.returncode, done.stdout, done.stderr


@pytest.mark.asyncio
async def test_show_and_deliver(
    redis_url: str, redis_client: redis.asyncio.Redis, tmp_path: Path
) -> None:
    tables = tmp_path / "tables.toml"
    tables.write_text(TABLES)
    code, out, _ = cli(redis_url, tables, "show")
    assert code == 0
    assert out.splitlines()[1].split("\t")[:4] == ["grand", "500 (not started)", "500", "50%"]
    store = JackpotStore(redis_client)
    for r in range(1, 5):
        await store.contribute(
            "grand",
            seed=500,
            contribution_bps=5000,
            table_id="north",
            round_no=r,
            seat=0,
            player="ann",
            wager=10,
        )
    await store.hit_step(
        "grand", seed=500, share_bps=10_000, table_id="north", round_no=5, seat=0, player="ann"
    )
    code, out, _ = cli(redis_url, tables, "show", "--json")
    assert code == 0
    (grand,) = json.loads(out)
    assert grand["meter"] == 500
    assert (grand["seeded"], grand["contributed"], grand["paid"]) == (1000, 20, 520)
    assert (grand["hits"], grand["pending"], grand["tables"]) == (1, 1, ["north"])
    code, out, _ = cli(redis_url, tables, "deliver")
    assert (code, out) == (0, "1 hits delivered\n")
    assert await redis_client.hget(store.keys.account("ann"), "balance") == b"520"
    code, out, _ = cli(redis_url, tables, "show", "--json")
    assert json.loads(out)[0]["pending"] == 0
