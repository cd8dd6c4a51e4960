"""One client's WebSocket: the I/O around its :class:`~server.gateway.session.Session`.

The session decides (what to answer, when to close); a :class:`Connection` sends,
waits and closes. Outgoing frames sent in one turn of the event loop are written
together when the loop runs again, if nothing is queued; else they wait, in order, in a
bounded queue for a writer task (both made the first time a frame must wait); a
client that does not read them is dropped (1013), never buffered without end. One
timer for all the connections asks their sessions about silence (:class:`SilenceWatch`).
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import logging
import math

from websockets.asyncio.server import ServerConnection
from websockets.exceptions import ConnectionClosed
from websockets.frames import Frame, Opcode
from websockets.protocol import State

from protocol.codec import encode
from protocol.errors import CloseCode
from server.gateway.session import Close, Session
from server.tasks import cancel_and_wait

DIRECT_WRITE_LIMIT = 64 * 1024
"""Unsent bytes in the socket's buffer above which frames go through the queue."""
DROP_CLOSE_S = 2.0
"""How long a client closed from outside its handler gets to complete the closing
handshake (a slow consumer reads nothing, not even the close frame)."""
CLOSE_AFTER_S = 5.0
"""How long the frames before a close (and the close frame) may take to go out."""
TOO_SLOW = Close(CloseCode.TRY_AGAIN_LATER, "too slow: outgoing queue full")

log = logging.getLogger(__name__)


class _Framer:
    """Payloads as unmasked binary WebSocket frames, as websockets writes them on a
    connection without extensions. The frames of the last payloads are kept: a table's
    event goes to each of its connections, in turn, the same payload each time."""

    __slots__ = ("frames",)

    KEPT = 64  # frames kept at most
    SHARED = 1024  # larger payloads (snapshots, history pages) go to one connection

    def __init__(self) -> None:
        self.frames: dict[bytes, bytes] = {}

    def __call__(self, data: bytes) -> bytes:
        frame = self.frames.get(data)
        if frame is None:
            frame = Frame(Opcode.BINARY, data).serialize(mask=False)
            if len(data) <= self.SHARED:
                if len(self.frames) >= self.KEPT:
                    self.frames.clear()
                self.frames[data] = frame
        return frame


binary_frame = _Framer()
"""``binary_frame(data)``: ``data`` as one binary frame (:class:`_Framer`)."""


class SilenceWatch:
    """When each connection's silence is next checked, for all the connections of a
    gateway: one timer, at the earliest of them (uvloop's timer a connection was 0.6 KiB
    of its memory, a thirtieth of a connected player's).

    Each connection is in a heap by that time; an entry it no longer wants (closed, or
    moved) is skipped when it comes up, and the heap is rebuilt without such entries
    once they are half of it.
    """

    __slots__ = ("_heap", "_stale", "_timer", "_when")

    def __init__(self) -> None:
        self._heap: list[tuple[float, int, Connection]] = []
        self._stale = 0  # entries whose connection no longer waits for them
        self._timer: asyncio.TimerHandle | None = None
        self._when = 0.0  # when the timer fires

    def __len__(self) -> int:
        return len(self._heap) - self._stale

    def at(self, conn: Connection, due: float, loop: asyncio.AbstractEventLoop) -> None:
        """Check ``conn`` at ``due`` (the loop's time): its :meth:`Connection._check_silence`."""
        if conn._silence_due is not None:
            if conn._silence_due == due:
                return  # already in at that time (and two entries would compare conns)
            self._stale += 1  # its earlier entry, still in the heap
        conn._silence_due = due
        # id() orders entries of the same time (connections do not compare).
        heapq.heappush(self._heap, (due, id(conn), conn))
        if self._timer is None or due < self._when:
            if self._timer is not None:
                self._timer.cancel()
            self._timer, self._when = loop.call_at(due, self._fire, loop), due

    def drop(self, conn: Connection) -> None:
        """Check ``conn`` no more."""
        if conn._silence_due is None:
            return
        conn._silence_due = None
        self._stale += 1
        if self._stale > 64 and 2 * self._stale > len(self._heap):
            self._heap = [e for e in self._heap if e[2]._silence_due is e[0]]
            heapq.heapify(self._heap)
            self._stale = 0
        if not self._heap and self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _fire(self, loop: asyncio.AbstractEventLoop) -> None:
        # While the due connections are checked, ``at`` only pushes (the fired handle
        # stays and nothing is earlier than -inf): one timer is armed below, at the end.
        # Armed from ``at`` too, every firing left one more timer calling this, for good:
        # 10,000 idle players then cost a third of the core within minutes.
        self._when = -math.inf
        heap = self._heap
        # A millisecond of slack: a timer may fire a little before its time.
        now = loop.time() + 0.001
        while heap and heap[0][0] <= now:
            due, _, conn = heapq.heappop(heap)
            if conn._silence_due is not due:
                self._stale -= 1
                continue
            conn._silence_due = None
            conn._check_silence(loop)  # may come back in at its next time
        if heap:
            self._timer, self._when = loop.call_at(heap[0][0], self._fire, loop), heap[0][0]
        else:
            self._timer = None


