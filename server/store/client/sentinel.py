"""Redis through Sentinel: the URL form, and a bounded pool that follows the primary.

``redis+sentinel://[[user]:password@]host:port[,host:port...]/service[/db]`` names the
sentinels and the monitored service (``rediss+sentinel://`` for TLS to the Redis
servers); a ``sentinel_password`` query parameter authenticates to the sentinels
(the password before ``@`` is the Redis servers'). redis-py's Sentinel support asks
the sentinels for the primary when it connects and again after a failover (a
connection error, or a primary that became a replica), so a client of this pool
reaches the new primary once one is promoted.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from redis.asyncio.connection import BlockingConnectionPool
from redis.asyncio.sentinel import (
    Sentinel,
    SentinelConnectionPool,
    SentinelManagedConnection,
    SentinelManagedSSLConnection,
)

SCHEMES = ("redis+sentinel", "rediss+sentinel")


@dataclass(frozen=True, slots=True)
class SentinelAddress:
    """What a ``redis+sentinel://`` URL says."""

    sentinels: tuple[tuple[str, int], ...]
    service: str
    db: int = 0
    username: str | None = None
    password: str | None = None
    sentinel_password: str | None = None
    tls: bool = False


def is_sentinel_url(url: str) -> bool:
    """Whether ``url`` names sentinels rather than one Redis."""
    return url.split(":", 1)[0].lower() in SCHEMES


def parse_sentinel_url(url: str) -> SentinelAddress:
    """The sentinels, service and credentials of a ``redis+sentinel://`` URL; raises
    ``ValueError`` for a URL that is not one."""
    parts = urlsplit(url)
    if parts.scheme.lower() not in SCHEMES:
        raise ValueError(f"not a Sentinel URL: {url!r}")
    netloc = parts.netloc
    userinfo, _, hosts = netloc.rpartition("@")
    username, _, password = userinfo.partition(":")
    sentinels = []
    for item in hosts.split(","):
        host, _, port = item.strip().rpartition(":")
        if not host or not port.isdigit():
            raise ValueError(f"a sentinel is host:port, not {item!r}, in {url!r}")
        sentinels.append((host.strip("[]"), int(port)))
    path = [unquote(p) for p in parts.path.split("/") if p]
    if not path or len(path) > 2:
        raise ValueError(f"name the service (and maybe the database): {url!r}")
    if len(path) == 2 and not path[1].isdigit():
        raise ValueError(f"the database is a number: {url!r}")
    query = parse_qs(parts.query)
    return SentinelAddress(
        sentinels=tuple(sentinels),
        service=path[0],
        db=int(path[1]) if len(path) == 2 else 0,
        username=unquote(username) or None,
        password=unquote(password) or None,
        sentinel_password=query.get("sentinel_password", [None])[0],
        tls=parts.scheme.lower().startswith("rediss"),
    )


class SentinelBlockingPool(SentinelConnectionPool, BlockingConnectionPool):
    """redis-py's Sentinel pool, where a caller waits for a free connection (up to
    ``timeout``) instead of failing past ``max_connections``, like the store's pool
    for one Redis (:func:`server.store.client.connection.blocking_pool`)."""

    sentinel: Sentinel

    async def aclose_sentinels(self) -> None:
        """Close the connections to the sentinels (the pool's own close does not)."""
        await self.sentinel.aclose()


def sentinel_pool(
    url: str,
    max_connections: int,
    timeout: float,
    socket_timeout: float,
    connection_class: type[SentinelManagedConnection] | None = None,
) -> SentinelBlockingPool:
    """A pool of at most ``max_connections`` connections to the primary of the service
    that the sentinels of ``url`` monitor; ``socket_timeout`` bounds every reply, from
    the sentinels too."""
    address = parse_sentinel_url(url)
    timeouts: dict[str, Any] = {
        "socket_timeout": socket_timeout,
        "socket_connect_timeout": socket_timeout,
    }
    sentinel_kwargs = dict(timeouts)
    if address.sentinel_password:
        sentinel_kwargs["password"] = address.sentinel_password
    sentinel = Sentinel(list(address.sentinels), sentinel_kwargs=sentinel_kwargs)
    if connection_class is None:
        connection_class = (
            SentinelManagedSSLConnection if address.tls else SentinelManagedConnection
        )
    pool = SentinelBlockingPool(  # type: ignore[no-untyped-call]
        address.service,
        sentinel,
        max_connections=max_connections,
        timeout=timeout,
        connection_class=connection_class,
        db=address.db,
        username=address.username,
        password=address.password,
        **timeouts,
    )
    pool.sentinel = sentinel
    return pool
