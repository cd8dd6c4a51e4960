"""GatewayConnection: messages queued as they complete, read without a coroutine each,
with websockets' own limits and endings; a real websockets server and client."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable, Coroutine
from contextlib import asynccontextmanager
from typing import Any

import pytest
from websockets.asyncio.client import ClientConnection, connect
from websockets.asyncio.messages import MAX_FRAGMENTS
from websockets.asyncio.server import ServerConnection, serve
from websockets.exceptions import ConnectionClosedError, ConnectionClosedOK
from websockets.frames import CloseCode

from server.gateway.wsconn import GatewayConnection

Handler = Callable[[GatewayConnection], Coroutine[Any, Any, None]]


@asynccontextmanager
async def served(handler: Handler, max_queue: int = 16) -> AsyncIterator[ClientConnection]:
    """A client connected to a server of ``GatewayConnection`` running ``handler``."""

    async def handle(ws: ServerConnection) -> None:
        assert isinstance(ws, GatewayConnection)
        await handler(ws)

    async with serve(
        handle, "127.0.0.1", 0, create_connection=GatewayConnection, max_queue=max_queue
    ) as server:
        port = server.sockets[0].getsockname()[1]
        async with connect(f"ws://127.0.0.1:{port}/") as client:
            yield client


async def read(ws: GatewayConnection) -> bytes | str | None:
    """The next message the gateway's way: from the queue, waiting on its future."""
    message = ws.next_message()
    while message is None and not ws.ended:
        await ws.message_arrived()
        message = ws.next_message()
    return message


@pytest.mark.asyncio
async def test_messages_come_in_order_whole_binary_as_bytes_text_as_str() -> None:
    got: list[bytes | str | None] = []
    done = asyncio.Event()

    async def handler(ws: GatewayConnection) -> None:
        got.extend([await read(ws) for _ in range(4)])
        done.set()
        await ws.wait_closed()

    async with served(handler) as client:
        await client.send(b"\x01\x02")
        await client.send("café")
        await client.send([b"frag", b"men", b"ted"])  # one message, three frames
        await client.send(b"")
        await asyncio.wait_for(done.wait(), 5)
    assert got == [b"\x01\x02", "café", b"fragmented", b""]


@pytest.mark.asyncio
async def test_messages_queued_before_the_close_are_read_then_recv_ends_as_websockets() -> None:
    outcome: list[object] = []
    done = asyncio.Event()

    async def handler(ws: GatewayConnection) -> None:
        await ws.wait_closed()
        outcome.append(await read(ws))
        outcome.append(await read(ws))
        outcome.append(ws.ended)
        try:
            await ws.recv()
        except ConnectionClosedOK as exc:
            outcome.append(exc.rcvd.code if exc.rcvd else None)
        done.set()

    async with served(handler) as client:
        await client.send(b"last")
    await asyncio.wait_for(done.wait(), 5)
    assert outcome == [b"last", None, True, CloseCode.NORMAL_CLOSURE]


@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("send", "code"),
    [
        (lambda c: c.send(b"\xff\xfe", text=True), CloseCode.INVALID_DATA),
        (lambda c: c.send([b"x"] * (MAX_FRAGMENTS + 2)), CloseCode.MESSAGE_TOO_BIG),
    ],
    ids=["invalid utf-8", "too many fragments"],
)
async def test_a_bad_message_closes_as_websockets_does_and_nothing_after_it_is_read(
    send: Callable[[ClientConnection], Coroutine[Any, Any, None]], code: CloseCode
) -> None:
    got: list[bytes | str | None] = []

    async def handler(ws: GatewayConnection) -> None:
        while (message := await read(ws)) is not None:
            got.append(message)

    async with served(handler) as client:
        await client.send(b"before")
        await send(client)
        with contextlib.suppress(ConnectionClosedError):
            await client.send(b"after")  # may go before the close comes back
        with pytest.raises(ConnectionClosedError) as closed:
            await asyncio.wait_for(client.recv(), 5)
    assert closed.value.rcvd is not None
    assert closed.value.rcvd.code == code
    assert got == [b"before"]


@pytest.mark.asyncio
async def test_reading_pauses_past_max_queue_and_resumes_at_a_quarter_of_it() -> None:
    """max_queue 8: past 8 messages the reading pauses; it stays paused while more than
    2 wait, resumes when 2 are left (as websockets' Assembler), and every message comes,
    in order."""
    seen: list[tuple[int, bool]] = []
    queued: list[int] = []
    sent = asyncio.Event()
    done = asyncio.Event()

    async def handler(ws: GatewayConnection) -> None:
        await sent.wait()
        await asyncio.sleep(0.2)  # every frame the socket let through has come in
        queued.append(len(ws._inbox or ()))
        while len(seen) < 40:
            message = await read(ws)
            assert isinstance(message, bytes)
            seen.append((int.from_bytes(message, "big"), ws.transport.is_reading()))
        done.set()
        await ws.wait_closed()

    async with served(handler, max_queue=8) as client:
        for i in range(40):
            await client.send(i.to_bytes(2, "big"))
        sent.set()
        await asyncio.wait_for(done.wait(), 5)
    assert [i for i, _ in seen] == list(range(40))
    assert queued[0] > 8  # past max_queue: paused
    reading = [r for _, r in seen]
    # Paused until the taking that left 2 of them queued (then more may come in, and
    # pause it again).
    assert reading.index(True) == queued[0] - 3


@pytest.mark.asyncio
async def test_a_recv_cancelled_while_it_waits_loses_nothing() -> None:
    """As the hello's time limit does: the wait is cancelled; the message that comes
    next is read by the next recv."""
    got: list[object] = []
    done = asyncio.Event()

    async def handler(ws: GatewayConnection) -> None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(ws.recv(), 0.1)
        got.append("timed out")
        got.append(await asyncio.wait_for(ws.recv(), 5))
        done.set()
        await ws.wait_closed()

    async with served(handler) as client:
        await asyncio.sleep(0.3)
        await client.send(b"hello")
        await asyncio.wait_for(done.wait(), 5)
    assert got == ["timed out", b"hello"]
