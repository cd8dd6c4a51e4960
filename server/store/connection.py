"""redis-py connections that pack commands with hiredis, in C.

redis-py's asyncio connections pack every argument of every command in Python; a
table commit carries dozens of arguments, and packing them was an eighth of the
server's CPU under load. ``hiredis.pack_command`` writes the same bytes (checked by
the tests) six times faster. Arguments hiredis does not take (redis-py refuses them
too, with a clearer error) go through redis-py's own packer.
"""

from __future__ import annotations

from typing import Any

import hiredis
import redis.asyncio
from redis.asyncio.connection import (
    AbstractConnection,
    BlockingConnectionPool,
    Connection,
    SSLConnection,
    UnixDomainSocketConnection,
    parse_url,
)
from redis.asyncio.sentinel import SentinelManagedConnection, SentinelManagedSSLConnection

from server.store.sentinel import (
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


def redis_client(
    url: str, max_connections: int, timeout: float, socket_timeout: float = SOCKET_TIMEOUT_S
) -> redis.asyncio.Redis:
    """A bytes client on a pool as :func:`blocking_pool` makes, for any URL the server
    takes: one Redis (``redis://``, ``rediss://``, ``unix://``), or the primary that
    sentinels name (``redis+sentinel://``, see :mod:`server.store.sentinel`)."""
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
    pool = client.connection_pool
    await client.aclose(close_connection_pool=True)
    if isinstance(pool, SentinelBlockingPool):
        await pool.aclose_sentinels()
