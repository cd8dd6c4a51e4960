"""The WebSocket gateway: connections, the handshake, sessions and request dispatch.

One :class:`Connection` per WebSocket. Its first message must be ``hello``
(PROTOCOL.md, "Handshake"); after that every frame is decoded by the protocol's
strict decoder, rate-limited, dispatched to one handler, and answered by exactly one
``ok`` or ``error`` carrying its ``rid``. Nothing a client sends can raise out of
:meth:`Gateway.handle`: decoding errors, illegal events and server faults all become
error replies, and the table carries on. Outgoing frames go through a bounded
queue; a client that does not read them is disconnected, never buffered without end.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import hashlib
import logging
import math
import secrets
import time
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Any

import msgpack
from redis.exceptions import RedisError
from websockets.asyncio.server import ServerConnection
from websockets.exceptions import ConnectionClosed
from websockets.protocol import State

from protocol import limits as L
from protocol.codec import decode_client, encode
from protocol.errors import ERRORS, CloseCode, ErrorCode, ProtocolError
from protocol.messages import (
    Bet,
    CashOut,
    Clear,
    ErrorReply,
    GetBalance,
    GetHistory,
    GetServerInfo,
    GetTableInfo,
    Hello,
    HouseWay,
    Join,
    Leave,
    ListTables,
    OkReply,
    Ping,
    Pong,
    Rebet,
    Rebuy,
    SetHand,
    SitOut,
    Unwatch,
    Watch,
)
from protocol.structs import (
    Balances,
    Joined,
    PayLine,
    Result,
    ServerInfo,
    TableBalance,
    TableInfo,
    TableList,
    TableSummary,
    Welcome,
)
from protocol.version import (
    MAX_SUPPORTED_VERSION,
    MIN_SUPPORTED_VERSION,
    PROTOCOL_MINOR,
    negotiate,
)
from server.auth import tokens
from server.gamelog import record_table, unpack_records
from server.host import MoneyRequest, TableHost, TableUnavailable, now_ms
from server.metrics import Metrics
from server.rules import bonus as bonus_rules
from server.seating import Seating
from server.store.accounts import AccountStore
from server.store.sessions import Session, SessionStore
from server.store.tables import TableStore
from server.table import events as ev
from server.table.errors import TableError
from server.table.machine import Transition, suggestion
from server.table.state import Phase
from server.table.views import snapshot

log = logging.getLogger(__name__)

SERVER_VERSION = "0.1.0"
_RESUME_TTL_S = 24 * 3600
_DIRECT_WRITE_LIMIT = 64 * 1024  # unsent bytes above which frames go through the queue
_DROP_CLOSE_S = 2.0
"""How long a client dropped for not reading gets to complete the closing handshake."""


class Closing(Exception):
    """End the connection with ``code`` after sending ``reply`` (if any)."""

    def __init__(self, code: CloseCode, reason: str, reply: ErrorReply | None = None) -> None:
        super().__init__(reason)
        self.code = code
        self.reason = reason
        self.reply = reply


class RateLimiter:
    """A token bucket: ``rate`` messages a second, bursts up to ``burst``.

    :attr:`flooding` tells a client far over the rate: more than ``close_factor``
    times the rate within one second (PROTOCOL.md, section 12: close 4008).
    """

    def __init__(
        self, rate: float, burst: float, close_factor: float = L.RATE_CLOSE_FACTOR
    ) -> None:
        self.rate = rate
        self.burst = burst
        self.tokens = burst
        self.stamp = time.monotonic()
        self.window = self.stamp  # start of the current one-second window
        self.seen = 0  # messages in the window
        self.close_at = close_factor * rate

    def take(self) -> bool:
        now = time.monotonic()
        if now - self.window >= 1:
            self.window, self.seen = now, 0
        self.seen += 1
        self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now
        if self.tokens >= 1:
            self.tokens -= 1
            return True
        return False

    @property
    def flooding(self) -> bool:
        """Whether the client sent far more than the rate in the current second."""
        return self.seen > self.close_at

    def wait_ms(self) -> int:
        """Milliseconds until the next message is allowed."""
        return max(1, math.ceil((1 - self.tokens) / self.rate * 1000))


class Connection:
    """One client's WebSocket, its session and its outgoing queue."""

    def __init__(self, ws: ServerConnection, queue_size: int, rate: int) -> None:
        self.ws = ws
        self.player_id: str | None = None
        self.name = ""
        self.guest = False
        self.session_id = secrets.token_hex(8)
        self.tables: set[str] = set()  # watched (seated included)
        # Tables asked for in hello's last_seq (table: last seq) and not attached yet,
        # because they were not hosted here then: see Gateway.table_ready.
        self.wanted: dict[str, int] = {}
        self.queue: asyncio.Queue[bytes] = asyncio.Queue(queue_size)
        self.limiter = RateLimiter(rate, 2 * rate)
        self.errors = 0  # consecutive invalid messages
        self.closing: tuple[CloseCode, str] | None = None
        self.dropping: asyncio.Task[None] | None = None  # closing a slow consumer
        self.backlog = 0  # frames queued and not yet handed to the socket
        self.heard_at = 0.0  # loop time of the last frame received, or request handled
        self.busy = False  # handling a request: frames wait unread, which is no silence
        self._silence_s = 0.0
        self._silence: asyncio.TimerHandle | None = None

    def watch_silence(self, seconds: float) -> None:
        """Close with 4004 once no frame was received for ``seconds`` (PROTOCOL.md
        §5); setting :attr:`heard_at` to the loop's time restarts the wait, and the
        wait is void while :attr:`busy` (the time a request takes is not silence).

        One timer per connection, moved only when it fires: a timeout around each
        receive cost a timer and three objects per message."""
        loop = asyncio.get_running_loop()
        self._silence_s = seconds
        self.heard_at = loop.time()
        self._silence = loop.call_at(self.heard_at + seconds, self._check_silence, loop)

    def unwatch_silence(self) -> None:
        """Stop :meth:`watch_silence`."""
        if self._silence is not None:
            self._silence.cancel()
            self._silence = None

    def _check_silence(self, loop: asyncio.AbstractEventLoop) -> None:
        due = self.heard_at + self._silence_s
        if self.busy:  # the client's next frames wait for this request, unread
            due = loop.time() + self._silence_s
        if loop.time() >= due:
            self._silence = None
            self.close_soon(CloseCode.HEARTBEAT_TIMEOUT, "no message for two heartbeats")
        else:
            self._silence = loop.call_at(due, self._check_silence, loop)

    def send_bytes(self, data: bytes) -> None:
        """Send a frame now, or queue it; a client too slow to empty its queue is dropped.

        With nothing queued and little unsent in the socket's buffer the frame is
        written at once, as ``websockets.broadcast`` does: no task switch per frame
        (the fan-out of one event to a table is most of the server's sending). Else
        it waits in the bounded queue, in order, for the writer task.
        """
        if self.closing is not None:
            return
        if self.backlog == 0 and self._write_now(data):
            return
        try:
            self.queue.put_nowait(data)
            self.backlog += 1
        except asyncio.QueueFull:
            # The writer may be stuck in a send that the client never reads, so it
            # cannot be the one to close: a task of its own does, with a bound.
            self.closing = (CloseCode.TRY_AGAIN_LATER, "too slow: outgoing queue full")
            self.dropping = asyncio.get_running_loop().create_task(self._drop())

    def _write_now(self, data: bytes) -> bool:
        ws = self.ws
        if ws.protocol.state is not State.OPEN or ws.send_in_progress is not None:
            return False
        if ws.transport.get_write_buffer_size() > _DIRECT_WRITE_LIMIT:
            return False  # the client reads slowly: the queue bounds what it may hold
        try:
            ws.protocol.send_binary(data)
        except Exception:  # the connection is closing: the queue path fails cleanly
            return False
        with contextlib.suppress(Exception):
            ws.send_data()
        return True

    def close_soon(self, code: CloseCode, reason: str) -> None:
        """Close the connection with ``code`` from outside its handler (bounded in time)."""
        if self.closing is None:
            self.closing = (code, reason)
            self.dropping = asyncio.get_running_loop().create_task(self._drop())

    async def _drop(self) -> None:
        assert self.closing is not None
        code, reason = self.closing
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.ws.close(code, reason), _DROP_CLOSE_S)
        # Still not closed: the client reads nothing, not even the close frame.
        self.ws.transport.abort()

    async def writer(self) -> None:
        """Send the queued frames in order; an empty one means: close after the others."""
        while True:
            data = await self.queue.get()
            if self.dropping is not None:
                return  # a slow consumer: :meth:`_drop` closes
            if not data:
                break
            await self.ws.send(data)
            self.backlog -= 1  # only now may frames skip the queue again, in order
        code, reason = self.closing or (CloseCode.NORMAL, "")
        await self.ws.close(code, reason)


