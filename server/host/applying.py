"""The commit path: an event applied to the table, stored, answered, then sent.

Under the host's lock, ``step`` computes the change; the store commits it (state,
ledger entries, events, game logs) in one atomic operation checked against the lease's
fencing token and the state's version; only then is the requester answered and are the
events sent (docs/DESIGN.md, "The commit: one Lua script"). The host hands the store
each change as one :class:`~server.store.tables.store.Change`; the store keeps the
state in parts, and writes only the parts that differ from those it last stored (a bet
writes one seat and the header, not the whole table).

A money request (:class:`MoneyRequest`) is applied at most once: a repeat is answered
as the first time, from the record its commit stored. A commit whose reply was lost
may have been stored: the host reads the table back rather than answer "failed" for a
change that happened (docs/DESIGN.md, "Money and idempotency"). Chips between the
table and an account cross in steps (:mod:`server.store.chips.transfers`); a step that
failed after the commit is finished by the table's recovery
(:mod:`server.host.recovery`).

When the store waits for replicas, a change the primary stored but no replica holds is
not acknowledged: the requester gets ``unavailable`` (retry), nothing is sent, and the
host takes the table again, carrying on from whatever Redis then holds (the change, if
the primary kept it: its events then reach the table's connections; the state before
it, if a failover lost it). Retrying a money request is safe: it is applied once
(docs/DESIGN.md, "Redis failures").
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import NoReturn

from protocol.errors import ErrorCode
from server.gamelog import pack_record
from server.host.errors import TableNotWritable, TableUnavailable
from server.host.fanout import FanOut, Frames, encode_outbound, pack_outbound
from server.host.jackpots import TableJackpots
from server.host.lease_keeper import TableLease
from server.host.money import MoneyRequest, Repeats, rid_reused
from server.store import (
    AccountStore,
    Change,
    ClientRequest,
    CommitResult,
    CommitStatus,
    StoreError,
    StoreUnavailable,
    TableStore,
    Unreplicated,
    WritesRefused,
)
from server.table.errors import TableError
from server.table.events import Event, Void
from server.table.machine import Transition, next_wakeup, step
from server.table.state import TableState

log = logging.getLogger(__name__)


@dataclass(slots=True, eq=False)
class Queued:
    """An event waiting for its turn at the table, and what became of it: its
    transition once applied, or the error that refused or failed it."""

    event: Event
    reply: Callable[[Transition], None] | None
    transition: Transition | None = None
    error: Exception | None = None
    answered: bool = False  # its change is stored and its reply went out: it stands


def answer(item: Queued) -> None:
    """Send ``item``'s reply (its change is stored): a reply that fails fails only its
    own request."""
    item.answered = True
    if item.reply is None:
        return
    assert item.transition is not None
    try:
        item.reply(item.transition)
    except Exception as exc:
        item.error = exc


def own_copy(exc: Exception) -> Exception:
    """An error of its own for another request that ``exc`` failed (one exception
    object raised in several tasks would gather all their tracebacks): the table's
    error again, the store's unavailability again, or a server fault (the first
    request's task reports ``exc`` itself)."""
    if isinstance(exc, TableError):
        return TableError(exc.code, exc.message)
    if isinstance(exc, StoreUnavailable):
        # Redis away: each request is answered `unavailable`, not as a server fault.
        return StoreUnavailable(str(exc))
    return TableError(ErrorCode.INTERNAL, "server fault; try again")


Stored = Callable[[TableState | None, Transition, list[tuple[int, Frames]]], None]
"""A hook told each change stored: the state before it, the change, and its events'
frames, once they went to this process's subscribers (see :class:`Applier`)."""


