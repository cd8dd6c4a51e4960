"""The :class:`Gateway`: one WebSocket's life, wiring the session, the connection, the
handlers and presence together.

Its first message must be ``hello`` (protocol/PROTOCOL.md, section 5); after that each
frame goes to the session, which says what it is, and each request to its handler,
which is answered by exactly one ``ok`` or ``error`` carrying its ``rid``. Nothing a
client sends can raise out of :meth:`Gateway.handle`: decoding errors, illegal events
and server faults all become error replies, and the table carries on.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import time
from typing import TYPE_CHECKING

from websockets.asyncio.server import ServerConnection
from websockets.exceptions import ConnectionClosed

from protocol.codec import encode
from protocol.errors import CloseCode, ErrorCode
from protocol.messages import ClientMessage, ErrorReply, OkReply
from server.archive import Archive
from server.auth.operator import OperatorIdentity, OperatorTokenError, looks_like_jwt
from server.gateway.address import ClientAddresses
from server.gateway.admission import Door, DoorLimits
from server.gateway.connection import Connection, Flushes, SilenceWatch
from server.gateway.context import REPLIED, Context
from server.gateway.handlers import HANDLERS
from server.gateway.memory import MemoryReport, Trimmer
from server.gateway.options import GatewayOptions
from server.gateway.outage import Outage
from server.gateway.presence import HostSeating, Presence
from server.gateway.session import (
    NO_HELLO,
    REVOKED,
    Close,
    Invalid,
    Refuse,
    Session,
    Throttle,
    error_reply,
    guests_limited,
)
from server.gateway.wsconn import GatewayConnection
from server.host import TableHost, now_ms
from server.logs import bind, log_fields
from server.metrics import Metrics
from server.store import MINUTE_MS, Admission, GuestLimits, Stores, StoreUnavailable
from server.store import Session as StoredSession
from server.table.errors import TableError

if TYPE_CHECKING:  # PyJWT is loaded only with a JWKS configured
    from server.auth.operator_jwt import OperatorTokens

log = logging.getLogger(__name__)

REFUSED_CLOSE_S = 1.0
"""How long a refused connection's client gets to answer the close frame."""


