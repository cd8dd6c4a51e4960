"""One session with a table server, over ``websockets.asyncio.client``.

:class:`Session` connects and says ``hello``, matches every reply to its request by
``rid`` (:class:`~clients.pending.Pending`), keeps a :class:`~clients.model.TableModel`
per watched table, and hands every event to its listeners (:meth:`Session.listen`): the
server's table events, already applied to the model, and the client's own events
(:mod:`clients.events`). What each frame does is :class:`~clients.inbox.Inbox`'s.

A dropped connection is reopened with the session's resume token and the last ``seq``
of every table (protocol/PROTOCOL.md, section 5), with the backoff of its section 11;
the server sends the missed events or a snapshot, so the round carries on. A gap in
``seq`` makes the client watch the table again. Only ``protocol`` is used: this is the
code a client in another language would write from the specification. The requests,
one method each, are :class:`clients.core.Client`'s.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from typing import Any, Final, Self

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidURI

from clients.backoff import Backoff
from clients.errors import (
    ClientError,
    ConnectionLost,
    ServerError,
    SessionEnded,
    TryLater,
    close_policy,
    plain_error,
)
from clients.events import ClientEvent, Connected, Disconnected, ended_reason
from clients.heartbeat import Heartbeat
from clients.inbox import Inbox
from clients.model import TableModel
from clients.pending import Pacer, Pending, Reply, hello_message
from clients.version import client_name
from protocol import limits as L
from protocol.codec import decode_server, encode
from protocol.errors import CloseCode, ProtocolError, Reconnect
from protocol.messages import (
    ClientMessage,
    ErrorReply,
    OkReply,
    Ping,
    Pong,
    Unwatch,
    Watch,
)
from protocol.structs import Result, Welcome

log = logging.getLogger(__name__)

CLIENT_NAME: Final = client_name()
DEFAULT_URL: Final = "ws://127.0.0.1:8765/"
TRY_LATER: Final = int(CloseCode.TRY_AGAIN_LATER)
MONEY_ATTEMPTS: Final = 3
"""How many times a money request is sent (the same rid each time) across dropped
connections before its caller hears of the loss."""


class Session:
    """One session with a server; use as ``async with Session(url) as s:``.

    ``token`` logs in with an account token; without one the session is a guest's
    (``name`` is the display name wanted). ``resume_token`` (e.g. saved by an earlier
    run) resumes that session's player. With ``reconnect`` (the default) a dropped
    connection is retried with backoff from ``backoff_s`` doubling to ``backoff_max_s``.
    Requests raise :class:`ServerError` for an ``error`` reply, :class:`ConnectionLost`
    when the connection drops first, :class:`SessionEnded` once it ended for good
    (:attr:`ended` says why), and ``TimeoutError`` after ``request_timeout_s``.
    """

    def __init__(
        self,
        url: str = DEFAULT_URL,
        *,
        name: str | None = None,
        token: str | None = None,
        resume_token: str | None = None,
        reconnect: bool = True,
        backoff_s: float = 0.5,
        backoff_max_s: float = 30.0,
        request_timeout_s: float = 15.0,
        client_name: str = CLIENT_NAME,
        start_wait_s: float = 120.0,
    ) -> None:
        self.url = url
        self.name = name
        self.token = token
        self.resume_token = resume_token
        self.reconnect = reconnect
        self.backoff_s = backoff_s
        self.backoff_max_s = backoff_max_s
        self.request_timeout_s = request_timeout_s
        self.client_name = client_name
        self.start_wait_s = start_wait_s
        self.welcome: Welcome | None = None
        self.tables: dict[str, TableModel] = {}
        self.jackpots: dict[str, int] = {}
        """The progressive jackpots' meters as the server last told them (minor 7)."""
        self.connected = False
        self.closed = False
        self.ended: Disconnected | None = None  # the connection ended for good: why
        self.reconnects = 0
        self._ws: ClientConnection | None = None
        self._pending = Pending()
        self._listeners: list[asyncio.Queue[ClientEvent]] = []
        self._changed = asyncio.Event()
        self._supervisor: asyncio.Task[None] | None = None
        self._heartbeat: asyncio.Task[None] | None = None
        self._background: set[asyncio.Task[Any]] = set()
        self._resyncing: set[str] = set()  # tables with a watch (resync) in flight
        self._pacer = Pacer(L.RATE_PER_SECOND * 0.9, L.RATE_BURST * 0.75)
        self._clock_offset_ms = 0.0
        self._beats = Heartbeat()
        self._backoff: Backoff | None = None  # while reconnecting
        self._inbox = Inbox(
            self._pending, self.tables, self.model, self._emit, self._resync_once, self.jackpots
        )

    # --- life ------------------------------------------------------------------------

    async def __aenter__(self) -> Self:
        await self.connect()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    @property
    def player_id(self) -> str | None:
        """The session's player, once connected."""
        return self.welcome.player_id if self.welcome is not None else None

    async def connect(self) -> Welcome:
        """Open the connection and say hello; raises on refusal. A server that says to
        try later (close 1013) is tried again with backoff for up to ``start_wait_s``
        seconds, each wait told as a :class:`Disconnected` event (retrying, code 1013);
        no other failure is retried here.

        Also after the connection ended for good (say, replaced by another client:
        4005): the session is resumed with its token, as far as the server still
        has it. Connected already: the current ``welcome``.
        """
        if self.connected and self.welcome is not None:
            return self.welcome
        self.closed = False
        self.ended = None
        welcome = await self._open_when_let_in()
        for task in (self._supervisor, self._heartbeat):
            if task is not None and not task.done():
                task.cancel()
        self._supervisor = asyncio.create_task(self._supervise())
        self._heartbeat = asyncio.create_task(self._beat())
        return welcome

    @property
    def reconnecting(self) -> bool:
        """Whether the connection is down and being retried by itself (see :meth:`retry_now`)."""
        return self._backoff is not None

    def retry_now(self) -> None:
        """While :attr:`reconnecting`, try again now rather than after the backoff."""
        if self._backoff is not None:
            self._backoff.retry_now()

    async def close(self) -> None:
        """End the session (close 1000) and stop every task; pending requests fail."""
        self.closed = True
        tasks = [t for t in (self._heartbeat, self._supervisor) if t is not None]
        if self._ws is not None:
            with contextlib.suppress(Exception):
                await self._ws.close()
        for task in [*tasks, *self._background]:
            task.cancel()
        for task in [*tasks, *self._background]:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._pending.fail_all(SessionEnded("the client closed the session"))
        self.connected = False

    def drop_connection(self) -> None:
        """Cut the connection without a close frame, as a network fault would (tests, demos)."""
        if self._ws is not None:
            self._ws.transport.abort()

    # --- events ----------------------------------------------------------------------

    def listen(self) -> asyncio.Queue[ClientEvent]:
        """A new queue that receives every event from now on (see :meth:`unlisten`)."""
        queue: asyncio.Queue[ClientEvent] = asyncio.Queue()
        self._listeners.append(queue)
        return queue

    def unlisten(self, queue: asyncio.Queue[ClientEvent]) -> None:
        """Stop feeding a queue from :meth:`listen`."""
        with contextlib.suppress(ValueError):
            self._listeners.remove(queue)

    async def wait_until(self, predicate: Callable[[], bool], within: float | None = 30) -> None:
        """Wait until ``predicate()`` holds, re-tested after every event; TimeoutError after
        ``within`` seconds (None: no limit)."""
        async with asyncio.timeout(within):
            while not predicate():
                changed = self._changed
                await changed.wait()

    def server_now_ms(self) -> int:
        """The server's clock now, estimated from ``welcome`` and ``pong`` (deadlines use it)."""
        return int(time.time() * 1000 + self._clock_offset_ms)

    def model(self, table_id: str) -> TableModel:
        """The model of a table (created empty if the table is not watched yet)."""
        model = self.tables.get(table_id)
        if model is None:
            model = self.tables[table_id] = TableModel(table_id, self.player_id)
        return model

    def _emit(self, event: ClientEvent) -> None:
        for queue in self._listeners:
            queue.put_nowait(event)
        self._changed.set()
        self._changed = asyncio.Event()

    # --- requests --------------------------------------------------------------------

    async def request(self, build: Callable[[str], ClientMessage]) -> Result | None:
        """Send the request ``build(rid)`` and return its ``ok`` result."""
        reply = await self._send_request(build)
        if isinstance(reply, ErrorReply):
            raise ServerError(reply)
        if isinstance(reply, Pong):
            return None
        return reply.result

    async def _money(self, build: Callable[[str], ClientMessage]) -> Result | None:
        """A money request (join, leave, rebuy, cash_out): like :meth:`request`, but if
        the connection drops before the reply, it is sent again with the same rid once
        the session is resumed; the server applies it once at most
        (protocol/PROTOCOL.md, section 3). When a new session had to begin instead,
        whether it was applied is unknown, and :class:`ConnectionLost` says so."""
        rid = self._pending.new_rid()
        session = self.welcome.session_id if self.welcome is not None else None
        for attempt in range(MONEY_ATTEMPTS):
            try:
                reply = await self._send_request(build, rid)
            except ConnectionLost:
                if not self.reconnect or self.closed or attempt == MONEY_ATTEMPTS - 1:
                    raise
                await self.wait_until(
                    lambda: self.connected or self.closed or self.ended is not None,
                    self.request_timeout_s,
                )
                if self.ended is not None:
                    raise SessionEnded(ended_reason(self.ended)) from None
                if self.welcome is None or self.welcome.session_id != session:
                    raise ConnectionLost(
                        "the connection dropped and a new session began: whether the "
                        "request was applied is unknown (see the balance)"
                    ) from None
                continue
            if isinstance(reply, ErrorReply):
                raise ServerError(reply)
            return reply.result if isinstance(reply, OkReply) else None
        raise AssertionError("unreachable: the last attempt returns or raises")

    async def _send_request(
        self,
        build: Callable[[str], ClientMessage],
        rid: str | None = None,
        timeout_s: float | None = None,
    ) -> Reply:
        ws = self._ws
        if self.ended is not None:
            raise SessionEnded(ended_reason(self.ended))
        if ws is None or not self.connected:
            raise ConnectionLost("not connected (reconnecting)")
        rid = rid or self._pending.new_rid()
        message = build(rid)
        future = self._pending.open(rid)
        try:
            await self._pacer.take()
            try:
                await ws.send(encode(message))
            except ConnectionClosed:
                raise ConnectionLost("the connection dropped") from None
            self._beats.last_sent = time.monotonic()
            async with asyncio.timeout(timeout_s or self.request_timeout_s):
                return await future
        finally:
            self._pending.close(rid)

    async def ping(self, timeout_s: float | None = None) -> float:
        """Round trip in seconds; also corrects the estimate of the server's clock.
        ``TimeoutError`` after ``timeout_s`` (default ``request_timeout_s``)."""
        sent = time.time()
        reply = await self._send_request(
            lambda rid: Ping(rid=rid, time_ms=int(sent * 1000)), timeout_s=timeout_s
        )
        received = time.time()
        if isinstance(reply, Pong):
            self._clock_offset_ms = reply.server_time_ms - (sent + received) * 500
        return received - sent

    async def watch(self, table_id: str) -> TableModel:
        """Watch a table; its model is synced once the snapshot (right after the ok) is in."""
        model = self.model(table_id)
        model.resyncing = True
        self._resyncing.add(table_id)
        try:
            await self.request(lambda rid: Watch(rid=rid, table_id=table_id))
            await self.wait_until(lambda: not model.resyncing, self.request_timeout_s)
        finally:
            self._resyncing.discard(table_id)
        return model

    async def unwatch(self, table_id: str) -> None:
        """Stop watching a table (a seat is kept)."""
        await self.request(lambda rid: Unwatch(rid=rid, table_id=table_id))
        self.tables.pop(table_id, None)

    # --- connection ------------------------------------------------------------------

    async def _open_when_let_in(self) -> Welcome:
        """:meth:`_open`, tried again while the server says to try later (see
        :meth:`connect`)."""
        backoff = Backoff(self.backoff_s, self.backoff_max_s)
        deadline = time.monotonic() + self.start_wait_s
        while True:
            try:
                return await self._open()
            except TryLater as exc:
                delay = backoff.next() if exc.after_s is None else exc.after_s
                if time.monotonic() + delay > deadline:
                    raise
                self._emit(Disconnected(TRY_LATER, exc.reason, retrying=True, delay_s=delay))
                await asyncio.sleep(delay)

    async def _open(self) -> Welcome:
        """Open a WebSocket, send hello and read the welcome (raises SessionEnded if refused)."""
        try:
            # No WebSocket pings: the heartbeat alone (clients/heartbeat.py).
            ws = await connect(
                self.url,
                max_size=L.MAX_SERVER_FRAME_BYTES,
                open_timeout=10,
                compression=None,
                ping_interval=None,
            )
        except (OSError, InvalidHandshake, InvalidURI, TimeoutError) as exc:
            raise ConnectionLost(f"cannot connect to {self.url}: {exc}") from exc
        try:
            synced = [m for m in self.tables.values() if m.synced]
            hello = hello_message(
                self.client_name, self.token, self.name, self.resume_token, synced
            )
            await ws.send(encode(hello))
            async with asyncio.timeout(10):
                reply = decode_server(await ws.recv(decode=False))
        except (ConnectionClosed, TimeoutError, ProtocolError) as exc:
            await ws.close()
            close = ws.protocol.close_rcvd
            if close is not None and close.code == TRY_LATER:
                raise TryLater(close.reason or "the server is busy") from exc
            raise ConnectionLost(f"no welcome from {self.url}: {exc}") from exc
        if isinstance(reply, ErrorReply):
            await ws.close()
            if reply.code == "guests_limited" and reply.retry_after_ms is not None:
                # No new guest from here this minute: the server says when to come back.
                raise TryLater(plain_error(reply), reply.retry_after_ms / 1000)
            if reply.code == "unauthorized" and self.resume_token is not None:
                # An unknown resume token: the session is gone, start afresh.
                self.resume_token = None
                return await self._open()
            raise SessionEnded(plain_error(reply))
        if not isinstance(reply, OkReply) or not isinstance(reply.result, Welcome):
            await ws.close()
            raise ConnectionLost(f"unexpected first reply {type(reply).__name__}")
        welcome = reply.result
        self._clock_offset_ms = welcome.server_time_ms - time.time() * 1000
        self.welcome = welcome
        self.resume_token = welcome.resume_token
        self.name = welcome.name
        for model in self.tables.values():
            model.player_id = welcome.player_id
        self._ws = ws
        self.connected = True
        self._beats.restart(welcome.heartbeat_ms / 1000)
        self._emit(Connected(welcome))
        if not welcome.resumed:
            # A fresh session watches nothing: watch our tables again.
            for table_id in list(self.tables):
                self._spawn(self._resync(table_id))
        return welcome

    async def _supervise(self) -> None:
        """Read frames; when the connection ends, reconnect as section 11 says."""
        while not self.closed:
            ws = self._ws
            assert ws is not None
            try:
                async for frame in ws:
                    self._beats.last_received = time.monotonic()
                    self._inbox.receive(frame)
            except ConnectionClosed:
                pass
            self.connected = False
            if self.closed:
                self._pending.fail_all(ConnectionLost("the connection dropped"))
                return
            close = ws.protocol.close_rcvd
            code = close.code if close is not None else None
            reason, policy = close_policy(code, close.reason if close is not None else None)
            if not self.reconnect or policy in (Reconnect.NEVER, Reconnect.NEW_CREDENTIALS):
                self._end(Disconnected(code, reason, retrying=False))
                return
            self._pending.fail_all(ConnectionLost("the connection dropped"))
            if not await self._reconnect(code, reason, now=policy is Reconnect.NOW):
                return

    def _end(self, event: Disconnected) -> None:
        """The connection ended for good: requests waiting, or made from now on, fail
        with :class:`SessionEnded` saying why (no reconnection is coming)."""
        self.ended = event
        self._pending.fail_all(SessionEnded(ended_reason(event)))
        self._emit(event)

    async def _reconnect(self, code: int | None, reason: str, *, now: bool) -> bool:
        backoff = self._backoff = Backoff(self.backoff_s, self.backoff_max_s, now=now)
        try:
            while not self.closed:
                delay = backoff.next()
                self._emit(Disconnected(code, reason, retrying=True, delay_s=delay))
                await backoff.wait(delay)
                try:
                    await self._open()
                except SessionEnded as exc:
                    self._end(Disconnected(code, str(exc), retrying=False))
                    return False
                except ConnectionLost as exc:
                    reason = str(exc)
                    continue
                self.reconnects += 1
                return True
            return False
        finally:
            self._backoff = None

    async def _beat(self) -> None:
        """Ping as :class:`~clients.heartbeat.Heartbeat` says; a ping that nothing at
        all answers in time drops the connection, which is then resumed."""
        while not self.closed:
            await asyncio.sleep(self._beats.sleep_s())
            if not self.connected or self.welcome is None or not self._beats.due():
                continue
            ws, sent = self._ws, time.monotonic()
            try:
                await self.ping(timeout_s=self._beats.dead_after_s(self.request_timeout_s))
            except TimeoutError:
                if ws is not None and ws is self._ws and not self._beats.heard_since(sent):
                    ws.transport.abort()  # _supervise reconnects
            except ClientError:
                pass

    def _spawn(self, coro: Any) -> None:
        task = asyncio.ensure_future(coro)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def _resync(self, table_id: str) -> None:
        with contextlib.suppress(ClientError, TimeoutError):
            await self.watch(table_id)

    # --- incoming --------------------------------------------------------------------

    def feed(self, frame: bytes) -> None:
        """Handle one server frame as if it had just been received (replays, tests)."""
        self._inbox.receive(frame)

    def _resync_once(self, model: TableModel) -> None:
        if model.table_id not in self._resyncing:
            self._spawn(self._resync(model.table_id))
