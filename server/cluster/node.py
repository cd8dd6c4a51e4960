"""This process as one node among several on one Redis: :class:`Cluster` puts the
parts together for the app (docs/DESIGN.md, "Several nodes on one Redis").

- :mod:`~server.cluster.registry`: the heartbeat, the live nodes, the placement;
- :class:`~server.store.pubsub.relay.Relay` (in the store): the pub/sub connection;
- :mod:`~server.cluster.publish`: what a holder tells the others after each change;
- :mod:`~server.cluster.feed`: the events of tables held elsewhere, to this node's
  connections;
- :mod:`~server.cluster.forward` and :mod:`~server.cluster.serve`: requests to a
  table's holder, and their answers;
- :mod:`~server.cluster.router`: all of it as the gateway sees it.

A process alone on its Redis is a cluster of one: it holds every table.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import time
from collections.abc import Callable, Coroutine, Mapping
from typing import Any

from prometheus_client import Counter, Gauge, Histogram

from server.cluster import wire
from server.cluster.feed import Feeds
from server.cluster.forward import Forwarder
from server.cluster.lobby import Lobby
from server.cluster.publish import Publisher
from server.cluster.registry import Membership
from server.cluster.router import Router
from server.cluster.serve import RequestServer
from server.gateway import Gateway
from server.host import TableHost
from server.metrics import Metrics
from server.store import Stores
from server.tasks import cancel_and_wait

log = logging.getLogger(__name__)

FORWARD_WAIT_S = 1.0
"""How long a request for a table no node holds waits for one (a table being handed
over is held again within milliseconds; after a crash it takes up to the lease)."""
FORWARD_REPLY_S = 5.0
"""How long a request waits for the answer of the node that heard it."""


class ClusterMetrics:
    """The cluster's share of ``/metrics``."""

    def __init__(self, metrics: Metrics) -> None:
        registry = metrics.registry
        self.held = Gauge(
            "paigow_table_held",
            "1 for each table this node holds, 0 for the others",
            ["table"],
            registry=registry,
        )
        self.nodes = Gauge("paigow_cluster_nodes", "Live nodes this node sees", registry=registry)
        self.forwarded = Histogram(
            "paigow_forward_seconds",
            "Time for a request to reach another node's table and come back",
            buckets=(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5, 1.0, 5.0),
            registry=registry,
        )
        self.relayed = Counter(
            "paigow_relay_messages", "Pub/sub messages received from other nodes", registry=registry
        )