async def _discard(ws: ServerConnection) -> None:
    """Read and drop frames until the connection closes."""
    with contextlib.suppress(ConnectionClosed):
        async for _ in ws:
            pass


def error_reply(
    code: ErrorCode, message: str, rid: str | None, table_id: str | None = None
) -> ErrorReply:
    """The ``error`` reply for ``code``."""
    return ErrorReply(
        code=code.value,
        message=message[: L.MAX_TEXT_LEN],
        retryable=ERRORS[code].retryable,
        rid=rid,
        table_id=table_id,
    )


class Replied(enum.Enum):
    """What a handler returns when it has queued its ``ok`` itself (to order it first)."""

    REPLIED = "replied"


REPLIED = Replied.REPLIED
Outcome = Result | None | Replied
Handler = Callable[[Connection, Any], Awaitable[Outcome]]


class Gateway:
    """Everything a connection talks to: the hosted tables, accounts, history, metrics."""

    def __init__(
        self,
        hosts: dict[str, TableHost],
        tables: TableStore,
        accounts: AccountStore,
        secret: bytes,
        metrics: Metrics,
        *,
        guests: bool,
        guest_balance: int,
        heartbeat_ms: int,
        queue_size: int,
        rate: int,
        server_name: str,
        handshake_ms: int = L.HANDSHAKE_TIMEOUT_MS,
        max_connections: int = 20_000,
        seating: Seating[TableHost] | None = None,
    ) -> None:
        self.hosts = hosts
        # Who sits where, kept by the hosts (they must share this one).
        self.seating = seating if seating is not None else Seating()
        self.tables = tables
        self.accounts = accounts
        self.secret = secret
        self.resume_secret = hashlib.sha256(b"paigow-resume\0" + secret).digest()
        self.sessions = SessionStore(tables.redis)
        self.metrics = metrics
        self.guests = guests
        self.guest_balance = guest_balance
        self.heartbeat_ms = heartbeat_ms
        self.queue_size = queue_size
        self.rate = rate
        self.server_name = server_name
        self.handshake_ms = handshake_ms
        self.max_connections = max_connections
        self.connections: set[Connection] = set()
        self.by_player: dict[str, set[Connection]] = {}
        # Connections whose hello asked for tables not hosted here yet (Connection.wanted).
        self._wanting: set[Connection] = set()
        self.handlers: dict[type[Any], Handler] = {
            Ping: self._ping,
            ListTables: self._list_tables,
            Watch: self._watch,
            Unwatch: self._unwatch,
            Join: self._join,
            Leave: self._leave,
            GetBalance: self._balance,
            Rebuy: self._rebuy,
            CashOut: self._cash_out,
            Bet: self._bet,
            Rebet: self._rebet,
            Clear: self._clear,
            SitOut: self._sit_out,
            SetHand: self._set_hand,
            HouseWay: self._house_way,
            GetHistory: self._history,
            GetTableInfo: self._table_info,
            GetServerInfo: self._server_info,
        }

    # --- connection life --------------------------------------------------------------

    async def handle(self, ws: ServerConnection) -> None:
        """Serve one WebSocket until it closes."""
        if len(self.connections) >= self.max_connections:
            await ws.close(CloseCode.TRY_AGAIN_LATER, "server full")
            return
        conn = Connection(ws, self.queue_size, self.rate)
        self.connections.add(conn)
        self.metrics.connections.inc()
        writer = asyncio.create_task(conn.writer())
        try:
            await self._handshake(conn)
            await self._serve(conn)
        except Closing as close:
            # The error reply goes out first, then the close frame (PROTOCOL.md).
            if close.reply is not None:
                conn.send_bytes(encode(close.reply))
            if conn.closing is None:
                conn.closing = (close.code, close.reason)
            # Frames the client still sends are read and dropped: else, with the
            # incoming queue full, its answer to our close frame would never be read
            # and the closing handshake would wait for its timeout.
            discard = asyncio.create_task(_discard(conn.ws))
            with contextlib.suppress(Exception):
                async with asyncio.timeout(5):
                    await conn.queue.put(b"")
                    await writer
            discard.cancel()
            await asyncio.gather(discard, return_exceptions=True)
        except ConnectionClosed:
            pass
        finally:
            writer.cancel()
            # gather keeps a cancellation of this handler from being swallowed here.
            await asyncio.gather(writer, return_exceptions=True)
            if conn.dropping is not None:
                with contextlib.suppress(Exception):
                    await conn.dropping
            self.connections.discard(conn)
            self.metrics.connections.dec()
            await self._departed(conn)

    async def _handshake(self, conn: Connection) -> None:
        try:
            frame = await asyncio.wait_for(conn.ws.recv(), self.handshake_ms / 1000)
        except TimeoutError:
            raise Closing(CloseCode.HANDSHAKE_TIMEOUT, "no hello in time") from None
        if isinstance(frame, str):
            raise Closing(CloseCode.UNSUPPORTED_DATA, "text frames are not part of the protocol")
        try:
            hello = decode_client(frame)
        except ProtocolError as exc:
            reply = error_reply(exc.code, str(exc), exc.rid)
            raise Closing(CloseCode.HELLO_REQUIRED, "first message must be hello", reply) from None
        if not isinstance(hello, Hello):
            reply = error_reply(
                ErrorCode.HELLO_REQUIRED, "the first message must be hello", hello.rid
            )
            raise Closing(CloseCode.HELLO_REQUIRED, "first message must be hello", reply)
        version = negotiate(hello.min_version, hello.max_version)
        if version is None:
            reply = error_reply(
                ErrorCode.VERSION_UNSUPPORTED,
                f"this server speaks protocol {MIN_SUPPORTED_VERSION}..{MAX_SUPPORTED_VERSION}",
                hello.rid,
            )
            raise Closing(CloseCode.VERSION_UNSUPPORTED, "no common version", reply)
        resumed = await self._authenticate(conn, hello)
        welcome = Welcome(
            version=version,
            minor=PROTOCOL_MINOR,
            session_id=conn.session_id,
            resume_token=tokens.issue(
                self.resume_secret, conn.session_id, _RESUME_TTL_S, int(time.time())
            ),
            player_id=conn.player_id or "",
            name=conn.name,
            guest=conn.guest,
            resumed=resumed,
            server_time_ms=now_ms(),
            heartbeat_ms=self.heartbeat_ms,
        )
        conn.send_bytes(encode(OkReply(rid=hello.rid, result=welcome)))
        player = conn.player_id
        assert player is not None
        # A resumed session picks up its tables where it left them. A table not hosted
        # here yet (this process is starting, or taking it over from a dead one) is
        # remembered, and table_ready attaches the connection once it is; no await
        # between this and joining by_player, so that table_ready sees both or neither.
        if resumed:
            conn.wanted = {e.table_id: e.seq for e in hello.last_seq if e.table_id in self.hosts}
            if conn.wanted:
                self._wanting.add(conn)
        self.by_player.setdefault(player, set()).add(conn)
        for table_id, seq in list(conn.wanted.items()):
            host = self.hosts[table_id]
            if host.ready:
                with contextlib.suppress(TableUnavailable):
                    await self._attach(conn, host, seq)
        for host in self._seated_hosts(player):
            if not host.ready:
                continue  # table_ready attaches this connection and says the player is back
            with contextlib.suppress(TableError):
                await self._attach(conn, host, None)  # nothing if attached just above
                await host.submit(ev.Reconnect(player))

    async def _authenticate(self, conn: Connection, hello: Hello) -> bool:
        """Who ``conn`` speaks for; True when it resumes a live session."""
        now_s = int(time.time())
        session = None
        if hello.resume_token is not None:
            try:
                session_id = tokens.verify(self.resume_secret, hello.resume_token, now_s)
            except tokens.TokenError as exc:
                reply = error_reply(
                    ErrorCode.UNAUTHORIZED, f"resume token refused: {exc}", hello.rid
                )
                raise Closing(CloseCode.UNAUTHORIZED, "resume refused", reply) from None
            session = await self.sessions.load(session_id)
        if hello.token is not None:
            try:
                player = tokens.verify(self.secret, hello.token, now_s)
            except tokens.TokenError as exc:
                reply = error_reply(ErrorCode.UNAUTHORIZED, f"token refused: {exc}", hello.rid)
                raise Closing(CloseCode.UNAUTHORIZED, "token refused", reply) from None
            if session is not None and session.player != player:
                session = None  # a session of someone else: start a fresh one
            conn.player_id = player
            conn.name = hello.name or (session.name if session else player)
        elif session is not None:
            conn.player_id, conn.guest = session.player, session.guest
            conn.name = hello.name or session.name
        elif not self.guests:
            reply = error_reply(ErrorCode.UNAUTHORIZED, "guests are not allowed here", hello.rid)
            raise Closing(CloseCode.UNAUTHORIZED, "no guests", reply)
        else:
            conn.player_id = "g-" + secrets.token_hex(6)
            conn.guest = True
            conn.name = hello.name or "Guest"
            await self.accounts.ensure_guest(conn.player_id, self.guest_balance)
        if session is not None:
            conn.session_id = session.session_id
            # PROTOCOL.md: a second connection resuming a session closes the first.
            for other in list(self.connections):
                if other is not conn and other.session_id == conn.session_id:
                    other.close_soon(CloseCode.SESSION_REPLACED, "session resumed elsewhere")
        await self.sessions.save(Session(conn.session_id, conn.player_id, conn.name, conn.guest))
        return session is not None

    async def _serve(self, conn: Connection) -> None:
        loop = asyncio.get_running_loop()
        # PROTOCOL.md: closed after two heartbeat intervals without a frame.
        conn.watch_silence(2 * self.heartbeat_ms / 1000)
        try:
            while True:
                frame = await conn.ws.recv()
                conn.heard_at = loop.time()
                if conn.closing is not None:
                    return
                if isinstance(frame, str):
                    raise Closing(
                        CloseCode.UNSUPPORTED_DATA, "text frames are not part of the protocol"
                    )
                if not conn.limiter.take():
                    if conn.limiter.flooding:
                        raise Closing(CloseCode.RATE_LIMITED, "far over the message rate")
                    # The request is dropped, but its reply still carries its rid
                    # (PROTOCOL.md: every request gets exactly one reply) and when to retry.
                    rid: str | None
                    try:
                        rid = decode_client(frame).rid
                    except ProtocolError as exc:
                        rid = exc.rid
                    reply = error_reply(ErrorCode.RATE_LIMITED, "too many messages: slow down", rid)
                    conn.send_bytes(encode(replace(reply, retry_after_ms=conn.limiter.wait_ms())))
                    continue
                conn.busy = True
                try:
                    await self._one(conn, frame)
                finally:
                    conn.busy = False
                conn.heard_at = loop.time()
        finally:
            conn.unwatch_silence()

    async def _one(self, conn: Connection, frame: bytes) -> None:
        started = time.perf_counter()
        try:
            message = decode_client(frame)
        except ProtocolError as exc:
            conn.errors += 1
            self.metrics.errors.labels(exc.code.value).inc()
            conn.send_bytes(encode(error_reply(exc.code, str(exc), exc.rid)))
            if conn.errors >= L.MAX_CONSECUTIVE_ERRORS:
                raise Closing(CloseCode.TOO_MANY_ERRORS, "too many invalid messages") from None
            return
        conn.errors = 0
        kind = type(message).__name__
        counted, timed = self.metrics.for_request(kind)
        counted.inc()
        table_id = getattr(message, "table_id", None)
        try:
            if isinstance(message, Hello):
                raise TableError(ErrorCode.HELLO_REQUIRED, "hello may be sent only once")
            if isinstance(message, Ping):
                pong = Pong(rid=message.rid, server_time_ms=now_ms(), time_ms=message.time_ms)
                conn.send_bytes(encode(pong))
                return
            result = await self.handlers[type(message)](conn, message)
            if result is not REPLIED:
                conn.send_bytes(encode(OkReply(rid=message.rid, result=result)))
        except TableError as exc:
            self.metrics.errors.labels(exc.code.value).inc()
            conn.send_bytes(encode(error_reply(exc.code, exc.message, message.rid, table_id)))
        except Exception:
            log.exception("request %s failed", kind)
            self.metrics.errors.labels(ErrorCode.INTERNAL.value).inc()
            reply = error_reply(
                ErrorCode.INTERNAL, "server fault; try again", message.rid, table_id
            )
            conn.send_bytes(encode(reply))
        finally:
            timed.observe(time.perf_counter() - started)

    async def _departed(self, conn: Connection) -> None:
        self._wanting.discard(conn)
        for table_id in list(conn.tables):
            host = self.hosts.get(table_id)
            if host is not None:
                host.unsubscribe(conn)
        player = conn.player_id
        if player is None:
            return
        others = self.by_player.get(player, set())
        others.discard(conn)
        if others:
            return
        self.by_player.pop(player, None)
        for host in self._seated_hosts(player):
            if player in self.by_player:
                return  # back on a new connection meanwhile: not away after all
            with contextlib.suppress(TableError):
                await host.submit(ev.Disconnect(player))

    def _seated_hosts(self, player: str) -> list[TableHost]:
        return self.seating.hosts_of(player)

    # --- tables -----------------------------------------------------------------------

    def _host(self, table_id: str) -> TableHost:
        host = self.hosts.get(table_id)
        if host is None:
            raise TableError(ErrorCode.NO_SUCH_TABLE, f"there is no table {table_id!r}")
        if not host.ready:
            raise TableError(ErrorCode.UNAVAILABLE, f"table {table_id!r} is starting; retry")
        return host

    async def _attach(
        self,
        conn: Connection,
        host: TableHost,
        last_seq: int | None,
        *,
        again: bool = False,
        first: bytes | None = None,
    ) -> None:
        """Subscribe ``conn`` to the table and bring it up to date: ``first`` (a
        request's ``ok``) if given, then the events it missed after ``last_seq``, else a
        snapshot.

        A connection already attached is left as it is, unless ``again`` (a new
        ``watch`` gets a new snapshot), so that two paths attaching one connection at
        once (its hello and :meth:`table_ready`) never send it the events twice. A
        connection closed meanwhile is not attached. Raises :class:`TableUnavailable`
        (and sends nothing) when the table is not hosted here.
        """
        table_id = host.table_id
        async with host.lock:
            if not host.ready or host.state is None:
                raise TableUnavailable(table_id)
            if table_id in conn.tables and not again:
                return
            host.unsubscribe(conn)
            frames = None
            if last_seq is not None:
                try:
                    frames = await host.missed(conn, last_seq)
                except (RedisError, OSError) as exc:
                    # The replay buffer is out of reach: a snapshot (from memory) is
                    # always a valid answer, and the connection carries on.
                    log.warning("table %s: events since %d unread (%s)", table_id, last_seq, exc)
            if frames is None:
                frames = [encode(snapshot(host.state, conn.player_id, now_ms()))]
            # After the last await: a connection that closed while we waited has been
            # through _departed already, and subscribing it now would leak it.
            if conn not in self.connections:
                return
            if first is not None:
                conn.send_bytes(first)
            for frame in frames:
                conn.send_bytes(frame)
            host.subscribe(conn)
            conn.tables.add(table_id)
            conn.wanted.pop(table_id, None)

    async def table_ready(self, host: TableHost) -> None:
        """The hosts' on-ready hook: bring a table just taken (at start, after a reload,
        or over from a dead process) in line with the connections of this process.

        First attaches every connection (past its hello) of a player seated there, and
        every one that asked for the table in its hello while it was not hosted, that
        is not attached yet. Then submits ``Reconnect`` for each seated player with a
        connection here whose seat says away, and ``Disconnect`` for each one without
        one whose seat says connected: the stored state cannot know that their
        connections died with the previous owner, and nobody else will tell it. The
        grace time then runs from that ``Disconnect``. An event the table refuses (the
        seat is gone meanwhile) or a store error is logged and skipped; when the table
        is lost again the rest waits for the next call.
        """
        # Who sits where is asked of the gateway's index, which the hosts keep.
        assert host.seating is self.seating, "a host must share the gateway's seating"
        table_id = host.table_id
        state = host.state
        seated = [seat.player for _, seat in state.occupied()] if state is not None else []
        # From the table's seats and the few connections still waiting, not from every
        # connection: with 10,000 of them and 1,667 tables taken at once, that counts.
        candidates = [c for p in seated for c in self.by_player.get(p, ())]
        candidates += [c for c in self._wanting if table_id in c.wanted]
        for conn in dict.fromkeys(candidates):
            if table_id in conn.tables:
                continue
            try:
                await self._attach(conn, host, conn.wanted.get(table_id))
            except TableUnavailable:
                return
        # Assumption: a seated player's connections are all in this process (each
        # process serves its own clients' tables). When several processes share tables,
        # "has a connection" must come from all of them, not from by_player alone.
        state = host.state
        players = [seat.player for _, seat in state.occupied()] if state is not None else []
        for player in players:
            state = host.state
            index = state.seat_of(player) if state is not None else None
            seat = state.seats[index] if state is not None and index is not None else None
            if seat is None:
                continue  # stood up meanwhile
            here = player in self.by_player
            if here == seat.connected:
                continue
            # Decided and queued on the table's lock with no await in between: a hello
            # or a close that changes ``here`` after this queues its own event behind.
            event = ev.Reconnect(player) if here else ev.Disconnect(player)
            try:
                await host.submit(event)
            except TableUnavailable:
                return
            except TableError as exc:
                log.info("table %s: %s refused: %s", table_id, type(event).__name__, exc)
            except (RedisError, OSError) as exc:
                log.warning("table %s: %s not stored: %s", table_id, type(event).__name__, exc)

    async def _list_tables(self, conn: Connection, msg: ListTables) -> Result:
        summaries = []
        for host in self.hosts.values():
            c = host.config
            state = host.state
            summaries.append(
                TableSummary(
                    table_id=c.table_id,
                    name=c.name[: L.MAX_NAME_LEN],
                    phase=(state.phase if state is not None else Phase.IDLE).value,
                    seats=c.seats,
                    players=len(state.occupied()) if state is not None else 0,
                    watchers=len(host.subscribers),
                    min_bet=c.min_bet,
                    max_bet=c.max_bet,
                    max_bonus=c.bonus_max,
                    buy_in_min=c.min_buy_in,
                    buy_in_max=c.max_buy_in,
                )
            )
        return TableList(tables=tuple(summaries))

    async def _watch(self, conn: Connection, msg: Watch) -> Outcome:
        host = self._host(msg.table_id)
        if len(conn.tables) >= L.MAX_TABLES_PER_SESSION and msg.table_id not in conn.tables:
            raise TableError(ErrorCode.BAD_MESSAGE, "watching too many tables")
        # The snapshot must follow the ok: _attach sends the ok first.
        await self._attach(conn, host, None, again=True, first=encode(OkReply(rid=msg.rid)))
        return REPLIED

    async def _unwatch(self, conn: Connection, msg: Unwatch) -> None:
        conn.wanted.pop(msg.table_id, None)  # not later either, if asked for in hello
        host = self._host(msg.table_id)
        host.unsubscribe(conn)
        conn.tables.discard(msg.table_id)

    async def _join(self, conn: Connection, msg: Join) -> Outcome:
        """Seat the player; a join also watches the table (PROTOCOL.md).

        The connection is attached before the commit, so that its snapshot comes
        before the ``ok`` and the ``seat`` event the join causes. A join that gets no
        ``ok`` (refused, or failed) and left the player unseated leaves the connection
        as it found it: not watching the table unless it already was.
        """
        host = self._host(msg.table_id)
        player = self._player(conn)
        table_id = msg.table_id
        watching = table_id in conn.tables
        wanted = conn.wanted.get(table_id)
        if not watching:
            await self._attach(conn, host, None)
        # With no seat asked for, the state machine takes the first free one.
        event = ev.SitDown(player, conn.name, msg.seat, msg.buy_in, secrets.token_bytes(32))
        answered = False

        def memo(t: Transition) -> bytes:
            seat = t.state.seat_of(player)
            assert seat is not None
            return _pack(seat)

        def joined(memo: bytes, account: int) -> Result:
            nonlocal answered
            answered = True
            seat = _unpack(memo)
            assert isinstance(seat, int)
            return Joined(table_id=table_id, seat=seat, table_balance=msg.buy_in, account=account)

        try:
            return await self._money(conn, msg, event, memo, joined)
        except BaseException:
            # Seated all the same (stored, but its answer failed): the player must keep
            # the table's events, their own cards among them.
            seated = host.state is not None and host.state.seat_of(player) is not None
            if not watching and not answered and not seated:
                host.unsubscribe(conn)
                conn.tables.discard(table_id)
                if wanted is not None:  # still to be attached by table_ready, as before
                    conn.wanted[table_id] = wanted
            raise

    async def _leave(self, conn: Connection, msg: Leave) -> Outcome:
        return await self._money_reply(conn, msg, ev.StandUp(self._player(conn)))

    async def _balance(self, conn: Connection, msg: GetBalance) -> Result:
        player = self._player(conn)
        account = await self.accounts.balance(player) or 0
        return Balances(account=account, tables=tuple(self._table_balances(player)))

    def _table_balances(self, player: str, but: str | None = None) -> list[TableBalance]:
        """``player``'s balance at each table where they are seated (except ``but``)."""
        tables = []
        for host in self._seated_hosts(player):
            assert host.state is not None
            index = host.state.seat_of(player)
            seat = host.state.seats[index] if index is not None else None
            if seat is not None and host.table_id != but:
                tables.append(TableBalance(table_id=host.table_id, balance=seat.balance))
        return tables

    async def _rebuy(self, conn: Connection, msg: Rebuy) -> Outcome:
        event = ev.Rebuy(self._player(conn), msg.amount)
        return await self._money_reply(conn, msg, event)

    async def _cash_out(self, conn: Connection, msg: CashOut) -> Outcome:
        event = ev.CashOut(self._player(conn), msg.amount)
        return await self._money_reply(conn, msg, event)

    async def _bet(self, conn: Connection, msg: Bet) -> Outcome:
        event = ev.PlaceBet(self._player(conn), msg.amount, msg.bonus)
        return await self._submit(conn, msg.rid, msg.table_id, event)

    async def _rebet(self, conn: Connection, msg: Rebet) -> Outcome:
        return await self._submit(conn, msg.rid, msg.table_id, ev.Rebet(self._player(conn)))

    async def _clear(self, conn: Connection, msg: Clear) -> Outcome:
        return await self._submit(conn, msg.rid, msg.table_id, ev.ClearBet(self._player(conn)))

    async def _sit_out(self, conn: Connection, msg: SitOut) -> Outcome:
        return await self._submit(conn, msg.rid, msg.table_id, ev.SitOut(self._player(conn)))

    async def _set_hand(self, conn: Connection, msg: SetHand) -> Outcome:
        event = ev.SetHand(self._player(conn), (msg.low[0], msg.low[1]))
        return await self._submit(conn, msg.rid, msg.table_id, event, lambda t: t.reply)

    async def _house_way(self, conn: Connection, msg: HouseWay) -> Outcome:
        host = self._host(msg.table_id)
        player = self._player(conn)
        if msg.mode == "suggest":
            assert host.state is not None
            return suggestion(host.state, player)
        event = ev.UseHouseWay(player)
        return await self._submit(conn, msg.rid, msg.table_id, event, lambda t: t.reply)

    async def _history(self, conn: Connection, msg: GetHistory) -> Result:
        player = self._player(conn)
        cursor: int | None = None
        if msg.cursor is not None:
            try:
                cursor = int(msg.cursor)
            except ValueError:
                raise TableError(ErrorCode.BAD_CURSOR, "unknown history cursor") from None
        if msg.table_id is None:
            page = await self.tables.history(player, cursor, msg.limit)
            blobs = [record for _, record in page.items]
            next_cursor = page.next_cursor
        else:
            blobs, next_cursor = await self._table_history(player, msg.table_id, cursor, msg.limit)
        return unpack_records(blobs, str(next_cursor) if next_cursor is not None else None)

    async def _table_history(
        self, player: str, table_id: str, cursor: int | None, limit: int
    ) -> tuple[list[bytes], int | None]:
        """Up to ``limit`` of ``player``'s records at ``table_id`` older than ``cursor``,
        and the cursor after the last one (None: no more).

        A page filtered after reading could come back empty with more to follow; the
        stored pages are read on instead until the page is full or the log ends (the
        log is capped, so this is bounded).
        """
        found: list[bytes] = []
        while True:
            page = await self.tables.history(player, cursor, L.MAX_HISTORY_PAGE)
            for ordinal, blob in page.items:
                if record_table(blob) == table_id:
                    found.append(blob)
                    if len(found) == limit:
                        return found, ordinal
            if page.next_cursor is None:
                return found, None
            cursor = page.next_cursor

    async def _table_info(self, conn: Connection, msg: GetTableInfo) -> Result:
        host = self.hosts.get(msg.table_id)
        if host is None:
            raise TableError(ErrorCode.NO_SUCH_TABLE, f"there is no table {msg.table_id!r}")
        return table_info(host)

    async def _server_info(self, conn: Connection, msg: GetServerInfo) -> Result:
        return ServerInfo(
            server_name=self.server_name,
            server_version=SERVER_VERSION,
            protocol_version=MAX_SUPPORTED_VERSION,
            protocol_minor=PROTOCOL_MINOR,
            protocol_min=MIN_SUPPORTED_VERSION,
            protocol_max=MAX_SUPPORTED_VERSION,
        )

    async def _submit(
        self,
        conn: Connection,
        rid: str,
        table_id: str,
        event: ev.Event,
        result: Callable[[Transition], Result | None] = lambda t: None,
    ) -> Replied:
        """Apply ``event``; its ``ok`` (with ``result``) is queued before the events it causes."""

        def reply(t: Transition) -> None:
            conn.send_bytes(encode(OkReply(rid=rid, result=result(t))))

        await self._host(table_id).submit(event, reply)
        return REPLIED

    async def _money_reply(self, conn: Connection, msg: MoneyMessage, event: ev.Event) -> Replied:
        """Submit a money move whose reply is ``balance``: the account as the commit
        left it, this table's balance after the change, the others' as they are."""
        player = self._player(conn)
        table_id = msg.table_id

        def memo(t: Transition) -> bytes:
            tables = [(b.table_id, b.balance) for b in self._table_balances(player, table_id)]
            index = t.state.seat_of(player)
            seat = t.state.seats[index] if index is not None else None
            if seat is not None:
                tables.append((table_id, seat.balance))
            return _pack(tables)

        def balances(memo: bytes, account: int) -> Result:
            pairs = _unpack(memo)
            assert isinstance(pairs, list)
            tables = tuple(TableBalance(table_id=t, balance=b) for t, b in pairs)
            return Balances(account=account, tables=tables)

        return await self._money(conn, msg, event, memo, balances)

    async def _money(
        self,
        conn: Connection,
        msg: MoneyMessage,
        event: ev.Event,
        memo: Callable[[Transition], bytes],
        result: Callable[[bytes, int], Result],
    ) -> Replied:
        """Submit a money request, applied at most once per (session, rid): a repeat
        (same session, rid and request) moves nothing and gets the first reply again.

        ``memo(t)``: what ``result`` needs from the change besides the account balance
        the commit left, stored with the request for repeats.
        """

        def answer(memo: bytes, account: int) -> None:
            conn.send_bytes(encode(OkReply(rid=msg.rid, result=result(memo, account))))

        request = MoneyRequest(
            player=self._player(conn),
            session=conn.session_id,
            rid=msg.rid,
            # The request itself, but for its rid: a retry sends the same fields.
            fingerprint=encode(replace(msg, rid="-")),
            memo=memo,
            answer=answer,
        )
        await self._host(msg.table_id).submit(event, request=request)
        return REPLIED

    def _player(self, conn: Connection) -> str:
        assert conn.player_id is not None
        return conn.player_id

    async def _ping(self, conn: Connection, msg: Ping) -> None:
        """Never called: ``ping`` is answered by ``pong`` in :meth:`_one`."""


