"""A running node: Redis (embedded or external), the tables, the gateway, and its place
among the nodes on the same Redis (``server/cluster``).

:class:`App` starts everything in order and stops it in reverse. On SIGTERM it stops
accepting connections and drains: with other nodes alive, it first hands its tables
over to them (each table finishes the write in progress and gives its lease up, and
its new holder takes it at once), its connections still served meanwhile; then it
closes them with 1001 (going away: reconnect, through the load balancer, and resume).
Alone, it closes its connections first and then gives the leases up, so that the next
process (or this one, restarted) takes the tables over at once.
"""

from __future__ import annotations

import asyncio
import logging
import os
import secrets
import time
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from websockets.asyncio.server import Server, serve

from protocol import limits as L
from protocol.errors import CloseCode
from server import http
from server.app.features import operator_api, wallet
from server.app.figures import round_money, seats_taken, table_money
from server.app.identity import NODE_NAME, default_node_name, token_secret
from server.app.jackpots import JackpotWatch
from server.archive import Archive
from server.archive.mover import SERVED_REST, Archiver, PassReport
from server.archive.service import ArchiveService
from server.catalog import seed_catalog
from server.cluster import Cluster
from server.cluster.live import LiveTables
from server.cluster.placement import INSTANCE_SEPARATOR
from server.config import Settings
from server.gateway import Gateway, gateway_options
from server.gateway.jackpots import JackpotRelay
from server.gateway.options import operator_tokens
from server.gateway.revocations import RevocationListener
from server.gateway.wsconn import GatewayConnection
from server.host import Hooks, TableHost
from server.host.lease_keeper import LeaseKeeper
from server.jackpots_file import load_jackpots
from server.logs import bind, log_fields
from server.metrics import Metrics
from server.seating import Seating
from server.store import JackpotStore, Stores, TableStatus, TableStore, open_stores
from server.table.machine import Transition
from server.table.state import Phase, TableConfig
from server.tables_file import load_tables, offer_jackpots, offered_jackpots
from server.tasks import cancel_and_wait
from server.version import SERVER_VERSION, build_commit

if TYPE_CHECKING:  # imported by the features that use them, only when configured
    from server.admin.auth import BearerCheck
    from server.admin.server import AdminServer
    from server.auth.operator_jwt import OperatorTokens
    from server.wallet import Funding

log = logging.getLogger(__name__)


