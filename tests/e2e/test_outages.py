"""Redis outages answered in the protocol's words: every request meanwhile gets
``unavailable`` (retryable), never ``internal``, and the log says it once an outage,
with no traceback (docs/DESIGN.md, "Redis failures"; protocol/PROTOCOL.md, section 10).

Three kinds, each with real processes: the embedded Redis killed (its supervisor
starts it again), an external Redis stopped and started again by the test, and the
primary of a Sentinel topology killed (the replica promoted).
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from bench.procs.topology import LocalSentinel
from protocol.codec import encode
from protocol.errors import CloseCode
from protocol.messages import (
    Bet,
    ErrorReply,
    GetBalance,
    GetHistory,
    Hello,
    Join,
    Leave,
    ListTables,
    OkReply,
    Rebuy,
    SitOut,
)
from server.app import App
from server.config import Settings
from server.store.embedded.process import EmbeddedRedis
from tests.helpers import until, url
from tests.server.helpers import Client, quick_tables

BEGAN = "Redis unavailable"
ENDED = "Redis back after"
PACE_S = 0.06
"""Between two requests: under the message rate (20 a second, protocol/PROTOCOL.md)."""


def outage_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    """The outage's own log lines, in order."""
    return [
        r.getMessage()
        for r in caplog.records
        if r.name == "server.gateway.outage" and r.getMessage().startswith((BEGAN, ENDED))
    ]


def assert_paired(lines: list[str]) -> None:
    """One line as each outage began, and one as it ended, in turn."""
    assert lines, "no outage logged"
    assert [line.startswith(BEGAN) for line in lines] == [i % 2 == 0 for i in range(len(lines))]
    assert lines[-1].startswith(ENDED), lines


def assert_no_traceback(caplog: pytest.LogCaptureFixture) -> None:
    """No record of the server's (or of websockets, for a handler that raised) carries
    a traceback."""
    with_traceback = [
        f"{r.name}: {r.getMessage()}"
        for r in caplog.records
        if r.exc_info is not None or r.exc_text
    ]
    assert with_traceback == [], with_traceback


async def ask_through(
    player: Client, *, away: bool, within: float = 60, bet: str | None = None
) -> list[str]:
    """Send ``balance`` requests (and a ``bet`` at table ``bet`` every other one) one
    after another until the outage was met (``away``: a request answered
    ``unavailable``) and is over (one answered ``ok`` after it); the codes answered."""
    codes: list[str] = []
    loop = asyncio.get_running_loop()
    give_up = loop.time() + within
    met = not away
    i = 0
    while loop.time() < give_up:
        i += 1
        if bet is not None and i % 2:
            reply = await player.call(Bet, within=30, table_id=bet, amount=100)
        else:
            reply = await player.call(GetBalance, within=30)
        if isinstance(reply, ErrorReply):
            codes.append(reply.code)
            assert reply.code == "unavailable", reply
            assert reply.retryable
            met = True
        else:
            assert isinstance(reply, OkReply)
            codes.append("ok")
            if met:
                return codes
        await asyncio.sleep(PACE_S)
    raise AssertionError(f"the outage was not over within {within} s: {codes[-10:]}")


# --- the embedded Redis ---------------------------------------------------------------


