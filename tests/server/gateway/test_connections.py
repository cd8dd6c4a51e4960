"""The connection's life over real sockets: handshake edge cases, text frames, slow
consumers, resumed sessions, silence, the connection limit."""

from __future__ import annotations

import asyncio
import contextlib
import importlib.metadata
import socket
import time
from typing import Any

import pytest
import redis.asyncio
from websockets.exceptions import ConnectionClosed
from websockets.frames import Frame, Opcode
from websockets.protocol import State

from protocol.codec import encode
from protocol.errors import CloseCode
from protocol.messages import (
    Bet,
    ErrorReply,
    GetServerInfo,
    GetTableInfo,
    Hello,
    ListTables,
    OkReply,
    Ping,
    Pong,
)
from protocol.structs import ServerInfo, TableList
from server.app import App
from server.gateway.connection import Connection
from server.store.keys import DEFAULT_KEYS
from tests.helpers import until, url
from tests.server.conftest import StartApp
from tests.server.helpers import Client, Closed, close_all


def hello(rid: str = "h", **fields: object) -> bytes:
    base: dict[str, object] = {"min_version": 1, "max_version": 1, "client": "t", "guest": True}
    return encode(Hello(rid=rid, **{**base, **fields}))  # type: ignore[arg-type]


@pytest.mark.asyncio
async def test_no_hello_in_time_closes_4003(start_app: StartApp) -> None:
    app = await start_app(handshake_ms=300)
    client = await Client.open(url(app))
    try:
        closed = await client.wait_closed(5)
        assert closed.code == CloseCode.HANDSHAKE_TIMEOUT
        assert client.messages == []
    finally:
        await client.close()


@pytest.mark.asyncio
async def test_first_message_must_be_hello(app: App) -> None:
    client = await Client.open(url(app))
    try:
        await client.send(encode(Ping(rid="p1")))
        closed = await client.wait_closed()
        assert closed.code == CloseCode.HELLO_REQUIRED
        [reply] = client.messages
        assert isinstance(reply, ErrorReply)
        assert (reply.code, reply.rid) == ("hello_required", "p1")
    finally:
        await client.close()


@pytest.mark.asyncio
async def test_malformed_first_frame_closes_4000(app: App) -> None:
    client = await Client.open(url(app))
    try:
        await client.send(b"\xc1not msgpack")
        closed = await client.wait_closed()
        assert closed.code == CloseCode.HELLO_REQUIRED
        [reply] = client.messages
        assert isinstance(reply, ErrorReply)
        assert reply.code == "malformed"
    finally:
        await client.close()


@pytest.mark.asyncio
async def test_version_mismatch_closes_4002(app: App) -> None:
    client = await Client.open(url(app))
    try:
        await client.send(hello(min_version=2, max_version=9))
        closed = await client.wait_closed()
        assert closed.code == CloseCode.VERSION_UNSUPPORTED
        [reply] = client.messages
        assert isinstance(reply, ErrorReply)
        assert (reply.code, reply.rid) == ("version_unsupported", "h")
    finally:
        await client.close()


@pytest.mark.asyncio
async def test_version_negotiated_from_a_range(app: App) -> None:
    client = await Client.open(url(app))
    try:
        await client.send(hello(min_version=1, max_version=7))
        reply = await client.wait(lambda: client.replies.get("h"))
        assert isinstance(reply[0], OkReply)
        info = await client.ok(GetServerInfo)
        assert isinstance(info, ServerInfo)
        assert info.protocol_version == 1
        assert info.server_version == importlib.metadata.version("paigow-server")
    finally:
        await client.close()


@pytest.mark.asyncio
@pytest.mark.parametrize("after_hello", [False, True])
async def test_text_frame_closes_1003(app: App, after_hello: bool) -> None:
    client = await Client.open(url(app))
    try:
        if after_hello:
            await client.send(hello())
            await client.wait(lambda: client.replies.get("h"))
        await client.send('{"type": "ping", "rid": "1"}')
        closed = await client.wait_closed()
        assert closed.code == CloseCode.UNSUPPORTED_DATA
    finally:
        await client.close()


