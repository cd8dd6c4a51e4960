"""The door over real sockets: per-address limits (connections open, connections before
their hello), each refusal naming its limit while another address is still welcomed;
the real client address from a trusted proxy's header, a forged one ignored; and the
door's counts empty again once the connections are gone."""

from __future__ import annotations

import asyncio
import gc

import pytest

from protocol.errors import CloseCode
from protocol.messages import ErrorReply, Hello
from server.app import App
from server.gateway.address import ClientAddresses
from server.gateway.admission import Door, DoorLimits
from tests.helpers import until, url
from tests.server.conftest import StartApp
from tests.server.helpers import Client, close_all

ONE = ("127.0.0.1", 0)
TWO = ("127.0.0.2", 0)  # all of 127.0.0.0/8 is loopback on Linux: a second address


def door(app: App) -> Door:
    assert app.gateway is not None
    return app.gateway.door


@pytest.mark.asyncio
async def test_one_address_before_hello_is_refused_while_another_is_welcomed(
    start_app: StartApp,
) -> None:
    app = await start_app(handshake_ms=30_000, handshakes_per_address=2)
    silent = [await Client.open(url(app), local_addr=ONE) for _ in range(2)]
    try:
        await until(lambda: door(app).waiting.get("127.0.0.1") == 2)
        refused = await Client.open(url(app), local_addr=ONE)
        silent.append(refused)
        closed = await refused.wait_closed()
        assert closed.code == CloseCode.TRY_AGAIN_LATER
        assert closed.reason == "too many connections from your address before hello"
        # Another address is still welcomed, and so is the first one once its waiting
        # connections have said hello.
        other = await Client.hello(url(app), local_addr=TWO)
        silent.append(other)
        assert other.welcome is not None
        reply = await silent[0].call(
            Hello, min_version=1, max_version=1, client="tests/1", guest=True
        )
        assert not isinstance(reply, ErrorReply)
        # Counted as greeted once its handshake is over, which ends a moment after the
        # reply is sent.
        await until(lambda: door(app).waiting.get("127.0.0.1") == 1)
        again = await Client.hello(url(app), local_addr=ONE)
        silent.append(again)
        assert again.welcome is not None
    finally:
        await close_all(silent)


@pytest.mark.asyncio
async def test_one_address_at_its_connection_limit_is_refused_while_another_is_welcomed(
    start_app: StartApp,
) -> None:
    app = await start_app(connections_per_address=2)
    clients = [await Client.hello(url(app), local_addr=ONE) for _ in range(2)]
    try:
        refused = await Client.open(url(app), local_addr=ONE)
        clients.append(refused)
        closed = await refused.wait_closed()
        assert closed.code == CloseCode.TRY_AGAIN_LATER
        assert closed.reason == "too many connections from your address"
        other = await Client.hello(url(app), local_addr=TWO)
        clients.append(other)
        assert other.welcome is not None
        assert door(app).open == {"127.0.0.1": 2, "127.0.0.2": 1}
        # One leaves: its place is free again.
        await clients[0].close()
        await until(lambda: door(app).open.get("127.0.0.1") == 1)
        back = await Client.hello(url(app), local_addr=ONE)
        clients.append(back)
        assert back.welcome is not None
    finally:
        await close_all(clients)


@pytest.mark.asyncio
async def test_the_house_full_names_its_cause(start_app: StartApp) -> None:
    app = await start_app(max_connections=1)
    first = await Client.hello(url(app), local_addr=ONE)
    second = await Client.open(url(app), local_addr=TWO)
    try:
        closed = await second.wait_closed()
        assert (closed.code, closed.reason) == (CloseCode.TRY_AGAIN_LATER, "server full")
    finally:
        await close_all([first, second])


@pytest.mark.asyncio
async def test_a_trusted_proxys_address_header_counts_and_a_forged_one_does_not(
    start_app: StartApp,
) -> None:
    """127.0.0.1 is the proxy: its header names the client. 127.0.0.2 is a client
    sending the header itself: ignored, its own address counts."""
    header = "X-Forwarded-For"
    app = await start_app(
        trusted_proxies=("127.0.0.1/32",), connections_per_address=1, handshakes_per_address=1
    )
    clients = []
    try:
        via_proxy = await Client.hello(
            url(app), local_addr=ONE, additional_headers={header: "1.2.3.4, 198.51.100.7"}
        )
        clients.append(via_proxy)
        forged = await Client.hello(
            url(app), local_addr=TWO, additional_headers={header: "198.51.100.8"}
        )
        clients.append(forged)
        assert door(app).open == {"198.51.100.7": 1, "127.0.0.2": 1}
        # The same client again through the proxy: at its limit.
        again = await Client.open(
            url(app), local_addr=ONE, additional_headers={header: "198.51.100.7"}
        )
        clients.append(again)
        closed = await again.wait_closed()
        assert closed.reason == "too many connections from your address"
        # The forger naming the proxied client's address is not refused for it.
        other = await Client.open(
            url(app), local_addr=TWO, additional_headers={header: "198.51.100.7"}
        )
        clients.append(other)
        closed = await other.wait_closed()
        assert closed.reason == "too many connections from your address"  # its own: 127.0.0.2
        assert door(app).open == {"198.51.100.7": 1, "127.0.0.2": 1}
    finally:
        await close_all(clients)


