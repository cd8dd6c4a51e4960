"""The store's front door: the stores a process needs opened by one call from the
settings (``server/store/opening.py``), and the store's calls failing with its own
error, :class:`StoreUnavailable`, where Redis did not answer."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path

import pytest
import redis.asyncio
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import RedisError

from bench.procs.topology import LocalCluster
from server.config import Settings
from server.store import (
    NotTheServers,
    StoreUnavailable,
    open_command_stores,
    open_stores,
)
from server.store.archiving.source import ArchivingCalls
from server.store.audit.check import audit
from server.store.embedded.process import EmbeddedRedis
from server.store.nodes.shared import ClusterStore
from server.store.players.accounts import AccountStore
from server.store.players.guests import GuestLimits, GuestStore
from server.store.players.sessions import SessionStore


@pytest.mark.asyncio
async def test_the_server_opens_its_stores_on_the_redis_it_is_given(
    server_settings: Settings,
    redis_client: redis.asyncio.Redis,
    redis_cluster: LocalCluster | None,
) -> None:
    async with await open_stores(server_settings) as stores:
        assert stores.url == server_settings.redis_url
        assert stores.embedded is None
        assert stores.supervisor is None
        credited = await stores.accounts.credit("ann", 500, "k1")
        assert (credited.applied, credited.balance) == (True, 500)
        # Every store is on the same Redis: what one wrote the others' Redis holds.
        assert await AccountStore(redis_client).balance("ann") == 500
        assert await stores.tables.leases.holders(["t1"]) == [None]
        # The nodes' shared data is not split by slot: a node on a Redis Cluster stays
        # alone and never writes it (--redis-cluster runs this test on one).
        assert stores.redis_cluster == (redis_cluster is not None)
        if not stores.redis_cluster:
            live = await stores.nodes.beat("n1", 5_000, {"name": "n1"})
            assert live.instances == ["n1"]
        assert (await stores.audit(lambda stored: (0, 0, 0))).ok


@pytest.mark.asyncio
async def test_the_server_runs_its_own_redis_in_its_data_folder(
    server_settings: Settings, tmp_path: Path
) -> None:
    settings = replace(server_settings, redis_url=None, data_dir=tmp_path / "data")
    restarts: list[None] = []
    stores = await open_stores(settings, lambda: restarts.append(None))
    try:
        assert stores.embedded is not None
        assert stores.embedded.running
        assert stores.supervisor is not None
        # Where the operator's commands find it while the server runs.
        assert (settings.data_dir / "redis.url").read_text() == stores.url
        await stores.accounts.credit("ann", 700, "k1")
        said: list[str] = []
        async with await open_command_stores(settings, said.append) as command:
            assert await command.accounts.balance("ann") == 700
        assert said == [
            f"using the Redis of the server running on {settings.data_dir.resolve()} ({stores.url})"
        ]
    finally:
        await stores.close()
    assert not (settings.data_dir / "redis.url").exists()
    assert stores.embedded is None
    # Stopped: an operator's command starts its Redis from its data for the command.
    said = []
    async with await open_command_stores(settings, said.append) as command:
        assert command.embedded is not None
        assert await command.accounts.balance("ann") == 700
    assert said == [
        f"no server is running on {settings.data_dir.resolve()}: using its Redis data in "
        f"{settings.data_dir.resolve() / 'redis'}"
    ]
    # And the server again, on what it left.
    async with await open_stores(settings) as again:
        assert await again.accounts.balance("ann") == 700
    assert restarts == []


@pytest.mark.asyncio
async def test_a_command_pointed_at_a_folder_that_is_no_server_s_stops(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path / "nothing")
    with pytest.raises(NotTheServers, match="holds no server's data"):
        await open_command_stores(settings, print)
    assert not (tmp_path / "nothing").exists()  # no empty Redis started there


@pytest.mark.asyncio
async def test_a_redis_that_does_not_answer_fails_the_opening_as_unavailable(
    tmp_path: Path,
) -> None:
    url = f"unix://{tmp_path / 'nobody.sock'}"
    with pytest.raises(StoreUnavailable) as failed:
        await open_stores(Settings(redis_url=url, data_dir=tmp_path))
    assert isinstance(failed.value.__cause__, RedisError | OSError)
    with pytest.raises(StoreUnavailable):
        await open_command_stores(Settings(redis_url=url, data_dir=tmp_path), print)


@pytest.mark.asyncio
async def test_the_stores_calls_on_a_stopped_redis_raise_store_unavailable(
    tmp_path: Path,
) -> None:
    """Each store's calls, and the nodes' publications, fail with the store's own
    error, Redis's (or the socket's) kept as its cause."""
    embedded = EmbeddedRedis(tmp_path)
    await embedded.astart()
    # Failing at once: redis-py's own retries would only make the test slow.
    client = embedded.client(
        socket_timeout=2, socket_connect_timeout=2, retry=Retry(NoBackoff(), 0)
    )
    try:
        accounts, sessions = AccountStore(client), SessionStore(client)
        guests, nodes = GuestStore(client), ClusterStore(client)
        archiving = ArchivingCalls(client)
        lease = archiving.lease("me", 3_000)
        await accounts.credit("ann", 100, "k1")
        await embedded.astop()
        calls = [
            accounts.balance("ann"),
            accounts.credit("ann", 100, "k2"),
            sessions.load("s1"),
            sessions.revoke("ann", 1),
            guests.admit("g1", None, GuestLimits(), 1),
            nodes.live_nodes(),
            nodes.seated_tables("ann"),
            archiving.game_log("ann"),
            archiving.ledger_sources(),
            lease.hold(),
            audit(client, lambda stored: (0, 0, 0)),
        ]
        for call in calls:
            with pytest.raises(StoreUnavailable) as failed:
                await call
            assert isinstance(failed.value.__cause__, RedisError | OSError), failed.value
        with pytest.raises(StoreUnavailable) as failed:
            await asyncio.wait_for(nodes.publish("a-channel", b"hello"), 10)
        assert isinstance(failed.value.__cause__, RedisError | OSError)
    finally:
        await client.aclose()
        await embedded.astop()