@pytest.mark.asyncio
async def test_hello_twice_is_an_error_and_the_session_carries_on(app: App) -> None:
    client = await Client.hello(url(app))
    try:
        await client.error(
            Hello, "hello_required", min_version=1, max_version=1, client="t", guest=True
        )
        pong = await client.call(Ping, time_ms=5)
        assert isinstance(pong, Pong)
        assert pong.time_ms == 5
    finally:
        await client.close()


@pytest.mark.asyncio
async def test_guests_refused_where_not_allowed(start_app: StartApp) -> None:
    app = await start_app(guests=False)
    client = await Client.open(url(app))
    try:
        await client.send(hello())
        closed = await client.wait_closed()
        assert closed.code == CloseCode.UNAUTHORIZED
        [reply] = client.messages
        assert isinstance(reply, ErrorReply)
        assert reply.code == "unauthorized"
    finally:
        await client.close()


@pytest.mark.asyncio
async def test_slow_consumer_is_dropped(start_app: StartApp) -> None:
    """A client that stops reading is closed with 1013 once its bounded queue is full."""
    queue = 16
    # A long heartbeat: silence must not be what drops the client.
    app = await start_app(send_queue=queue, rate_per_s=100_000, heartbeat_ms=60_000)
    assert app.gateway is not None
    # A small receive buffer and a one-message client queue: the client stops reading
    # the socket almost at once when the test does not consume.
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect(("127.0.0.1", app.port))
    slow = await Client.open(url(app), label="slow", sock=sock, max_queue=1)
    healthy = await Client.hello(url(app), label="ok")
    try:
        slow._reader.cancel()  # the test stops reading for this client
        await slow.ws.send(hello())
        conn = await until(
            lambda: next(
                (
                    c
                    for c in app.gateway.connections
                    if c.player_id
                    and c.ws.remote_address
                    and c.ws.remote_address[1] == sock.getsockname()[1]
                ),
                None,
            ),
            what="the slow connection's session",
        )
        biggest = 0
        frame = encode(GetTableInfo(rid="x", table_id="fast"))
        for _ in range(20_000):
            if conn.session.closing is not None:
                break
            try:
                await asyncio.wait_for(slow.ws.send(frame), 2)
            except Exception:
                break
            # A send that needs no drain does not suspend (and since Python 3.12 neither
            # does wait_for): yield, so that the server reads and answers meanwhile.
            await asyncio.sleep(0)
            biggest = max(biggest, conn.queued)
        assert conn.session.closing is not None, "the queue never filled"
        assert conn.session.closing.code == CloseCode.TRY_AGAIN_LATER
        assert biggest <= queue
        # The server lets the connection go within a bounded time.
        await until(
            lambda: conn.ws.state is State.CLOSED and conn not in app.gateway.connections,
            5,
            "the slow client's drop",
        )
        # The rest of the server is unaffected.
        tables = await healthy.ok(ListTables)
        assert isinstance(tables, TableList)
    finally:
        await close_all([slow, healthy])
        sock.close()


@pytest.mark.asyncio
async def test_resuming_a_session_closes_its_first_connection_4005(app: App) -> None:
    first = await Client.hello(url(app), label="first", name="Ann")
    try:
        assert first.welcome is not None
        second = await Client.hello(
            url(app), label="second", resume_token=first.welcome.resume_token
        )
        try:
            assert second.welcome is not None
            assert second.welcome.resumed
            assert second.player == first.player
            assert second.welcome.session_id == first.welcome.session_id
            assert second.welcome.name == "Ann"
            closed = await first.wait_closed()
            assert closed.code == CloseCode.SESSION_REPLACED
        finally:
            await second.close()
    finally:
        await first.close()


@pytest.mark.asyncio
async def test_an_expired_session_is_not_resumed(
    app: App, redis_client: redis.asyncio.Redis
) -> None:
    first = await Client.hello(url(app), label="first")
    try:
        assert first.welcome is not None
        await redis_client.delete(DEFAULT_KEYS.session(first.welcome.session_id))
        second = await Client.hello(
            url(app), label="second", resume_token=first.welcome.resume_token
        )
        try:
            assert second.welcome is not None
            assert not second.welcome.resumed
            assert second.player != first.player  # a guest's identity went with the session
        finally:
            await second.close()
    finally:
        await first.close()


def connection_of(app: App, client: Client) -> Connection:
    """The server's side of ``client`` (an in-process server)."""
    assert app.gateway is not None
    return next(c for c in app.gateway.connections if c.player_id == client.player)


