"""Several ``paigow-server`` processes on the session's Redis: one node each."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis.asyncio

from server.cluster.placement import assign, node_name
from server.store.embedded.process import EmbeddedRedis
from server.store.nodes.shared import ClusterStore
from server.store.tables.store import TableStore
from tests.helpers import until
from tests.server.processes import ServerProcess, http_get, run_cli, server_args

SECRET = "cluster-test-secret-0123456789"
_HELD = re.compile(r'^paigow_table_held\{table="([^"]+)"\} ([0-9.]+)$', re.M)
_LIVE = re.compile(r"^paigow_cluster_nodes ([0-9.]+)$", re.M)


class Nodes:
    """Server processes started by one test, on one Redis and one tables file."""

    def __init__(self, redis_server: EmbeddedRedis, tmp_path: Path) -> None:
        self.redis_server = redis_server
        self.tmp_path = tmp_path
        self.processes: dict[str, ServerProcess] = {}
        self.tables_file = tmp_path / "tables.toml"

    def tables(self, text: str) -> None:
        """The tables every node serves."""
        self.tables_file.write_text(text)

    def launch(self, name: str, *, lease_ms: int = 1000, port: int = 0) -> ServerProcess:
        """Start node ``name`` (not waiting for it)."""
        args = server_args(
            self.redis_server.url,
            self.tables_file,
            self.tmp_path / f"data-{name}",
            secret=SECRET,
            lease_ms=lease_ms,
            port=port,
            extra=["--node-name", name],
        )
        process = ServerProcess(args, self.tmp_path / f"{name}-{len(self.processes)}.log")
        self.processes[name] = process
        return process

    async def start(self, *names: str, lease_ms: int = 1000) -> list[ServerProcess]:
        """Start nodes one after the other, each once it serves."""
        started = []
        for name in names:
            process = self.launch(name, lease_ms=lease_ms)
            await process.started(within=30)
            started.append(process)
        return started

    def close(self) -> None:
        for process in self.processes.values():
            process.close()

    # --- where the tables are ------------------------------------------------------

    async def holders(self, client: redis.asyncio.Redis, table_ids: list[str]) -> dict[str, str]:
        """Table -> the name of the node holding its lease (absent: none)."""
        found = await TableStore(client).leases.holders(table_ids)
        return {t: node_name(h[1]) for t, h in zip(table_ids, found, strict=True) if h is not None}

    async def placement(self, client: redis.asyncio.Redis, table_ids: list[str]) -> dict[str, str]:
        """Table -> the name of the node the live nodes place it on."""
        live = await ClusterStore(client).live_nodes()
        return {t: node_name(i) for t, i in assign(table_ids, live.instances).items()}

    async def settled(self, client: redis.asyncio.Redis, table_ids: list[str]) -> dict[str, str]:
        """Wait until every table is held where the live nodes place it: the holders."""

        async def check() -> dict[str, str] | None:
            holders = await self.holders(client, table_ids)
            placed = await self.placement(client, table_ids)
            return holders if holders == placed and len(holders) == len(table_ids) else None

        return await until(check, 30, "the tables to be held where they are placed", every=0.05)

    def held(self, name: str) -> set[str]:
        """The tables node ``name`` says it holds (its ``/metrics``)."""
        port = self.processes[name].port
        assert port is not None
        _, body = http_get(port, "/metrics")
        return {t for t, v in _HELD.findall(body) if float(v) == 1.0}

    async def held_async(self, name: str) -> set[str]:
        """:meth:`held`, in a thread: the loop's clients go on reading meanwhile."""
        return await asyncio.to_thread(self.held, name)

    async def live_seen(self, name: str) -> int:
        """How many live nodes node ``name`` counts (its ``/metrics``), read in a thread:
        a blocking read on the loop would stall the test's clients (their heartbeats)."""
        port = self.processes[name].port
        assert port is not None
        _, body = await asyncio.to_thread(http_get, port, "/metrics")
        match = _LIVE.search(body)
        assert match is not None, body
        return int(float(match.group(1)))

    def url(self, name: str) -> str:
        return self.processes[name].url

    def audit(self) -> str:
        done = run_cli(["--redis-url", self.redis_server.url, "audit"])
        assert done.returncode == 0, done.stdout + done.stderr
        return done.stdout


@pytest.fixture
def nodes(
    redis_server: EmbeddedRedis, redis_client: redis.asyncio.Redis, tmp_path: Path
) -> Iterator[Nodes]:
    """Nodes on the session's Redis (flushed first), all killed afterwards."""
    started = Nodes(redis_server, tmp_path)
    try:
        yield started
    finally:
        started.close()