MoneyMessage = Join | Leave | Rebuy | CashOut


def _pack(value: object) -> bytes:
    """A reply's memo (stored with its request) as bytes."""
    packed: bytes = msgpack.packb(value, use_bin_type=True)
    return packed


def _unpack(memo: bytes) -> Any:
    """The inverse of :func:`_pack`."""
    return msgpack.unpackb(memo, raw=False)


def table_info(host: TableHost) -> TableInfo:
    """A table's rules, options and bonus pay table (RULES.md: available to every client)."""
    c = host.config
    table = bonus_rules.pay_table(c.rules.bonus_pay_table)

    lines = tuple(
        PayLine(
            bonus_class=bonus_rules.BONUS_CLASS_CODES[cls],  # the wire's ids (<= 32 chars)
            label=bonus_rules.BONUS_CLASS_NAMES[cls][: L.MAX_NAME_LEN],
            pays=odds,
        )
        for cls, odds in table.odds.items()
        if odds
    )
    return TableInfo(
        table_id=c.table_id,
        name=c.name[: L.MAX_NAME_LEN],
        seats=c.seats,
        min_bet=c.min_bet,
        max_bet=c.max_bet,
        bet_unit=c.bet_unit,
        denominations=c.denominations,
        max_bonus=c.bonus_max,
        buy_in_min=c.min_buy_in,
        buy_in_max=c.max_buy_in,
        commission_pct=c.rules.commission_pct,
        foul=c.rules.foul.value,
        betting_ms=c.betting_ms,
        setting_ms=c.setting_ms,
        revealing_ms=c.revealing_ms,
        settling_ms=c.settling_ms,
        grace_ms=c.grace_ms,
        paytable=lines,
        rules_version=1,
    )
