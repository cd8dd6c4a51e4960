"""The connection's life: handshake edge cases, text frames, slow consumers, HTTP probes."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import socket
import time

import pytest
import redis.asyncio
from prometheus_client.parser import text_string_to_metric_families
from websockets.protocol import State

from protocol.codec import encode
from protocol.errors import CloseCode
from protocol.messages import (
    Bet,
    Clear,
    ErrorReply,
    GetServerInfo,
    GetTableInfo,
    Hello,
    Join,
    ListTables,
    OkReply,
    Ping,
    Pong,
)
from protocol.structs import ServerInfo, TableList
from server.app import App
from server.auth import tokens
from server.config import Settings
from server.store.accounts import AccountStore
from server.store.keys import DEFAULT_KEYS
from server.tables_file import TablesFileError, parse_tables
from tests.conftest import FAST_TABLES
from tests.server.conftest import StartApp
from tests.server.helpers import Client, close_all, http_get, until, url


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
    # A long heartbeat: the keepalive ping must not be what drops the client.
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
            biggest = max(biggest, conn.queue.qsize())
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
async def test_health_ready_and_metrics(app: App) -> None:
    client = await Client.hello(url(app))
    try:
        await client.ok(Join, table_id="fast", buy_in=500)
        status, body = await asyncio.to_thread(http_get, app.port, "/healthz")
        assert (status, body) == (200, "ok\n")
        status, body = await asyncio.to_thread(http_get, app.port, "/readyz")
        assert (status, body) == (200, "ready\n")
        status, body = await asyncio.to_thread(http_get, app.port, "/metrics")
        assert status == 200
        assert "paigow_connections 1.0" in body
        assert "paigow_tables_hosted 2.0" in body
        assert 'paigow_requests_total{type="Join"} 1.0' in body
        status, _ = await asyncio.to_thread(http_get, app.port, "/nothing-here")
        assert status in (400, 404, 426)
    finally:
        await client.close()


def _block_the_loop(seconds: float) -> None:
    """What a CPU-bound bug does to the server: nothing else runs meanwhile."""
    time.sleep(seconds)


def _buckets(body: str, name: str) -> dict[tuple[tuple[str, str], ...], float]:
    """The bucket counts of histogram ``name`` in a Prometheus text body, by labels."""
    return {
        tuple(sorted(s.labels.items())): s.value
        for family in text_string_to_metric_families(body)
        if family.name == name
        for s in family.samples
        if s.name == name + "_bucket"
    }


@pytest.mark.asyncio
async def test_metrics_show_loop_stalls_and_collector_pauses(app: App) -> None:
    """A blocked event loop and a full collection are both visible on ``/metrics``."""

    def probes() -> float:
        """How many times the loop-lag probe has run."""
        metric = next(iter(app.metrics.loop_lag.collect()))
        return next(s.value for s in metric.samples if s.name.endswith("_count"))

    _, body = await asyncio.to_thread(http_get, app.port, "/metrics")
    before = _buckets(body, "paigow_loop_lag_seconds")
    slow, count = (("le", "0.25"),), (("le", "+Inf"),)
    ran = probes()  # no await from here to the block: the next probe is the late one
    _block_the_loop(0.4)
    await until(lambda: probes() > ran, 5, "the probe to wake up")
    gc.collect()
    _, body = await asyncio.to_thread(http_get, app.port, "/metrics")
    after = _buckets(body, "paigow_loop_lag_seconds")
    # The probe woke up at least 0.4 - 0.1 s late: outside the 0.25 s bucket.
    assert after[count] - after[slow] >= before[count] - before[slow] + 1
    pauses = _buckets(body, "paigow_gc_pause_seconds")
    assert pauses[(("generation", "2"), ("le", "+Inf"))] >= 1


@pytest.mark.asyncio
async def test_not_ready_while_a_table_is_owned_elsewhere(
    app: App, server_settings: Settings
) -> None:
    """``/readyz`` says 503 and names the tables another process still holds."""
    second = App(server_settings)  # same Redis: the tables are the first one's
    starting = asyncio.create_task(second.start())
    client: Client | None = None
    try:
        await until(lambda: second.server is not None, what="the second server to listen")
        status, body = await asyncio.to_thread(http_get, second.port, "/readyz")
        assert status == 503
        assert "fast" in body
        assert "slow" in body
        status, _ = await asyncio.to_thread(http_get, second.port, "/healthz")
        assert status == 200
        # A request for a table hosted elsewhere: unavailable (retryable), nothing else.
        client = await Client.hello(url(second))
        error = await client.error(Join, "unavailable", table_id="fast", buy_in=500)
        assert error.retryable
        # The first process stops and gives its leases up: the second takes over at once.
        await app.stop()
        await asyncio.wait_for(starting, 5)
        status, body = await asyncio.to_thread(http_get, second.port, "/readyz")
        assert (status, body) == (200, "ready\n")
        await client.ok(Join, table_id="fast", buy_in=500)
    finally:
        if client is not None:
            await client.close()
        starting.cancel()
        with contextlib.suppress(BaseException):
            await starting
        await second.stop()


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
async def test_a_silent_client_is_closed_after_two_heartbeats_4004(start_app: StartApp) -> None:
    app = await start_app(heartbeat_ms=1000)
    silent = await Client.hello(url(app), label="silent")
    started = time.monotonic()
    chatty = await Client.hello(url(app), label="chatty")
    try:
        # A client that speaks within each heartbeat stays, past the silent one's end.
        for _ in range(7):
            await asyncio.sleep(0.4)
            assert isinstance(await chatty.call(Ping, time_ms=0), Pong)
        closed = await silent.wait_closed(within=10)
        assert closed.code == CloseCode.HEARTBEAT_TIMEOUT
        assert time.monotonic() - started >= 2.0
        assert chatty.closed is None
    finally:
        await close_all([silent, chatty])


@pytest.mark.asyncio
async def test_the_time_a_request_takes_is_not_silence(start_app: StartApp) -> None:
    """A request held up (here behind the table's lock) keeps the client's next frames
    unread; the client did speak, so it is not closed for silence (PROTOCOL.md §5)."""
    app = await start_app(heartbeat_ms=1000)
    client = await Client.hello(url(app))
    try:
        async with app.hosts["slow"]._lock:  # a commit that takes 3 heartbeats
            rid = client.next_rid()
            await client.ws.send(encode(Bet(rid=rid, table_id="slow", amount=10)))
            for _ in range(7):
                await asyncio.sleep(0.4)
                await client.ws.send(encode(Ping(rid=client.next_rid(), time_ms=0)))
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


@pytest.mark.asyncio
async def test_a_changed_tables_file_applies_between_rounds(
    start_app: StartApp, server_settings: Settings
) -> None:
    secret = server_settings.token_secret
    assert secret is not None
    token = tokens.issue(secret.encode(), "alice", 600, int(time.time()))
    first = await start_app()
    assert first.redis is not None
    await AccountStore(first.redis).credit("alice", 1000, "test-credit")
    other = await Client.hello(url(first))  # seated without a bet: betting stays open
    client = await Client.hello(url(first), token=token)
    try:
        await other.ok(Join, table_id="slow", buy_in=500)
        await client.ok(Join, table_id="slow", buy_in=500)
        await client.ok(Bet, table_id="slow", amount=10)
    finally:
        await close_all([client, other])
    await first.stop()
    slow = 'id = "slow"\nname = "Slow"'
    second = await start_app(tables=FAST_TABLES.replace(slow, slow + "\nmin_bet = 50"))
    host = second.hosts["slow"]
    assert host.state is not None
    # A bet is held: the bet already placed keeps the limits it was placed under.
    assert host.state.config.min_bet == 10
    client = await Client.hello(url(second), token=token)
    try:
        info = await client.ok(GetTableInfo, table_id="slow")
        assert info.min_bet == 50
        await client.ok(Clear, table_id="slow")
        await client.error(Bet, "bet_limits", table_id="slow", amount=10)
        assert host.state.config.min_bet == 50
        await client.ok(Bet, table_id="slow", amount=50)
    finally:
        await client.close()


def test_a_tables_file_with_an_unknown_pay_table_is_refused() -> None:
    with pytest.raises(TablesFileError, match="pay table"):
        parse_tables('[[table]]\nid = "t"\nname = "T"\nbonus_pay_table = "Standard"\n')
