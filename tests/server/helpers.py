"""A small test client and helpers for the shell's tests: real sockets, real Redis.

:class:`Client` wraps one WebSocket: a reader task decodes every frame with the
protocol's strict ``decode_server`` (so any frame the server sends that breaks the
spec fails the test), keeps replies by ``rid`` and table events by table, and lets
a test wait for either with a time limit. Nothing here sleeps for a fixed time: every
wait polls a condition and gives up after a bound.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import redis.asyncio
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from protocol.codec import decode_server, encode
from protocol.errors import ErrorCode
from protocol.messages import (
    Cards,
    ErrorReply,
    Hello,
    Hidden,
    JackpotChange,
    OkReply,
    PhaseChange,
    Pong,
    SeatChange,
    ServerMessage,
    Snapshot,
    TableEvent,
)
from protocol.structs import TableSeq, Welcome
from server.store.audit.check import AuditReport, audit
from server.store.chips.records import RequestRecord
from server.store.errors import StoreUnavailable
from server.store.tables.commit_args import CommitResult, Write
from server.store.tables.parts import stored_state
from server.store.tables.store import Change, TableStore
from tests.helpers import TIMEOUT

T = TypeVar("T")
Reply = OkReply | ErrorReply | Pong


_CONNECTIONS = itertools.count(1)  # numbers the test connections, to keep rids apart


def now_ms() -> int:
    """This machine's clock, as the server reads it (same host)."""
    return time.time_ns() // 1_000_000


@dataclass
class Closed:
    """How the server closed a connection (None: no close frame received)."""

    code: int | None
    reason: str


class Disconnected(AssertionError):
    """What a test waited for cannot come: the server closed the connection."""