@pytest.mark.asyncio
async def test_a_silent_client_is_closed_after_two_heartbeats_4004(start_app: StartApp) -> None:
    app = await start_app(heartbeat_ms=1000)
    silent = await Client.hello(url(app), label="silent")
    started = time.monotonic()
    chatty = await Client.hello(url(app), label="chatty")
    session = connection_of(app, chatty).session
    loop = asyncio.get_running_loop()
    since = loop.time()
    try:

        async def chatting() -> Closed | None:
            """Speak within each heartbeat, until the silent one is closed and the chatty
            one has been connected past its own two heartbeats (the server's clock)."""
            assert isinstance(await chatty.call(Ping, time_ms=0), Pong)
            if loop.time() < since + session.silence_s + 0.5:
                return None
            return silent.closed

        closed = await until(chatting, 10, "the silent client's close", every=0.3)
        assert closed.code == CloseCode.HEARTBEAT_TIMEOUT
        assert time.monotonic() - started >= 2.0
        assert chatty.closed is None
    finally:
        await close_all([silent, chatty])


@pytest.mark.asyncio
async def test_one_timer_closes_every_silent_client_and_forgets_the_gone(
    start_app: StartApp,
) -> None:
    """The gateway's one silence timer (``SilenceWatch``) closes each silent client
    after two heartbeats (4004), keeps the ones that speak, and no longer watches the
    connections that went."""
    app = await start_app(heartbeat_ms=1000)
    assert app.gateway is not None
    watch = app.gateway.silence
    silent = [await Client.hello(url(app), label=f"silent{i}") for i in range(6)]
    chatty = [await Client.hello(url(app), label=f"chatty{i}") for i in range(6)]
    gone = [await Client.hello(url(app), label=f"gone{i}") for i in range(6)]
    loop = asyncio.get_running_loop()
    since = loop.time()
    try:
        await close_all(gone)
        await until(lambda: len(watch) == 12, 5, "the gone ones forgotten")

        async def chatting() -> bool | None:
            for client in chatty:
                assert isinstance(await client.call(Ping, time_ms=0), Pong)
            if loop.time() < since + 2.5:  # past two heartbeats (2 s) for every one
                return None
            return all(c.closed is not None for c in silent) or None

        await until(chatting, 10, "the silent clients' closes", every=0.3)
        assert {c.closed.code for c in silent if c.closed} == {CloseCode.HEARTBEAT_TIMEOUT}
        assert all(c.closed is None for c in chatty)
        await until(lambda: len(watch) == 6, 5, "only the chatty ones watched")
    finally:
        await close_all([*silent, *chatty])


@pytest.mark.asyncio
async def test_the_heartbeat_alone_keeps_a_connection_and_no_websocket_ping_comes(
    start_app: StartApp,
) -> None:
    """The server sends no WebSocket pings (protocol/PROTOCOL.md, section 5): over three
    heartbeat intervals a client that sends protocol pings and answers no WebSocket
    ping receives none, and stays connected; its own WebSocket ping is answered, yet
    does not count as speaking."""
    app = await start_app(heartbeat_ms=1000)
    client = await Client.hello(url(app), label="deaf", ping_interval=None)
    protocol = client.ws.protocol
    pings: list[Frame] = []
    receive, send = protocol.recv_frame, protocol.send_frame

    def count_pings(frame: Frame) -> None:
        if frame.opcode is Opcode.PING:
            pings.append(frame)
        receive(frame)

    def no_pongs(frame: Frame) -> None:  # a WebSocket library that never answers
        if frame.opcode is not Opcode.PONG:
            send(frame)

    protocol.recv_frame = count_pings  # type: ignore[method-assign]
    protocol.send_frame = no_pongs  # type: ignore[method-assign]
    quiet = await Client.hello(url(app), label="quiet", ping_interval=None)
    answered = 0

    async def websocket_pings() -> None:
        # A WebSocket ping is answered, but is not the protocol's heartbeat.
        nonlocal answered
        with contextlib.suppress(ConnectionClosed):
            while True:
                await asyncio.wait_for(await quiet.ws.ping(), 2)
                answered += 1
                await asyncio.sleep(0.3)

    pinging = asyncio.create_task(websocket_pings())
    try:
        started = time.monotonic()
        while time.monotonic() - started < 3.0:
            assert isinstance(await client.call(Ping, time_ms=0), Pong)
            await asyncio.sleep(0.3)
        assert pings == []
        assert client.closed is None
        closed = await quiet.wait_closed(3)
        assert closed.code == CloseCode.HEARTBEAT_TIMEOUT
        assert answered >= 3
    finally:
        pinging.cancel()
        await close_all([client, quiet])