class Applier:
    """How a table host changes its table: :meth:`submit` and what it takes, holding
    the table's ``state`` (as last stored or loaded, with a changed config stepped in)
    and its ``lock`` (the recovery's too).

    ``moved(before, after)`` is told each change of :attr:`state`; ``recover()`` wakes
    the table's recovery (a transfer may be left under way); ``wake`` wakes the host's
    timer, which sets :attr:`waiting_for`, the wake-up time it waits for. ``on_commit``
    and ``on_stored``: see :class:`~server.host.host.Hooks`.
    """

    def __init__(
        self,
        table_id: str,
        store: TableStore,
        accounts: AccountStore,
        lease: TableLease,
        subscribers: FanOut,
        *,
        lock: asyncio.Lock,
        clock: Callable[[], int],
        on_commit: Callable[[Transition, float], None] | None,
        on_stored: Stored | None,
        moved: Callable[[TableState | None, TableState | None], None],
        recover: Callable[[], None],
        wake: asyncio.Event,
        jackpots: TableJackpots | None = None,
    ) -> None:
        self.table_id = table_id
        self.store = store
        self.accounts = accounts
        self.lease = lease
        self.subscribers = subscribers
        self.clock = clock
        self.on_commit = on_commit
        self.on_stored = on_stored
        self._moved = moved
        self._recover = recover
        self._wake = wake
        self.waiting_for: int | None = None
        """The wake-up time the host's timer waits for."""
        self.lock = lock
        """Held while an event is applied: hold it to read state and events consistently."""
        self._state: TableState | None = None
        self._queue: list[Queued] = []  # events waiting for the lock, applied together
        self._leading: asyncio.Task[None] | None = None  # the group being applied, if any
        self.repeats = Repeats(table_id, store, accounts)
        """Answers to money requests applied before."""
        self.jackpots = jackpots if jackpots is not None else TableJackpots(table_id, None)
        """The jackpot calls of the rounds settled (:mod:`server.host.jackpots`)."""

    @property
    def state(self) -> TableState | None:
        """The table's state as last stored (None until loaded)."""
        return self._state

    @state.setter
    def state(self, new: TableState | None) -> None:
        before, self._state = self._state, new
        self._moved(before, new)

    @property
    def queued(self) -> int:
        """Events waiting for their turn at the table (applied together, next)."""
        return len(self._queue)

    async def submit(
        self,
        event: Event,
        reply: Callable[[Transition], None] | None = None,
        request: MoneyRequest | None = None,
    ) -> Transition:
        """Apply ``event``: stored, then sent. Raises :class:`TableError` if refused.

        ``reply`` is called once the change is stored and before its events go out, so
        the requester's ``ok`` precedes the events it caused (protocol/PROTOCOL.md,
        section 3). A fault inside the state machine (a bug) voids the round in play, as
        docs/RULES.md, "Faults", asks of a malfunction, instead of leaving the table stuck.

        Events that come while the table is busy wait their turn together and are
        applied one after the other, in the order they came, then stored in one commit
        (:meth:`_apply_group`): each is refused or answered as if it were alone, and
        each requester's ``ok`` still precedes its own events and follows the events of
        those before it.

        ``request`` (instead of ``reply``): the money request behind ``event``, applied
        alone. If it was applied already (its session and rid are recorded), nothing
        happens: it is answered as the first time, and the transition returned changes
        nothing. Else it is recorded with the change, and answered with the account
        balance the change left.
        """
        if reply is not None and request is not None:
            raise ValueError("a money request is answered by its own callback")
        if request is None:
            return await self._submit_queued(Queued(event, reply))
        async with self.lock:
            if not self.lease.ready or self.state is None:
                raise TableUnavailable(self.table_id)
            started = time.perf_counter()
            try:
                transition = step(self.state, event, self.clock())
            except TableError:
                # A repeat may no longer be legal at all (a join of a player now
                # seated): answered as the first time if it is one. (A repeat that is
                # still legal is found by the commit.) Under the lock, so of two
                # identical requests at once the second sees the first one's record.
                if await self.repeats.repeated(request):
                    return Transition(state=self.state)
                raise
            except Exception as exc:
                await self._void(exc, event)
            if transition.state is not self.state:
                if not await self.commit(transition, request):
                    return Transition(state=self.state)  # a repeat: nothing changed
            else:
                # Nothing to store (cashing out an empty table balance), so nothing
                # recorded: a repeat does the same nothing.
                account = await self.accounts.balance(request.player) or 0
                request.answer(request.memo(transition), account)
            if self.on_commit is not None:
                self.on_commit(transition, time.perf_counter() - started)
            return transition

    async def _submit_queued(self, item: Queued) -> Transition:
        """Queue ``item``; whoever takes the lock first applies everything queued, in a
        task of its own (:meth:`_lead`): cancelling that caller leaves the others'
        requests to finish, the table held until they have."""
        self._queue.append(item)
        try:
            await self.lock.acquire()
        except BaseException:
            # Cancelled while waiting: not applied, unless a group took it already.
            if any(queued is item for queued in self._queue):
                self._queue = [queued for queued in self._queue if queued is not item]
            raise
        if item.transition is not None or item.error is not None:
            self.lock.release()  # a group took it: nothing left to do here
        else:
            lead = asyncio.get_running_loop().create_task(self._lead())
            self._leading = lead  # a reference while it runs
            await asyncio.shield(lead)
        if item.error is not None:
            raise item.error
        assert item.transition is not None
        return item.transition

    async def _lead(self) -> None:
        """Apply every event queued, holding the lock (taken by the caller) throughout.

        A commit made now would wait for the pipeline in flight: the events are stepped
        at the last moment instead, with every one that came meanwhile."""
        try:
            turn = self.store.turn()
            if turn is not None:
                await turn
            group, self._queue = self._queue, []
            await self._apply_group(group)
        finally:
            self._leading = None
            self.lock.release()

    async def _apply_group(self, group: list[Queued]) -> None:
        """Step each event of ``group`` in turn on the state the one before left, then
        store them in one commit and answer each: an event refused gets its own error,
        and a commit that fails fails every event it held. Every item of ``group`` ends
        with a transition or an error (a cancellation is passed on to the caller)."""
        started = time.perf_counter()
        stepped: list[Queued] = []
        try:
            if not self.lease.ready or self.state is None:
                raise TableUnavailable(self.table_id)
            state = self.state
            now = self.clock()
            for item in group:
                try:
                    item.transition = step(state, item.event, now)
                except TableError as exc:
                    item.error = exc
                    continue
                except Exception as exc:
                    # What came before is stored first; then the void, as for one event.
                    await self._store_group(stepped)
                    stepped = []
                    try:
                        await self._void(exc, item.event)
                    except TableError as refused:
                        item.error = refused
                    if not self.lease.ready or self.state is None:
                        raise TableUnavailable(self.table_id) from None  # the void's commit lost it
                    state, now = self.state, self.clock()
                    continue
                stepped.append(item)
                state = item.transition.state
            await self._store_group(stepped)
        except BaseException as exc:
            failed = exc if isinstance(exc, Exception) else TableUnavailable(self.table_id)
            for item in group:
                # An answered one stands (its change is stored), a refused one keeps its
                # refusal; the others fail, each with an error of its own.
                if item.answered or (item.error is not None and item not in stepped):
                    continue
                item.error = failed
                failed = own_copy(failed)
            if not isinstance(exc, Exception):
                raise
        if self.on_commit is not None:
            elapsed = time.perf_counter() - started
            for item in group:
                if item.error is None and item.transition is not None:
                    self.on_commit(item.transition, elapsed)

    async def _store_group(self, stepped: list[Queued]) -> None:
        """Store the transitions of ``stepped`` (applied in turn) as one, and answer each."""
        if not stepped:
            return
        changes = [item.transition for item in stepped if item.transition is not None]
        if changes[-1].state is self.state:  # nothing changed: nothing to store
            for item in stepped:
                answer(item)
            return
        if len(changes) == 1:
            merged = changes[0]
        else:
            merged = Transition(
                state=changes[-1].state,
                events=tuple(o for t in changes for o in t.events),
                entries=tuple(e for t in changes for e in t.entries),
                logs=tuple(g for t in changes for g in t.logs),
            )
        await self.commit(merged, group=stepped)

    async def _void(self, exc: Exception, event: Event) -> NoReturn:
        """A fault of the state machine on ``event``: the round in play is voided (the
        void stored and sent), and the request fails."""
        log.exception("table %s: state machine fault on %r", self.table_id, event, exc_info=exc)
        await self.commit(self._void_after_fault(exc))
        raise TableError(
            ErrorCode.INTERNAL, "server fault: the round was voided and bets returned"
        ) from exc

    def _void_after_fault(self, exc: Exception) -> Transition:
        assert self.state is not None
        try:
            return step(self.state, Void(f"server fault: {type(exc).__name__}"), self.clock())
        except TableError:
            raise TableError(ErrorCode.INTERNAL, "server fault; nothing changed") from exc

    async def commit(
        self,
        t: Transition,
        request: MoneyRequest | None = None,
        group: Sequence[Queued] = (),
    ) -> bool:
        """Store ``t`` and answer, then send its events; False if nothing was stored
        because ``request`` was applied already (answered as then). ``t`` may be the
        events of a ``group`` applied in turn (:meth:`_apply_group`): each item's reply
        then goes out right before its own events."""
        assert self.state is not None
        # The jackpot calls the round settling now owes, before the change that may end
        # it (its results gone with it): if they fail, nothing is stored, try again.
        if self.jackpots.due(self.state):  # a check without a coroutine on the hot path
            await self.jackpots.pay(self.state)
        token = self.lease.token
        assert token is not None
        frames = [encode_outbound(o) for o in t.events]
        carried = None
        if request is not None:
            carried = ClientRequest(
                request.player, request.key, request.fingerprint, request.memo(t)
            )
        change = Change(
            self.table_id,
            token,
            self.state.version,
            t.state,
            [(o.seq, pack_outbound(f)) for o, f in zip(t.events, frames, strict=True)],
            t.entries,
            [(player, pack_record(record)) for player, record in t.logs],
            carried,
        )
        try:
            result = await self.store.commit(change)
        except Unreplicated:
            self._unreplicated()
        except WritesRefused:
            # The primary took none of it (too few replicas in reach): the table is as
            # it was, still ours, and the request may be tried again. A transfer an
            # account opened for it (on another node of a cluster, which may have taken
            # it) is the recovery's to close.
            self._recover()
            raise TableNotWritable(self.table_id) from None
        except StoreUnavailable:
            # The reply was lost: was the change stored? Answering "failed" for a stored
            # change would let a retry move the chips twice. Ask Redis (if it answers).
            self._recover()  # whatever it was, a transfer may be half done
            if not await self.store.holds(change):
                raise  # not stored: nothing happened, a retry is safe
            if self.store.replication is not None:
                self._unreplicated()  # stored, but is it on a replica? Unknown.
            log.warning("table %s: commit stored, reply lost; carrying on", self.table_id)
            result = None
        if result is not None and not result.ok:
            await self._refused(result, request)  # raises, unless the request was a repeat
            return False
        if result is not None and result.pending:
            self._recover()
        before = self.state
        self.state = t.state
        if next_wakeup(t.state) != self.waiting_for:
            # Only when the time to wait for changed: most changes (a bet) leave the
            # deadline as it was, and waking the timer for nothing costs a task switch.
            self._wake.set()
        numbered = [(o.seq, f) for o, f in zip(t.events, frames, strict=True)]
        sent = 0  # events sent so far
        try:
            if request is not None:
                assert carried is not None
                if result is not None and request.player in result.accounts:
                    account = result.accounts[request.player]
                elif result is not None:
                    # Applied, but the account's side is not done: its balance is not
                    # known yet. Retrying is safe (a repeat), and finishes it.
                    raise TableUnavailable(self.table_id)
                else:  # the commit's reply was lost: its record has the balance
                    record = await self.store.requests.record(
                        self.table_id, request.player, request.key
                    )
                    if record is None:
                        raise StoreError("a stored request has no record")
                    account = await self.repeats.balance(request, record)
                request.answer(carried.memo, account)
            for item in group:
                answer(item)
                assert item.transition is not None
                end = sent + len(item.transition.events)
                for seq, event_frames in numbered[sent:end]:
                    self.subscribers.send(event_frames, seq)
                sent = end
        finally:
            # The change is stored: its events go out even if the reply could not.
            for seq, event_frames in numbered[sent:]:
                self.subscribers.send(event_frames, seq)
            if self.on_stored is not None:
                try:
                    self.on_stored(before, t, numbered)
                except Exception:  # stored and answered: the others' share is logged
                    log.exception("table %s: on-stored hook failed", self.table_id)
        if self.jackpots.due(self.state):
            await self.settle_jackpots()
        return True

    async def settle_jackpots(self) -> None:
        """Make the jackpot calls the state owes now (a round just settled, or found
        settling on a taking): one that fails is made by the next commit, first."""
        try:
            await self.jackpots.pay(self.state)
        except StoreUnavailable as exc:
            log.warning("table %s: jackpot calls left for the next commit (%s)", self.table_id, exc)

    def _unreplicated(self) -> NoReturn:
        """A change stored on the primary that no replica acknowledged: not answered,
        not sent; the table is taken again from what Redis holds (module docstring)."""
        log.warning("table %s: a change no replica holds; taking the table again", self.table_id)
        self.lease.lose()
        raise TableUnavailable(self.table_id)

    async def _refused(self, result: CommitResult, request: MoneyRequest | None) -> None:
        """What a commit that stored nothing means: a repeat of ``request`` is answered;
        else :class:`TableError` is raised (the table is lost if it was stale)."""
        if result.status is CommitStatus.REPEATED:
            # Applied here before: nothing was written now.
            assert request is not None
            assert result.request is not None
            await self.repeats.answer(request, result.request)
            return
        if result.status is CommitStatus.REUSED:
            assert request is not None
            raise rid_reused(request)
        if result.status is CommitStatus.INSUFFICIENT:
            raise TableError(
                ErrorCode.INSUFFICIENT_BALANCE,
                f"your account holds {result.balance} chips: lower the amount",
            )
        if result.stale:
            # Another process owns the table now: stop acting on it.
            self.lease.lose()
            raise TableUnavailable(self.table_id)
        raise StoreError(f"table {self.table_id}: commit refused as {result.status}")
