"""Over real sockets: new guests limited per address and per minute, sessions that end
with their credential, sessions an operator ends, idle guests counted."""

from __future__ import annotations

import asyncio
import contextlib
import time

import pytest
import redis.asyncio
from websockets.exceptions import ConnectionClosed

from protocol.codec import encode
from protocol.errors import CloseCode
from protocol.messages import ErrorReply, Hello, Ping
from server.auth import tokens
from server.store.players.sessions import SessionStore
from tests.helpers import until, url
from tests.server.conftest import StartApp
from tests.server.helpers import Client
from tests.server.processes import run_cli

SECRET = b"test-secret-0123456789"  # the tests' server settings' token secret


async def a_fresh_minute() -> None:
    """Wait, if need be, so that the next few seconds stay within one clock minute (the
    guest counters' window)."""
    await until(lambda: time.time() % 60 < 45, within=20, what="a minute with room")


async def refused_hello(
    address: str, resume_token: str | None = None, **headers: str
) -> tuple[ErrorReply, int | None]:
    """A guest's hello that the server refuses: its error and the close code."""
    client = await Client.open(address, additional_headers=headers or None)
    try:
        reply = await client.call(
            Hello,
            min_version=1,
            max_version=1,
            client="tests/1",
            guest=True,
            resume_token=resume_token,
        )
        assert isinstance(reply, ErrorReply), reply
        closed = await client.wait_closed()
        return reply, closed.code
    finally:
        await client.close()


@pytest.mark.asyncio
async def test_new_guests_are_limited_per_address(start_app: StartApp) -> None:
    app = await start_app(guests_per_address=2, guests_per_minute=0)
    await a_fresh_minute()
    first = await Client.hello(url(app))
    second = await Client.hello(url(app))
    try:
        error, code = await refused_hello(url(app))
        assert error.code == "guests_limited"
        assert error.retryable
        assert error.retry_after_ms is not None
        assert 0 < error.retry_after_ms <= 60_000
        assert code == CloseCode.TRY_AGAIN_LATER
        # A guest resuming its session creates nothing: never limited.
        assert first.welcome is not None
        again = await Client.hello(url(app), resume_token=first.welcome.resume_token)
        assert again.welcome is not None
        assert again.welcome.resumed
        await again.close()
    finally:
        await first.close()
        await second.close()


@pytest.mark.asyncio
async def test_new_guests_are_limited_in_total(start_app: StartApp) -> None:
    header = "X-Forwarded-For"
    app = await start_app(
        guests_per_address=1,
        guests_per_minute=3,
        guest_address_header=header,
        trusted_proxies=("127.0.0.1",),
    )
    await a_fresh_minute()
    # Behind a proxy, the last address of its header is the client's.
    clients = [await Client.hello(url(app), additional_headers={header: "10.0.0.1, 198.51.100.1"})]
    try:
        per_address, _ = await refused_hello(url(app), **{header: "198.51.100.1"})
        assert per_address.code == "guests_limited"
        assert "address" in per_address.message
        clients += [
            await Client.hello(url(app), additional_headers={header: address})
            for address in ("198.51.100.2", "198.51.100.3")
        ]
        in_total, code = await refused_hello(url(app), **{header: "198.51.100.9"})
        assert in_total.code == "guests_limited"
        assert "total" in in_total.message
        assert code == CloseCode.TRY_AGAIN_LATER
    finally:
        for client in clients:
            await client.close()


@pytest.mark.asyncio
async def test_a_resume_after_the_token_expired_is_refused(start_app: StartApp) -> None:
    """The report: a player's session resumed as a guest with its resume token, after the
    login token that opened it expired."""
    app = await start_app()
    now = int(time.time())
    # Long enough for the hello to get in on a loaded machine, short for the test.
    lifetime_s = 5
    expires = now + lifetime_s
    token = tokens.issue(SECRET, "alice", lifetime_s, now)
    player = await Client.hello(url(app), token=token)
    assert player.welcome is not None
    assert player.welcome.player_id == "alice"
    resume = player.welcome.resume_token
    # The live connection is closed when the token expires.
    closed = await player.wait_closed(within=lifetime_s + 15)
    assert closed.code == CloseCode.UNAUTHORIZED
    assert any(isinstance(m, ErrorReply) and m.code == "unauthorized" for m in player.messages)
    await player.close()
    await until(lambda: time.time() >= expires, within=5, what="the token to expire")
    error, code = await refused_hello(url(app), resume_token=resume)
    assert error.code == "unauthorized"
    assert code == CloseCode.UNAUTHORIZED