class Cluster:
    """See the module docstring."""

    def __init__(
        self,
        stores: Stores,
        hosts: Mapping[str, TableHost],
        table_ids: list[str],
        instance: str,
        info: Mapping[str, str],
        lease_ms: int,
        metrics: Metrics,
    ) -> None:
        """``stores``: the process's (its nodes' shared data, its tables' leases, and
        a pub/sub relay of its own). ``hosts``: the process's hosts of ``table_ids``,
        made with this cluster's hooks (:meth:`on_stored`, :meth:`table_lost`,
        :meth:`table_ready`, and :attr:`membership` as their placement) before
        :meth:`start`."""
        self.instance = instance
        self.hosts = hosts
        self.lease_ms = lease_ms
        self.store = stores.nodes
        self.metrics = ClusterMetrics(metrics)
        self.membership = Membership(
            self.store,
            stores.tables,
            table_ids,
            instance,
            info,
            lease_ms,
            on_placed=self._placed,
            on_lapsed=self._lapsed,
            on_handed_over=self._handed_over,
            on_changed=self._nodes_changed,
        )
        self.relay = stores.relay(self._reconnected)
        self.publisher = Publisher(self.store, instance, self._alone)
        self.forwarder = Forwarder(
            self.store,
            instance,
            wait_s=max(FORWARD_WAIT_S, lease_ms / 1000),
            reply_s=FORWARD_REPLY_S,
            on_ask=self.metrics.forwarded.observe,
        )
        self.feeds = Feeds(self.relay, self.store, hosts, self._held_notice)
        self.lobby = Lobby(self.store, instance, lambda: self.membership.live)
        self.router: Router | None = None
        self.server: RequestServer | None = None
        self._tasks: set[asyncio.Task[object]] = set()
        self._refreshing: asyncio.Future[None] | None = None  # a heartbeat asked for now
        self._announcers: set[str] = set()  # nodes that have not announced to us yet
        self._announced = asyncio.Event()  # ... and once none is left
        self.on_drain: Callable[[], None] | None = None
        """Called when an operator asks this node to drain (``server/admin``): the
        process stops as on SIGTERM, handing its tables over first."""

    # --- what the hosts are made with ------------------------------------------------

    def on_stored(self, table_id: str) -> functools.partial[None]:
        """The host's ``on_stored`` hook for ``table_id``."""
        return functools.partial(self.publisher.committed, table_id)

    def table_lost(self, host: TableHost) -> None:
        """The hosts' ``on_lost`` hook."""
        table_id = host.table_id
        self.metrics.held.labels(table_id).set(0)
        self.publisher.released(table_id)
        self._spawn(self.relay.forget(self.store.keys.table_requests(table_id)))
        self.feeds.table_lost(table_id)

    async def table_ready(self, host: TableHost) -> None:
        """Part of the hosts' ``on_ready`` hook: the table is held here from now."""
        table_id = host.table_id
        self.metrics.held.labels(table_id).set(1)
        self.membership.held(table_id, self.instance)
        self.feeds.table_held(table_id)
        channel = self.store.keys.table_requests(table_id)
        await self.relay.listen(channel, functools.partial(self._request, table_id))
        # This node's own requests forwarded to the old holder ask again, now that it
        # listens: it never hears its own `held` notice (its feed has just stopped
        # relaying the table), so they would wait out their whole reply time.
        self.forwarder.table_held(table_id)
        if host.ready and host.state is not None:
            self.publisher.held(table_id, host.state)

    # --- tables created and closed while running (server/cluster/live.py) -----------

    def add_table(self, host: TableHost) -> None:
        """A table created in the catalog: ``host`` (already in :attr:`hosts`, made with
        this cluster's hooks, not started) is placed with the others."""
        table_id = host.table_id
        host.subscribers.on_count = self._counted
        self.metrics.held.labels(table_id).set(0)
        self.feeds.watch({table_id: host})
        self.membership.set_tables([*self.membership.table_ids, table_id])

    def remove_table(self, table_id: str) -> None:
        """A table closed for good (its host stopped, no longer in :attr:`hosts`):
        placed no more."""
        self.membership.set_tables([t for t in self.membership.table_ids if t != table_id])
        with contextlib.suppress(KeyError):
            self.metrics.held.remove(table_id)
        if self.feeds.relaying(table_id):
            self._spawn(self.feeds.unrelay_table(table_id))

    # --- life ------------------------------------------------------------------------

    async def start(self, gateway: Gateway) -> None:
        """Listen, register, and give the gateway its way to the other nodes."""
        for host in self.hosts.values():
            host.subscribers.on_count = self._counted
            self.metrics.held.labels(host.table_id).set(0)
        self.feeds.watch(self.hosts)
        self.server = RequestServer(self.store, self.instance, self.hosts, gateway)
        self.router = Router(
            self.store,
            self.instance,
            self.hosts,
            gateway.presence,
            self.feeds,
            self.forwarder,
            self.lobby,
            lambda: self.membership.live,
        )
        gateway.presence.remote = self.router
        await self.relay.start(self.store.keys.node_channel(self.instance), self._node_message)
        await self.relay.listen(self.store.keys.nodes_channel(), self._nodes_message)
        await self.membership.start()
        await self._join()

    async def _join(self) -> None:
        """Tell the other live nodes this one is here, and wait (up to the lease) until
        each has announced its tables: one that was alone published nothing meanwhile
        (:mod:`~server.cluster.publish`), and the seats and summaries this node reads
        must be current before it serves a player."""
        self._announcers = set(self.others)
        if not self._announcers:
            return
        self._announced.clear()
        await self.store.publish(self.store.keys.nodes_channel(), wire.joined(self.instance))
        try:
            async with asyncio.timeout(self.lease_ms / 1000 + 1):
                await self._announced.wait()
        except TimeoutError:
            log.warning("nodes %s did not announce their tables in time", sorted(self._announcers))

    def _alone(self) -> bool:
        """Whether no other node is live (as last known): nobody hears its
        publications."""
        return self.membership.alone

    def _nodes_message(self, data: bytes) -> None:
        sender = wire.read_joined(data)
        if sender is None:
            if self.router is not None:
                self.router.heard_resumed(data)
        elif sender != self.instance:
            self.membership.heard_of(sender)  # placed again, and announced: _placed
            future = self.store.publish(
                self.store.keys.node_channel(sender), wire.announced(self.instance)
            )
            future.add_done_callback(lambda f: f.cancelled() or f.exception())

    def _announce(self) -> None:
        """Announce the tables held here whose changes went unpublished while alone."""
        held = {
            t: host.state for t, host in self.hosts.items() if host.ready and host.state is not None
        }
        if self.publisher.announce(held):
            log.info("another node is live: the tables held here are announced")

    @property
    def others(self) -> list[str]:
        """The other live nodes."""
        return [i for i in self.membership.live if i != self.instance]

    async def drain(self) -> float:
        """Hand every table held here to the other nodes: stop being a node (they place
        the tables without this one), give each table up once its write in progress is
        stored, tell each one's new holder, and wait (up to the lease) until they hold
        them. The seconds it took."""
        began = time.monotonic()
        await self.membership.leave()
        held = [t for t, host in self.hosts.items() if host.ready]
        await asyncio.gather(*(host.stop() for host in self.hosts.values()))
        for table_id in held:
            self.membership.handed_over(table_id)
        if not await self.wait_taken(held, self.lease_ms / 1000 + 1):
            log.warning("drain: not every table was taken over in time")
        return time.monotonic() - began

    async def leave(self) -> None:
        """Stop being a node (the last one: nobody to hand the tables to)."""
        await self.membership.leave()

    async def wait_taken(self, table_ids: list[str], seconds: float) -> bool:
        """Wait until another live node holds each of ``table_ids``; False after ``seconds``."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            found = await self.membership.tables.leases.holders(table_ids)
            if all(h is not None and h[1] != self.instance for h in found):
                return True
            await asyncio.sleep(0.02)
        return False

    async def wait_all_held(self, seconds: float) -> bool:
        """Wait until some live node holds every table; False after ``seconds``."""
        deadline = time.monotonic() + seconds
        while True:
            if not self.unheld():
                return True
            if time.monotonic() >= deadline:
                return False
            await asyncio.sleep(0.05)
            await self.membership.beat()

    def unheld(self) -> list[str]:
        """The tables no live node holds now (as last known). A table whose lease is
        this node's is held once its host is ready: between the two it is being loaded
        (and told it was taken over), and a start that counted it held returned before
        the table was served here."""
        membership = self.membership
        return [
            t
            for t in membership.table_ids
            if not self.hosts[t].ready and membership.holder(t) in (None, self.instance)
        ]

    async def stop(self) -> None:
        """Stop everything (after the hosts stopped), the last publications sent."""
        await self.membership.stop()
        await self.relay.stop()  # nothing more comes in: nothing more to answer
        if self.server is not None:
            await self.server.stop()
        if self.router is not None:
            await self.router.stop()
        await self.feeds.stop()
        await cancel_and_wait(*self._tasks)
        await self.store.sent()

    # --- what comes in ---------------------------------------------------------------

    def _spawn(self, coro: Coroutine[Any, Any, object]) -> None:
        task = asyncio.create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _node_message(self, data: bytes) -> None:
        self.metrics.relayed.inc()
        message = wire.read_node_message(data)
        if message.kind == "announced":
            self._announcers.discard(message.sender)
            if not self._announcers:
                self._announced.set()
            return
        if message.kind == "drain":
            log.info("asked to drain, through %s", message.sender)
            if self.on_drain is not None:
                self.on_drain()
            return
        if message.kind == "take":
            # The giver placed the table without itself: see the nodes as it does now
            # (not at the next heartbeat), then take it.
            host = self.hosts.get(message.table_id)
            if host is not None:
                self._spawn(self._take(host))
            return
        self.forwarder.heard(message)

    async def _take(self, host: TableHost) -> None:
        if self._refreshing is None or self._refreshing.done():
            self._refreshing = asyncio.ensure_future(self.membership.beat())
        await asyncio.shield(self._refreshing)
        host.placed()

    def _request(self, table_id: str, data: bytes) -> None:
        assert self.server is not None
        self.server.heard(table_id, data)

    def _held_notice(self, table_id: str, holder: str) -> None:
        self.membership.held(table_id, holder)
        self.forwarder.table_held(table_id)
        if self.router is not None and holder != self.instance:
            self._spawn(self.router.held_elsewhere(table_id))

    def _placed(self) -> None:
        self.metrics.nodes.set(len(self.membership.live))
        if not self._alone():
            self._announce()  # before any later change is published
        for host in self.hosts.values():
            host.placed()

    def _handed_over(self, table_id: str, to: str) -> None:
        future = self.store.publish(self.store.keys.node_channel(to), wire.take(table_id))
        future.add_done_callback(lambda f: f.cancelled() or f.exception())

    def _lapsed(self) -> None:
        # The others took this node for dead: any that was alone since publishes nothing.
        future = self.store.publish(self.store.keys.nodes_channel(), wire.joined(self.instance))
        future.add_done_callback(lambda f: f.cancelled() or f.exception())
        if self.router is not None:
            self.router.resettle()

    def _nodes_changed(self, came: list[str], gone: list[str]) -> None:
        if gone:
            log.info("nodes no longer live: %s", ", ".join(gone))
        if self.router is not None and not self.membership.draining:
            self.router.nodes_changed(came=bool(came), gone=bool(gone))

    def _reconnected(self) -> None:
        self.feeds.reconnected()

    def _counted(self, table_id: str, count: int) -> None:
        self.membership.watchers(table_id, count)
        self.feeds.watchers(table_id, count)
