"""The store's front door: every store a process needs, opened by one call from the
settings, and closed by one.

- :func:`open_stores`, for the server: its Redis (``--redis-url``, else an embedded
  Redis in the data folder, started again by a supervisor if it dies, its URL kept in
  ``DATA_DIR/redis.url`` for the operator's commands), checked and moved to the present
  key layout, with the pools the server needs (a shared one, one for the leases and the
  heartbeat, and one per pub/sub relay);
- :func:`open_command_stores`, for an operator's command: the same Redis as the server
  (``--redis-url``; else the embedded Redis of the server running on ``--data-dir``;
  else, no server running there, its embedded Redis's data, started for the command),
  said which, and refused if it has the first key layout (the server moves it).
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType

import redis.asyncio

from server.config import Settings, redacted_url
from server.store.archiving.source import ArchivingCalls
from server.store.audit.check import ArchivedLedger, AuditReport, TableMoney, audit
from server.store.catalog.catalog import TableCatalog
from server.store.client.batching import Replication
from server.store.client.connection import (
    SOCKET_TIMEOUT_S,
    close_client,
    is_cluster,
    redis_client,
)
from server.store.embedded.process import EmbeddedRedis
from server.store.embedded.supervisor import RedisSupervisor
from server.store.errors import StoreFailure, translated
from server.store.jackpot.meters import JackpotStore
from server.store.migrate import layout, migrate
from server.store.nodes.shared import ClusterStore
from server.store.operators.tokens import AdminTokens
from server.store.players.accounts import AccountStore
from server.store.players.guests import GuestStore
from server.store.players.sessions import SessionStore
from server.store.pubsub.relay import Relay
from server.store.tables.store import TableStore

REDIS_URL_FILE = "redis.url"
"""Where a running server keeps its embedded Redis's URL, in its data folder."""
EMBEDDED_DIR = "redis"
"""The embedded Redis's folder (its append-only file) in the data folder."""
POOL_SIZE = 64
POOL_WAIT_S = 30.0
LEASE_POOL_SIZE = 2
"""Connections of the lease renewals and the node's heartbeat, apart from the shared
pool: with 1,667 tables and thousands of players, every connection of that pool was
busy, and renewals waiting for one for seconds let leases expire (docs/DESIGN.md,
"Leases and fencing tokens")."""
PUBSUB_POOL_SIZE = 2  # the node's one pub/sub connection, and a spare while it reconnects
COMMAND_POOL_SIZE = 4
COMMAND_TIMEOUT_S = 30.0


class NotTheServers(Exception):
    """What an operator's command was pointed at is not a server's: nothing to act on."""


