"""The client core against a real server: a round, a resume mid-round, history, verify."""

from __future__ import annotations

import asyncio
import importlib.metadata
import re
from dataclasses import replace

import pytest

from clients import handrank
from clients.core import Client, ServerError, plain_error
from clients.model import TableModel, verify_record
from protocol.codec import encode
from protocol.messages import ErrorReply, PhaseChange, Snapshot
from server.app import App
from server.config import Settings
from tests.helpers import until, url
from tests.server.processes import http_get


@pytest.mark.asyncio
async def test_join_bet_set_settle_verify_history(app: App) -> None:
    async with Client(url(app), name="Ann") as client:
        joined = await client.join("fast", 500)
        model = client.tables["fast"]
        assert model.your_seat == joined.seat
        await client.bet("fast", 50, bonus=5)
        await client.wait_until(lambda: model.phase == "setting" and bool(model.your_cards), 10)
        cards, round_no = model.your_cards, model.round
        low = handrank.legal_lows(cards)[0]
        choice = await client.set_hand("fast", low)
        assert choice.applied
        assert set(choice.low) == set(low)
        expected = handrank.preview(model.your_cards, low)
        assert (choice.high_name, choice.low_name) == expected[:2]
        await client.wait_until(lambda: model.verification is not None, 10)
        result = model.my_result
        assert result is not None
        assert result.bet == 50
        assert result.bonus_bet == 5
        assert model.verification is not None
        assert model.verification.ok
        assert model.verification.hands_checked >= 3  # our deal, our split, the dealer's
        seat = model.my_seat
        assert seat is not None
        assert seat.balance == result.balance
        page = await client.history()
        record = page.rounds[0]
        assert record.round == round_no
        assert record.cards == cards
        assert verify_record(record).ok
        left = await client.leave("fast")
        assert left.account == 10_000 - 500 + result.balance


@pytest.mark.asyncio
async def test_reconnect_mid_round_resumes_the_round(app: App) -> None:
    async with Client(url(app), backoff_s=0.05) as client:
        await client.join("fast", 500)
        model = client.tables["fast"]
        await client.bet("fast", 20)
        await client.wait_until(lambda: model.phase == "setting" and bool(model.your_cards), 10)
        cards, round_no, player = model.your_cards, model.round, client.player_id
        client.drop_connection()
        await client.wait_until(lambda: client.reconnects == 1 and client.connected, 5)
        assert client.welcome is not None
        assert client.welcome.resumed
        assert client.player_id == player
        # The round goes on where it was: same cards, and the hand can still be set.
        assert model.round == round_no
        assert model.your_cards == cards
        choice = await client.house_way("fast", apply=True)
        assert choice.applied
        assert choice.round == round_no
        await client.wait_until(lambda: model.verification is not None, 10)
        assert model.my_result is not None
        assert model.verification is not None
        assert model.verification.ok
        assert model.house_way.get(model.your_seat or 0) is True


@pytest.mark.asyncio
async def test_a_seq_gap_resyncs_with_a_snapshot(app: App) -> None:
    async with Client(url(app)) as client:
        model = await client.watch("slow")
        seq = model.seq
        bogus = PhaseChange(table_id="slow", seq=seq + 5, round=99, phase="setting")
        client.feed(encode(bogus))
        assert model.resyncing
        await client.wait_until(lambda: not model.resyncing, 5)
        assert model.seq == seq
        assert model.round != 99
        assert model.phase == "idle"


@pytest.mark.asyncio
async def test_errors_are_plain_and_the_lobby_reads(app: App) -> None:
    async with Client(url(app)) as client:
        tables = await client.list_tables()
        assert {t.table_id for t in tables} == {"fast", "slow"}
        info = await client.table_info("fast")
        assert info.denominations == (5, 10, 25)
        assert info.paytable
        server = await client.server_info()
        assert server.protocol_min <= 1 <= server.protocol_max
        await client.join("slow", 100)
        with pytest.raises(ServerError) as caught:
            await client.bet("slow", 500)
        assert caught.value.code == "insufficient_balance"
        assert "lower the bet or rebuy" in str(caught.value)
        with pytest.raises(ServerError) as refused:
            await client.set_hand("slow", (0, 1))
        assert refused.value.code in ("wrong_phase", "no_bet")
        rtt = await client.ping()
        assert rtt < 1
        assert abs(client.server_now_ms() - app_time_ms()) < 2000


