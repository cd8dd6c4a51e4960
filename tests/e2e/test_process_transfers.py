"""A server process killed with SIGKILL while chips cross between an account and a
table: every chip is still accounted for (some in transit), and the next server
finishes the transfer.

The kill lands wherever the server happens to be in a buy-in or a cash-out (the
steps one by one are crashed on purpose in tests/server/store/test_transfers.py);
each kill is checked the same way: the audit passes at once, and once the next server
hosts the table nothing is left in transit and nothing was created or lost.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import redis.asyncio

from protocol.codec import encode
from protocol.messages import Join, Leave, Watch
from server.store.tables.store import TableStore
from tests.helpers import until
from tests.server.helpers import Client
from tests.server.processes import ServerProcess, run_cli, server_args

SECRET = "process-test-secret-0123456789"

TABLES = """
[[table]]
id = "k"
name = "Kill"
min_buy_in = 100
max_buy_in = 5000
betting_ms = 30000
"""


@pytest.fixture
def processes() -> Iterator[list[ServerProcess]]:
    started: list[ServerProcess] = []
    yield started
    for p in started:
        p.close()


def audited(redis_url: str) -> str:
    done = run_cli(["--redis-url", redis_url, "audit"])
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip().endswith("audit passed"), done.stdout
    return done.stdout


@pytest.mark.asyncio
async def test_sigkill_mid_transfer_then_the_next_server_finishes_it(
    redis_url: str,
    redis_client: redis.asyncio.Redis,
    tmp_path: Path,
    processes: list[ServerProcess],
) -> None:
    tables = tmp_path / "tables.toml"
    tables.write_text(TABLES)

    def start() -> ServerProcess:
        args = server_args(redis_url, tables, tmp_path / "data", secret=SECRET, lease_ms=1000)
        process = ServerProcess(args, tmp_path / f"server-{len(processes)}.log")
        processes.append(process)
        return process

    server = start()
    await server.started()
    store = TableStore(redis_client)
    # Killed right after a join was sent, after a leave, then after a join again.
    for kill_after in (Join, Leave, Join):
        player = await Client.hello(server.url, label="p")
        try:
            await player.ok(Watch, table_id="k")
            seated = False
            for _ in range(3):  # a few crossings, then one more left in flight
                if seated:
                    await player.ok(Leave, table_id="k")
                else:
                    await player.ok(Join, table_id="k", buy_in=300)
                seated = not seated
            if kill_after is Join and seated:
                await player.ok(Leave, table_id="k")
            elif kill_after is Leave and not seated:
                await player.ok(Join, table_id="k", buy_in=300)
            rid = "in-flight"
            message = (
                Join(rid=rid, table_id="k", buy_in=300)
                if kill_after is Join
                else Leave(rid=rid, table_id="k")
            )
            await player.send(encode(message))
            server.kill()
        finally:
            await player.close()
        audited(redis_url)  # whatever was half done is counted in transit
        server = start()
        await server.started()

        async def finished() -> bool:
            return not await store.transfers.pending("k")

        await until(finished, 20, "the next server to finish the transfers")
        assert "in transit: 0 " in audited(redis_url)
