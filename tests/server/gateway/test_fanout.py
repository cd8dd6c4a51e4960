"""Events to many connections over real sockets: a payload framed once reaches each whole,
and one callback flushes every connection, a fault in one holding back no other."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from websockets.protocol import State

from server.gateway.connection import Connection
from tests.helpers import until


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
