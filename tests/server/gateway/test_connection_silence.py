"""A connection's silence over real sockets: two heartbeats without a frame close it
(4004), one timer watches every connection, the heartbeat alone keeps one, and the time
a request takes is not silence."""

from __future__ import annotations

import asyncio
import contextlib
import time

import pytest
from websockets.exceptions import ConnectionClosed
from websockets.frames import Frame, Opcode

from protocol.codec import encode
from protocol.errors import CloseCode
from protocol.messages import Bet, Ping, Pong
from server.app import App
from server.gateway.connection import Connection
from tests.helpers import until, url
from tests.server.conftest import StartApp
from tests.server.helpers import Client, Closed, close_all


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