@pytest.mark.asyncio
async def test_an_operator_ends_a_player_s_sessions(
    start_app: StartApp, redis_client: redis.asyncio.Redis
) -> None:
    app = await start_app()
    guest = await Client.hello(url(app))
    assert guest.welcome is not None
    player, resume = guest.welcome.player_id, guest.welcome.resume_token
    channel = SessionStore(redis_client).keys.revocations()

    async def listening() -> bool:
        subscribed = await redis_client.pubsub_numsub(channel)
        return bool(subscribed and subscribed[0][1] >= 1)

    await until(listening, what="the server to listen for revocations")

    async def heartbeat() -> None:
        # The guest keeps its heartbeat: a command slower than two heartbeats on a
        # loaded machine got it closed for silence (4004) before the revocation.
        with contextlib.suppress(ConnectionClosed):
            while guest.closed is None:
                await guest.send(encode(Ping(rid=guest.next_rid(), time_ms=None)))
                await asyncio.sleep(1)

    beating = asyncio.create_task(heartbeat())
    # In a thread: the server and the guest share this loop.
    try:
        done = await asyncio.to_thread(
            run_cli,
            [
                "--redis-url",
                app.settings.redis_url or "",
                "--data-dir",
                str(app.settings.data_dir),
                "session",
                "revoke",
                player,
            ],
        )
    finally:
        beating.cancel()
    assert done.returncode == 0, done.stderr
    assert "sessions ended (1 server processes told)" in done.stdout
    closed = await guest.wait_closed()
    assert closed.code == CloseCode.UNAUTHORIZED
    await guest.close()
    error, code = await refused_hello(url(app), resume_token=resume)
    assert (error.code, code) == ("unauthorized", CloseCode.UNAUTHORIZED)
    # A valid token of the same player does not bring the ended session back either.
    later = tokens.issue(SECRET, player, 600, int(time.time()))
    error, code = await refused_token_hello(url(app), later, resume)
    assert (error.code, code) == ("unauthorized", CloseCode.UNAUTHORIZED)
    # Without the old resume token, the token opens a new session.
    fresh = await Client.hello(url(app), token=later)
    assert fresh.welcome is not None
    assert (fresh.welcome.player_id, fresh.welcome.resumed) == (player, False)
    await fresh.close()


@pytest.mark.asyncio
async def test_a_player_s_session_ended_by_an_operator_is_not_resumed_with_its_token(
    start_app: StartApp, redis_client: redis.asyncio.Redis
) -> None:
    """The report: after ``session revoke P``, P's still-valid token and the old resume
    token got ``ok`` with a new session instead of the refusal section 5 promises."""
    app = await start_app()
    token = tokens.issue(SECRET, "paula", 600, int(time.time()))
    first = await Client.hello(url(app), token=token)
    assert first.welcome is not None
    resume = first.welcome.resume_token
    await first.close()
    # The operator's revocation as the command records it (its publication is
    # another test's), a millisecond after the session was opened.
    await asyncio.sleep(0.01)
    await SessionStore(redis_client).revoke("paula", int(time.time() * 1000))
    error, code = await refused_token_hello(url(app), token, resume)
    assert (error.code, code) == ("unauthorized", CloseCode.UNAUTHORIZED)
    assert "ended" in error.message


@pytest.mark.asyncio
async def test_a_session_closed_with_its_token_is_resumed_with_a_new_token(
    start_app: StartApp,
) -> None:
    """The report: after a session was closed because its short token expired, a new
    valid token of the same player and the old resume token were refused ("resume token
    refused: expired at ..."), where section 5 says the session is resumed."""
    app = await start_app()
    lifetime_s = 5  # long enough for the hello on a loaded machine, short for the test
    short = tokens.issue(SECRET, "rita", lifetime_s, int(time.time()))
    player = await Client.hello(url(app), token=short)
    assert player.welcome is not None
    session_id, resume = player.welcome.session_id, player.welcome.resume_token
    closed = await player.wait_closed(within=lifetime_s + 15)
    assert closed.code == CloseCode.UNAUTHORIZED
    await player.close()
    longer = tokens.issue(SECRET, "rita", 3600, int(time.time()))
    back = await Client.hello(url(app), token=longer, resume_token=resume)
    assert back.welcome is not None
    assert (back.welcome.resumed, back.welcome.session_id) == (True, session_id)
    await back.close()


async def refused_token_hello(
    address: str, token: str, resume_token: str
) -> tuple[ErrorReply, int | None]:
    """A hello with ``token`` and ``resume_token`` that the server refuses: its error
    and the close code."""
    client = await Client.open(address)
    try:
        reply = await client.call(
            Hello,
            min_version=1,
            max_version=1,
            client="tests/1",
            token=token,
            resume_token=resume_token,
        )
        assert isinstance(reply, ErrorReply), reply
        closed = await client.wait_closed()
        return reply, closed.code
    finally:
        await client.close()
