"""A table host whose commit was stored without it knowing (a reply lost, a commit
stored behind its back) neither stalls nor applies anything twice: it reloads the
table, or asks Redis whether the change was stored."""

from __future__ import annotations

import pytest
import redis.asyncio

from protocol.messages import Bet, BetPlaced, Join, Rebuy, SeatChange
from server.app import App
from server.host import encode_outbound, now_ms, pack_outbound
from server.store.players.accounts import AccountStore
from server.store.tables.commit_args import CommitStatus, Write
from server.store.tables.parts import to_parts
from server.store.tables.store import TableStore
from server.table import events as ev
from server.table.machine import step
from tests.helpers import until, url
from tests.server.helpers import Client, LostReplies, assert_gapless, audit_report


@pytest.mark.asyncio
async def test_a_commit_the_host_did_not_see_reloads_the_table(
    app: App, redis_client: redis.asyncio.Redis
) -> None:
    """A commit stored but never answered (a lost reply) looks like this to the host:
    the stored version is ahead of its own. Its next commit is refused (stale version),
    the request gets ``unavailable``, and the host reloads the table and carries on."""
    host = app.hosts["slow"]
    client = await Client.hello(url(app))
    try:
        await client.ok(Join, table_id="slow", buy_in=500)
        assert host.state is not None
        assert host.token is not None
        old_token = host.token
        # Store the next state of the table behind the host's back, with its token.
        t = step(host.state, ev.Disconnect(client.player), now_ms())
        result = await TableStore(redis_client).commits.write(
            Write(
                "slow",
                token=host.token,
                expected_version=host.state.version,
                new_version=t.state.version,
                parts=to_parts(t.state, host.state),
                events=[(o.seq, pack_outbound(encode_outbound(o))) for o in t.events],
            )
        )
        assert result.status is CommitStatus.OK
        error = await client.error(Bet, "unavailable", table_id="slow", amount=100)
        assert error.retryable
        # The host reloads the stored table (quickly: it gives its own lease up).
        await until(lambda: host.ready and host.token != old_token, 5, "the reload")
        # The stored change is not lost: the reloaded seat is away. The client is
        # connected here, so the host's on-ready hook says the player is back.
        back = await client.event(
            "slow", SeatChange, lambda m: m.seq > t.state.seq and m.seat.status == "playing"
        )
        assert back.seq == t.state.seq + 1
        # Subscribed all along, the client also got the event stored behind the host's
        # back (the seat away), before the one saying it is back: no gap.
        assert_gapless(client.table("slow"), client.label)
        away = [m for m in client.table("slow") if m.seq == t.state.seq]
        assert len(away) == 1
        assert isinstance(away[0], SeatChange)
        assert away[0].seat.status == "away"
        assert host.state is not None
        assert host.state.version == t.state.version + 1
        await client.ok(Bet, table_id="slow", amount=100)
        seat = host.state.seats[host.state.seat_of(client.player) or 0]
        assert seat is not None
        assert seat.bet == 100
        assert any(isinstance(m, SeatChange) for m in client.table("slow"))
        report = await audit_report(redis_client)
        assert report.ok, report.explain()
    finally:
        await client.close()


@pytest.mark.asyncio
async def test_a_stored_commit_whose_reply_is_lost_counts_once(
    app: App, redis_client: redis.asyncio.Redis
) -> None:
    """The host asks Redis whether the change was stored: it was, so the request
    succeeds, its events go out, and nothing is applied twice."""
    host = app.hosts["slow"]
    store = LostReplies(host.store)
    client = await Client.hello(url(app))
    try:
        await client.ok(Join, table_id="slow", buy_in=500)
        store.lose_next = True
        await client.ok(Rebuy, table_id="slow", amount=100)
        assert not store.lose_next
        assert host.state is not None
        seat = host.state.seats[host.state.seat_of(client.player) or 0]
        assert seat is not None
        assert seat.balance == 600
        accounts = AccountStore(redis_client)
        assert await accounts.balance(client.player) == 10_000 - 600
        await client.ok(Bet, table_id="slow", amount=100)  # the table carries on
        report = await audit_report(redis_client)
        assert report.ok, report.explain()
    finally:
        await client.close()


@pytest.mark.asyncio
async def test_a_join_stored_but_not_answered_keeps_the_table_s_events(app: App) -> None:
    """The join was stored, but its reply was lost and so was the read of its record:
    the player gets an error, yet is seated, and must keep receiving the table."""
    host = app.hosts["slow"]
    store = LostReplies(host.store)
    client = await Client.hello(url(app))
    try:
        store.lose_next = store.also_the_record = True
        await client.error(Join, "unavailable", table_id="slow", buy_in=500)
        assert host.state is not None
        assert host.state.seat_of(client.player) is not None
        await client.ok(Bet, table_id="slow", amount=100)
        await client.event("slow", BetPlaced, lambda m: m.amount == 100)
    finally:
        await client.close()
