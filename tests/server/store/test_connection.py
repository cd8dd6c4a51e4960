"""Commands packed by hiredis: the same bytes as redis-py's packer, and a real Redis
understands them."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path
from typing import Any

import pytest
import redis.asyncio
from hypothesis import given
from hypothesis import strategies as st
from redis.asyncio.connection import UnixDomainSocketConnection
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import DataError
from redis.exceptions import TimeoutError as RedisTimeoutError

from bench.procs.topology import LocalCluster
from server.store.client.connection import (
    SOCKET_TIMEOUT_S,
    HiredisConnection,
    HiredisSSLConnection,
    HiredisUnixConnection,
    blocking_pool,
    close_client,
    connection_class,
    is_cluster,
    is_cluster_url,
    parse_cluster_url,
    redis_client,
)
from server.store.embedded.process import EmbeddedRedis

_ARG = st.one_of(
    st.text(),
    st.binary(),
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.floats(allow_nan=False, allow_infinity=False),
)


def _packed(connection: UnixDomainSocketConnection, *args: Any) -> bytes:
    return b"".join(bytes(part) for part in connection.pack_command(*args))


@given(name=st.sampled_from(["EVALSHA", "SET", "CONFIG GET", "XADD"]), args=st.lists(_ARG))
def test_the_same_bytes_as_redis_py(name: str, args: list[object]) -> None:
    ours = HiredisUnixConnection(path="/nonexistent")
    theirs = UnixDomainSocketConnection(path="/nonexistent")
    assert _packed(ours, name, *args) == _packed(theirs, name, *args)


def test_values_neither_packs_are_refused_the_same_way() -> None:
    ours = HiredisUnixConnection(path="/nonexistent")
    for bad in (True, None, [1]):
        with pytest.raises(DataError):
            ours.pack_command("SET", "k", bad)
    assert (
        _packed(ours, "SET", "k", memoryview(b"v")) == b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n"
    )


def test_a_class_for_each_kind_of_url() -> None:
    assert connection_class("unix:///tmp/redis.sock") is HiredisUnixConnection
    assert connection_class("redis://localhost:6379/0") is HiredisConnection
    assert connection_class("REDISS://example:6380") is HiredisSSLConnection


@pytest.mark.parametrize(
    ("url", "cls"),
    [
        ("unix:///tmp/redis.sock?db=2", HiredisUnixConnection),
        ("redis://localhost:6379/0", HiredisConnection),
        ("rediss://example:6380", HiredisSSLConnection),
    ],
)
def test_the_pool_makes_hiredis_connections_whatever_the_url(url: str, cls: type) -> None:
    pool = blocking_pool(url, max_connections=3, timeout=1.0)
    assert pool.connection_class is cls
    assert pool.max_connections == 3


@pytest.mark.asyncio
async def test_a_real_redis_runs_what_hiredis_packed(redis_server: EmbeddedRedis) -> None:
    pool = blocking_pool(redis_server.url, 4, 5.0)
    assert pool.connection_class is connection_class(redis_server.url)
    client = redis.asyncio.Redis(connection_pool=pool)
    try:
        await client.flushdb()
        blob = bytes(range(256)) * 40  # binary, above redis-py's own chunking size
        script = client.register_script("return {KEYS[1], ARGV[1], ARGV[2], ARGV[3]}")
        assert await script(keys=["k:ü"], args=[blob, -7, 2.5]) == [
            "k:ü".encode(),
            blob,
            b"-7",
            b"2.5",
        ]
        async with client.pipeline(transaction=False) as pipe:
            pipe.set("a", blob)
            pipe.get("a")
            pipe.incrby("n", 2**40)
            assert await pipe.execute() == [True, blob, 2**40]
    finally:
        await client.aclose(close_connection_pool=True)


def test_the_pool_bounds_each_reply_unless_the_url_says_otherwise() -> None:
    pool = blocking_pool("unix:///tmp/redis.sock", 2, 1.0)
    assert pool.connection_kwargs["socket_timeout"] == SOCKET_TIMEOUT_S
    assert pool.connection_kwargs["socket_connect_timeout"] == SOCKET_TIMEOUT_S
    own = blocking_pool("redis://localhost:6379/0?socket_timeout=2.5", 2, 1.0)
    assert own.connection_kwargs["socket_timeout"] == 2.5


@pytest.mark.asyncio
async def test_a_hung_redis_fails_the_call_instead_of_holding_it(tmp_path: Path) -> None:
    async with EmbeddedRedis(tmp_path) as server:
        client = redis.asyncio.Redis(
            connection_pool=blocking_pool(server.url, 2, 1.0, socket_timeout=0.5),
            retry=Retry(NoBackoff(), 0),
        )
        try:
            assert await client.ping()
            pid = server.pid
            assert pid is not None
            os.kill(pid, signal.SIGSTOP)  # alive, but answers nothing
            try:
                started = time.monotonic()
                with pytest.raises(RedisTimeoutError):
                    await client.get("k")
                assert time.monotonic() - started < 3
            finally:
                os.kill(pid, signal.SIGCONT)
        finally:
            await client.aclose(close_connection_pool=True)


def test_a_cluster_url_names_its_nodes() -> None:
    nodes, tls, options = parse_cluster_url(
        "redis+cluster://u:p@10.0.0.1:7000,10.0.0.2:7001?socket_timeout=2"
    )
    assert nodes == [("10.0.0.1", 7000), ("10.0.0.2", 7001)]
    assert not tls
    assert (options["username"], options["password"], options["socket_timeout"]) == ("u", "p", "2")
    assert parse_cluster_url("rediss+cluster://h:1")[1]
    assert is_cluster_url("redis+cluster://h:1")
    assert not is_cluster_url("redis://h:1")
    with pytest.raises(ValueError, match="host:port"):
        parse_cluster_url("redis+cluster://h")


@pytest.mark.asyncio
async def test_a_cluster_client_packs_with_hiredis_on_every_node(
    redis_cluster: LocalCluster | None,
) -> None:
    if redis_cluster is None:
        pytest.skip("needs --redis-cluster")
    client: Any = redis_client(redis_cluster.url, max_connections=4, timeout=5)
    try:
        assert is_cluster(client)
        await client.set("{a}x", b"1")
        await client.set("{b}y", b"2")  # another slot, maybe another node
        assert await client.get("{a}x") == b"1"
        nodes = client.get_nodes()
        assert len(nodes) == 3
        assert {n.connection_class for n in nodes} == {HiredisConnection}
    finally:
        await close_client(client)