class Client:
    """One test connection; see the module docstring."""

    def __init__(self, ws: ClientConnection, label: str = "") -> None:
        self.ws = ws
        self.label = label
        self.messages: list[ServerMessage] = []
        self.replies: dict[str | None, list[Reply]] = {}
        self.events: dict[str, list[TableEvent]] = {}
        self.closed: Closed | None = None
        self.failure: Exception | None = None  # why the reader stopped, if not a close
        self.welcome: Welcome | None = None
        # Rids unique across connections: the server takes a money request with a rid
        # the player already used for a repeat of it (protocol/PROTOCOL.md, section 3).
        self._rid_prefix = f"{label or 'r'}{next(_CONNECTIONS)}."
        self._rids = itertools.count(1)
        self._changed = asyncio.Condition()
        self._reader = asyncio.create_task(self._read())

    # --- connecting ---------------------------------------------------------------

    @classmethod
    async def open(cls, url: str, label: str = "", **kwargs: Any) -> Client:
        """A connection with no hello sent yet."""
        ws = await connect(url, open_timeout=TIMEOUT, close_timeout=2, **kwargs)
        return cls(ws, label)

    @classmethod
    async def hello(
        cls,
        url: str,
        *,
        label: str = "",
        token: str | None = None,
        name: str | None = None,
        resume_token: str | None = None,
        last_seq: Iterable[tuple[str, int]] = (),
        **kwargs: Any,
    ) -> Client:
        """A connection after a successful hello (a guest unless ``token`` is given)."""
        client = await cls.open(url, label, **kwargs)
        try:
            reply = await client.call(
                Hello,
                min_version=1,
                max_version=1,
                client="tests/1",
                token=token,
                guest=token is None,
                name=name,
                resume_token=resume_token,
                last_seq=tuple(TableSeq(table_id=t, seq=s) for t, s in last_seq),
            )
            assert isinstance(reply, OkReply), reply
            assert isinstance(reply.result, Welcome)
            client.welcome = reply.result
        except BaseException:
            await client.close()
            raise
        return client

    @property
    def player(self) -> str:
        """The player id from the welcome."""
        assert self.welcome is not None
        return self.welcome.player_id

    # --- reading ------------------------------------------------------------------

    async def _read(self) -> None:
        try:
            async for frame in self.ws:
                assert isinstance(frame, bytes), f"the server sent a text frame: {frame!r}"
                message = decode_server(frame)
                async with self._changed:
                    self.messages.append(message)
                    if isinstance(message, OkReply | ErrorReply | Pong):
                        self.replies.setdefault(message.rid, []).append(message)
                    elif isinstance(message, JackpotChange):
                        pass  # no table's: in messages only
                    else:
                        self.events.setdefault(message.table_id, []).append(message)
                    self._changed.notify_all()
        except ConnectionClosed:
            pass
        except Exception as exc:  # a frame that breaks the spec: the test fails
            self.failure = exc
        finally:
            rcvd = self.ws.protocol.close_rcvd
            closed = Closed(rcvd.code, rcvd.reason) if rcvd is not None else Closed(None, "")
            async with self._changed:
                self.closed = closed
                self._changed.notify_all()

    async def wait(self, check: Callable[[], T | None], within: float = TIMEOUT) -> T:
        """Wait until ``check()`` (called under the lock after each message) is truthy."""
        result: T | None = None

        def done() -> bool:
            nonlocal result
            if self.failure is not None:
                raise AssertionError(f"{self.label}: bad frame from the server") from self.failure
            result = check()
            if not result and self.closed is not None:
                raise Disconnected(f"{self.label}: closed by the server: {self.closed}")
            return bool(result)

        async with self._changed:
            try:
                await asyncio.wait_for(self._changed.wait_for(done), within)
            except TimeoutError:
                raise AssertionError(
                    f"{self.label or 'client'}: timed out after {within} s; "
                    f"last messages: {self.messages[-5:]!r}; closed: {self.closed}"
                ) from None
        assert result is not None
        return result

    async def wait_closed(self, within: float = TIMEOUT) -> Closed:
        """Wait until the server closes the connection."""
        await self.wait(lambda: self.closed is not None, within)
        assert self.closed is not None
        return self.closed

    def table(self, table_id: str) -> list[TableEvent]:
        """The events received from ``table_id`` so far."""
        return self.events.get(table_id, [])

    async def event(
        self,
        table_id: str,
        kind: type[T],
        check: Callable[[T], bool] = lambda _: True,
        *,
        after: int = 0,
        within: float = TIMEOUT,
    ) -> T:
        """The first event of ``kind`` at ``table_id`` (from index ``after``) passing ``check``."""

        def find() -> T | None:
            for m in self.table(table_id)[after:]:
                if isinstance(m, kind) and check(m):
                    return m
            return None

        return await self.wait(find, within)

    async def phase(
        self, table_id: str, phase: str, *, after: int = 0, within: float = TIMEOUT
    ) -> PhaseChange:
        """The first ``phase`` event entering ``phase`` (from index ``after``)."""
        return await self.event(
            table_id, PhaseChange, lambda m: m.phase == phase, after=after, within=within
        )

    def last_seq(self, table_id: str) -> int:
        """The last ``seq`` seen at ``table_id`` (0 if none)."""
        events = self.table(table_id)
        return events[-1].seq if events else 0

    # --- requests -----------------------------------------------------------------

    def next_rid(self) -> str:
        return f"{self._rid_prefix}{next(self._rids)}"

    async def send(self, data: bytes | str) -> None:
        await self.ws.send(data)

    async def call(self, kind: type[Any], within: float = TIMEOUT, **fields: Any) -> Reply:
        """Send one request of ``kind`` and return its one reply."""
        rid = self.next_rid()
        await self.ws.send(encode(kind(rid=rid, **fields)))
        replies = await self.wait(lambda: self.replies.get(rid), within)
        assert len(replies) == 1, replies
        return replies[0]

    async def call_through_moves(
        self, kind: type[Any], within: float = TIMEOUT, **fields: Any
    ) -> Reply:
        """Send one request of ``kind``, and again with its ``rid`` while the reply is
        ``unavailable``, as a client does: the table is moving between nodes, or its
        holder briefly lost its lease on a loaded machine (protocol/PROTOCOL.md, section
        5; retrying is safe, and a money request with the same ``rid`` is applied once
        at most: protocol/PROTOCOL.md, section 3). The first other reply; an
        ``unavailable`` after ``within`` seconds."""
        rid = self.next_rid()
        frame = encode(kind(rid=rid, **fields))
        deadline = asyncio.get_running_loop().time() + within
        while True:
            heard = len(self.replies.get(rid, ()))

            def answered(heard: int = heard) -> bool:
                return len(self.replies.get(rid, ())) > heard

            await self.ws.send(frame)
            await self.wait(answered, within)
            reply = self.replies[rid][-1]
            busy = isinstance(reply, ErrorReply) and reply.code == ErrorCode.UNAVAILABLE.value
            if not busy or asyncio.get_running_loop().time() > deadline:
                return reply
            await asyncio.sleep(0.05)

    async def ok(self, kind: type[Any], **fields: Any) -> Any:
        """Send a request that must succeed; its ``result``."""
        reply = await self.call(kind, **fields)
        assert isinstance(reply, OkReply), f"{self.label}: {kind.__name__} {fields}: {reply}"
        return reply.result

    async def error(self, kind: type[Any], code: str, **fields: Any) -> ErrorReply:
        """Send a request that must fail with ``code``; the error."""
        reply = await self.call(kind, **fields)
        assert isinstance(reply, ErrorReply), f"{self.label}: expected {code}, got {reply}"
        assert reply.code == code, f"{self.label}: expected {code}, got {reply}"
        return reply

    async def close(self) -> None:
        """Close the connection and stop the reader (safe to call twice)."""
        with contextlib.suppress(Exception):
            await self.ws.close()
        with contextlib.suppress(BaseException):
            await asyncio.wait_for(self._reader, 5)
        if self.failure is not None:
            raise AssertionError(f"{self.label}: bad frame from the server") from self.failure


