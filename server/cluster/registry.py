"""The node's membership: its heartbeat in Redis, the live nodes, where each table
should be held and where it is.

Every quarter of ``ttl_ms`` the node renews its registration (``NODES_BEAT``, timed by
Redis's clock) and reads the live nodes; when they change, the placement
(:mod:`~server.cluster.placement`) is computed again and the hosts are told. It also
reads who holds each table (the leases' owners), for the operator and for
``/readyz``, and writes how many connections watch each table here. The registration
goes on a connection of its own (``TableStore.lease_client``) at its own cadence; the
reads and writes after it, on the shared pool, never delay the next one.

A node whose registration ran out while it was alive (paused, or cut off from Redis)
was taken for dead meanwhile: the others took its tables and marked its players away.
When it is back it says so (``on_lapsed``), so that its players' seats are brought in
line again; a node alone before and after had nobody take it for dead, and says
nothing. Each change of the other live nodes (one registered, back, dead, or
drained) is said too (``on_changed``), once this node counts them so: the seats of
their players at the tables held here are brought in line then.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Mapping, Sequence

from server.cluster.placement import assign, node_name
from server.store import (
    FORMATS,
    ClusterStore,
    LiveNodes,
    StoreUnavailable,
    TableStore,
    announcement,
)
from server.tasks import cancel_and_wait
from server.version import SERVER_VERSION

log = logging.getLogger(__name__)


class Membership:
    """This node among the live ones; see the module docstring. It is the hosts'
    ``Placement`` (``server/host/host.py``)."""

    def __init__(
        self,
        store: ClusterStore,
        tables: TableStore,
        table_ids: Sequence[str],
        instance: str,
        info: Mapping[str, str],
        ttl_ms: int,
        *,
        on_placed: Callable[[], None],
        on_lapsed: Callable[[], None],
        on_handed_over: Callable[[str, str], None],
        on_changed: Callable[[list[str], list[str]], None],
        reads: frozenset[str] = frozenset(FORMATS),
    ) -> None:
        """``reads``: the stored formats this node reads (every one this release
        names). ``on_placed()``: the placement changed. ``on_handed_over(table_id, to)``: a
        table was given up for node instance ``to``. ``on_changed(came, gone)``: other
        node instances counted live from now, and no longer (told after :attr:`live`
        says so)."""
        self.store = store
        self.tables = tables
        self.table_ids = sorted(table_ids)
        self.instance = instance
        # Its release and the stored formats it reads, for the others to know what they
        # may write (server/store/nodes/formats.py).
        self.info = {**info, **announcement(SERVER_VERSION, reads)}
        self.reads = frozenset(reads)
        self.ttl_ms = ttl_ms
        self.on_placed = on_placed
        self.on_lapsed = on_lapsed
        self.on_handed_over = on_handed_over
        self.on_changed = on_changed
        self.live: list[str] = []
        """The live node instances (this one included while it is registered), sorted."""
        self.placed: dict[str, str] = {}
        """Table -> the instance that should hold it."""
        self.holders: dict[str, str] = {}
        """Table -> the instance that holds its lease (as last read or announced)."""
        self.draining = False
        self.retired = False
        """Another process took this node's name: this one stepped back for good."""
        self.set_aside: str | None = None
        """The earlier life of this node (same name) that its first registration set aside."""
        self.beats = 0
        self._named = False  # the first registration took the node's name
        self._expires: int | None = None  # this node's registration, by Redis's clock
        self._beat_ok = time.monotonic()
        self._counts: dict[str, int] = {}
        self._written: dict[str, int] = {}
        self._task: asyncio.Task[None] | None = None
        self._reading: asyncio.Task[None] | None = None  # the reads of the last heartbeat

    # --- Placement ---------------------------------------------------------------------

    def wants(self, table_id: str) -> bool:
        """Whether this node should hold ``table_id`` now."""
        return not self.draining and self.placed.get(table_id) == self.instance

    def handed_over(self, table_id: str) -> None:
        """``table_id`` was given up here: tell its placement's choice to take it now."""
        to = self.placed.get(table_id)
        if to is not None and to != self.instance:
            self.on_handed_over(table_id, to)

    def set_tables(self, table_ids: Sequence[str]) -> None:
        """The catalog's tables changed (one created, or closed for good): place them
        among the live nodes again, as every node does from the same catalog."""
        ids = sorted(table_ids)
        if ids == self.table_ids:
            return
        self.table_ids = ids
        for gone in set(self.holders) - set(ids):
            del self.holders[gone]
        if self.live:
            self.placed = assign(ids, self.live)
            self.on_placed()

    # --- life ------------------------------------------------------------------------

    async def start(self) -> None:
        """Register, then keep the registration alive in the background. Raises
        :class:`~server.store.FormatsAhead` (before registering) if the store has a
        stored format switched on that this node does not read."""
        await self.store.check_formats(self.reads)
        await self.beat()
        self._task = asyncio.create_task(self._run(), name="membership")

    async def stop(self) -> None:
        """Stop the heartbeat (the registration runs out by itself)."""
        task, self._task = self._task, None
        if task is not None:
            await cancel_and_wait(task)
        reading, self._reading = self._reading, None  # none is started after the heartbeat
        if reading is not None:
            await cancel_and_wait(reading)

    async def leave(self) -> None:
        """Stop being a node at once (draining): the others compute the placement
        without this one, and this one wants no table any more."""
        await self.stop()
        self.draining = True
        try:
            await self.store.leave(self.instance)
        except StoreUnavailable as exc:
            log.warning("could not unregister (%s): the registration runs out by itself", exc)
        self._place([i for i in self.live if i != self.instance])

    async def _run(self) -> None:
        # The registration keeps its cadence whatever the reads cost: they use the
        # shared pool, which can keep them waiting for seconds under load, and a
        # registration sent only after them ran out (the node was taken for dead).
        interval = self.ttl_ms / 4000
        while True:
            began = time.monotonic()
            try:
                live = await self._register()
                if live is not None and (self._reading is None or self._reading.done()):
                    # Stopped by stop() with the heartbeat (reads through redis-py too).
                    self._reading = asyncio.create_task(self._read(live), name="membership-reads")
            except Exception:
                log.exception("heartbeat failed")
            await asyncio.sleep(max(0.0, began + interval - time.monotonic()))

    async def beat(self) -> None:
        """One heartbeat: register, read the live nodes and the tables' holders."""
        live = await self._register()
        if live is not None:
            await self._read(live)

    async def _register(self) -> LiveNodes | None:
        """Register (or renew), and place the tables among the live nodes; None if
        Redis did not answer."""
        try:
            if self.retired:
                live = await self.store.live_nodes()
            else:
                live = await self.store.beat(
                    self.instance,
                    self.ttl_ms,
                    self.info,
                    name=node_name(self.instance),
                    take=not self._named,
                )
        except StoreUnavailable as exc:
            if time.monotonic() - self._beat_ok > self.ttl_ms / 1000:
                log.warning("not registered for %d ms (%s)", self.ttl_ms, exc)
            return None
        if self.retired or live.refused:
            self._step_back(live)
            return live
        if not self._named:
            self._named = True
            self.set_aside = live.set_aside
            if live.set_aside is not None:
                freed = await self._free_leases(live.set_aside)
                log.info(
                    "set aside %s, this node's earlier life (same name): not live from "
                    "now, not waited for, its leases of %d table(s) given up",
                    live.set_aside,
                    freed,
                )
        self._beat_ok = time.monotonic()
        self.beats += 1
        lapsed = self._expires is not None and live.now > self._expires
        self._expires = live.expires.get(self.instance)
        alone_before = self.alone
        self._place(live.instances)
        if lapsed and alone_before and self.alone:
            # No other node before or after: none took it for dead, nothing to bring in
            # line (and walking every player again is a storm when starved of CPU).
            log.warning("this node's registration ran out while it was alone: back now")
        elif lapsed:
            log.warning("this node was taken for dead (its registration ran out): back now")
            self.on_lapsed()
        return live

    async def _free_leases(self, earlier: str) -> int:
        """Give up the table leases ``earlier`` (this node's earlier life, set aside)
        still holds, so that the tables are taken now, not when the leases run out:
        how many. Safe if it is alive after all: a release is fenced by the token it
        names (a lease renewed or taken meanwhile is left alone), and a commit of its
        after that carries a token that is no longer the table's. A store error leaves
        the leases to run out by themselves."""
        freed = 0
        try:
            found = await self.tables.leases.holders(self.table_ids)
            for table_id, held in zip(self.table_ids, found, strict=True):
                if held is not None and held[1] == earlier:
                    freed += await self.tables.leases.release(table_id, earlier, held[0])
        except StoreUnavailable as exc:
            log.warning("leases of %s not given up (%s): they run out by themselves", earlier, exc)
        return freed

    def _step_back(self, live: LiveNodes) -> None:
        """Another process took this node's name (started under it, so it counts this
        one as its earlier life): stop being a node for good, as a drain does, so that
        one name is one live process; the tables go to the live nodes as they pass
        between rounds (their leases fence any write meanwhile)."""
        if not self.retired:
            log.error(
                "another process took this node's name %r (a restart of this node, or a "
                "second process given its name): this one steps back and hands its tables over",
                node_name(self.instance),
            )
            self.retired = self.draining = True
        self._place([i for i in live.instances if i != self.instance])

    async def _read(self, live: LiveNodes) -> None:
        try:
            await self._read_holders(live)
            await self._write_counts()
        except StoreUnavailable as exc:
            log.warning("holders and watcher counts not read or written (%s)", exc)
        if not self.reads <= self.store.formats_on and not self.draining:
            await self._switch_formats()

    async def _switch_formats(self) -> None:
        """Switch on each stored format this node reads that every live node reads (a
        node of a release that announces none holds them all back until it leaves)."""
        before = self.store.formats_on
        try:
            on = await self.store.switch_formats(self.reads)
        except StoreUnavailable as exc:
            log.warning("stored formats not switched on (%s)", exc)
            return
        if on - before:
            log.info("stored formats on (every live node reads them): %s", ", ".join(sorted(on)))

    def _place(self, instances: list[str]) -> None:
        if instances == self.live and self.placed:
            return
        before, after = set(self.live), set(instances)
        self.live = instances
        self.placed = assign(self.table_ids, instances)
        self.on_placed()
        came = sorted(after - before - {self.instance})
        gone = sorted(before - after - {self.instance})
        if came or gone:
            self.on_changed(came, gone)

    async def _read_holders(self, live: LiveNodes) -> None:
        # The ids as asked: the catalog may add or remove a table during the read.
        table_ids = self.table_ids
        found = await self.tables.leases.holders(table_ids)
        self.holders = {t: h[1] for t, h in zip(table_ids, found, strict=True) if h}

    # --- what others may read --------------------------------------------------------

    @property
    def alone(self) -> bool:
        """Whether no other node is live, as last known."""
        return all(i == self.instance for i in self.live)

    @property
    def registered(self) -> bool:
        """Whether the last successful heartbeat is recent enough that this node's
        registration still holds."""
        return not self.draining and time.monotonic() - self._beat_ok < self.ttl_ms / 1000

    def heard_of(self, instance: str) -> None:
        """``instance`` said it registered: count it live now, not at the next beat."""
        if instance not in self.live and not self.draining:
            self._place(sorted([*self.live, instance]))

    def held(self, table_id: str, instance: str) -> None:
        """A notice said ``instance`` holds ``table_id`` now."""
        self.holders[table_id] = instance

    def holder(self, table_id: str) -> str | None:
        """The live instance holding ``table_id``'s lease, as last known."""
        holder = self.holders.get(table_id)
        return holder if holder in self.live else None

    def unheld(self) -> list[str]:
        """The tables no live node holds, as last known."""
        return [t for t in self.table_ids if self.holder(t) is None]

    def watchers(self, table_id: str, count: int) -> None:
        """``table_id`` has ``count`` watching connections here (written at the next beat)."""
        self._counts[table_id] = count

    async def _write_counts(self) -> None:
        changed = {t: n for t, n in self._counts.items() if self._written.get(t, 0) != n}
        if not changed:
            return
        await self.store.set_watchers(self.instance, changed, 24 * 3600 * 1000)
        self._written.update(changed)
