"""Shared fixtures: one real Redis for the whole session, a clean database per test.

``--redis-cluster`` (or ``PAIGOW_TEST_CLUSTER=1``) gives the tests that take
``redis_client`` a client of a local Redis Cluster of three primaries instead
(:class:`~bench.procs.topology.LocalCluster`): the store and money tests then run
against a cluster (docs/DESIGN.md, "Redis failures").
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import cast

import pytest
import pytest_asyncio
import redis
import redis.asyncio
from hypothesis import settings
from redis.asyncio.cluster import RedisCluster

from bench.procs.topology import LocalCluster
from server.app import App
from server.config import Settings
from server.store.client.connection import cluster_client
from server.store.embedded.process import EmbeddedRedis

# Property tests check what is true, not how fast: Hypothesis's default deadline of
# 200 ms an example failed brute-force comparisons on a loaded machine. Speed is
# measured by the benchmarks (make bench).
settings.register_profile("paigow", deadline=None)
settings.load_profile("paigow")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--redis-cluster",
        action="store_true",
        default=os.environ.get("PAIGOW_TEST_CLUSTER") == "1",
        help="run the tests that take redis_client against a local Redis Cluster",
    )


@pytest.fixture(scope="session")
def redis_cluster(request: pytest.FixtureRequest) -> Iterator[LocalCluster | None]:
    """A local cluster of three primaries for the session, with ``--redis-cluster``."""
    if not request.config.getoption("--redis-cluster"):
        yield None
        return
    with LocalCluster() as cluster:
        yield cluster


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedRedis]:
    """One private redis-server (unix socket, append-only file) for the session."""
    with EmbeddedRedis(tmp_path_factory.mktemp("redis")) as server:
        yield server


@pytest.fixture
def redis_url(redis_server: EmbeddedRedis, redis_cluster: LocalCluster | None) -> str:
    """The URL a server or an operator's command takes for the test's Redis (the
    cluster's, with ``--redis-cluster``)."""
    return redis_cluster.url if redis_cluster is not None else redis_server.url


@pytest.fixture
def new_client(
    redis_server: EmbeddedRedis, redis_cluster: LocalCluster | None
) -> Callable[[], redis.asyncio.Redis]:
    """Makes another bytes client of the test's Redis (of the cluster, with
    ``--redis-cluster``; typed as the stores take it); close each one yourself."""

    def make() -> redis.asyncio.Redis:
        if redis_cluster is not None:
            return cast(redis.asyncio.Redis, cluster_client(redis_cluster.url, 16))
        return redis_server.client()

    return make


@pytest_asyncio.fixture
async def redis_client(
    new_client: Callable[[], redis.asyncio.Redis], redis_cluster: LocalCluster | None
) -> AsyncIterator[redis.asyncio.Redis]:
    """A bytes client on database 0 (of the cluster, with ``--redis-cluster``), flushed
    before the test."""
    client = new_client()
    if redis_cluster is not None:
        await cast(RedisCluster, client).flushall(target_nodes=RedisCluster.PRIMARIES)
    else:
        await client.flushdb()
    try:
        yield client
    finally:
        await client.aclose()


async def evalsha_calls(client: redis.asyncio.Redis) -> int:
    """How many EVALSHA calls Redis has run so far (INFO commandstats; every node's
    summed, on a cluster)."""
    if isinstance(client, RedisCluster):
        per_node = await client.info("commandstats", target_nodes=RedisCluster.PRIMARIES)
        return sum(
            int(stats.get("cmdstat_evalsha", {}).get("calls", 0)) for stats in per_node.values()
        )
    stats = await client.info("commandstats")
    return int(stats.get("cmdstat_evalsha", {}).get("calls", 0))


FAST_TABLES = """
[[table]]
id = "fast"
name = "Fast"
min_bet = 10
max_bet = 500
denominations = [5, 10, 25]
bonus_min = 5
bonus_max = 100
min_buy_in = 100
max_buy_in = 5000
betting_ms = 1500
dealing_ms = 200
setting_ms = 2000
revealing_ms = 300
settling_ms = 300
grace_ms = 5000

[[table]]
id = "slow"
name = "Slow"
betting_ms = 20000
setting_ms = 30000
"""


@pytest.fixture
def server_settings(
    redis_server: EmbeddedRedis, redis_cluster: LocalCluster | None, tmp_path: Path
) -> Settings:
    """Settings for an in-process server on a free port, using the session's Redis (the
    cluster, with ``--redis-cluster``).

    Table ``fast`` plays a round in about 4 s; ``slow`` has long phases for tests that
    act within one phase. The database is flushed first.
    """
    tables = tmp_path / "tables.toml"
    tables.write_text(FAST_TABLES)
    if redis_cluster is not None:
        url = redis_cluster.url
        for node in redis_cluster.nodes:
            with node.client() as sync_client:
                sync_client.flushall()
    else:
        url = redis_server.url
        with redis.Redis(**redis_server.connection_kwargs()) as sync_client:
            sync_client.flushdb()
    return Settings(
        port=0,
        redis_url=url,
        data_dir=tmp_path / "data",
        tables_file=tables,
        token_secret="test-secret-0123456789",
        lease_ms=1500,
        heartbeat_ms=5000,
        # Many guests come from one address here: the limits have tests of their own.
        guests_per_minute=0,
        guests_per_address=0,
    )


@pytest_asyncio.fixture
async def app(server_settings: Settings, redis_client: redis.asyncio.Redis) -> AsyncIterator[App]:
    """A running server (stopped after the test); its URL is ``ws://127.0.0.1:{app.port}/``.

    It needs ``redis_client`` so that the database is flushed before the server starts,
    never under it (a test asking for both would otherwise flush a running server's
    leases and tables away, in the order it lists them).
    """
    server = App(server_settings)
    await server.start()
    try:
        yield server
    finally:
        await server.stop()