class Gateway:
    """Everything a connection talks to: the hosted tables, accounts, history, metrics.

    ``seating`` is the process's one index of who sits where, which every host keeps.
    """

    def __init__(
        self,
        hosts: dict[str, TableHost],
        stores: Stores,
        metrics: Metrics,
        options: GatewayOptions,
        seating: HostSeating,
        archive: Archive | None = None,
        operator: OperatorTokens | None = None,
    ) -> None:
        self.options = options
        self.operator = operator
        """Checks operator JWTs (None: only this server's own tokens are accepted)."""
        self.metrics = metrics
        self.accounts = accounts = stores.accounts
        self.sessions = stores.sessions
        self.guests = stores.guests
        self.guest_limits = GuestLimits(options.guests_per_minute, options.guests_per_address)
        self.addresses = ClientAddresses(options.trusted_proxies, options.forwarded_header)
        """Which address each connection counts under, for every per-address limit."""
        self.door = Door(
            DoorLimits(
                options.max_connections,
                options.connections_per_address,
                options.handshakes_per_address,
            )
        )
        """The open connections and those before their hello, by address."""
        self.presence = Presence(hosts, seating)
        self.context = Context(self.presence, stores.tables, accounts, options.server_name, archive)
        self._touches: set[asyncio.Task[None]] = set()
        self.silence = SilenceWatch()
        """When each connection's silence is next checked (one timer for all)."""
        self.flushes = Flushes()
        """The connections whose frames go out at the next flush (one callback for all)."""
        self.outage = Outage(stores.ping)
        """Redis outages as the requests meet them: answered `unavailable`, logged once."""
        self._hellos: dict[Connection, str] = {}
        """The rid of each hello being served (its `unavailable` answer carries it)."""
        self.trimmer = Trimmer()
        """Gives the C heap's free memory back after a wave of closes."""
        self.memory_report: MemoryReport | None = None
        with contextlib.suppress(RuntimeError):  # made outside a loop: no report
            self.memory_report = MemoryReport.from_environment(
                asyncio.get_running_loop(), self._sizes
            )

    def _sizes(self) -> dict[str, int]:
        """The gateway's per-connection structures, by name (for the memory report)."""
        return {
            "connections": len(self.presence.connections),
            "door": self.door.total,
            "door_addresses": len(self.door.open),
            "door_waiting": len(self.door.waiting),
            "silence": len(self.silence),
            "touches": len(self._touches),
        }

    @property
    def connections(self) -> set[Connection]:
        """The open connections."""
        return self.presence.connections

    async def stop(self) -> None:
        """Stop the settlings of seats being tried again (once the hosts are stopped)."""
        self.trimmer.stop()
        await self.presence.stop()
        await self.outage.stop()

    async def table_ready(self, host: TableHost) -> None:
        """The hosts' on-ready hook (see :meth:`Presence.table_ready`)."""
        await self.presence.table_ready(host)

    async def handle(self, ws: ServerConnection) -> None:
        """Serve one WebSocket until it closes."""
        # Counted once the connection is lost, whoever closed it and however.
        ws.connection_lost_waiter.add_done_callback(lambda _: self.metrics.count_close(ws.protocol))
        address = self.address_of(ws)
        refused = self.door.enter(address)
        if refused is not None:
            # A refused client that does not answer the close frame is not waited for
            # long: refusals come in floods.
            ws.close_timeout = REFUSED_CLOSE_S
            await ws.close(refused.code, refused.reason)
            return
        greeted = False
        try:
            now = asyncio.get_running_loop().time()
            conn = Connection(
                ws,
                Session(self.options, secrets.token_hex(8), now),
                self.options.queue_size,
                self.silence,
                self.flushes,
            )
            conn.address = address
            self.trimmer.opened(self.door.total)
            self.presence.connections.add(conn)
            self.metrics.connections.inc()
        except BaseException:
            self.door.left(address, greeted=False)
            raise
        try:
            try:
                close = await self._handshake(conn)
            except StoreUnavailable as exc:
                # Redis away: try again later, as the protocol says (not a fault).
                self.outage.failed(exc)
                reply = self.unavailable(self._hellos.get(conn), None)
                close = Close(CloseCode.TRY_AGAIN_LATER, "storage unavailable; retry", reply)
            finally:
                self._hellos.pop(conn, None)
                greeted = True
                self.door.greeted(address)
            if close is None:
                bind(player=conn.player_id)  # the connection's records name its player
                close = await self._serve(conn)
            if close is not None:
                await conn.close(close)
        except ConnectionClosed:
            pass
        finally:
            self.door.left(address, greeted=greeted)
            self.trimmer.closed(self.door.total)
            await conn.stop()
            self.metrics.connections.dec()
            await self.presence.departed(conn)
            if self.context.jackpots is not None:
                self.context.jackpots.unwatch(conn)
            if conn.session.guest and conn.player_id is not None:
                # Idle from now: a guest's activity ends with its last connection.
                with contextlib.suppress(StoreUnavailable):
                    await self.guests.touch(conn.player_id, now_ms())

    def revoked(self, player: str) -> int:
        """Close ``player``'s connections here (4001): an operator ended their sessions
        (protocol/PROTOCOL.md, section 5). How many were closed."""
        closing = [c for c in self.presence.connections if c.player_id == player]
        for conn in closing:
            conn.close_soon(REVOKED)
        return len(closing)

    def _touch(self, player: str) -> None:
        """Record a connected guest's activity, without waiting for it."""

        async def touch() -> None:
            with contextlib.suppress(StoreUnavailable):
                await self.guests.touch(player, now_ms())

        task = asyncio.get_running_loop().create_task(touch())
        self._touches.add(task)
        task.add_done_callback(self._touches.discard)

    async def _handshake(self, conn: Connection) -> Close | None:
        """The hello, who it speaks for, the welcome; the close if it fails."""
        session = conn.session
        loop = asyncio.get_running_loop()
        wait_s = session.hello_wait(loop.time())
        if wait_s <= 0:
            return NO_HELLO  # as strict as the handshake's time, whatever is queued
        try:
            async with asyncio.timeout(wait_s):
                frame = await conn.ws.recv()
        except TimeoutError:
            return NO_HELLO
        greeting = session.receive_hello(frame)
        if isinstance(greeting, Close):
            return greeting
        hello = greeting.hello
        self._hellos[conn] = hello.rid
        # A login token is tried as whichever kind it is: an operator's JWT (three parts)
        # where a JWKS is configured, else this server's own.
        verified: OperatorIdentity | OperatorTokenError | None = None
        if hello.token is not None and self.operator is not None and looks_like_jwt(hello.token):
            try:
                verified = await self.operator.verify(hello.token)
            except OperatorTokenError as exc:
                log.info("operator token refused: %s", exc)
                verified = exc
        wall = now_ms()
        credentials = session.credentials(hello, wall // 1000, verified)
        if isinstance(credentials, Close):
            return credentials
        stored = revoked = None
        if credentials.resume is not None:
            stored = await self.sessions.load(credentials.resume)
            if stored is not None:
                revoked = await self.sessions.revoked_at(stored.player)
        guest_id = "g-" + secrets.token_hex(6)
        identity = session.identify(hello, credentials, stored, guest_id, wall, revoked)
        if isinstance(identity, Close):
            return identity
        if identity.new_guest:
            admission = await self.guests.admit(
                identity.player, conn.address, self.guest_limits, wall
            )
            if admission is not Admission.OK:
                self.metrics.errors.labels(ErrorCode.GUESTS_LIMITED.value).inc()
                return guests_limited(hello, admission.value, MINUTE_MS - wall % MINUTE_MS)
            await self.accounts.ensure_guest(identity.player, self.options.guest_balance, wall)
        elif identity.guest:
            await self.guests.touch(identity.player, wall)
        if identity.resumed:
            # A second connection resuming a session closes the first (protocol/PROTOCOL.md,
            # section 5).
            self.presence.resumed_here(conn)
        await self.sessions.save(
            StoredSession(
                identity.session_id,
                identity.player,
                identity.name,
                identity.guest,
                expires_ms=identity.expires_ms,
                opened_ms=identity.opened_ms,
            )
        )
        conn.player_id = identity.player
        welcome = session.welcome(greeting, identity, now_ms(), loop.time())
        conn.send_bytes(encode(welcome))
        # A resumed session picks up its tables where it left them.
        await self.presence.arrived(conn, hello.last_seq if identity.resumed else ())
        return None

    def address_of(self, ws: ServerConnection) -> str | None:
        """The client's real address: from a trusted proxy, the one its header gives
        (server/gateway/address.py), else the connection's own (None on a unix socket)."""
        remote = ws.remote_address
        peer = str(remote[0]) if isinstance(remote, tuple) and remote else None
        request = ws.request
        if request is None or not self.addresses.trusted:
            return peer
        return self.addresses.of(peer, request.headers.get_all(self.addresses.header))

    async def _serve(self, conn: Connection) -> Close | None:
        """Answer requests until the connection closes; the close the session decides."""
        loop = asyncio.get_running_loop()
        session = conn.session
        # Closed after two heartbeat intervals without a frame (protocol/PROTOCOL.md, section 5).
        conn.watch_silence()
        ws = conn.ws
        queued = ws if isinstance(ws, GatewayConnection) else None
        try:
            while True:
                frame: bytes | str | None = None
                if queued is not None:
                    # The next message from the connection's queue, with no coroutine
                    # a message (server/gateway/wsconn.py).
                    while (frame := queued.next_message()) is None and not queued.ended:
                        await queued.message_arrived()
                if frame is None:
                    # A plain websockets connection, or closed: raises as websockets does.
                    frame = await ws.recv()
                started = time.perf_counter()
                now = loop.time()
                if session.touch_due(now):
                    self._touch(conn.player)
                received = session.receive(frame, now)
                if received is None:
                    return None  # closing from outside: the close is under way
                if not isinstance(received, (Refuse, Invalid, Throttle, Close)):
                    try:
                        await self._handle(conn, received, started)
                    finally:
                        session.handled(loop.time())
                elif isinstance(received, Throttle):
                    conn.send_bytes(encode(received.reply))
                elif isinstance(received, Invalid):
                    self.metrics.errors.labels(received.reply.code).inc()
                    conn.send_bytes(encode(received.reply))
                    if received.then is not None:
                        return received.then
                elif isinstance(received, Refuse):
                    counted, timed = self.metrics.for_request(type(received.message).__name__)
                    counted.inc()
                    self.metrics.errors.labels(received.reply.code).inc()
                    conn.send_bytes(encode(received.reply))
                    timed.observe(time.perf_counter() - started)
                else:
                    return received
        finally:
            conn.unwatch_silence()

    async def _handle(self, conn: Connection, message: ClientMessage, started: float) -> None:
        """Hand ``message`` to its handler (or to the node holding its table) and send
        its one reply."""
        kind = type(message).__name__
        counted, timed = self.metrics.for_request(kind)
        counted.inc()
        table_id = getattr(message, "table_id", None)
        try:
            with log_fields(
                request=kind, rid=message.rid, **({"table": table_id} if table_id else {})
            ):
                await self.answer(conn, message)
        finally:
            timed.observe(time.perf_counter() - started)

    async def answer(self, conn: Connection, message: ClientMessage, *, here: bool = False) -> None:
        """Answer ``message`` from ``conn``: its one ``ok`` or ``error`` goes to
        ``conn.send_bytes``. ``here``: by this process's own handlers (a request
        another node sent to the holder of its table), never sent on."""
        table_id = getattr(message, "table_id", None)
        remote = self.presence.remote
        try:
            if here or remote is None or not await remote.route(conn, message):
                result = await HANDLERS[type(message)](self.context, conn, message)
                if result is not REPLIED:
                    conn.send_bytes(encode(OkReply(rid=message.rid, result=result)))
        except TableError as exc:
            self.metrics.errors.labels(exc.code.value).inc()
            conn.send_bytes(encode(error_reply(exc.code, exc.message, message.rid, table_id)))
        except StoreUnavailable as exc:
            # Redis is away: no fault of the server's, and retrying is safe (a money
            # request is applied at most once). Logged once an outage, not a request.
            self.outage.failed(exc)
            conn.send_bytes(encode(self.unavailable(message.rid, table_id)))
        except Exception:
            log.exception("request %s failed", type(message).__name__)
            self.metrics.errors.labels(ErrorCode.INTERNAL.value).inc()
            reply = error_reply(
                ErrorCode.INTERNAL, "server fault; try again", message.rid, table_id
            )
            conn.send_bytes(encode(reply))

    def unavailable(self, rid: str | None, table_id: str | None) -> ErrorReply:
        """The ``unavailable`` error of a request that Redis failed (counted)."""
        self.metrics.errors.labels(ErrorCode.UNAVAILABLE.value).inc()
        return error_reply(
            ErrorCode.UNAVAILABLE, "storage briefly unavailable; retry", rid, table_id
        )