@dataclass(eq=False)
class Stores:
    """The stores of one process, on one Redis: made by :func:`open_stores` or
    :func:`open_command_stores`, closed by :meth:`close` (or as an async context).

    Every store's calls raise :class:`~server.store.errors.StoreUnavailable` where
    Redis failed. ``redis_cluster``: the Redis is a Redis Cluster (the nodes' shared
    data, :attr:`nodes`, is not split by slot yet: a node there stays alone).
    ``embedded`` and ``supervisor``: the server's embedded Redis, if it runs one.
    ``client``: the shared client, for the store's own helpers and the tests.
    """

    url: str
    client: redis.asyncio.Redis
    tables: TableStore
    accounts: AccountStore
    sessions: SessionStore
    guests: GuestStore
    archiving: ArchivingCalls
    nodes: ClusterStore
    redis_cluster: bool
    catalog: TableCatalog
    embedded: EmbeddedRedis | None = None
    supervisor: RedisSupervisor | None = None
    _clients: list[redis.asyncio.Redis] = field(default_factory=list, repr=False)
    _url_file: Path | None = None

    @property
    def admin_tokens(self) -> AdminTokens:
        """The records of the operator API's tokens (:mod:`server.admin`)."""
        return AdminTokens(self.client)

    @functools.cached_property
    def jackpots(self) -> JackpotStore:
        """The progressive jackpots' meters (:mod:`server.store.jackpot.meters`): one
        store, whose calls for a table's round wait for the replicas the tables'
        commits wait for."""
        return JackpotStore(self.client, keys=self.tables.keys, replication=self.tables.replication)

    def relay(self, on_reconnect: Callable[[], None]) -> Relay:
        """A pub/sub relay on a connection of its own (closed by its ``stop``), which
        calls ``on_reconnect`` each time it connects again."""
        return Relay(redis_client(self.url, PUBSUB_POOL_SIZE, POOL_WAIT_S), on_reconnect)

    async def audit(
        self, table_money: TableMoney, *, archive: ArchivedLedger | None = None
    ) -> AuditReport:
        """The audit of everything held (:func:`~server.store.audit.check.audit`);
        :class:`~server.store.errors.StoreUnavailable` if Redis failed."""
        return await audit(self.client, table_money, archive=archive)

    async def ping(self) -> None:
        """Return once Redis answers a ``PING``; :class:`~server.store.errors.StoreUnavailable`
        if it does not (whether an outage is over: ``server/gateway/outage.py``)."""
        with translated():
            await self.client.ping()

    async def close(self) -> None:
        """Close the clients, then stop the embedded Redis (if any); safe to call twice.
        (The server drains its tables' background steps first: ``tables.drain()``.)"""
        clients, self._clients = self._clients, []
        for client in clients:
            await close_client(client)
        if self.supervisor is not None:
            await self.supervisor.stop()
            self.supervisor = None
        if self.embedded is not None:
            await self.embedded.astop()
            self.embedded = None
            if self._url_file is not None:
                with contextlib.suppress(OSError):
                    self._url_file.unlink()

    async def __aenter__(self) -> Stores:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()


async def open_stores(settings: Settings, on_restart: Callable[[], None] | None = None) -> Stores:
    """The server's stores (see the module docstring); ``on_restart`` is called each
    time the supervisor started the embedded Redis again (the metrics count them).

    Raises :class:`~server.store.errors.StoreUnavailable` if Redis does not answer,
    ``ValueError`` for settings Redis cannot honour, ``EmbeddedRedisError`` if the
    embedded Redis does not start; nothing is left open then.
    """
    s = settings
    url = s.redis_url
    embedded = supervisor = None
    url_file = None
    clients: list[redis.asyncio.Redis] = []
    try:
        if url is None:
            embedded = EmbeddedRedis(s.data_dir / EMBEDDED_DIR)
            await embedded.astart()
            url_file = s.data_dir / REDIS_URL_FILE
            url_file.write_text(embedded.url)
            url = embedded.url
            # Started again from its append-only file if it dies (docs/DESIGN.md,
            # "The embedded Redis"); the tables carry on by themselves meanwhile.
            supervisor = RedisSupervisor(embedded, on_restart)
            supervisor.start()
        # A bounded pool that waits for a free connection: redis-py's default pool
        # refuses at once past 100 connections, which under load turned bets into
        # internal errors and lost table leases.
        replicas = s.replicas_to_wait_for()
        # A pipeline's replies may take the WAIT's time: the socket timeout (a limit
        # for all the replies of a pipeline, one reply's otherwise) must outlast it.
        timeout = max(SOCKET_TIMEOUT_S, s.redis_wait_ms / 1000 + 2) if replicas else None
        client = redis_client(url, POOL_SIZE, POOL_WAIT_S, timeout or SOCKET_TIMEOUT_S)
        clients.append(client)
        with translated():
            await client.ping()
        if replicas and is_cluster(client):
            # WAIT covers the writes of one connection to one node: the group commit
            # would need one per node (docs/DESIGN.md, "Keys ready for Redis Cluster").
            raise ValueError(
                "waiting for replicas (--redis-replicas) needs one Redis, not a cluster"
            )
        # A Redis of the first key layout is moved to this one, once, before any table
        # is hosted (deploy/README.md, "Upgrading from the first key layout").
        await migrate(client)
        replication = Replication(replicas, s.redis_wait_ms) if replicas > 0 else None
        lease_client = redis_client(url, LEASE_POOL_SIZE, POOL_WAIT_S)
        clients.append(lease_client)
        tables = TableStore(client, replication=replication, lease_client=lease_client)
        return _stores(url, client, tables, lease_client, clients, embedded, supervisor, url_file)
    except BaseException:
        for made in clients:
            await close_client(made)
        if supervisor is not None:
            await supervisor.stop()
        if embedded is not None:
            await embedded.astop()
            if url_file is not None:
                with contextlib.suppress(OSError):
                    url_file.unlink()
        raise