@pytest.mark.asyncio
async def test_a_refusal_is_said_once(app: App) -> None:
    """The server's sentence, not the client's wording of the same refusal beside it
    ("you need a seat at this table (you have no seat at this table)" was shown)."""
    async with Client(url(app)) as client:
        await client.watch("slow")
        with pytest.raises(ServerError) as not_seated:
            await client.sit_out("slow")
        assert not_seated.value.code == "not_seated"
        assert str(not_seated.value) == "you have no seat at this table"
        await client.join("slow", 100)
        with pytest.raises(ServerError) as too_much:
            await client.bet("slow", 500)
        assert str(too_much.value).count("lower the bet or rebuy") == 1
    # A reply without a message of its own gets the client's words for its code.
    bare = ErrorReply(code="not_seated", message="", retryable=False)
    assert plain_error(bare) == "you need a seat at this table"
    assert plain_error(replace(bare, code="something_new")) == "something_new"


@pytest.mark.asyncio
async def test_a_refused_join_leaves_no_model(app: App) -> None:
    async with Client(url(app)) as client:
        with pytest.raises(ServerError) as refused:
            await client.join("slow", 1)  # below the table's buy-in
        assert refused.value.code == "bet_limits"
        assert "slow" not in client.tables
        # A table watched before stays watched.
        model = await client.watch("fast")
        with pytest.raises(ServerError):
            await client.join("fast", 1)
        assert client.tables["fast"] is model


def app_time_ms() -> int:
    import time

    return int(time.time() * 1000)


@pytest.mark.asyncio
async def test_two_players_see_each_other_and_hidden_cards(app: App) -> None:
    async with Client(url(app), name="A") as a, Client(url(app), name="B") as b:
        await a.join("fast", 300)
        await b.join("fast", 300)
        ma, mb = a.tables["fast"], b.tables["fast"]
        await a.bet("fast", 10)
        await b.bet("fast", 10)
        await a.wait_until(lambda: ma.results != {}, 10)
        await b.wait_until(lambda: mb.verification is not None, 10)
        assert set(mb.results) == set(ma.results)
        assert len(mb.results) == 2
        assert mb.verification is not None
        assert mb.verification.ok
        assert ma.your_cards != mb.your_cards
        # Each saw its own cards only, and both see every revealed hand.
        assert len(mb.hands) == 3


def test_model_ignores_duplicates_and_flags_gaps() -> None:
    model = TableModel("t")
    event = PhaseChange(table_id="t", seq=1, round=1, phase="betting")
    assert model.apply(event).value == "gap"  # no snapshot yet
    model.seq = 0
    assert model.apply(event).value == "applied"
    assert model.apply(event).value == "duplicate"
    assert model.apply(replace(event, seq=3)).value == "gap"
    assert model.resyncing


@pytest.mark.asyncio
async def test_unknown_event_types_still_count_their_seq(app: App) -> None:
    import msgpack

    async with Client(url(app)) as client:
        model = await client.watch("slow")
        seq = model.seq
        events = client.listen()
        frame = msgpack.packb({"type": "future_event", "table_id": "slow", "seq": seq + 1})
        client.feed(frame)
        assert model.seq == seq + 1
        assert not model.resyncing
        # A round trip runs whatever the frame started first: nothing watches the table
        # again (a resync would be in flight, or done and its snapshot delivered).
        await client.ping()
        assert not model.resyncing
        delivered = [events.get_nowait() for _ in range(events.qsize())]
        assert not [e for e in delivered if isinstance(e, Snapshot)]


@pytest.mark.asyncio
async def test_a_rebuy_cut_off_by_a_dropped_connection_is_sent_again_and_applied_once(
    app: App,
) -> None:
    """The connection drops while a rebuy waits at the server: the core resumes the
    session, sends the rebuy again with its rid, and the chips move once."""
    host = app.hosts["slow"]
    async with Client(url(app), backoff_s=0.05) as client:
        await client.join("slow", 500)
        account = (await client.balance()).account
        async with host.lock:  # the rebuy waits for the table: its reply cannot come yet
            rebuy = asyncio.create_task(client.rebuy("slow", 200))
            await until(lambda: bool(host.lock._waiters), 5, "the rebuy to wait")
            client.drop_connection()
            await client.wait_until(lambda: client.reconnects == 1 and client.connected, 5)
            assert client.welcome is not None
            assert client.welcome.resumed
            # Sent again: now both the first copy and the retry wait for the table.
            await until(lambda: len(host.lock._waiters or ()) == 2, 5, "the retry to wait")
        balances = await rebuy
        assert balances.account == account - 200
        assert [(t.table_id, t.balance) for t in balances.tables] == [("slow", 700)]
        again = await client.balance()
        assert again.account == account - 200
        assert [(t.table_id, t.balance) for t in again.tables] == [("slow", 700)]


async def _pings(app: App) -> int:
    """How many ``ping`` requests the server has answered (its /metrics)."""
    _, body = await asyncio.to_thread(http_get, app.port, "/metrics")
    found = re.search(r'paigow_requests_total\{type="Ping"\} (\S+)', body)
    return int(float(found.group(1))) if found else 0