@pytest.mark.asyncio
async def test_the_time_a_request_takes_is_not_silence(start_app: StartApp) -> None:
    """A request held up (here behind the table's lock) keeps the client's next frames
    unread; the client did speak, so it is not closed for silence (protocol/PROTOCOL.md,
    section 5)."""
    app = await start_app(heartbeat_ms=1000)
    client = await Client.hello(url(app))
    session = connection_of(app, client).session
    loop = asyncio.get_running_loop()
    try:
        async with app.hosts["slow"].lock:  # a commit that takes 3 heartbeats
            rid = client.next_rid()
            await client.ws.send(encode(Bet(rid=rid, table_id="slow", amount=10)))
            await until(lambda: session.busy, what="the bet to be handled")
            await client.ws.send(encode(Ping(rid=client.next_rid(), time_ms=0)))  # unread
            await until(
                lambda: loop.time() > session.heard_at + session.silence_s + 1,
                what="the bet held past two heartbeats and one more",
            )
            assert client.closed is None
        assert await client.wait(lambda: client.replies.get(rid))
        assert isinstance(await client.call(Ping, time_ms=0), Pong)
        assert client.closed is None
    finally:
        await client.close()


@pytest.mark.asyncio
async def test_past_max_connections_a_client_is_told_to_try_later(start_app: StartApp) -> None:
    app = await start_app(max_connections=1)
    first = await Client.hello(url(app))
    second = await Client.open(url(app))
    try:
        closed = await second.wait_closed()
        assert closed.code == CloseCode.TRY_AGAIN_LATER
    finally:
        await close_all([first, second])


class _Counted:
    """A transport that counts its writes into ``writes[index]``."""

    def __init__(self, transport: Any, writes: list[int], index: int) -> None:
        self._transport, self._writes, self._index = transport, writes, index

    def write(self, data: bytes) -> None:
        self._writes[self._index] += 1
        self._transport.write(data)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)


