"""The connection's life over real sockets: handshake edge cases, text frames, slow
consumers, resumed sessions, the connection limit (silence: test_connection_silence.py;
events to many: test_fanout.py)."""

from __future__ import annotations

import asyncio
import importlib.metadata
import socket

import pytest
import redis.asyncio
from websockets.protocol import State

from protocol.codec import encode
from protocol.errors import CloseCode
from protocol.messages import (
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
from server.store.keys import DEFAULT_KEYS
from tests.helpers import until, url
from tests.server.conftest import StartApp
from tests.server.helpers import Client, close_all


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