async def open_command_stores(settings: Settings, say: Callable[[str], None]) -> Stores:
    """An operator's command's stores, on the server's Redis found as the module
    docstring says, and said which with ``say``.

    Raises :class:`NotTheServers` if ``--data-dir`` holds no server's data,
    ``ValueError`` if the Redis has the first key layout, and
    :class:`~server.store.errors.StoreUnavailable` if it does not answer.
    """
    if settings.redis_url:
        say(f"using the Redis at {redacted_url(settings.redis_url)} (--redis-url)")
        return await _command_stores(settings.redis_url, _command_client(settings.redis_url))
    data_dir = settings.data_dir.resolve()
    running = data_redis_url(data_dir)
    if running is not None:
        found = await _answers(running)
        if found is not None:
            say(f"using the Redis of the server running on {data_dir} ({running})")
            return await _command_stores(running, found)
    stored = data_dir / EMBEDDED_DIR
    if not stored.is_dir():
        raise NotTheServers(
            f"{data_dir} holds no server's data (no {REDIS_URL_FILE} of a running server, "
            f"no {EMBEDDED_DIR}/ of a stopped one): give the server's data folder "
            "(--data-dir or PAIGOW_DATA_DIR; `make run` keeps it in data/ of the "
            "repository) or its Redis (--redis-url)"
        )
    say(f"no server is running on {data_dir}: using its Redis data in {stored}")
    embedded = EmbeddedRedis(stored)
    await embedded.astart()
    try:
        return await _command_stores(embedded.url, embedded.client(), embedded)
    except BaseException:
        await embedded.astop()
        raise


def data_redis_url(data_dir: Path) -> str | None:
    """The URL of the embedded Redis of a server running on ``data_dir``, if any."""
    path = data_dir / REDIS_URL_FILE
    return path.read_text().strip() if path.exists() else None


def _command_client(url: str) -> redis.asyncio.Redis:
    return redis_client(url, max_connections=COMMAND_POOL_SIZE, timeout=COMMAND_TIMEOUT_S)


async def _answers(url: str) -> redis.asyncio.Redis | None:
    """A client of the Redis at ``url`` if it answers now, else None."""
    client = _command_client(url)
    try:
        with translated():
            await client.ping()
    except StoreFailure:
        await close_client(client)
        return None
    return client


async def _command_stores(
    url: str, client: redis.asyncio.Redis, embedded: EmbeddedRedis | None = None
) -> Stores:
    """The stores on ``client`` (closed with them), if its Redis has the present key
    layout: the server moves the first one at its start."""
    try:
        if await layout(client) == "1":
            raise ValueError(
                "this Redis has the first key layout: start paigow-server once to migrate it"
            )
    except BaseException:
        await close_client(client)
        raise
    return _stores(url, client, TableStore(client), client, [client], embedded)


def _stores(
    url: str,
    client: redis.asyncio.Redis,
    tables: TableStore,
    beat_client: redis.asyncio.Redis,
    clients: list[redis.asyncio.Redis],
    embedded: EmbeddedRedis | None = None,
    supervisor: RedisSupervisor | None = None,
    url_file: Path | None = None,
) -> Stores:
    return Stores(
        url=url,
        client=client,
        tables=tables,
        accounts=AccountStore(client),
        sessions=SessionStore(client),
        guests=GuestStore(client),
        archiving=ArchivingCalls(client),
        nodes=ClusterStore(client, beat_client=beat_client),
        redis_cluster=is_cluster(client),
        catalog=TableCatalog(client),
        embedded=embedded,
        supervisor=supervisor,
        _clients=clients,
        _url_file=url_file,
    )