@pytest.mark.asyncio
async def test_the_door_is_empty_after_a_wave(start_app: StartApp) -> None:
    """No per-connection structure survives its connection: the door's counts, the
    open connections, the silence watch."""
    app = await start_app(handshake_ms=500)
    welcomed = await asyncio.gather(
        *(Client.hello(url(app), local_addr=(f"127.0.0.{1 + i % 3}", 0)) for i in range(20))
    )
    silent = await asyncio.gather(
        *(Client.open(url(app), local_addr=(f"127.0.0.{1 + i % 3}", 0)) for i in range(20))
    )
    assert app.gateway is not None
    assert door(app).total == 40
    await close_all(welcomed)
    for client in silent:
        closed = await client.wait_closed()
        assert closed.code == CloseCode.HANDSHAKE_TIMEOUT
    await close_all(silent)
    gateway = app.gateway
    await until(lambda: not gateway.connections)
    assert (door(app).total, door(app).open, door(app).waiting) == (0, {}, {})
    assert len(gateway.silence) == 0
    assert not gateway._touches


def test_the_door_counts_and_forgets() -> None:
    counts = Door(DoorLimits(connections=3, per_address=2, waiting_per_address=1))
    assert counts.enter("a") is None
    assert counts.enter("a") is not None  # a second before hello
    counts.greeted("a")
    assert counts.enter("a") is None
    assert counts.enter("a") is not None  # two open
    assert counts.enter(None) is None  # unknown: one address of its own
    assert counts.enter("b") is not None  # the house: three
    counts.left("a", greeted=True)
    counts.left("a", greeted=False)
    counts.left(None, greeted=False)
    assert (counts.total, counts.open, counts.waiting) == (0, {}, {})


@pytest.mark.parametrize(
    ("peer", "values", "expected"),
    [
        ("10.0.0.9", ["1.2.3.4"], "1.2.3.4"),  # from the proxy
        ("192.0.2.1", ["1.2.3.4"], "192.0.2.1"),  # not a proxy: ignored
        ("10.0.0.9", [], "10.0.0.9"),  # the proxy sent none
        ("10.0.0.9", ["6.6.6.6, 1.2.3.4"], "1.2.3.4"),  # the client wrote the first
        ("10.0.0.9", ["6.6.6.6", "1.2.3.4, 10.0.0.8"], "1.2.3.4"),  # two lines, two proxies
        ("10.0.0.9", ["10.0.0.7, 10.0.0.8"], "10.0.0.7"),  # every hop a proxy
        ("10.0.0.9", ["6.6.6.6, garbage"], "10.0.0.9"),  # not an address: the last hop
        ("::ffff:10.0.0.9", ["2001:db8::1"], "2001:db8::1"),  # a dual-stack socket
        (None, ["1.2.3.4"], None),  # a unix socket
    ],
)
def test_the_forwarded_for_address(
    peer: str | None, values: list[str], expected: str | None
) -> None:
    assert ClientAddresses(["10.0.0.0/24"]).of(peer, values) == expected


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        (['for="[2001:db8::1]:4711";proto=https'], "2001:db8::1"),
        (["for=6.6.6.6, for=1.2.3.4:80;by=10.0.0.9"], "1.2.3.4"),
        (["for=unknown"], "10.0.0.9"),
    ],
)
def test_the_forwarded_header(values: list[str], expected: str) -> None:
    assert ClientAddresses(["10.0.0.0/24"], "Forwarded").of("10.0.0.9", values) == expected


def test_nothing_is_trusted_by_default() -> None:
    assert ClientAddresses().of("10.0.0.9", ["1.2.3.4"]) == "10.0.0.9"


UPGRADE = (
    b"GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
    b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
)


async def silent_then_gone(port: int) -> None:
    """A client that never says hello, reads the server's close (4003) and drops the
    TCP connection without answering it: the server's parsing ends on an EOF."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(UPGRADE)
    await reader.readuntil(b"\r\n\r\n")
    await reader.read(64)  # the close frame
    writer.transport.abort()


@pytest.mark.asyncio
async def test_a_closed_connection_leaves_no_cycle_for_the_collector(
    start_app: StartApp,
) -> None:
    """A connection ended by an EOF is freed by its last reference, not left in a
    reference cycle for the hourly full collection (server/collector.py): the
    protocol's parser and the exception that ended it (server/gateway/wsconn.py)."""
    from websockets.server import ServerProtocol

    app = await start_app(handshake_ms=200)
    assert app.gateway is not None
    gc.collect()
    gc.disable()
    try:
        await asyncio.gather(*(silent_then_gone(app.port) for _ in range(10)))
        gateway = app.gateway
        await until(lambda: not gateway.connections)
        await until(lambda: door(app).total == 0)
        gc.set_debug(gc.DEBUG_SAVEALL)
        gc.collect()
        cycled = [o for o in gc.garbage if isinstance(o, ServerProtocol)]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()
    assert cycled == []