@pytest.mark.asyncio
async def test_an_idle_client_pings_within_each_heartbeat(
    server_settings: Settings, redis_client: object
) -> None:
    """A client with nothing to say pings, so the server (closing after two silent
    heartbeats) keeps it; here over three heartbeats of 1 s."""
    app = App(replace(server_settings, heartbeat_ms=1000))
    await app.start()
    client = Client(url(app), name="Idle")
    try:
        await client.connect()

        async def pinged_thrice() -> bool:
            return await _pings(app) >= 3

        await until(pinged_thrice, within=10, every=0.2)
        assert client.connected
        assert client.reconnects == 0
    finally:
        await client.close()
        await app.stop()


class _Relay:
    """A TCP relay to a server that can stop relaying without closing anything, as a
    connection does when the server's machine or the network between them dies: the
    connections open then stay open and carry nothing; the ones opened later work."""

    def __init__(self, port: int) -> None:
        self.port_to = port
        self.dead: set[asyncio.StreamWriter] = set()
        self.open: set[asyncio.StreamWriter] = set()
        self.upstream: set[asyncio.StreamWriter] = set()
        self.handlers: set[asyncio.Task[None]] = set()
        self.server: asyncio.Server | None = None

    async def start(self) -> int:
        self.server = await asyncio.start_server(self._relay, "127.0.0.1", 0)
        port: int = self.server.sockets[0].getsockname()[1]
        return port

    def go_silent(self) -> None:
        self.dead |= self.open

    async def _relay(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        # Every writer is known before anything is awaited, and every handler is stopped
        # by stop(): one still connecting upstream when the test stopped left its two
        # writers to the collector, whose ResourceWarning failed a later test.
        self.open.add(writer)
        task = asyncio.current_task()
        assert task is not None
        self.handlers.add(task)
        try:
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.port_to)
            self.upstream.add(up_writer)

            async def pump(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
                while data := await src.read(65536):
                    if writer not in self.dead:  # a dead link drops what it is given
                        dst.write(data)
                if writer not in self.dead:
                    dst.close()  # one side closed: so does the other (not over a dead link)

            await asyncio.gather(
                pump(reader, up_writer), pump(up_reader, writer), return_exceptions=True
            )
            if writer not in self.dead:
                for w in (writer, up_writer):
                    w.close()
        finally:
            self.handlers.discard(task)

    async def stop(self) -> None:
        if self.server is not None:
            self.server.close()
        for task in self.handlers:
            task.cancel()
        await asyncio.gather(*self.handlers, return_exceptions=True)
        for w in self.open | self.upstream:
            w.transport.abort()
        if self.server is not None:
            await self.server.wait_closed()


@pytest.mark.asyncio
async def test_a_connection_gone_silent_is_found_by_the_heartbeat_and_resumed(
    server_settings: Settings, redis_client: object
) -> None:
    """Without WebSocket pings, the heartbeat finds a connection that died without a
    close (the server's own close, 4004 after two silent heartbeats, never reaches the
    client either): nothing comes back for a heartbeat, the client pings, nothing at
    all comes back within two heartbeats, and it drops the connection and resumes its
    session on a new one (here a heartbeat of 1 s: found within a few seconds)."""
    app = App(replace(server_settings, heartbeat_ms=1000))
    await app.start()
    relay = _Relay(app.port)
    port = await relay.start()
    client = Client(f"ws://127.0.0.1:{port}/", name="Cut", request_timeout_s=1.0)
    try:
        welcome = await client.connect()
        relay.go_silent()
        await client.wait_until(lambda: client.reconnects == 1 and client.connected, 8)
        assert client.welcome is not None
        assert client.welcome.session_id == welcome.session_id  # resumed
        assert await client.ping() < 1.0  # the new connection works
    finally:
        await client.close()
        await relay.stop()
        await app.stop()


def test_the_client_names_itself_with_the_installed_version() -> None:
    """``hello`` names the client with the package's version (no copy of it to forget)."""
    installed = importlib.metadata.version("paigow-server")
    assert Client().client_name == f"paigow-cli/{installed}"


@pytest.mark.asyncio
async def test_retry_now_cuts_the_backoff_short(app: App) -> None:
    """A dropped connection waits its backoff (here 30 s or more) unless told to retry now."""
    async with Client(url(app), backoff_s=60, backoff_max_s=60) as client:
        client.drop_connection()
        await client.wait_until(lambda: client.reconnecting, 5)
        assert not client.connected
        client.retry_now()
        await client.wait_until(lambda: client.connected, 10)
        assert client.reconnects == 1
        assert not client.reconnecting
