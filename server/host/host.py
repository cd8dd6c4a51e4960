"""Hosting one table: its lease, its state, its timer, and the fan-out of its events.

A :class:`TableHost` is the asyncio shell around the pure state machine for one
table. It takes the table's lease (:mod:`~server.host.lease_keeper`), loads the state, and
applies events in turn by the commit path (:mod:`~server.host.applying`; those that came
while the table was busy stored together): stored before anyone hears of them, then
sent to the connections at the table
(:mod:`~server.host.fanout`). A timer feeds :class:`Tick` events when the state's
next deadline passes; after a restart or a takeover the stored deadlines carry on, and
one already past fires at once (docs/DESIGN.md, "Time and deadlines").

Each time the host becomes ready (it took the lease and loaded the state; a table
last written by another holder is first told so, ``TakeOver``: a betting phase in
progress starts again) it calls its ``on_ready`` hook, so that the shell around it
(the gateway) can bring the table in line with the connections this process holds:
the stored state knows nothing of connections that a dead owner lost. Each time it
stops holding the table (lost, handed over, stopped) it calls ``on_lost``.

With a :class:`Placement` (several nodes on one Redis, ``server/cluster``), the host
takes the table only while the placement wants it here, and gives it up at the next
moment between rounds once the placement wants it elsewhere (docs/DESIGN.md, "Several
nodes on one Redis").
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import secrets
import time
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass
from typing import Any, Protocol

from server.host.applying import Applier, Stored
from server.host.errors import TableNotWritable, TableUnavailable
from server.host.fanout import FanOut, Subscriber
from server.host.jackpots import TableJackpots
from server.host.lease_keeper import LeaseKeeper, TableLease
from server.host.money import MoneyRequest
from server.host.recovery import Recovery
from server.seating import Seating
from server.store import AccountStore, JackpotStore, StoreUnavailable, TableStore
from server.table.closing import is_closed
from server.table.errors import TableError
from server.table.events import ChangeConfig, CloseTable, Event, TakeOver, Tick
from server.table.machine import Transition, next_wakeup, step
from server.table.state import TableConfig, TableState, evolve, new_table
from server.tasks import cancel_and_wait

log = logging.getLogger(__name__)

_RETRY_S = 0.05  # pause before a tick that could not be stored is tried again
_FAULT_RETRY_S = 1.0  # pause before a tick the table refused is tried again


def now_ms() -> int:
    """Server time: epoch milliseconds."""
    return time.time_ns() // 1_000_000


class Placement(Protocol):
    """Which tables the process's cluster wants held here (``server/cluster``)."""

    def wants(self, table_id: str) -> bool:
        """Whether this process should hold ``table_id`` now."""

    def handed_over(self, table_id: str) -> None:
        """``table_id`` was just given up because the placement wants it elsewhere."""


@dataclass(frozen=True, slots=True)
class Hooks:
    """What the shell around a table host (the gateway, the cluster) is told, each
    optional. ``on_commit(t, seconds)``: each change applied, and how long it took.
    ``on_stored(before, t, frames)``: each change stored, once its events went to this
    process's subscribers (:data:`~server.host.applying.Stored`). ``on_ready(host)``
    and ``on_lost(host)``: see the module docstring."""

    on_commit: Callable[[Transition, float], None] | None = None
    on_stored: Stored | None = None
    on_ready: Callable[[TableHost], Awaitable[None]] | None = None
    on_lost: Callable[[TableHost], None] | None = None