@pytest.mark.asyncio
async def test_embedded_redis_killed(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    tables = tmp_path / "tables.toml"
    tables.write_text(quick_tables("e", betting_ms=60_000))
    app = App(
        Settings(
            port=0,
            data_dir=tmp_path / "data",  # no redis_url: the embedded Redis
            tables_file=tables,
            token_secret="outage-secret-0123456789",
            lease_ms=3000,
        )
    )
    await app.start()
    player: Client | None = None
    try:
        assert app.stores is not None
        embedded = app.stores.embedded
        assert embedded is not None
        player = await Client.hello(url(app))
        await player.ok(Join, table_id="e", buy_in=1000)
        codes: list[str] = []
        # Its restart takes a tenth of a second: a request may miss it. Killed again
        # (a bounded number of times) until one met it.
        for _ in range(5):
            killed = embedded.pid
            assert killed is not None
            os.kill(killed, signal.SIGKILL)
            codes = await ask_through(player, away=False, bet="e")

            def restarted(killed: int = killed) -> bool:
                return embedded.running and embedded.pid != killed

            await until(restarted, 20, "a restart")
            if "unavailable" in codes:
                break
        assert "unavailable" in codes, codes
        assert "internal" not in codes
        print(f"requests through the restart: {codes}")
        await until(lambda: ENDED in " ".join(outage_lines(caplog)), 20, "the outage's end")
        lines = outage_lines(caplog)
        assert_paired(lines)
        answered = sum(int(line.split("; ")[1].split()[0]) for line in lines[1::2])
        assert answered >= codes.count("unavailable")
        assert_no_traceback(caplog)
    finally:
        if player is not None:
            await player.close()
        await app.stop()


# --- an external Redis ------------------------------------------------------------------


@pytest.mark.asyncio
async def test_external_redis_down(
    own_redis: EmbeddedRedis, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    tables = tmp_path / "tables.toml"
    tables.write_text(quick_tables("x", betting_ms=60_000))
    app = App(
        Settings(
            port=0,
            redis_url=own_redis.url,
            data_dir=tmp_path / "data",
            tables_file=tables,
            token_secret="outage-secret-0123456789",
            lease_ms=3000,
        )
    )
    await app.start()
    player: Client | None = None
    try:
        player = await Client.hello(url(app))
        await player.ok(Join, table_id="x", buy_in=1000)
        await own_redis.astop()

        # Every kind of request that needs Redis: the lobby, balances, history, a bet,
        # a sit-out, the money requests.
        requests: list[tuple[type[object], dict[str, object]]] = [
            (GetBalance, {}),
            (ListTables, {}),
            (GetHistory, {}),
            (Bet, {"table_id": "x", "amount": 100}),
            (SitOut, {"table_id": "x"}),
            (Rebuy, {"table_id": "x", "amount": 100}),
            (Leave, {"table_id": "x"}),
        ]
        for kind, fields in requests:
            reply = await player.call(kind, within=30, **fields)
            assert isinstance(reply, ErrorReply), (kind, reply)
            assert (reply.code, reply.retryable) == ("unavailable", True), (kind, reply)
        # A hello that needs Redis (a new guest): `unavailable`, then "try again later".
        newcomer = await Client.open(url(app))
        await newcomer.send(
            encode(Hello(rid="h1", min_version=1, max_version=1, client="tests/1", guest=True))
        )
        closed = await newcomer.wait_closed()
        assert closed.code == CloseCode.TRY_AGAIN_LATER
        [refused] = [m for m in newcomer.messages if isinstance(m, ErrorReply)]
        assert (refused.code, refused.retryable, refused.rid) == ("unavailable", True, "h1")

        assert outage_lines(caplog) == [outage_lines(caplog)[0]]
        assert outage_lines(caplog)[0].startswith(BEGAN)
        await own_redis.astart()
        await until(lambda: len(outage_lines(caplog)) == 2, 20, "the outage's end")
        ended = outage_lines(caplog)[1]
        assert ended.startswith(ENDED)
        assert "8 request(s)" in ended, ended  # the seven requests and the hello
        await until(lambda: all(h.ready for h in app.hosts.values()), 20, "the table")
        codes = await ask_through(player, away=False)
        assert codes[-1] == "ok"
        assert_no_traceback(caplog)
    finally:
        if player is not None:
            await player.close()
        await app.stop()


# --- Sentinel ---------------------------------------------------------------------------


@pytest.fixture
def topology() -> Iterator[LocalSentinel]:
    with LocalSentinel() as running:
        yield running


@pytest.mark.asyncio
@pytest.mark.slow
async def test_sentinel_failover(
    topology: LocalSentinel, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    tables = tmp_path / "tables.toml"
    tables.write_text(quick_tables("f", betting_ms=60_000))
    app = App(
        Settings(
            port=0,
            redis_url=topology.url,
            data_dir=tmp_path / "data",
            tables_file=tables,
            token_secret="outage-secret-0123456789",
            lease_ms=3000,
            redis_wait_ms=300,
        )
    )
    await app.start()
    player: Client | None = None
    try:
        player = await Client.hello(url(app))
        await player.ok(Join, table_id="f", buy_in=1000)
        topology.primary.kill()
        codes = await ask_through(player, away=True, within=90, bet="f")
        await asyncio.to_thread(topology.wait_promoted)
        assert "internal" not in codes
        assert "unavailable" in codes
        print(f"requests through the failover: {Counter(codes)}")
        await until(lambda: ENDED in " ".join(outage_lines(caplog)), 30, "the outage's end")
        assert_paired(outage_lines(caplog))
        assert_no_traceback(caplog)
    finally:
        if player is not None:
            await player.close()
        await app.stop()