class App:
    """A running server; see the module docstring."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.metrics = Metrics()
        self.metrics.set_build(SERVER_VERSION, build_commit())
        self.stores: Stores | None = None
        self.store: TableStore | None = None
        self.hosts: dict[str, TableHost] = {}
        # Who sits where: one index for the process, kept by every host, read by the gateway.
        self.seating: Seating[TableHost] = Seating()
        self.gateway: Gateway | None = None
        self.server: Server | None = None
        self.leases: LeaseKeeper | None = None
        self.archive: Archive | None = None
        self.archiver: ArchiveService | None = None
        self.revocations: RevocationListener | None = None
        self.operator_tokens: OperatorTokens | None = None
        """Checks operator JWTs (the gateway's hellos; the operator API may call it too)."""
        self.cluster: Cluster | None = None
        # Wallet mode (--wallet-url): buy-ins and cash-outs go through the operator's wallet.
        self.wallet: Funding | None = None
        self.live: LiveTables | None = None
        self.name = settings.node_name or default_node_name(settings)
        if not NODE_NAME.fullmatch(self.name):
            raise ValueError(
                f"node name {self.name!r}: 1 to 64 letters, digits, '.', '_' or '-' "
                "(--node-name, PAIGOW_NODE_NAME)"
            )
        # This process among the nodes: its name, and what makes this start its own.
        self.owner = f"{self.name}{INSTANCE_SEPARATOR}{os.getpid()}-{secrets.token_hex(4)}"
        self.drained_s: float | None = None
        self._started = False
        """How long the last drain took to hand the tables over (None: no drain)."""
        self._unwatch_gc: Callable[[], None] | None = None
        # The operator's API (--admin-port): ``operator_bearer`` checks the bearer
        # tokens that are not admin tokens (None: the operator's JWTs, when a JWKS is
        # configured); ``on_drain`` is called when an operator asks this node to drain
        # (``run`` stops the process).
        self.admin: AdminServer | None = None
        self.operator_bearer: BearerCheck | None = None
        self.on_drain: Callable[[], None] | None = None
        self._lag_probe: asyncio.Task[None] | None = None
        # Progressive jackpots of the tables file: their hits delivered, their meters read.
        self.jackpot_watch: JackpotWatch | None = None
        # The jackpots' meters, live, for the connections that watch them.
        self.jackpot_relay: JackpotRelay | None = None
        # The jackpots' store the tables pay their progressive wagers' calls through.
        self._jackpots: JackpotStore | None = None

    @property
    def port(self) -> int:
        """The port actually listened on (useful with port 0)."""
        assert self.server is not None
        sock = next(iter(self.server.sockets))
        port: int = sock.getsockname()[1]
        return port

    async def start(self) -> None:
        """Start Redis (if embedded), host the tables and listen."""
        s = self.settings
        bind(node=self.name)  # every record of this node's tasks names it
        # Read (and checked) first: it seeds the tables catalog of a store that has none.
        jackpots = load_jackpots(s.tables_file)
        # A jackpot's tables offer its progressive wager (docs/RULES.md, "Progressive
        # jackpot"): their settings, as the catalog is seeded with them.
        seed = offer_jackpots(load_tables(s.tables_file), jackpots)
        # Operator JWTs: None without a JWKS configured; unusable settings stop here.
        self.operator_tokens = operator_tokens(s)
        # Opened (not yet connected) before anything starts: a PostgreSQL URL without
        # its driver (the `postgres` extra) stops the server here, saying so.
        target = s.archive_target()
        if target is not None:
            self.archive = Archive(target)
        self._unwatch_gc = self.metrics.watch_gc()
        self._lag_probe = asyncio.create_task(self.metrics.probe_loop_lag(), name="loop-lag")
        # Redis (embedded unless --redis-url), checked and brought to the present key
        # layout, before any table is hosted.
        stores = self.stores = await open_stores(s, self.metrics.redis_restarts.inc)
        self._jackpots = stores.jackpots
        store = self.store = stores.tables
        # The tables catalog says which tables exist: the tables file only seeds it,
        # once (docs/DESIGN.md, "The tables catalog").
        known = await seed_catalog(stores.catalog, seed)
        hosted = known.hosted()
        tables = [entry.config for entry in hosted.values()]
        self.leases = LeaseKeeper(store.leases, self.owner, s.lease_ms)
        self.leases.start()
        options = gateway_options(s, token_secret(s))
        if self.archive is not None:
            self.archiver = ArchiveService(
                Archiver(
                    stores.archiving,
                    self.archive,
                    table_money,
                    after_ms=s.archive_after_ms,
                    guest_idle_ms=s.guest_idle_ms or None,
                    rest=SERVED_REST,
                ),
                self.owner,
                s.archive_every_ms,
                self._archived,
            )
        self.gateway = Gateway(
            self.hosts,
            stores,
            self.metrics,
            options,
            self.seating,
            self.archive,
            operator=self.operator_tokens,
        )
        self.revocations = RevocationListener(stores.sessions, self.gateway.revoked)
        self.revocations.start()
        if s.wallet_url:
            self.wallet = wallet(s, stores)
            self.gateway.context = replace(self.gateway.context, wallet=self.wallet)
            # Started at once: it finishes what a crashed process left open.
            self.wallet.start()
        if self.archiver is not None:
            self.archiver.start()
        # The jackpots of the tables file, and those the catalog's tables offer (seeded
        # by another node's file, say), watched; the meters of those the tables offer,
        # the lobby's.
        defined = offered_jackpots([o for o, _ in jackpots.values()], tables)
        if defined:
            self.jackpot_watch = JackpotWatch(stores.jackpots, defined, self.metrics)
            self.jackpot_watch.start()
        shown = offered_jackpots([], tables)
        if shown:
            self.jackpot_relay = JackpotRelay(stores.jackpots, shown)
            self.jackpot_relay.start()
            self.gateway.context = replace(self.gateway.context, jackpots=self.jackpot_relay)
        # Several nodes share the tables through one Redis (or a Sentinel's primary).
        # On a Redis Cluster the node stays alone: the cluster layer's heartbeat,
        # publications and reads over every table are not split by slot yet.
        cluster = None
        if not stores.redis_cluster:
            cluster = self.cluster = Cluster(
                stores,
                self.hosts,
                [c.table_id for c in tables],
                self.owner,
                {"name": self.name, "started": str(int(time.time()))},
                s.lease_ms,
                self.metrics,
            )
        for config in tables:
            host = self.hosts[config.table_id] = self._host(config)
            if hosted[config.table_id].status is TableStatus.CLOSING:
                host.close()
        # Counted when read: counting at each table taken or lost cost every host a pass
        # over all of them, seconds of CPU when a node takes thousands of tables at once.
        hosts = self.hosts
        self.metrics.tables_hosted.set_function(lambda: sum(h.ready for h in hosts.values()))
        self.metrics.players_seated.set_function(lambda: seats_taken(hosts.values()))
        self.metrics.ready.set_function(lambda: float(self.not_ready() is None))
        self.metrics.count_pipelines(store.sent)
        if cluster is not None:
            # Registered and listening before any table is taken: the placement is known.
            await cluster.start(self.gateway)
        for table_id, host in self.hosts.items():
            with log_fields(table=table_id):  # the records of the table's own task
                host.start()
        # Tables created, changed and closed from now on are picked up as they come.
        self.live = LiveTables(
            stores.catalog, store, self.hosts, add=self._add_table, remove=self._remove_table
        )
        self.live.start(known)
        self.server = await serve(
            self.gateway.handle,
            s.host,
            s.port,
            process_request=http.endpoints(self.not_ready, self.metrics),
            # Browsers send Origin and are checked; other clients (the CLI, bots) send
            # none, which is allowed (None in the list).
            origins=[*s.origins, None] if s.origins else None,  # type: ignore[list-item]
            compression=None,  # small binary frames: deflate costs more than it saves
            max_size=L.MAX_CLIENT_FRAME_BYTES,
            max_queue=16,
            # No WebSocket pings: the protocol's heartbeat already sends a frame each
            # way within every interval (the client's ping, the server's pong), which
            # keeps idle connections open through proxies, and closes a silent client
            # (4004). The pings doubled that traffic: 500 a second at 10,000 players,
            # and a task per connection (protocol/PROTOCOL.md, section 5).
            ping_interval=None,
            ping_timeout=None,
            create_connection=GatewayConnection,
        )
        if cluster is not None:
            cluster.on_drain = self._drain_asked
        if s.admin_port is not None:
            hosts_now = self.hosts
            self.admin = operator_api(
                s,
                stores,
                token_secret(s),
                table_ids=lambda: list(hosts_now),
                instance=self.owner,
                archive=self.archive,
                bearer=self.operator_bearer,
                operator_tokens=self.operator_tokens,
            )
            await self.admin.start(s.admin_host, s.admin_port)
        wait_s = max(10.0, 3 * s.lease_ms / 1000)
        if cluster is not None:
            cluster.membership.info["url"] = f"ws://{s.host}:{self.port}/"
            await cluster.wait_all_held(wait_s)
        else:
            for host in self.hosts.values():
                await host.wait_ready(wait_s)
        self._started = True

    def _host(self, config: TableConfig) -> TableHost:
        """A host of ``config``'s table (not started). The gateway is told each time the
        table is hosted here: it attaches the connections that wait for it and brings
        the seats' presence up to date."""
        assert self.store is not None
        assert self.stores is not None
        cluster = self.cluster
        return TableHost(
            config,
            self.store,
            self.owner,
            accounts=self.stores.accounts,
            lease_ms=self.settings.lease_ms,
            hooks=Hooks(
                on_commit=self._committed,
                on_ready=self._table_ready,
                on_lost=self._table_lost,
                on_stored=cluster.on_stored(config.table_id) if cluster else None,
            ),
            leases=self.leases,
            seating=self.seating,
            placement=cluster.membership if cluster else None,
            jackpots=self._jackpots,
        )

    def _add_table(self, config: TableConfig) -> None:
        """A table created in the catalog: hosted, placed, started."""
        host = self.hosts[config.table_id] = self._host(config)
        if self.cluster is not None:
            self.cluster.add_table(host)
        with log_fields(table=config.table_id):  # the records of the table's own task
            host.start()

    async def _remove_table(self, table_id: str) -> None:
        """A table closed for good: its watchers let go, its host stopped and forgotten."""
        host = self.hosts[table_id]
        for sub in list(host.subscribers):
            host.unsubscribe(sub)
        await host.stop()
        del self.hosts[table_id]
        if self.cluster is not None:
            self.cluster.remove_table(table_id)

    async def _table_ready(self, host: TableHost) -> None:
        """A table is held here from now: the other nodes hear it, then the gateway
        attaches the connections that wait for it and settles its seats."""
        if self.cluster is not None:
            await self.cluster.table_ready(host)
        if self.gateway is not None:
            await self.gateway.table_ready(host)
        if self.live is not None:
            self.live.table_ready()

    def _drain_asked(self) -> None:
        if self.on_drain is not None:
            self.on_drain()
        else:
            log.warning("asked to drain, but this process was not started to stop by itself")

    def _table_lost(self, host: TableHost) -> None:
        self.metrics.forget_table(host.table_id)
        if self.cluster is not None:
            self.cluster.table_lost(host)

    def not_ready(self) -> str | None:
        """Why this node does not serve (``/readyz`` answers 503 with it), or None.

        It serves once it has started: every table held, here or by another live node
        (at most a few seconds). From then on a table being taken over (after another
        node died) does not make it unready: every node would be, and the load balancer
        would have nowhere to send anyone. It stops serving while it drains, and while
        it is cut off from Redis (its registration not renewed for the lease time).
        """
        cluster = self.cluster
        if cluster is None:  # alone on a Redis Cluster: every table held here
            waiting = [t for t, h in self.hosts.items() if not h.ready]
            return "not ready: " + ", ".join(waiting) if waiting else None
        if cluster.membership.draining:
            return "draining"
        if not self._started:
            unheld = cluster.unheld()
            return "not ready: " + ", ".join(unheld) if unheld else None
        if not cluster.membership.registered:
            return "not registered: Redis out of reach"
        return None

    def _archived(self, report: PassReport) -> None:
        m = self.metrics
        m.guests.set(report.guests)
        m.archived.labels("ledger").inc(report.trimmed)
        m.archived.labels("game_log").inc(report.logs)
        m.guests_closed.inc(report.guests_closed)

    def _committed(self, t: Transition, seconds: float) -> None:
        # The committing task's next records are of this table and round.
        bind(table=t.state.config.table_id, round=t.state.round_no)
        if log.isEnabledFor(logging.DEBUG):
            log.debug("committed version %d (%s)", t.state.version, t.state.phase.value)
        self.metrics.commits.observe(seconds)
        state = t.state
        settled = None
        if state.phase is Phase.SETTLING and state.results and t.logs:
            settled = round_money(state.results)
        self.metrics.committed(state.config.table_id, state.phase, time.monotonic(), settled)

    async def stop(self) -> None:
        """Stop in reverse order; safe to call twice."""
        if self._lag_probe is not None:
            await cancel_and_wait(self._lag_probe)
            self._lag_probe = None
        if self._unwatch_gc is not None:
            self._unwatch_gc()
            self._unwatch_gc = None
        if self.live is not None:
            # No table is added or removed while the others stop.
            await self.live.stop()
            self.live = None
        cluster = self.cluster
        if self.admin is not None:
            await self.admin.stop()
            self.admin = None
        if self.server is not None:
            self.server.close(close_connections=False)
            if cluster is not None and cluster.others and not cluster.membership.draining:
                # Hand the tables over first: the connections here are served through
                # their new holders meanwhile, and resume there when closed below.
                self.drained_s = await cluster.drain()
                log.info("drained: tables handed over in %.3f s", self.drained_s)
            if self.gateway is not None:
                # All at once: a client slow to answer the close must not delay the others.
                await asyncio.gather(
                    *(
                        conn.ws.close(CloseCode.GOING_AWAY, "server shutting down")
                        for conn in list(self.gateway.connections)
                    ),
                    return_exceptions=True,
                )
            await self.server.wait_closed()
            self.server = None
        for host in self.hosts.values():
            await host.stop()
        if self.gateway is not None:
            await self.gateway.stop()
        if cluster is not None:
            if not cluster.membership.draining:
                await cluster.leave()
            await cluster.stop()
            self.cluster = None
        if self.archiver is not None:
            await self.archiver.stop()
            self.archiver = None
        if self.jackpot_watch is not None:
            await self.jackpot_watch.stop()
            self.jackpot_watch = None
        if self.jackpot_relay is not None:
            await self.jackpot_relay.stop()
            self.jackpot_relay = None
        if self.wallet is not None:
            await self.wallet.stop()
            self.wallet = None
        if self.revocations is not None:
            await self.revocations.stop()
            self.revocations = None
        if self.operator_tokens is not None:
            await self.operator_tokens.keys.close()
            self.operator_tokens = None
        if self.archive is not None:
            await self.archive.close()
            self.archive = None
        if self.leases is not None:
            await self.leases.stop()
            self.leases = None
        if self.store is not None:
            # Steps after the last commits (game logs, settling): what is not done by
            # then is finished by the tables' next holder.
            await self.store.drain()
            self.store = None
        if self.stores is not None:
            await self.stores.close()
            self.stores = None