class TableHost:
    """One table hosted by this process (see the module docstring), in parts: its
    ``lease``, its ``applier`` (the commit path, which holds the state and the lock),
    its ``recovery`` of transfers, and its ``subscribers``."""

    def __init__(
        self,
        config: TableConfig,
        store: TableStore,
        owner: str,
        *,
        accounts: AccountStore,
        seating: Seating[TableHost],
        lease_ms: int = 5_000,
        clock: Callable[[], int] = now_ms,
        hooks: Hooks = Hooks(),
        leases: LeaseKeeper | None = None,
        placement: Placement | None = None,
        jackpots: JackpotStore | None = None,
    ) -> None:
        """``accounts`` reads the balance a money request that stores nothing is
        answered with. ``seating`` is the process's index of who sits where (one for
        every host and the gateway), kept up to date with :attr:`state`. ``leases``
        renews the lease with the other tables of the process; without one, the host
        runs a keeper of its own. ``placement``: see the module docstring; without one,
        the host always wants the table. ``jackpots``: the store of the progressive
        jackpots a table may offer (:mod:`server.host.jackpots`)."""
        self.config = config
        self.table_id = config.table_id
        self.store = store
        self.owner = owner
        self.seating = seating
        self.lease_ms = lease_ms
        self.clock = clock
        self.hooks = hooks
        self.placement = placement
        self.closing = False
        """Whether the catalog closes this table (:meth:`close`)."""
        self.subscribers = FanOut(self.table_id)
        self._wake = asyncio.Event()
        self._placed = asyncio.Event()  # the placement changed: is the table wanted here?
        self._task: asyncio.Task[None] | None = None
        # Lost: the timer wakes up to see that the table is no longer ready here.
        self.lease = TableLease(
            store.leases, self.table_id, owner, lease_ms, leases, self._wake.set
        )
        lock = asyncio.Lock()
        self.recovery = Recovery(self.table_id, store.transfers, store.leftovers, self.lease, lock)
        self.applier = Applier(
            self.table_id,
            store,
            accounts,
            self.lease,
            self.subscribers,
            lock=lock,
            clock=clock,
            on_commit=hooks.on_commit,
            on_stored=hooks.on_stored,
            moved=functools.partial(seating.moved, self),
            recover=self.recovery.due.set,
            wake=self._wake,
            jackpots=TableJackpots(self.table_id, jackpots),
        )

    @property
    def state(self) -> TableState | None:
        """The table's state as last stored (None until loaded)."""
        return self.applier.state

    @state.setter
    def state(self, new: TableState | None) -> None:
        self.applier.state = new

    @property
    def queued(self) -> int:
        """Events waiting for their turn at the table (applied together, next)."""
        return self.applier.queued

    def submit(
        self,
        event: Event,
        reply: Callable[[Transition], None] | None = None,
        request: MoneyRequest | None = None,
    ) -> Coroutine[Any, Any, Transition]:
        """Apply ``event``: stored, then sent (:meth:`Applier.submit`, whose coroutine
        this is: the hot path of every request, so no coroutine of its own)."""
        return self.applier.submit(event, reply, request)

    @property
    def token(self) -> int | None:
        """The fencing token of the lease last taken (None before, and once stopped)."""
        return self.lease.token

    # --- life cycle ---------------------------------------------------------------

    def start(self) -> None:
        """Start hosting in the background (lease, load, timer)."""
        if self._task is None:
            self.lease.start()
            self._task = asyncio.create_task(self._run(), name=f"table-{self.table_id}")

    async def stop(self) -> None:
        """Stop hosting: wait for the write in progress, then give the lease up."""
        task, self._task = self._task, None
        if task is not None:
            async with self.lock:  # an in-flight commit finishes first
                task.cancel()
            await cancel_and_wait(task)  # waits for it, and cancels again if it must
        held = self.state is not None
        await self.lease.stop()
        if held:
            self._released()

    def placed(self) -> None:
        """The placement changed: take the table if it is now wanted here, or give it
        up at the next moment between rounds if it is wanted elsewhere."""
        self._placed.set()
        self._wake.set()

    def _wanted(self) -> bool:
        return self.placement is None or self.placement.wants(self.table_id)

    def _released(self) -> None:
        """No longer held here: forget the state (it is another process's to change
        now, and the seats index must not count it) and say so."""
        self.state = None
        self.store.forget(self.table_id)
        if self.hooks.on_lost is not None:
            try:
                self.hooks.on_lost(self)
            except Exception:
                log.exception("table %s: on-lost hook failed", self.table_id)

    @property
    def lock(self) -> asyncio.Lock:
        """Held while an event is applied: hold it to read state and events consistently."""
        return self.applier.lock

    @property
    def ready(self) -> bool:
        """Whether this process owns the table and has its state."""
        return self.lease.ready

    async def wait_ready(self, seconds: float) -> bool:
        """Wait until the table is hosted here; False after ``seconds``."""
        return await self.lease.wait_ready(seconds)

    async def _run(self) -> None:
        while True:
            handing_over = False
            try:
                await self._acquire()
                handing_over = await self._host()
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("table %s: hosting failed; retrying", self.table_id)
            # Give the lease up if it is still ours (we stopped acting on a state we can
            # no longer trust), so that taking the table again need not wait for it.
            # Under the lock: a request being applied finishes first, the next ones find
            # the table gone from here (and are sent to its new holder).
            held = self.state is not None
            async with self.lock:
                await self.lease.give_up()
            if held:
                self._released()
            if handing_over:
                log.info("table %s: handed over", self.table_id)
                if self.placement is not None:
                    self.placement.handed_over(self.table_id)
            else:
                await asyncio.sleep(self.lease_ms / 4000)

    async def _acquire(self) -> None:
        """Wait until this process holds the lease, then load (or create) the state.

        Subscribers still attached from before (the table was lost, then taken again)
        first get what was stored meanwhile: the events after the last one they were
        sent, or a snapshot, so their sequence has no gap.
        """
        previous = self.token
        token, acquired = await self.lease.acquire(self._wanted, self._placed)
        # Renewed from now: loading may take longer than the lease under load.
        self.lease.took(token, acquired)
        self.applier.jackpots.taken()
        # The store knows the parts stored from then on: the next commit writes only
        # those that differ (every one if stored in an older format, or whole).
        loaded = await self.store.load_state(self.table_id)
        self.state = new_table(self.config) if loaded is None else loaded.state
        if (self.state.pending_config or self.state.config) != self.config:
            self._change_config()
        if self.subscribers:
            await self.subscribers.catch_up(self.store.replay, self.state, self.clock)
        if loaded is not None and loaded.token != previous:
            await self._take_over()
        # A round found settling: its jackpot calls (made already, or not yet by a
        # holder that died after the round's commit) are made now, once.
        async with self.lock:
            await self.applier.settle_jackpots()
        if not self.lease.set_ready():
            # Lost while loading, renewals notwithstanding: take it again.
            raise TableUnavailable(self.table_id)
        log.info(
            "table %s: hosting with token %d at version %d",
            self.table_id,
            token,
            self.state.version,
        )

    async def _take_over(self) -> None:
        """Tell the table it was taken from another holder (or from this process before
        a restart): :class:`TakeOver`, stored before the table is ready here, so before
        any request, its timer or its on-ready hook. A betting phase in progress starts
        again: a deadline passed while nobody could bet (the players' connections and
        bets on their way went with the previous holder) must not deal a round they
        could not bet in (docs/RULES.md, "Disconnection"). A table this process wrote
        last (its lease lost and taken again, its connections still here) is not told.
        """
        assert self.state is not None
        async with self.lock:
            t = step(self.state, TakeOver(), self.clock())
            if t.state is not self.state:
                await self.applier.commit(t)

    def _change_config(self) -> None:
        """The catalog's settings changed since this table was stored (while no node held
        it, or unheard by its holder): the machine applies its limits, timers and
        options between rounds (:class:`ChangeConfig`), at once or
        when the round in play ends. A change of seat count would orphan seats: the
        machine refuses it, and the stored config is kept.

        The change is written with the next stored change, as part of it: its commit
        is checked against the version stored, so the loaded version is kept.
        """
        assert self.state is not None
        try:
            changed = step(self.state, ChangeConfig(self.config), self.clock()).state
        except TableError as exc:
            log.warning("table %s: %s; the stored config is kept", self.table_id, exc.message)
            self.config = self.state.config
            return
        applied = changed.pending_config is None
        log.info(
            "table %s: settings from the catalog %s",
            self.table_id,
            "applied" if applied else "apply when the round in play ends",
        )
        self.state = evolve(changed, version=self.state.version)

    async def _host(self) -> bool:
        """Host the table until the lease is lost (False) or the table is to be handed
        over to where the placement wants it (True)."""
        # Beside the timer, not before it: the hook submits events (each waits for the
        # lock like any request) and a deadline already past must not wait for it all.
        announce = asyncio.create_task(self._announce_ready())
        # Transfers a previous holder (or this one) left half done are finished first,
        # beside the timer (docs/DESIGN.md, "Keys ready for Redis Cluster").
        recovery = asyncio.create_task(self.recovery.run(), name=f"recover-{self.table_id}")
        try:
            # Until the lease is lost, or a commit found the table changed under us.
            while self.lease.ready:
                await self._timer_step()
                if self._hand_over_now():
                    return True
            return False
        finally:
            self.lease.drop()
            # Not suppress(CancelledError): a stop() that cancels this task while it
            # waits here must not be swallowed with the hook's own cancellation, or
            # _run would carry on and stop() would wait forever.
            await cancel_and_wait(announce, recovery)

    def _hand_over_now(self) -> bool:
        """Whether the placement wants the table elsewhere and no round is in play."""
        state = self.state
        return (
            self.lease.ready and not self._wanted() and state is not None and state.between_rounds()
        )

    async def _announce_ready(self) -> None:
        """Run the ``on_ready`` hook once per taking of the table; its failure is logged."""
        if self.hooks.on_ready is None:
            return
        try:
            await self.hooks.on_ready(self)
        except Exception:
            log.exception("table %s: on-ready hook failed", self.table_id)

    # --- the timer ------------------------------------------------------------------

    async def _timer_step(self) -> None:
        assert self.state is not None
        wake = next_wakeup(self.state)
        self.applier.waiting_for = wake
        timeout = None if wake is None else max(0.0, (wake - self.clock()) / 1000)
        self._wake.clear()
        if self._hand_over_now():
            return  # the placement changed before the clear: its wake-up is gone
        # asyncio.timeout, not wait_for: on Python 3.11 wait_for can swallow a
        # cancellation that arrives as the wait ends, and stop() would hang.
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(timeout):
                await self._wake.wait()
        if not self.lease.ready:
            return
        if wake is not None and self.clock() >= wake:
            try:
                await self.submit(Tick(secrets.token_bytes(32)))
            except TableNotWritable:
                # Redis refuses writes until a replica is back in reach: nothing was
                # stored, and trying every table again at once would only be refused.
                log.warning(
                    "table %s: tick not stored (Redis refuses writes); retrying", self.table_id
                )
                await asyncio.sleep(_FAULT_RETRY_S)
            except TableError as exc:
                # A deadline that cannot fire (a fault the machine cannot void) must not
                # spin the loop: the deadline stays past, so wait before trying again.
                log.warning("table %s: tick refused: %s", self.table_id, exc)
                await asyncio.sleep(_FAULT_RETRY_S)
            except StoreUnavailable as exc:
                # Not stored, so nothing happened: the deadline is still past and the
                # next step tries again (a commit stored but unanswered is caught by
                # the version check, and the table is reloaded).
                log.warning("table %s: tick not stored (%s); retrying", self.table_id, exc)
                await asyncio.sleep(_RETRY_S)

    # --- the catalog's word (server/cluster/live.py) ---------------------------------

    def reconfigure(self, config: TableConfig) -> None:
        """The catalog gave the table new settings: the ones taken from now (a taking
        applies them as it applies a changed tables file), and, held here, applied by
        the next :meth:`reconcile`."""
        self.config = config

    def close(self) -> None:
        """The catalog closes the table: the holder closes it (:meth:`reconcile`), here
        or, after a failover, wherever the table is held next."""
        self.closing = True

    def in_line(self) -> bool:
        """Whether the table (held here) has nothing to bring in line with the catalog:
        not closing, its settings the catalog's. A check without a coroutine, made for
        every table every second."""
        state = self.state
        if self.closing or state is None:
            return False
        current = state.pending_config or state.config
        return current is self.config or current == self.config

    async def reconcile(self) -> bool:
        """If the table is held here, bring it in line with the catalog's word (each
        step safe to repeat; one refused or not stored is tried again next time): its
        settings (:class:`ChangeConfig`, between rounds), its closing
        (:class:`CloseTable`). Whether the table is closed: held here, closing, with
        nobody seated and no round in play."""
        state = self.state
        if not self.ready or state is None:
            return False
        current = state.pending_config or state.config
        if not state.closing and current is not self.config and current != self.config:
            await self._reconcile_step(ChangeConfig(self.config))
        state = self.state
        if self.closing and state is not None and not state.closing:
            await self._reconcile_step(CloseTable())
        state = self.state
        return self.ready and state is not None and is_closed(state)

    async def _reconcile_step(self, event: Event) -> None:
        name = type(event).__name__
        try:
            await self.submit(event)
        except (TableUnavailable, TableNotWritable, StoreUnavailable) as exc:
            log.warning("table %s: %s not stored (%s); tried again", self.table_id, name, exc)
        except TableError as exc:
            # A new seat count: refused by the machine (the catalog refuses it first).
            log.warning("table %s: %s refused: %s", self.table_id, name, exc.message)
            if self.state is not None:
                self.config = self.state.config

    # --- subscribers ----------------------------------------------------------------

    def subscribe(self, sub: Subscriber) -> None:
        """Send this table's events to ``sub`` from now on (it has had those up to the
        state's ``seq``: call it with the lock held, after a snapshot or a replay)."""
        self.subscribers.add(sub, self.state.seq if self.state is not None else 0)

    def unsubscribe(self, sub: Subscriber) -> None:
        """Stop sending this table's events to ``sub``."""
        self.subscribers.discard(sub)

    async def missed(self, sub: Subscriber, last_seq: int) -> list[bytes] | None:
        """The frames ``sub`` missed after ``last_seq``, or None when a snapshot is needed."""
        return await self.subscribers.missed(self.store.replay, sub, last_seq)
