"""redis-py connections that pack commands with hiredis, in C.

redis-py's asyncio connections pack every argument of every command in Python; a
table commit carries dozens of arguments, and packing them was an eighth of the
server's CPU under load. ``hiredis.pack_command`` writes the same bytes (checked by
the tests) six times faster. Arguments hiredis does not take (redis-py refuses them
too, with a clearer error) go through redis-py's own packer.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs, urlsplit

import hiredis
import redis.asyncio
from redis.asyncio.cluster import ClusterNode, RedisCluster
from redis.asyncio.connection import (
    AbstractConnection,
    BlockingConnectionPool,
    Connection,
    SSLConnection,
    UnixDomainSocketConnection,
    parse_url,
)
from redis.asyncio.sentinel import SentinelManagedConnection, SentinelManagedSSLConnection
from redis.crc import key_slot as _key_slot

from server.store.client.sentinel import (
    SentinelBlockingPool,
    is_sentinel_url,
    parse_sentinel_url,
    sentinel_pool,
)

SOCKET_TIMEOUT_S = 5.0
"""How long a Redis reply may take before the call fails (see :func:`blocking_pool`)."""


class _HiredisPacking(AbstractConnection):
    def pack_command(self, *args: Any) -> list[bytes]:
        # redis-py splits a command name written with its subcommand ("CONFIG GET").
        if isinstance(args[0], str) and " " in args[0]:
            args = (*args[0].split(), *args[1:])
        try:
            return [hiredis.pack_command(args)]
        except TypeError:
            return super().pack_command(*args)


class HiredisConnection(_HiredisPacking, Connection):
    """A TCP connection packing with hiredis."""


class HiredisSSLConnection(_HiredisPacking, SSLConnection):
    """A TLS connection packing with hiredis."""


class HiredisUnixConnection(_HiredisPacking, UnixDomainSocketConnection):
    """A unix-socket connection packing with hiredis."""


class HiredisSentinelConnection(_HiredisPacking, SentinelManagedConnection):
    """A connection to the primary Sentinel names, packing with hiredis."""


class HiredisSentinelSSLConnection(_HiredisPacking, SentinelManagedSSLConnection):
    """A TLS connection to the primary Sentinel names, packing with hiredis."""


def connection_class(url: str) -> type[AbstractConnection]:
    """The connection class for a Redis URL (``redis://``, ``rediss://``, ``unix://``)."""
    scheme = url.split(":", 1)[0].lower()
    if scheme == "unix":
        return HiredisUnixConnection
    if scheme == "rediss":
        return HiredisSSLConnection
    return HiredisConnection


def blocking_pool(
    url: str, max_connections: int, timeout: float, socket_timeout: float = SOCKET_TIMEOUT_S
) -> BlockingConnectionPool:
    """A pool of at most ``max_connections`` hiredis-packing connections to ``url``,
    where a caller waits up to ``timeout`` seconds for a free one.

    A reply (and a connection) not come within ``socket_timeout`` seconds fails with
    ``redis.exceptions.TimeoutError`` unless the URL sets its own
    (``?socket_timeout=``): the store sends one pipeline at a time for every table,
    so a Redis that hangs must fail the calls, not hold every table's writes and lease
    renewals for good. redis-py's default is 5 s since 8.0 and none before.

    Not ``BlockingConnectionPool.from_url(url, connection_class=...)``: the class the
    URL implies (unix socket, TLS) would replace the one given.
    """
    options: dict[str, Any] = dict(parse_url(url))
    options["connection_class"] = connection_class(url)
    options.setdefault("socket_timeout", socket_timeout)
    options.setdefault("socket_connect_timeout", socket_timeout)
    return BlockingConnectionPool(max_connections=max_connections, timeout=timeout, **options)


CLUSTER_SCHEMES = ("redis+cluster", "rediss+cluster")
"""URL schemes of a Redis Cluster: ``redis+cluster://host:port,host:port,...``."""


def is_cluster_url(url: str) -> bool:
    """Whether ``url`` names a Redis Cluster (:data:`CLUSTER_SCHEMES`)."""
    return url.split(":", 1)[0].lower() in CLUSTER_SCHEMES


def parse_cluster_url(url: str) -> tuple[list[tuple[str, int]], bool, dict[str, str]]:
    """``(nodes, tls, options)`` of ``redis+cluster://[user:password@]host:port,...
    [?socket_timeout=...]``: the nodes to start from (any of the cluster's will do),
    whether to speak TLS, and the query's options. ``ValueError`` if malformed."""
    parts = urlsplit(url)
    if parts.scheme.lower() not in CLUSTER_SCHEMES:
        raise ValueError(f"not a cluster URL: {url!r}")
    hosts = parts.netloc.rpartition("@")[2]
    nodes = []
    for item in hosts.split(","):
        host, _, port = item.strip().rpartition(":")
        if not host or not port.isdigit():
            raise ValueError(f"a cluster URL names host:port pairs: {url!r}")
        nodes.append((host.strip("[]"), int(port)))
    options = {name: values[-1] for name, values in parse_qs(parts.query).items()}
    options |= {"username": parts.username or "", "password": parts.password or ""}
    return nodes, parts.scheme.lower().startswith("rediss"), options


def cluster_client(
    url: str, max_connections: int, socket_timeout: float = SOCKET_TIMEOUT_S
) -> RedisCluster:
    """A bytes client of the Redis Cluster ``url`` names (:func:`parse_cluster_url`),
    packing with hiredis, with at most ``max_connections`` connections per node.

    redis-py's cluster client refuses a call when a node's connections are all busy
    (no waiting pool, ``MaxConnectionsError``, a connection error the tables retry): the
    store's scripts share pipelines (one per node in flight,
    :mod:`~server.store.client.batching`), so only the plain reads beside them (balances,
    sessions) take connections of their own, and a generous bound is not reached in
    practice.
    """
    nodes, tls, options = parse_cluster_url(url)
    timeout = float(options.get("socket_timeout", socket_timeout))
    client = RedisCluster(
        startup_nodes=[ClusterNode(host, port) for host, port in nodes],
        max_connections=max_connections,
        socket_timeout=timeout,
        socket_connect_timeout=timeout,
        username=options["username"] or None,
        password=options["password"] or None,
        ssl=tls,
    )
    packing = HiredisSSLConnection if tls else HiredisConnection
    # The cluster client takes no connection class: every node it creates reads it
    # from these connection arguments (the start nodes have their own copy).
    client.connection_kwargs["connection_class"] = packing
    client.nodes_manager.connection_kwargs["connection_class"] = packing
    for node in client.nodes_manager.startup_nodes.values():
        node.connection_class = packing
    return client


Client = redis.asyncio.Redis | RedisCluster
"""A client of one Redis (or of the primary sentinels name) or of a Redis Cluster."""


def is_cluster(client: object) -> bool:
    """Whether ``client`` talks to a Redis Cluster."""
    return isinstance(client, RedisCluster)


def key_slot(key: str) -> int:
    """The Redis Cluster slot of ``key`` (its hash tag's, if it has one)."""
    return int(_key_slot(key.encode()))


def redis_client(
    url: str, max_connections: int, timeout: float, socket_timeout: float = SOCKET_TIMEOUT_S
) -> redis.asyncio.Redis:
    """A bytes client on a pool as :func:`blocking_pool` makes, for any URL the server
    takes: one Redis (``redis://``, ``rediss://``, ``unix://``), the primary that
    sentinels name (``redis+sentinel://``, see :mod:`server.store.client.sentinel`), or a Redis
    Cluster (``redis+cluster://``, :func:`cluster_client`, typed as the stores take it:
    they use the commands both clients have)."""
    if is_cluster_url(url):
        # Four times the bound per node: the cluster client refuses a call past it
        # rather than wait (see cluster_client).
        cluster: Any = cluster_client(url, 4 * max_connections, socket_timeout)
        client: redis.asyncio.Redis = cluster
        return client
    if is_sentinel_url(url):
        tls = parse_sentinel_url(url).tls
        pool: BlockingConnectionPool = sentinel_pool(
            url,
            max_connections,
            timeout,
            socket_timeout,
            HiredisSentinelSSLConnection if tls else HiredisSentinelConnection,
        )
    else:
        pool = blocking_pool(url, max_connections, timeout, socket_timeout)
    return redis.asyncio.Redis(connection_pool=pool)


async def close_client(client: redis.asyncio.Redis) -> None:
    """Close ``client``, its pool and, for Sentinel, its connections to the sentinels."""
    if is_cluster(client):
        await client.aclose()
        return
    pool = client.connection_pool
    await client.aclose(close_connection_pool=True)
    if isinstance(pool, SentinelBlockingPool):
        await pool.aclose_sentinels()
