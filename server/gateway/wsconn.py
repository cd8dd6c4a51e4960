"""The gateway's WebSocket connection: each complete message waits in a queue of its own.

``websockets`` hands a message over through its ``Assembler``: ``recv`` awaits three
coroutines and a future, made again for every message and alive until the next one
comes, seconds later at a human pace. At 10,000 players that was CPU on every request
and tens of thousands of objects for the collector to go through.
:class:`GatewayConnection` queues each complete message as its last frame arrives
(the fragments joined, text decoded, the reading paused past ``max_queue`` messages and
resumed at its low mark, as the ``Assembler`` does, which it replaces: a kilobyte of
each connection's memory), and the gateway takes it without a coroutine
(:meth:`~GatewayConnection.next_message`), waiting on one future only when nothing is
there (:meth:`~GatewayConnection.message_arrived`). ``recv`` reads the same queue and
ends as ``websockets``' does once the connection is closed.

Where it differs from ``websockets``' ``recv`` (nothing here relies on it): reading
pauses on complete messages only (not on the frames of one still arriving); two
readers at once are not refused, and share the wait; ``recv(decode=True)`` of a binary
message that is not UTF-8 raises ``UnicodeDecodeError`` and drops it.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import traceback
from collections.abc import AsyncIterator
from typing import Any

from websockets.asyncio.messages import MAX_FRAGMENTS
from websockets.asyncio.server import ServerConnection
from websockets.exceptions import ConnectionClosed, TooManyFragments
from websockets.frames import DATA_OPCODES, CloseCode, Frame, Opcode
from websockets.protocol import Event


class _NoAssembler:
    """What ``websockets`` still calls of the ``Assembler`` it makes for a connection:
    its close. Replaced at once, the ``Assembler`` (and its queue) is a kilobyte of
    each connection's memory nothing uses."""

    def close(self) -> None:
        pass


_NO_ASSEMBLER: Any = _NoAssembler()