async def close_all(clients: Iterable[Client]) -> None:
    """Close every client."""
    await asyncio.gather(*(c.close() for c in clients))


def assert_gapless(events: Sequence[TableEvent], label: str = "") -> None:
    """``seq`` goes up by one from event to event; a snapshot may reset the count."""
    last: int | None = None
    for m in events:
        if isinstance(m, Snapshot):
            assert last is None or m.seq >= last, f"{label}: snapshot went back: {m.seq} < {last}"
            last = m.seq
            continue
        if last is not None:
            assert m.seq == last + 1, f"{label}: seq {m.seq} after {last}"
        last = m.seq


def seat_status(client: Client, table_id: str, seat: int) -> str | None:
    """The status of ``seat`` as ``client`` knows it from its snapshots and ``seat``
    events at ``table_id`` (None: nothing received about it yet)."""
    status: str | None = None
    for m in client.table(table_id):
        if isinstance(m, Snapshot):
            status = m.seats[seat].status
        elif isinstance(m, SeatChange) and m.seat.seat == seat:
            status = m.seat.status
    return status


def by_seq(events: Sequence[TableEvent]) -> dict[int, TableEvent]:
    """The events that are not snapshots, by ``seq`` (each seq once)."""
    out: dict[int, TableEvent] = {}
    for m in events:
        if not isinstance(m, Snapshot):
            assert m.seq not in out or out[m.seq] == m, f"two events with seq {m.seq}"
            out[m.seq] = m
    return out


def assert_same_public_events(clients: Sequence[Client], table_id: str) -> None:
    """Where two clients saw the same ``seq``, they saw the same event, except that a
    ``cards`` event is the recipient's own (and only theirs) and ``hidden`` for others.
    """
    seen = [(c, by_seq(c.table(table_id))) for c in clients]
    common = set.intersection(*(set(events) for _, events in seen))
    assert common, "the clients saw no event in common"
    for seq in sorted(common):
        messages = [(c, events[seq]) for c, events in seen]
        if any(isinstance(m, Cards | Hidden) for _, m in messages):
            for _, m in messages:
                assert isinstance(m, Cards | Hidden), m
            continue
        first = messages[0][1]
        for c, m in messages[1:]:
            assert m == first, f"seq {seq}: {c.label} saw {m}, others {first}"