class Flushes:
    """The connections with frames held, flushed together in one callback of the event
    loop, for all the connections of a gateway: an event goes to six connections,
    and a callback each was six handles a request."""

    __slots__ = ("_due", "_scheduled")

    def __init__(self) -> None:
        self._due: list[Connection] = []
        self._scheduled = False

    def add(self, conn: Connection) -> None:
        """Flush ``conn`` (:meth:`Connection._flush`) when the loop next runs callbacks."""
        self._due.append(conn)
        if not self._scheduled:
            self._scheduled = True
            asyncio.get_running_loop().call_soon(self._run)

    def _run(self) -> None:
        due, self._due = self._due, []
        self._scheduled = False
        for conn in due:
            try:
                conn._flush()
            except Exception:  # one connection's fault must not hold the others' frames
                log.exception("flushing a connection failed")


class Connection:
    """One client's WebSocket, its session, and what it watches (see the module docstring).

    :attr:`player_id` is the player the session speaks for (None before the hello):
    a plain attribute, read for every frame a table sends. :attr:`tables` are the
    tables it watches (seated included); :attr:`wanted` the tables its hello asked for
    (table: last seq) that were not hosted here then (see ``Presence.table_ready``).
    """

    # Slots: one a connection (10,000 a node); a dict each was memory for nothing.
    __slots__ = (
        "_held",
        "_queue",
        "_silence_due",
        "_stopped",
        "_writer",
        "address",
        "backlog",
        "dropping",
        "flushes",
        "player_id",
        "queue_size",
        "session",
        "tables",
        "wanted",
        "watch",
        "ws",
    )

    def __init__(
        self,
        ws: ServerConnection,
        session: Session,
        queue_size: int,
        watch: SilenceWatch | None = None,
        flushes: Flushes | None = None,
    ) -> None:
        self.ws = ws
        self.session = session
        self.player_id: str | None = None
        self.address: str | None = None
        """The client's real address, as the per-address limits count it (None: unknown)."""
        self.tables: set[str] = set()
        self.wanted: dict[str, int] = {}
        self.queue_size = queue_size
        # The queue and its writer task are made the first time a frame must wait (a
        # client reading slowly, or a close): most connections never need them, and
        # they were a fifth of a connection's memory (4.4 of 22 KiB).
        self._queue: asyncio.Queue[bytes] | None = None
        self._writer: asyncio.Task[None] | None = None
        self._stopped = False  # no writer is made any more: the connection is gone
        self.backlog = 0  # frames queued and not yet handed to the socket
        self.dropping: asyncio.Task[None] | None = None  # a close from outside the handler
        self.watch = watch if watch is not None else SilenceWatch()
        self.flushes = flushes if flushes is not None else Flushes()
        self._silence_due: float | None = None  # when `watch` checks it next (None: not)
        # Frames sent since the loop last ran this connection's flush: written together.
        self._held: list[bytes] | None = None

    @property
    def player(self) -> str:
        """The player the session speaks for (after the hello)."""
        assert self.player_id is not None
        return self.player_id

    # --- life -----------------------------------------------------------------------

    @property
    def queued(self) -> int:
        """Frames waiting in the queue for the writer task."""
        return self._queue.qsize() if self._queue is not None else 0

    def _queued(self) -> asyncio.Queue[bytes]:
        """The queue, and its writer task, made on first use (after :meth:`stop`, a
        queue that nobody sends, as the frames of a stopped connection were before)."""
        if self._queue is None:
            self._queue = asyncio.Queue(self.queue_size)
            if not self._stopped:
                loop = asyncio.get_running_loop()
                self._writer = loop.create_task(self._write_queued(self._queue))
        return self._queue

    async def close(self, close: Close) -> None:
        """Close as the session decided from a frame: its error reply first, the close
        frame after every frame queued before it (bounded in time)."""
        for reply in self.session.close(close) or ():
            self._put(encode(reply))
        self._flush()
        # Frames the client still sends are read and dropped: else, with the incoming
        # queue full, its answer to our close frame would never be read and the
        # closing handshake would wait for its timeout.
        discard = asyncio.create_task(_discard(self.ws))
        with contextlib.suppress(Exception):
            async with asyncio.timeout(CLOSE_AFTER_S):
                await self._queued().put(b"")
                if self._writer is not None:
                    await self._writer
        await cancel_and_wait(discard)

    def close_soon(self, close: Close) -> None:
        """Close from outside the connection's handler (a resumed session elsewhere,
        silence, a slow consumer), bounded in time; nothing if closing already."""
        replies = self.session.close(close)
        if replies is None:
            return
        for reply in replies:
            self._put(encode(reply))
        self._flush()
        self.dropping = asyncio.get_running_loop().create_task(self._drop())

    async def stop(self) -> None:
        """Stop the writer and the silence timer and wait for a close in progress."""
        self._stopped = True
        self.unwatch_silence()
        if self._writer is not None:
            await cancel_and_wait(self._writer)
        if self.dropping is not None:
            with contextlib.suppress(Exception):
                await self.dropping

    async def _drop(self) -> None:
        closing = self.session.closing
        assert closing is not None
        with contextlib.suppress(Exception):
            async with asyncio.timeout(DROP_CLOSE_S):
                await self.ws.close(closing.code, closing.reason)
        # Still not closed: the client reads nothing, not even the close frame.
        self.ws.transport.abort()

    # --- silence --------------------------------------------------------------------

    def watch_silence(self) -> None:
        """Close once the session says the client was silent too long (4004), counting
        from now.

        Checked when the silence would end (:class:`SilenceWatch`, one timer for all the
        connections), not around each receive: a timeout there cost a timer and three
        objects per message."""
        loop = asyncio.get_running_loop()
        now = loop.time()
        self.session.heard(now)
        due = self.session.check_silence(now)  # the silence's end, or the session's
        self.watch.at(self, due if isinstance(due, float) else now, loop)

    def unwatch_silence(self) -> None:
        """Stop :meth:`watch_silence`."""
        self.watch.drop(self)

    def _check_silence(self, loop: asyncio.AbstractEventLoop) -> None:
        verdict = self.session.check_silence(loop.time())
        if isinstance(verdict, Close):
            self.close_soon(verdict)
        else:
            self.watch.at(self, verdict, loop)

    # --- sending --------------------------------------------------------------------

    def send_bytes(self, data: bytes) -> None:
        """Send a frame soon, or queue it; nothing once the session is closing.

        With nothing queued, the frame waits only until the event loop runs this
        connection's flush (:meth:`_flush`, scheduled by the first frame held, with
        the other connections' in one callback: :class:`Flushes`): every
        frame sent to it meanwhile (the replies and events of a commit, the events of a
        group of them) goes out in one write, as ``websockets.broadcast`` would write
        each, with no task switch. Else it waits in the bounded queue, in order, for
        the writer task; a client too slow to empty its queue is dropped.
        """
        if self.session.closing is not None:
            return
        self._put(data)

    def _put(self, data: bytes) -> None:
        """:meth:`send_bytes`, closing or not (the frames that go before a close)."""
        if self.backlog:
            self._enqueue(data)
            return
        held = self._held
        if held is None:
            self._held = [data]
            self.flushes.add(self)
        else:
            held.append(data)

    def _flush(self) -> None:
        """Write the frames held, in one write where the connection allows it, else
        queue them (those past :data:`DIRECT_WRITE_LIMIT` too), in order, before
        anything queued after them."""
        held, self._held = self._held, None
        if held:
            for data in held[self._write_now(held) :]:
                self._enqueue(data)

    def _enqueue(self, data: bytes) -> None:
        self._flush()  # frames held go first
        try:
            self._queued().put_nowait(data)
            self.backlog += 1
        except asyncio.QueueFull:
            # The writer may be stuck in a send that the client never reads, so it
            # cannot be the one to close: a task of its own does, with a bound (and
            # with the close decided first, if one was: the session keeps that one).
            self.session.close(TOO_SLOW)
            if self.dropping is None:
                self.dropping = asyncio.get_running_loop().create_task(self._drop())

    def _write_now(self, frames: list[bytes]) -> int:
        """Write the first of ``frames`` to the socket now, as long as the connection is
        open with nothing pending and its client reads (the unsent bytes stay within
        :data:`DIRECT_WRITE_LIMIT`, as if each frame were written on its own): how many."""
        ws = self.ws
        protocol = ws.protocol
        if protocol.state is not State.OPEN or ws.send_in_progress is not None:
            return 0
        transport = ws.transport
        unsent = transport.get_write_buffer_size()
        if (
            protocol.writes
            or protocol.expect_continuation_frame
            or protocol.extensions
            or protocol.debug
        ):
            # Not a plain open connection with nothing pending (or its frames are
            # logged): websockets frames them.
            written = 0
            for data in frames:
                if unsent > DIRECT_WRITE_LIMIT:
                    break  # the client reads slowly: the queue bounds what it may hold
                try:
                    protocol.send_binary(data)
                except Exception:  # the connection is closing: the queue path fails cleanly
                    break
                written += 1
                unsent += len(data)
            # try/except, not contextlib.suppress: this runs for every frame sent, and
            # the context manager was most of this method's own time.
            try:  # noqa: SIM105
                ws.send_data()
            except Exception:  # the transport is closing: the connection's close reports it
                pass
            return written
        # The frame a server sends is unmasked, so an event's frame is the same bytes
        # for every connection at the table: framed once, written to each (websockets
        # framed it for each, a tenth of the server's CPU under load); and the frames
        # held for one connection go in one write (a system call each was a fifth).
        out: list[bytes] = []
        for data in frames:
            if unsent > DIRECT_WRITE_LIMIT:
                break  # the client reads slowly: the queue bounds what it may hold
            frame = binary_frame(data)
            out.append(frame)
            unsent += len(frame)
        if not out:
            return 0
        try:
            transport.write(out[0] if len(out) == 1 else b"".join(out))
        except Exception:  # the transport is closing: the queue path fails cleanly
            return 0
        return len(out)

    async def _write_queued(self, queue: asyncio.Queue[bytes]) -> None:
        """Send the queued frames in order; an empty one means: close after the others."""
        while True:
            data = await queue.get()
            if self.dropping is not None:
                return  # closed from outside: :meth:`_drop` closes
            if not data:
                break
            await self.ws.send(data)
            self.backlog -= 1  # only now may frames skip the queue again, in order
        closing = self.session.closing
        if closing is None:
            await self.ws.close(CloseCode.NORMAL, "")
        else:
            await self.ws.close(closing.code, closing.reason)


async def _discard(ws: ServerConnection) -> None:
    """Read and drop frames until the connection closes."""
    with contextlib.suppress(ConnectionClosed):
        async for _ in ws:
            pass