class GatewayConnection(ServerConnection):
    """A ``websockets`` server connection whose messages wait in a queue of its own
    (see the module docstring). Made by ``serve(create_connection=GatewayConnection)``.

    Its own state is in class attributes until first set, and the queue exists only
    while it holds messages: an idle connection (most of 10,000) holds none of it."""

    _inbox: collections.deque[bytes | str] | None = None  # complete messages, oldest first
    _fragments: list[Frame] | None = None  # of a fragmented message under way
    _arrived: asyncio.Future[None] | None = None
    _paused = False
    _failed = False  # a bad message came: nothing after it is read
    _failing: asyncio.Task[None] | None = None  # the close it set off
    _high: int | None = None  # the reading's marks (set by connection_made)
    _low: int | None = None
    ended = False
    """No message will come any more (the connection is closed); those queued are
    still read."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)
        self.recv_messages = _NO_ASSEMBLER
        # Pause the reading past ``_high`` messages, resume at ``_low``: either derived
        # from the other, as the Assembler does.
        high, low = self.max_queue_high, self.max_queue_low
        if high is not None and low is None:
            low = high // 4
        elif high is None and low is not None:
            high = low * 4
        self._high, self._low = high, low

    def next_message(self) -> bytes | str | None:
        """The next complete message (``bytes``, or ``str`` for a text frame), or None
        if none has come yet."""
        inbox = self._inbox
        if not inbox:
            return None
        message = inbox.popleft()
        if not inbox:
            self._inbox = None  # the usual case: one message at a time
        if self._paused:
            low = self._low
            if low is None or len(inbox) <= low:
                self._paused = False
                self.transport.resume_reading()
        return message

    def message_arrived(self) -> asyncio.Future[None]:
        """Done once a message is queued, or the connection is closed."""
        arrived = self._arrived
        if arrived is None or arrived.done():
            arrived = self._arrived = self.loop.create_future()
            if self._inbox or self.ended:
                arrived.set_result(None)
        return arrived

    async def recv(self, decode: bool | None = None) -> Any:
        """The next message, as ``websockets``' ``recv`` (``decode`` as there); once the
        connection is closed and the queue empty, raises its ``ConnectionClosed``. Safe
        to cancel: a message that comes meanwhile stays queued."""
        while (message := self.next_message()) is None and not self.ended:
            await self.message_arrived()
        if message is None:
            # Wait for the protocol state to be CLOSED before reading close_exc.
            await asyncio.shield(self.connection_lost_waiter)
            raise self.close_exc
        if decode is True and isinstance(message, bytes):
            return message.decode()
        if decode is False and isinstance(message, str):
            return message.encode()
        return message

    async def recv_streaming(self, decode: bool | None = None) -> AsyncIterator[Any]:
        """The next message in one piece (its frames are joined as they come)."""
        yield await self.recv(decode)

    def process_event(self, event: Event) -> None:
        if self.request is None or not isinstance(event, Frame):
            super().process_event(event)  # the handshake's request
            return
        opcode = event.opcode
        if opcode not in DATA_OPCODES:
            super().process_event(event)  # a pong, or a control frame with nothing to do
            return
        if self._failed:
            return
        if opcode is Opcode.CONT:
            fragments = self._fragments
            assert fragments is not None  # websockets' protocol checks the order
            fragments.append(event)
        elif event.fin:
            fragments = None  # a whole message in one frame: the usual case
        else:
            fragments = [event]
        if fragments is None:
            first, data = event, event.data
        else:
            if len(fragments) > MAX_FRAGMENTS:
                self.set_connection_exc(TooManyFragments(MAX_FRAGMENTS))
                self._fail(CloseCode.MESSAGE_TOO_BIG, "too many fragments")
                return
            if not event.fin:
                self._fragments = fragments
                return
            self._fragments = None
            first, data = fragments[0], b"".join(f.data for f in fragments)
        whole = data if type(data) is bytes else bytes(data)
        message: bytes | str = whole
        if first.opcode is Opcode.TEXT:
            try:
                message = whole.decode()
            except UnicodeDecodeError as exc:
                self.set_connection_exc(exc)
                self._fail(CloseCode.INVALID_DATA, f"{exc.reason} at position {exc.start}")
                return
        inbox = self._inbox
        if inbox is None:
            inbox = self._inbox = collections.deque()
        inbox.append(message)
        # One read of the socket may hold thousands of small frames: all are queued
        # (a deque, so that taking each is O(1)), then the reading pauses.
        high = self._high
        if not self._paused and high is not None and len(inbox) > high:
            self._paused = True
            self.transport.pause_reading()
        arrived = self._arrived
        if arrived is not None and not arrived.done():
            arrived.set_result(None)

    def connection_lost(self, exc: Exception | None) -> None:
        super().connection_lost(exc)
        self.ended = True
        self._break_cycles()
        arrived = self._arrived
        if arrived is not None and not arrived.done():
            arrived.set_result(None)

    def _break_cycles(self) -> None:
        """Free the connection's protocol as soon as nothing refers to it.

        ``websockets``' protocol parses with a generator whose frame refers to the
        protocol (a reference cycle while it waits for data, and after it ends, at its
        last ``yield``), and keeps the exception that ended the parsing
        (``parser_exc``), whose traceback holds that frame too. A connection lives longer
        than the collector's young generations (server/collector.py), so those cycles
        waited for the hourly full collection: about 2 KB a closed connection, 5.5 MB a
        wave of 3,000 that grew the process for good. The stream is at its end
        (``receive_eof`` ran, and ``receive_data`` raises before stepping the parser),
        so the generator is closed, and the traceback's frames cleared."""
        protocol = self.protocol
        with contextlib.suppress(Exception):
            protocol.parser.close()
        failed = protocol.parser_exc
        if failed is not None and failed.__traceback__ is not None:
            with contextlib.suppress(RuntimeError):
                traceback.clear_frames(failed.__traceback__)

    def _fail(self, code: CloseCode, reason: str) -> None:
        """Fail the connection as ``websockets``' ``recv`` does on a bad message (its
        close deadline included); nothing after it is read."""
        self._fragments = None
        self._failed = True

        async def fail() -> None:
            # Closing already, or the client never answers: the connection's end says
            # so (its close_exc), as it would have to a recv.
            with contextlib.suppress(ConnectionClosed):
                async with self.send_context():
                    self.protocol.fail(code, reason)

        self._failing = self.loop.create_task(fail())