@pytest.mark.asyncio
async def test_an_event_framed_once_reaches_every_connection_whole() -> None:
    """The direct path frames a payload once and writes the frame to each connection:
    every client decodes every payload, at each of the frame header's length forms
    (7 bits, 16 bits, 64 bits) and at their edges, in order, on every connection; the
    frames a connection is sent at once go in one write."""
    from websockets.asyncio.client import connect
    from websockets.asyncio.server import ServerConnection, serve

    from server.config import Settings
    from server.gateway.options import gateway_options
    from server.gateway.session import Session

    options = gateway_options(Settings(), b"s" * 32)
    sizes = [0, 1, 125, 126, 127, 65_535, 65_536, 70_000]
    payloads = [bytes([n % 251]) * n for n in sizes]
    payloads += [b"\x01" * 90, b"\x02" * 90]  # as long as each other, one after the other
    opened: list[Connection] = []
    done = asyncio.Event()
    framed_by_websockets: list[bytes] = []

    async def handler(ws: ServerConnection) -> None:
        conn = Connection(ws, Session(options, "x", 0.0), 8)
        send_binary = ws.protocol.send_binary

        def counted(data: bytes, fin: bool = True) -> None:
            framed_by_websockets.append(data)
            send_binary(data, fin)

        ws.protocol.send_binary = counted  # type: ignore[method-assign,assignment]
        opened.append(conn)
        await done.wait()

    async with serve(handler, "127.0.0.1", 0, compression=None, max_size=None) as server:
        port = server.sockets[0].getsockname()[1]
        clients = [
            await connect(f"ws://127.0.0.1:{port}", compression=None, max_size=None)
            for _ in range(3)
        ]
        await until(lambda: len(opened) == 3)
        received: list[list[bytes]] = [[] for _ in clients]
        for payload in payloads:
            for conn in opened:  # the same bytes object to each, as a table's fan-out
                conn.send_bytes(payload)
            # Read before the next one: no socket buffer fills (which would queue).
            for client, got in zip(clients, received, strict=True):
                got.append(await asyncio.wait_for(client.recv(), 5))  # type: ignore[arg-type]
        assert received == [payloads] * len(clients)
        # The frames sent to a connection before the loop runs again (a commit's reply
        # and events) go out in one write each, whole and in order.
        writes = [0 for _ in opened]
        for i, conn in enumerate(opened):
            conn.ws.transport = _Counted(conn.ws.transport, writes, i)  # type: ignore[assignment]
        burst = [payloads[1], b"\x03" * 300, payloads[0], payloads[3], b"\x04" * 5]
        for payload in burst:
            for conn in opened:
                conn.send_bytes(payload)
        for client in clients:
            got = [await asyncio.wait_for(client.recv(decode=False), 5) for _ in burst]
            assert got == burst
        assert writes == [1] * len(opened)
        assert all(c.ws.protocol.state is State.OPEN for c in opened)
        # Every frame went the direct way: none framed by websockets, none queued.
        assert framed_by_websockets == []
        assert all(c.queued == 0 and c.backlog == 0 for c in opened)
        # What one turn sends past DIRECT_WRITE_LIMIT waits in the queue, as frames
        # written one by one would: the bound on what a slow reader may hold stands.
        big = [bytes([n]) * 40_000 for n in (5, 6, 7)]
        for payload in big:
            for conn in opened:
                conn.send_bytes(payload)
        await asyncio.sleep(0)  # the flush: two written, the third queued
        assert all(c.backlog == 1 for c in opened)
        for client in clients:
            got = [await asyncio.wait_for(client.recv(decode=False), 5) for _ in big]
            assert got == big
        assert framed_by_websockets == [big[2]] * len(opened)  # the writer task's
        await until(lambda: all(c.backlog == 0 for c in opened))
        done.set()
        for client in clients:
            await client.close()


@pytest.mark.asyncio
async def test_one_callback_flushes_every_connection_and_a_fault_in_one_holds_back_no_other(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The connections of a gateway share their flush: a table's event sent to each of
    them in one turn is written by one callback of the loop; and if writing to one of
    them fails, the others still get their frames, then and after."""
    from websockets.asyncio.client import connect
    from websockets.asyncio.server import ServerConnection, serve

    from server.config import Settings
    from server.gateway.connection import Flushes
    from server.gateway.options import gateway_options
    from server.gateway.session import Session

    options = gateway_options(Settings(), b"s" * 32)
    flushes = Flushes()
    opened: list[Connection] = []
    done = asyncio.Event()

    async def handler(ws: ServerConnection) -> None:
        opened.append(Connection(ws, Session(options, "x", 0.0), 8, flushes=flushes))
        await done.wait()

    async with serve(handler, "127.0.0.1", 0, compression=None) as server:
        port = server.sockets[0].getsockname()[1]
        clients = [await connect(f"ws://127.0.0.1:{port}", compression=None) for _ in range(3)]
        await until(lambda: len(opened) == 3)
        loop = asyncio.get_running_loop()
        callbacks: list[object] = []
        call_soon = loop.call_soon

        def counted(callback: Any, *args: Any, **kwargs: Any) -> asyncio.Handle:
            callbacks.append(callback)
            return call_soon(callback, *args, **kwargs)

        monkeypatch.setattr(loop, "call_soon", counted)
        for conn in opened:
            conn.send_bytes(b"event")
        monkeypatch.setattr(loop, "call_soon", call_soon)
        assert len(callbacks) == 1
        for client in clients:
            assert await asyncio.wait_for(client.recv(), 5) == b"event"
        broken = opened[0]
        write_now = Connection._write_now

        def failing(self: Connection, frames: list[bytes]) -> int:
            if self is broken:
                raise RuntimeError("a fault")
            return write_now(self, frames)

        monkeypatch.setattr(Connection, "_write_now", failing)
        for round_, order in ((b"one", opened[::-1]), (b"two", opened)):
            for conn in order:  # the broken one last, then first
                conn.send_bytes(round_)
            for client in clients[1:]:
                assert await asyncio.wait_for(client.recv(), 5) == round_
        done.set()
        for client in clients:
            await client.close()
