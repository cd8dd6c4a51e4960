"""Hosting one table: its lease, its state, its timer, and the fan-out of its events.

A :class:`TableHost` is the asyncio shell around the pure state machine for one
table. It applies events one at a time: ``step`` computes the change, the store
commits it (state, ledger entries, events, game logs) in one atomic operation
checked against the lease's fencing token and the state's version, and only then
are the events sent to the connections at the table (DESIGN.md: a state change is
durable before anyone hears of it). The store keeps the state in parts: the host
remembers the state last stored, and a commit writes only the parts that differ
from it (a bet writes one seat and the header, not the whole table). A timer feeds
:class:`Tick` events when the state's next deadline passes; after a restart or a
takeover the stored deadlines carry on, and one already past fires at once.

Each time the host becomes ready (it took the lease and loaded the state) it calls
its ``on_ready`` hook, so that the shell around it (the gateway) can bring the table
in line with the connections this process holds: the stored state knows nothing of
connections that a dead owner lost.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Protocol

import msgpack
from redis.exceptions import RedisError

from protocol.codec import encode
from protocol.errors import ErrorCode
from server.gamelog import pack_record
from server.leases import LeaseKeeper
from server.seating import Seating
from server.store.accounts import AccountStore
from server.store.tables import (
    ClientRequest,
    CommitStatus,
    RequestRecord,
    StoredTable,
    StoreError,
    TableStore,
)
from server.table.errors import TableError
from server.table.events import Event, Tick, Void
from server.table.machine import Transition, next_wakeup, step
from server.table.state import (
    Phase,
    TableConfig,
    TableState,
    evolve,
    from_bytes,
    from_parts,
    new_table,
    to_parts,
)
from server.table.views import Outbound, snapshot

log = logging.getLogger(__name__)

_RETRY_S = 0.05  # pause before a tick that could not be stored is tried again
_FAULT_RETRY_S = 1.0  # pause before a tick the table refused is tried again


def stored_state(stored: StoredTable) -> TableState:
    """The state of a stored table: from its parts, or from the whole state of a table
    stored before parts and not committed since. Raises ValueError if unreadable."""
    if stored.whole is not None and not stored.parts:
        return from_bytes(stored.whole)
    return from_parts(stored.parts)


def now_ms() -> int:
    """Server time: epoch milliseconds."""
    return time.time_ns() // 1_000_000


class Subscriber(Protocol):
    """A connection that receives a table's events."""

    player_id: str | None

    def send_bytes(self, data: bytes) -> None:
        """Queue one frame; never blocks (a slow client is dropped instead)."""


class TableUnavailable(TableError):
    """The table is not hosted here right now (starting, or owned by another process)."""

    def __init__(self, table_id: str) -> None:
        super().__init__(ErrorCode.UNAVAILABLE, f"table {table_id} is not available; retry")


@dataclass(frozen=True, slots=True)
class MoneyRequest:
    """A client's request that moves chips (join, rebuy, cash_out, leave), applied at
    most once per ``(session, rid)`` (PROTOCOL.md, section 3): a session survives a
    dropped connection (resumed with its token), and a client's request ids are its
    own only within one session (a counter may start again in a new one).

    ``fingerprint`` says what was asked: the same rid with another fingerprint is
    refused (``rid_reused``). ``memo(t)`` is what the reply needs from the change
    ``t`` besides the account balance; it is stored with the request.
    ``answer(memo, account)`` queues the ``ok`` from a memo and the player's account
    balance right after the change: the first time, and for every repeat with the
    stored ones, so that a repeat gets the very reply the first one got.
    """

    player: str
    session: str
    rid: str
    fingerprint: bytes
    memo: Callable[[Transition], bytes]
    answer: Callable[[bytes, int], None]

    @property
    def key(self) -> str:
        """What the request is stored under, for its player."""
        return f"{self.session}:{self.rid}"


def _answer_repeat(request: MoneyRequest, record: RequestRecord) -> None:
    """Answer a request already applied as it was answered then, if it is the same."""
    if record.fingerprint != request.fingerprint:
        raise TableError(
            ErrorCode.RID_REUSED,
            f"rid {request.rid!r} was used for another request of yours; "
            "a new request needs a new rid",
        )
    request.answer(record.memo, record.account)