# Three quick tables: a round takes about a second once everybody has acted.
QUICK_TABLES = """
[[table]]
id = "{id}"
name = "Quick {id}"
min_bet = 10
max_bet = 500
denominations = [5, 10, 25]
bonus_min = 5
bonus_max = 100
min_buy_in = 100
max_buy_in = 5000
betting_ms = {betting_ms}
dealing_ms = 100
setting_ms = {setting_ms}
revealing_ms = 150
settling_ms = 150
grace_ms = {grace_ms}
"""


def quick_tables(
    *ids: str, betting_ms: int = 3000, setting_ms: int = 3000, grace_ms: int = 5000
) -> str:
    """A tables file with one quick table per id."""
    return "".join(
        QUICK_TABLES.format(id=i, betting_ms=betting_ms, setting_ms=setting_ms, grace_ms=grace_ms)
        for i in ids
    )


async def audit_report(client: redis.asyncio.Redis) -> AuditReport:
    """The store's audit, as ``paigow-server audit`` runs it."""
    return await audit(client, lambda stored: stored_state(stored).money())


class LostReplies:
    """The real ``store``, but the next commit's reply is lost on the way back (the
    change is stored, then the connection fails), as a network cut can do."""

    def __init__(self, store: TableStore) -> None:
        self.lose_next = False
        self.also_the_record = False  # then the read of the request's record fails too
        self._failing_record = False
        commit, record = store.commit, store.requests.record

        async def lossy_commit(change: Change) -> CommitResult:
            result = await commit(change)
            if self.lose_next:
                self.lose_next = False
                self._failing_record, self.also_the_record = self.also_the_record, False
                raise StoreUnavailable("connection lost after the write")
            return result

        async def lossy_record(table_id: str, player: str, rid: str) -> RequestRecord | None:
            if self._failing_record:
                self._failing_record = False
                raise StoreUnavailable("connection lost reading the record")
            return await record(table_id, player, rid)

        store.commit = lossy_commit  # type: ignore[method-assign]
        store.requests.record = lossy_record  # type: ignore[method-assign]


class RecordedParts:
    """The real ``store``, keeping the parts of the state each commit wrote."""

    def __init__(self, store: TableStore) -> None:
        self.written: list[set[str]] = []
        write = store.commits.write

        async def recorded(w: Write) -> CommitResult:
            self.written.append(set(w.parts))
            return await write(w)

        store.commits.write = recorded  # type: ignore[method-assign]


class GatedCommits:
    """The real ``store``, but a commit waits at :attr:`gate` (once :attr:`closed`)
    before it is sent, and :attr:`fail_next` makes the next commit fail before it is
    sent, as a connection lost on the way out does (nothing stored)."""

    def __init__(self, store: TableStore) -> None:
        self.gate = asyncio.Event()
        self.gate.set()
        self.waiting = 0  # commits waiting at the gate
        self.fail_next = False
        commit = store.commit

        async def gated(change: Change) -> CommitResult:
            if not self.gate.is_set():
                self.waiting += 1
                try:
                    await self.gate.wait()
                finally:
                    self.waiting -= 1
            if self.fail_next:
                self.fail_next = False
                raise StoreUnavailable("connection lost before the write")
            return await commit(change)

        store.commit = gated  # type: ignore[method-assign]


def counting_gets(pool: Any) -> list[int]:
    """Counts the connections taken from redis-py's ``pool`` from now on (an entry
    each): whether a caller takes one per call or keeps its own."""
    taken: list[int] = []
    get = pool.get_connection

    async def counted(*args: Any, **kwargs: Any) -> Any:
        taken.append(1)
        return await get(*args, **kwargs)

    pool.get_connection = counted
    return taken
