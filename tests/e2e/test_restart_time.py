"""A node killed (SIGKILL) and started again under its name, on the same Redis: it
does not wait for its own earlier life to announce its tables (docs/DESIGN.md,
"Several nodes on one Redis").

The time from the kill to ``/readyz`` 200 is printed (run with ``-s``), not asserted:
the machine may be loaded. What is asserted is that the waits did not happen: the new
process says it set its earlier life aside and gave up its leases, never that nodes
"did not announce their tables in time", and it is ready long before the earlier
life's registration and leases (made to last 30 s here) would have run out.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest
import redis.asyncio

from protocol.messages import GetBalance, Join
from protocol.structs import Balances
from server.store.nodes.shared import ClusterStore
from server.store.tables.store import TableStore
from tests.helpers import until
from tests.server.helpers import Client, quick_tables
from tests.server.processes import ServerProcess, free_port, http_get, server_args

SECRET = "restart-time-secret-0123456789"
TABLES = ["r1", "r2"]


async def ready(proc: ServerProcess, port: int, within: float = 30) -> float:
    """Wait until ``/readyz`` answers 200; the monotonic time it first did."""

    async def answers() -> float | None:
        if proc.proc.poll() is not None:
            raise AssertionError(f"the server exited:\n{proc.output()[-3000:]}")
        try:
            status, _ = await asyncio.to_thread(http_get, port, "/readyz")
        except OSError:
            return None
        return time.monotonic() if status == 200 else None

    return await until(answers, within, "/readyz 200", every=0.02)


@pytest.mark.asyncio
async def test_a_restarted_node_does_not_wait_for_its_earlier_life(
    redis_url: str, redis_client: redis.asyncio.Redis, tmp_path: Path
) -> None:
    cluster = ClusterStore(redis_client)
    leases = TableStore(redis_client).leases
    tables = tmp_path / "tables.toml"
    tables.write_text(quick_tables(*TABLES, betting_ms=60_000))
    port = free_port()
    args = server_args(
        redis_url,
        tables,
        tmp_path / "data",
        secret=SECRET,
        port=port,
        lease_ms=2000,  # the default
        extra=["--node-name", "restarted"],
    )
    first = ServerProcess(args, tmp_path / "first.log")
    second: ServerProcess | None = None
    try:
        await first.serving(port)
        await ready(first, port)
        player = await Client.hello(first.url)
        await player.ok(Join, table_id="r1", buy_in=1000)
        token = player.welcome.resume_token if player.welcome is not None else None
        await player.close()

        live = await cluster.live_nodes()
        [earlier] = [i for i in live.instances if i.startswith("restarted#")]
        first.kill()
        began = time.monotonic()
        # As if it had beaten and renewed its leases just before dying, and for long: on
        # a loaded machine the new process may take longer to start than a registration
        # or a lease lives, and there would be nothing left to wait for (nor to set
        # aside, nor to give up).
        await cluster.beat(earlier, 30_000, {"name": "restarted"}, name="restarted")
        for table_id, held in zip(TABLES, await leases.holders(TABLES), strict=True):
            assert held is not None
            assert held[1] == earlier
            assert await leases.renew(table_id, earlier, held[0], 30_000)
        second = ServerProcess(args, tmp_path / "second.log")
        await second.serving(port)
        answered = await ready(second, port)
        print(f"restart: kill -9, start again, /readyz 200 in {answered - began:.2f} s")

        out = second.output()
        assert "did not announce their tables in time" not in out, out[-3000:]
        assert f"set aside {earlier}, this node's earlier life" in out, out[-3000:]
        assert "its leases of 2 table(s) given up" in out, out[-3000:]
        assert earlier not in (await cluster.live_nodes()).instances
        # The player is back at their table, every chip there.
        again = await Client.hello(second.url, resume_token=token)
        balances = await again.ok(GetBalance)
        assert isinstance(balances, Balances)
        assert balances.account + sum(b.balance for b in balances.tables) == 10_000
        await again.close()
    finally:
        first.close()
        if second is not None:
            second.close()