Frames = tuple[bytes, dict[str, bytes]]


def encode_outbound(out: Outbound) -> Frames:
    """An event's frames, encoded once for storing and sending: public, then private."""
    return encode(out.public), {p: encode(m) for p, m in out.private.items()}


def pack_outbound(frames: Frames) -> bytes:
    """An event as stored for replay: the public frame and each private frame."""
    packed: bytes = msgpack.packb(list(frames), use_bin_type=True)
    return packed


def frame_for(stored: bytes, player: str | None) -> bytes:
    """The frame ``player`` (None: a spectator) receives of a stored event."""
    public, private = msgpack.unpackb(stored, raw=False)
    return pick_frame((public, private), player)


def pick_frame(frames: Frames, player: str | None) -> bytes:
    """``player``'s own frame of an event if it has one, else the public one."""
    public, private = frames
    return private.get(player, public) if player is not None else public


class TableHost:
    """One table hosted by this process. See the module docstring."""

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
        on_commit: Callable[[Transition, float], None] | None = None,
        on_ready: Callable[[TableHost], Awaitable[None]] | None = None,
        leases: LeaseKeeper | None = None,
    ) -> None:
        """``accounts`` reads the balance a money request that stores nothing is
        answered with. ``seating`` is the process's index of who sits where (one for
        every host and the gateway), kept up to date with :attr:`state`. ``leases``
        renews the lease with the other tables of the process; without one, the host
        runs a keeper of its own."""
        self.config = config
        self.table_id = config.table_id
        self.store = store
        self.accounts = accounts
        self.owner = owner
        self.lease_ms = lease_ms
        self.clock = clock
        self.on_commit = on_commit
        self.on_ready = on_ready
        self.seating = seating
        self._state: TableState | None = None
        # What the table's stored parts hold: each commit writes only the parts of its
        # state that differ from it (to_parts). ``state`` may differ from it by settings
        # from the tables file not yet stored. None: no parts are known (a new table,
        # or one stored whole), so the next commit writes every part.
        self._stored: TableState | None = None
        self.token: int | None = None
        self.subscribers: dict[Subscriber, None] = {}  # ordered set
        self._lock = asyncio.Lock()
        self._wake = asyncio.Event()
        self._waiting_for: int | None = None  # the wake-up time the timer waits for
        self._ready = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._pending_config: TableConfig | None = None
        self._acquired = 0.0  # time.monotonic() when the lease was last acquired
        self._own_leases = leases is None
        self.leases = leases or LeaseKeeper(store, owner, lease_ms)

    @property
    def state(self) -> TableState | None:
        """The table's state as last stored (None until loaded)."""
        return self._state

    @state.setter
    def state(self, new: TableState | None) -> None:
        before, self._state = self._state, new
        self.seating.moved(self, before, new)

    # --- life cycle ---------------------------------------------------------------

    def start(self) -> None:
        """Start hosting in the background (lease, load, timer)."""
        if self._task is None:
            if self._own_leases:
                self.leases.start()
            self._task = asyncio.create_task(self._run(), name=f"table-{self.table_id}")

    async def stop(self) -> None:
        """Stop hosting: wait for the write in progress, then give the lease up."""
        task, self._task = self._task, None
        if task is not None:
            async with self._lock:  # an in-flight commit finishes first
                task.cancel()
            # Cancel again if a cancellation was absorbed somewhere (bounded wait each).
            while not task.done():
                await asyncio.wait({task}, timeout=1.0)
                if not task.done():
                    log.warning("table %s: still stopping; cancelling again", self.table_id)
                    task.cancel()
        self.leases.drop(self.table_id)
        if self._own_leases:
            await self.leases.stop()
        if self.token is not None:
            with contextlib.suppress(Exception):
                await self.store.release_lease(self.table_id, self.owner, self.token)
        self.token = None
        self._ready.clear()

    @property
    def lock(self) -> asyncio.Lock:
        """Held while an event is applied: hold it to read state and events consistently."""
        return self._lock

    @property
    def ready(self) -> bool:
        """Whether this process owns the table and has its state."""
        return self._ready.is_set()

    async def wait_ready(self, seconds: float) -> bool:
        """Wait until the table is hosted here; False after ``seconds``."""
        try:
            await asyncio.wait_for(self._ready.wait(), seconds)
        except TimeoutError:
            return False
        return True

    async def _run(self) -> None:
        while True:
            try:
                await self._acquire()
                await self._host()
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("table %s: hosting failed; retrying", self.table_id)
            self._ready.clear()
            # Give the lease up if it is still ours (we stopped acting on a state we can
            # no longer trust), so that taking the table again need not wait for it.
            if self.token is not None:
                with contextlib.suppress(Exception):
                    await self.store.release_lease(self.table_id, self.owner, self.token)
            await asyncio.sleep(self.lease_ms / 4000)

    async def _acquire(self) -> None:
        """Wait until this process holds the lease, then load (or create) the state.

        Subscribers still attached from before (the table was lost, then taken again)
        first get what was stored meanwhile: the events after the last one they were
        sent, or a snapshot, so their sequence has no gap.
        """
        sent = self.state.seq if self.state is not None else None
        while True:
            acquired = time.monotonic()
            token = await self.store.acquire_lease(self.table_id, self.owner, self.lease_ms)
            if token is not None:
                break
            await asyncio.sleep(self.lease_ms / 4000)
        stored = await self.store.load(self.table_id)
        self.token = token
        self._acquired = acquired
        if stored is None:
            self.state, self._stored = new_table(self.config), None
        else:
            self.state = stored_state(stored)
            self._stored = self.state if stored.parts else None
        self._pending_config = None
        if self.state.config != self.config:
            # The tables file changed since this table was stored: its limits, timers and
            # options apply from the next moment between rounds. A change of seat count
            # would orphan seats: the stored one is kept.
            if self.state.config.seats == self.config.seats:
                self._pending_config = self.config
                self._apply_pending_config()
            else:
                log.warning("table %s: seat count differs from the file; kept", self.table_id)
                self.config = self.state.config
        if sent is not None and self.state.seq > sent and self.subscribers:
            await self._catch_up(sent)
        log.info(
            "table %s: hosting with token %d at version %d",
            self.table_id,
            token,
            self.state.version,
        )
        self._ready.set()

    async def _catch_up(self, sent: int) -> None:
        """Send the subscribers the events stored after ``sent`` (or a snapshot each)."""
        assert self.state is not None
        stored = await self.store.events_since(self.table_id, sent)
        for sub in list(self.subscribers):
            if stored is None:
                now = self.clock()
                sub.send_bytes(encode(snapshot(self.state, sub.player_id, now)))
            else:
                for _, blob in stored:
                    sub.send_bytes(frame_for(blob, sub.player_id))

    async def _host(self) -> None:
        assert self.token is not None
        self.leases.hold(self.table_id, self.token, self._lease_lost, self._acquired)
        # Beside the timer, not before it: the hook submits events (each waits for the
        # lock like any request) and a deadline already past must not wait for it all.
        announce = asyncio.create_task(self._announce_ready())
        try:
            # Until the lease is lost, or a commit found the table changed under us.
            while self.ready:
                await self._timer_step()
        finally:
            self.leases.drop(self.table_id)
            announce.cancel()
            # gather, not suppress(CancelledError): a stop() that cancels this task
            # while it waits here must not be swallowed with the hook's own
            # cancellation, or _run would carry on and stop() would wait forever.
            await asyncio.gather(announce, return_exceptions=True)

    async def _announce_ready(self) -> None:
        """Run the ``on_ready`` hook once per taking of the table; its failure is logged."""
        if self.on_ready is None:
            return
        try:
            await self.on_ready(self)
        except Exception:
            log.exception("table %s: on-ready hook failed", self.table_id)

    def _lease_lost(self) -> None:
        self._ready.clear()
        self._wake.set()

    async def _timer_step(self) -> None:
        assert self.state is not None
        wake = next_wakeup(self.state)
        self._waiting_for = wake
        timeout = None if wake is None else max(0.0, (wake - self.clock()) / 1000)
        self._wake.clear()
        # asyncio.timeout, not wait_for: on Python 3.11 wait_for can swallow a
        # cancellation that arrives as the wait ends, and stop() would hang.
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(timeout):
                await self._wake.wait()
        if not self.ready:
            return
        if wake is not None and self.clock() >= wake:
            try:
                await self.submit(Tick(secrets.token_bytes(32)))
            except TableError as exc:
                # A deadline that cannot fire (a fault the machine cannot void) must not
                # spin the loop: the deadline stays past, so wait before trying again.
                log.warning("table %s: tick refused: %s", self.table_id, exc)
                await asyncio.sleep(_FAULT_RETRY_S)
            except (RedisError, OSError) as exc:
                # Not stored, so nothing happened: the deadline is still past and the
                # next step tries again (a commit stored but unanswered is caught by
                # the version check, and the table is reloaded).
                log.warning("table %s: tick not stored (%s); retrying", self.table_id, exc)
                await asyncio.sleep(_RETRY_S)

    # --- events -------------------------------------------------------------------

    async def submit(
        self,
        event: Event,
        reply: Callable[[Transition], None] | None = None,
        request: MoneyRequest | None = None,
    ) -> Transition:
        """Apply ``event``: stored, then sent. Raises :class:`TableError` if refused.

        ``reply`` is called once the change is stored and before its events go out, so
        the requester's ``ok`` precedes the events it caused (PROTOCOL.md). A fault
        inside the state machine (a bug) voids the round in play, as RULES.md asks of
        a malfunction, instead of leaving the table stuck.

        ``request`` (instead of ``reply``): the money request behind ``event``. If it
        was applied already (its session and rid are recorded), nothing happens: it is
        answered as the first time, and the transition returned changes nothing.
        Else it is recorded with the change, and answered with the account balance
        the change left.
        """
        if reply is not None and request is not None:
            raise ValueError("a money request is answered by its own callback")
        async with self._lock:
            if not self.ready or self.state is None:
                raise TableUnavailable(self.table_id)
            if request is not None:
                # Checked before step(): a repeat may no longer be legal at all (a
                # join of a player now seated). Under the lock, so of two identical
                # requests at once the second sees the first one's record.
                record = await self.store.request(request.player, request.key)
                if record is not None:
                    _answer_repeat(request, record)
                    return Transition(state=self.state)
            started = time.perf_counter()
            self._apply_pending_config()
            try:
                transition = step(self.state, event, self.clock())
            except TableError:
                raise
            except Exception as exc:
                log.exception("table %s: state machine fault on %r", self.table_id, event)
                # The void is stored and sent; the request itself failed.
                await self._commit(self._void_after_fault(exc), None)
                raise TableError(
                    ErrorCode.INTERNAL, "server fault: the round was voided and bets returned"
                ) from exc
            if transition.state is not self.state:
                if not await self._commit(transition, reply, request):
                    return Transition(state=self.state)  # a repeat: nothing changed
            elif request is not None:
                # Nothing to store (cashing out an empty table balance), so nothing
                # recorded: a repeat does the same nothing.
                account = await self.accounts.balance(request.player) or 0
                request.answer(request.memo(transition), account)
            elif reply is not None:
                reply(transition)
            if self.on_commit is not None:
                self.on_commit(transition, time.perf_counter() - started)
            return transition

    def _apply_pending_config(self) -> None:
        """Settings from a changed tables file take effect between rounds only.

        Changing the commission, pay table or foul policy of bets already placed would
        change a game in progress (a fouled hand under a new ``reject`` policy cannot
        even be settled). The change is written with the next stored change.
        """
        state = self.state
        if self._pending_config is None or state is None:
            return
        between = state.phase in (Phase.IDLE, Phase.SETTLING) or (
            state.phase is Phase.BETTING and not state.in_round()
        )
        if between:
            log.info("table %s: settings from the tables file applied", self.table_id)
            self.state = evolve(state, config=self._pending_config)
            self._pending_config = None

    def _void_after_fault(self, exc: Exception) -> Transition:
        assert self.state is not None
        try:
            return step(self.state, Void(f"server fault: {type(exc).__name__}"), self.clock())
        except TableError:
            raise TableError(ErrorCode.INTERNAL, "server fault; nothing changed") from exc

    async def _commit(
        self,
        t: Transition,
        reply: Callable[[Transition], None] | None,
        request: MoneyRequest | None = None,
    ) -> bool:
        """Store ``t`` and answer, then send its events; False if nothing was stored
        because ``request`` was applied already (answered as then)."""
        assert self.state is not None
        assert self.token is not None
        frames = [encode_outbound(o) for o in t.events]
        packed = [(o.seq, pack_outbound(f)) for o, f in zip(t.events, frames, strict=True)]
        parts = to_parts(t.state, self._stored)
        carried = None
        if request is not None:
            carried = ClientRequest(
                request.player, request.key, request.fingerprint, request.memo(t)
            )
        try:
            result = await self.store.commit(
                self.table_id,
                token=self.token,
                expected_version=self.state.version,
                new_version=t.state.version,
                state=parts,
                entries=t.entries,
                events=packed,
                logs=[(player, pack_record(record)) for player, record in t.logs],
                request=carried,
            )
        except (RedisError, OSError):
            # The reply was lost: was the change stored? Answering "failed" for a stored
            # change would let a retry move the chips twice. Ask Redis (if it answers).
            if not await self._stored_is(t.state):
                raise  # not stored: nothing happened, a retry is safe
            log.warning("table %s: commit stored, reply lost; carrying on", self.table_id)
            result = None
        if result is not None and result.status is CommitStatus.REPEATED:
            # Recorded meanwhile by a commit of another table (the submit's own check
            # ran under this table's lock): nothing was written here.
            assert request is not None
            assert result.request is not None
            _answer_repeat(request, result.request)
            return False
        if result is not None and result.status is CommitStatus.INSUFFICIENT:
            raise TableError(
                ErrorCode.INSUFFICIENT_BALANCE,
                f"your account holds {result.balance} chips: lower the amount",
            )
        if result is not None and result.stale:
            # Another process owns the table now: stop acting on it.
            self._ready.clear()
            self._wake.set()
            raise TableUnavailable(self.table_id)
        self.state = self._stored = t.state
        if next_wakeup(t.state) != self._waiting_for:
            # Only when the time to wait for changed: most changes (a bet) leave the
            # deadline as it was, and waking the timer for nothing costs a task switch.
            self._wake.set()
        try:
            if request is not None:
                assert carried is not None
                if result is not None:
                    account = result.accounts[request.player]
                else:  # the commit's reply was lost: its record has the balance
                    record = await self.store.request(request.player, request.key)
                    if record is None:
                        raise StoreError("a stored request has no record")
                    account = record.account
                request.answer(carried.memo, account)
            elif reply is not None:
                reply(t)
        finally:
            # The change is stored: its events go out even if the reply could not.
            for event_frames in frames:
                self._fan_out(event_frames)
        return True

    async def _stored_is(self, state: TableState) -> bool:
        """Whether the table in Redis is ``state``, written under this host's token."""
        stored = await self.store.load(self.table_id)
        if stored is None or stored.version != state.version or stored.token != self.token:
            return False
        try:
            return stored_state(stored) == state
        except ValueError:
            return False  # unreadable: not this state, whatever it is

    def _fan_out(self, frames: Frames) -> None:
        for sub in list(self.subscribers):
            sub.send_bytes(pick_frame(frames, sub.player_id))

    # --- subscribers ----------------------------------------------------------------

    def subscribe(self, sub: Subscriber) -> None:
        """Send this table's events to ``sub`` from now on."""
        self.subscribers[sub] = None

    def unsubscribe(self, sub: Subscriber) -> None:
        """Stop sending this table's events to ``sub``."""
        self.subscribers.pop(sub, None)

    async def missed(self, sub: Subscriber, last_seq: int) -> list[bytes] | None:
        """The frames ``sub`` missed after ``last_seq``, or None when a snapshot is needed."""
        stored = await self.store.events_since(self.table_id, last_seq)
        if stored is None:
            return None
        return [frame_for(blob, sub.player_id) for _, blob in stored]
