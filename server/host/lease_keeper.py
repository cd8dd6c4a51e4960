"""A table's lease through its life cycle, and the keeper that renews them all.

A process hosts a table while it holds the table's lease, taken with a fencing token
that only grows (docs/DESIGN.md, "Leases and fencing tokens"). A :class:`TableLease`
goes round one cycle: acquired (waiting while another process holds it), renewed while
held, lost (another process owns the table now, or may) or released, then acquired
again; the table host drives it, loading the table in between.

Each lease must be renewed well before it expires, every ``lease_ms / 3``. With a
timer and a task per table, a process hosting 1,667 tables woke 1,667 tasks and made as
many calls every cycle, in bursts that stalled its event loop. The
:class:`LeaseKeeper` renews them all with one timer, the oldest share of them a cycle
in one script call (:data:`SLICES`, so Redis is never blocked long), and tells a table
only when its lease is lost.

A renewal must reach Redis before the lease runs out, whatever else the process does.
Measured with 1,667 tables on one node (issue 16), leases were lost by the thousand,
even at start-up with no player, and tables were taken again while players waited
(``unavailable``): a cycle slept ``lease_ms / 3`` *after* the previous one finished,
its chunks went one after another, each queued behind the commits' pipeline in flight,
so a cycle that took over ``2 * lease_ms / 3`` (start-up's 1,667 takings and loads, a
busy Redis) let every lease expire; and a lease taken long before it was handed to the
keeper waited a whole cycle. Now the cycles keep their cadence (the next is due
``lease_ms / 3`` after the oldest renewal, not after the cycle's end), a lease handed
over is renewed at once if it is due, every chunk goes at once, and the renewals have
their own pipeline (``TableStore.leases``), queued behind no commit. And a
renewal that comes late anyway keeps a lease nobody took since (the store's renewal
script checks the table's fencing counter): a saturated process no longer loses, and
takes again, tables that nobody else wanted.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

from server.store import Leases, StoreUnavailable
from server.tasks import cancel_and_wait

log = logging.getLogger(__name__)

RENEW_CHUNK = 500
"""Leases renewed by one script call: Redis runs a script alone, so keep each short."""

SLICE_LEASES = 100
"""The fewest leases a cycle renews when the keeper spreads them (see :data:`SLICES`)."""

SLICES = 8
"""Into how many cycles, at most, one renewal interval is cut. With 1,667 tables, every
lease renewed in one cycle held Redis for the whole of it (three script calls back to
back, 16 to 47 ms measured on a shared core) every 667 ms, and every commit waited
behind it: a p99 of its own. Now each cycle renews the oldest share (at least
:data:`SLICE_LEASES`, and every lease due), so the renewals come a few hundred at a
time, eight times an interval; each lease still about once an interval."""

RETRY_PAUSE = 1 / 4
"""After a cycle that renewed nothing (Redis unreachable), the next waits at least this
share of the renewal interval: the keeper tries again often, but never spins."""

_AFTER_EXPIRY_S = 0.005
"""How long after a lease held elsewhere should have run out it is tried again."""


@dataclass
class _Held:
    token: int
    renewed: float  # time.monotonic() when the last successful renewal was sent
    on_lost: Callable[[], None]


class LeaseKeeper:
    """Renews the leases handed to :meth:`hold` until :meth:`drop` or their loss.

    A lease counts as lost when Redis says it is no longer ours, or when it could not
    be renewed for ``lease_ms`` (Redis unreachable all that time: it may have expired
    and been taken). ``on_lost`` is then called once, from the keeper's task.
    """

    def __init__(self, leases: Leases, owner: str, lease_ms: int) -> None:
        self.leases = leases
        self.owner = owner
        self.lease_ms = lease_ms
        self._held: dict[str, _Held] = {}
        # Kept oldest renewal first, so that a cycle finds the oldest share and the next
        # due time without going through all of them: a renewal moves its lease to the
        # end. A lease handed over with an older time, or chunks of a cycle answered
        # out of order, break the order (noted by _note_last) until the next cycle
        # sorts them again: rare, once a table is taken or when a cycle is large.
        self._in_order = True
        self._task: asyncio.Task[None] | None = None
        self._wake = asyncio.Event()  # a lease handed over is due before the next cycle
        self._planned = 0.0  # time.monotonic() of the next cycle, as planned

    def hold(self, table_id: str, token: int, on_lost: Callable[[], None], acquired: float) -> None:
        """Keep the lease of ``table_id`` alive: acquired with ``token`` at ``acquired``
        (``time.monotonic()`` before the acquiring call: its time to live runs from
        then, whatever happened since)."""
        self._note_last(table_id, _Held(token, acquired, on_lost))
        if acquired + self.lease_ms / 3000 < self._planned:
            self._wake.set()

    def drop(self, table_id: str) -> None:
        """Stop renewing ``table_id``'s lease (it is being given up)."""
        self._held.pop(table_id, None)

    def holds(self, table_id: str, token: int) -> bool:
        """Whether the lease of ``table_id`` taken with ``token`` is being renewed."""
        held = self._held.get(table_id)
        return held is not None and held.token == token

    def start(self) -> None:
        """Start the renewal timer (idempotent)."""
        if self._task is None:
            self._task = asyncio.create_task(self._run(), name="lease-keeper")

    async def stop(self) -> None:
        """Stop the renewal timer; leases still held are left to expire."""
        task, self._task = self._task, None
        if task is not None:
            await cancel_and_wait(task)

    async def _run(self) -> None:
        interval = self.lease_ms / 3000
        not_before = 0.0  # time.monotonic() before which no cycle starts
        last = float("-inf")  # when the last cycle started
        while True:
            now = time.monotonic()
            self._put_in_order()
            oldest = next((h.renewed for h in self._held.values()), now)
            every = interval / self._slices()
            self._planned = max(min(oldest + interval, last + every), not_before)
            pause = self._planned - now
            if pause > 0:
                self._wake.clear()
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(pause):
                        await self._wake.wait()
                continue  # a lease was handed over meanwhile, or one is due now
            not_before = now + every * RETRY_PAUSE
            last = now
            try:
                await self._renew_share(now, interval)
            except asyncio.CancelledError:
                raise
            except Exception:  # a bug here must not end the renewals of every table
                log.exception("lease renewal failed")

    def _slices(self) -> int:
        return max(1, min(SLICES, len(self._held) // SLICE_LEASES))

    def _note_last(self, table_id: str, held: _Held) -> None:
        """Put ``held`` last (in place of any lease of ``table_id``), noting whether the
        leases are still oldest first."""
        self._held.pop(table_id, None)
        if self._in_order and self._held:
            last = next(reversed(self._held.values()))
            self._in_order = last.renewed <= held.renewed
        self._held[table_id] = held

    def _put_in_order(self) -> None:
        if not self._in_order:
            self._held = dict(sorted(self._held.items(), key=lambda item: item[1].renewed))
            self._in_order = True

    async def _renew_share(self, now: float, interval: float) -> None:
        """Renew the oldest share of the leases (:data:`SLICES`), and any other that is
        due: a lease waits at most one more cycle, well within its life. Only that share
        is looked at (the leases are oldest first): with 1,667 tables, sorting them all
        each cycle, eight cycles a renewal interval, was the keeper's main cost."""
        self._put_in_order()
        share = -(-len(self._held) // self._slices())
        items = iter(self._held.items())
        held = list(itertools.islice(items, share))
        if held and held[-1][1].renewed + interval <= now:
            held += itertools.takewhile(lambda item: item[1].renewed + interval <= now, items)
        await self._renew_all(held)

    async def renew_now(self) -> None:
        """One renewal cycle for every lease held, every chunk at once; losses are
        reported to their tables."""
        await self._renew_all(list(self._held.items()))

    async def _renew_all(self, held: list[tuple[str, _Held]]) -> None:
        await asyncio.gather(
            *(
                self._renew(held[start : start + RENEW_CHUNK])
                for start in range(0, len(held), RENEW_CHUNK)
            )
        )

    async def _renew(self, chunk: list[tuple[str, _Held]]) -> None:
        sent = time.monotonic()
        try:
            ours = await self.leases.renew_many(
                self.owner, [(table_id, h.token) for table_id, h in chunk], self.lease_ms
            )
        except StoreUnavailable as exc:
            # Redis unreachable for a moment (a restart, a failover): a lease may still
            # be ours when it is back, so keep trying while it can last. Commits are
            # fenced, so acting meanwhile is safe.
            log.warning("%d leases not renewed (%s); retrying", len(chunk), exc)
            ours = [sent - h.renewed < self.lease_ms / 1000 for _, h in chunk]
            sent = -1.0  # nothing was renewed
        for (table_id, h), still in zip(chunk, ours, strict=True):
            if self._held.get(table_id) is not h:
                continue  # dropped, or taken again, meanwhile
            if not still:
                del self._held[table_id]
                log.warning(
                    "table %s: lease lost (renewal sent %.0f ms after the last one)",
                    table_id,
                    (time.monotonic() if sent < 0 else sent) * 1000 - h.renewed * 1000,
                )
                h.on_lost()
            elif sent >= 0:
                h.renewed = sent
                self._note_last(table_id, h)


class TableLease:
    """This process's lease of one table, and whether the table is ready here.

    The cycle, driven by the host: :meth:`acquire` waits until the lease is ours,
    :meth:`took` adopts it and has the keeper renew it from then (loading a table can
    take longer than the lease under load: renewals wait for nothing),
    :meth:`set_ready` opens the table once loaded, unless the lease was lost
    meanwhile; the lease is lost (:meth:`lose`: by the keeper, or by a commit refused
    as stale) or the host stops serving, and :meth:`give_up` releases it if it is
    still ours, before the next :meth:`acquire`. :meth:`stop` ends it all.
    """

    def __init__(
        self,
        leases: Leases,
        table_id: str,
        owner: str,
        lease_ms: int,
        keeper: LeaseKeeper | None,
        on_lost: Callable[[], None],
    ) -> None:
        """``keeper`` renews the lease with the other tables of the process; without
        one, the lease runs a keeper of its own. ``on_lost`` is called each time the
        lease is lost, once the table is no longer ready."""
        self.leases = leases
        self.table_id = table_id
        self.owner = owner
        self.lease_ms = lease_ms
        self.token: int | None = None
        """The fencing token of the lease last taken (None before, and once stopped)."""
        self._acquired = 0.0  # time.monotonic() when the lease was last acquired
        self._lost = False  # lost since it was last taken
        self._ready = asyncio.Event()
        self._on_lost = on_lost
        self._own_keeper = keeper is None
        self.keeper = keeper or LeaseKeeper(leases, owner, lease_ms)

    @property
    def ready(self) -> bool:
        """Whether this process owns the table and has its state."""
        return self._ready.is_set()

    async def wait_ready(self, seconds: float) -> bool:
        """Wait until the table is hosted here; False after ``seconds``."""
        try:
            async with asyncio.timeout(seconds):
                await self._ready.wait()
        except TimeoutError:
            return False
        return True

    def start(self) -> None:
        """Start the lease's own keeper, if it has one."""
        if self._own_keeper:
            self.keeper.start()

    async def acquire(
        self, wanted: Callable[[], bool] | None = None, wake: asyncio.Event | None = None
    ) -> tuple[int, float]:
        """Wait until this process holds the lease: its token, and ``time.monotonic()``
        before the call that acquired it (its time to live runs from then).

        ``wanted``: tried only while it says so; ``wake`` is set when it may have
        changed (it is cleared here). With them (several nodes), a lease held
        elsewhere is tried again as soon as it would run out, not a quarter of its
        life later: a dead holder's tables are taken over sooner.
        """
        while True:
            pause = self.lease_ms / 4000
            if wanted is None or wanted():
                acquired = time.monotonic()
                token = await self.leases.acquire(self.table_id, self.owner, self.lease_ms)
                if token is not None:
                    return token, acquired
                if wanted is not None:
                    left_ms = await self.leases.ttl_ms(self.table_id)
                    # -2: released meanwhile, try again at once (but never spin).
                    pause = min(pause, max(left_ms, 0) / 1000 + _AFTER_EXPIRY_S)
            elif wake is not None:
                pause = self.lease_ms / 1000  # until the placement changes, mostly
            if wake is None:
                await asyncio.sleep(pause)
                continue
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(pause):
                    await wake.wait()
            wake.clear()

    def took(self, token: int, acquired: float) -> None:
        """Adopt the lease :meth:`acquire` gave: commits are fenced with ``token``, and
        the keeper renews it from now on (:meth:`hold`)."""
        self.token = token
        self._acquired = acquired
        self._lost = False
        self.hold()

    def set_ready(self) -> bool:
        """The table is loaded: it is hosted here until the lease is lost. False (and
        not ready) if it was lost since :meth:`took`."""
        if self._lost:
            return False
        self._ready.set()
        return True

    def hold(self) -> None:
        """Have the keeper renew the lease, until :meth:`drop` or its loss (done by
        :meth:`took`: a no-op while the keeper renews it)."""
        assert self.token is not None
        if not self.keeper.holds(self.table_id, self.token):
            self.keeper.hold(self.table_id, self.token, self.lose, self._acquired)

    def drop(self) -> None:
        """Stop renewing the lease (it is being given up)."""
        self.keeper.drop(self.table_id)

    def lose(self) -> None:
        """The table may be another process's now: stop acting on it."""
        self._lost = True
        self._ready.clear()
        self._on_lost()

    async def give_up(self) -> None:
        """No longer ready nor renewed; release the lease if it is still ours, so that
        taking the table again need not wait for it to expire."""
        self.drop()
        self._ready.clear()
        await self._release()

    async def stop(self) -> None:
        """Stop renewing, stop the own keeper, release the lease: the cycle is over."""
        self.drop()
        if self._own_keeper:
            await self.keeper.stop()
        await self._release()
        self.token = None
        self._ready.clear()

    async def _release(self) -> None:
        if self.token is not None:
            with contextlib.suppress(Exception):
                await self.leases.release(self.table_id, self.owner, self.token)
