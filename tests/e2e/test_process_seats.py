"""The server as a process, killed with a player's seat at stake: away and stood up after
their grace, kept when cut off during betting or counted at the deal through the dead node.

Each test runs ``python -m server`` against the session's Redis (flushed first), as
an operator would run ``paigow-server --redis-url ...``.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
import redis.asyncio

from protocol.messages import Bet, Cards, HouseWay, Join, Results, Snapshot
from server.cluster.placement import assign
from server.store.nodes.shared import ClusterStore
from server.store.tables.parts import stored_state
from server.store.tables.store import TableStore
from tests.e2e.process_helpers import audit_passes, phase_of, start
from tests.server.helpers import Client, close_all, now_ms, seat_status
from tests.server.processes import ServerProcess, free_port


@pytest.mark.asyncio
async def test_a_player_who_never_comes_back_after_a_sigkill_is_away_then_stood_up(
    redis_url: str,
    redis_client: redis.asyncio.Redis,
    tmp_path: Path,
    processes: list[ServerProcess],
) -> None:
    """The stored seats still say "connected" when the process dies mid-round. The new
    owner holds no connection of p1, so it marks p1 away as it takes the table over;
    the grace time, counted from then, stands p1 up (the betting phase is far longer:
    only the grace can do it). p0, who comes back, is connected and plays on."""
    grace_ms = 3000
    betting_ms = 60_000

    def launch() -> ServerProcess:
        return start(
            processes,
            redis_url,
            tmp_path,
            setting_ms=2000,
            lease_ms=1000,
            betting_ms=betting_ms,
            grace_ms=grace_ms,
        )

    first = launch()
    await first.started()
    players = [await Client.hello(first.url, label=f"p{i}") for i in range(2)]
    clients = list(players)
    try:
        for i, p in enumerate(players):
            await p.ok(Join, table_id="k", buy_in=1000, seat=i)
        await asyncio.gather(*(p.ok(Bet, table_id="k", amount=100) for p in players))
        await players[0].phase("k", "setting")  # mid-round: both hands dealt
        assert players[0].welcome is not None
        token = players[0].welcome.resume_token
        ghost = players[1].player

        first.kill()
        killed_at = now_ms()
        for p in players:
            await p.wait_closed()
        second = launch()
        await second.started()
        back = await Client.hello(second.url, label="p0r", resume_token=token)
        clients.append(back)
        assert back.welcome is not None
        assert back.welcome.resumed

        # p1 is shown away, in the snapshot or in a seat event after it.
        await back.wait(lambda: seat_status(back, "k", 1) == "away")
        stored = await TableStore(redis_client).load("k")
        assert stored is not None
        seat = stored_state(stored).seats[1]
        assert seat is not None
        assert seat.player == ghost
        assert not seat.connected
        # Set by the new owner, from its clock when it took the table over.
        assert seat.disconnected_at is not None
        assert killed_at <= seat.disconnected_at <= now_ms()
        # p0 is connected (marked away too if the takeover came before its hello).
        await back.wait(lambda: seat_status(back, "k", 0) == "playing")

        # The grace time runs out: p1 is stood up, its round played by the house way.
        await back.wait(lambda: seat_status(back, "k", 1) == "empty", within=grace_ms / 1000 + 10)
        stood_up_at = now_ms()
        assert stood_up_at >= seat.disconnected_at + grace_ms
        assert stood_up_at < seat.disconnected_at + betting_ms
        history = await TableStore(redis_client).history.page(ghost)
        assert len(history.items) == 1  # the round it was dealt into was settled
        assert seat_status(back, "k", 0) == "playing"
        stored = await TableStore(redis_client).load("k")
        assert stored is not None
        state = stored_state(stored)
        assert state.seat_of(ghost) is None
        kept = state.seats[0]
        assert kept is not None
        assert kept.connected
        await close_all(clients)
        assert audit_passes(redis_url).strip().endswith("audit passed")
    finally:
        await close_all(clients)


@pytest.mark.asyncio
async def test_a_player_cut_off_by_a_kill_during_betting_keeps_the_seat(
    redis_url: str,
    redis_client: redis.asyncio.Redis,
    tmp_path: Path,
    processes: list[ServerProcess],
) -> None:
    """p1 has not bet yet when the server is killed in the betting phase, and is not
    back when the restarted server deals the round p0 bet in: away, p1 has not
    "missed" it, and keeps the seat for the grace time (docs/RULES.md, "Disconnection"),
    to find it again on coming back after the round."""

    def launch() -> ServerProcess:
        return start(
            processes,
            redis_url,
            tmp_path,
            setting_ms=2000,
            lease_ms=1000,
            betting_ms=3000,
            grace_ms=60_000,
        )

    first = launch()
    await first.started()
    players = [await Client.hello(first.url, label=f"p{i}") for i in range(2)]
    clients = list(players)
    try:
        for i, p in enumerate(players):
            await p.ok(Join, table_id="k", buy_in=1000, seat=i)
        await players[0].ok(Bet, table_id="k", amount=100)
        tokens = [p.welcome.resume_token for p in players if p.welcome is not None]
        absent = players[1].player

        first.kill()
        for p in players:
            await p.wait_closed()
        second = launch()
        await second.started()
        back = await Client.hello(second.url, label="p0r", resume_token=tokens[0])
        clients.append(back)
        # The round p0 bet in is dealt without p1 (away), played, and settled.
        await back.event("k", Cards, within=20)
        await back.ok(HouseWay, table_id="k", mode="set")
        results = await back.event("k", Results, within=20)
        assert [r.seat for r in results.results] == [0]
        await back.phase("k", "betting", after=back.table("k").index(results))
        # Past the end of that round: p1's seat is p1's, shown away.
        assert seat_status(back, "k", 1) == "away"
        stored = await TableStore(redis_client).load("k")
        assert stored is not None
        assert stored_state(stored).seat_of(absent) == 1
        # Back within the grace time: the seat is there, and p1 plays on.
        returned = await Client.hello(second.url, label="p1r", resume_token=tokens[1])
        clients.append(returned)
        snap = await returned.event("k", Snapshot)
        assert snap.your_seat == 1
        await back.wait(lambda: seat_status(back, "k", 1) == "playing")
        await returned.ok(Bet, table_id="k", amount=50)
        await close_all(clients)
        assert audit_passes(redis_url).strip().endswith("audit passed")
    finally:
        await close_all(clients)


@pytest.mark.asyncio
async def test_a_player_counted_at_the_deal_through_a_dead_node_still_keeps_the_seat(
    redis_url: str,
    redis_client: redis.asyncio.Redis,
    tmp_path: Path,
    processes: list[ServerProcess],
) -> None:
    """The restarted server takes the table over while the dead one still counts as
    live (its registration has not run out; held here for as long as the test needs):
    p1, whose entry says connected there, is counted connected, and the round p0 bet in
    is dealt with p1 missing it. When the dead node stops counting, the holder marks p1
    away, which clears the miss: p1 keeps the seat past the end of the round
    (docs/RULES.md, "Disconnection"). (Before, nobody told the table, and p1 was stood
    up at the end of the round.)"""

    def launch(name: str, port: int = 0) -> ServerProcess:
        return start(
            processes,
            redis_url,
            tmp_path,
            setting_ms=30_000,
            lease_ms=1000,
            betting_ms=3000,
            grace_ms=60_000,
            name=name,
            port=port,
        )

    # The placement gives "k" to the restarted node while both count as live.
    assert assign(["k", "other"], ["n1#0", "n2#0"])["k"] == "n2#0"
    first = launch("n1")
    await first.started()
    cluster = ClusterStore(redis_client)
    (dead,) = (await cluster.live_nodes()).instances
    players = [await Client.hello(first.url, label=f"p{i}") for i in range(2)]
    clients = list(players)
    try:
        for i, p in enumerate(players):
            await p.ok(Join, table_id="k", buy_in=1000, seat=i)
        await players[0].ok(Bet, table_id="k", amount=100)
        tokens = [p.welcome.resume_token for p in players if p.welcome is not None]

        first.kill()
        # As if the dead node's registration had not run out yet.
        await cluster.beat(dead, 120_000, {})
        for p in players:
            await p.wait_closed()
        # Not started(): that waits for every table held, and "other" is the dead
        # node's as long as it counts. The hello is attached once "k" is held here.
        port = free_port()
        second = launch("n2", port)
        await second.serving(port)
        back = await Client.hello(second.url, label="p0r", resume_token=tokens[0])
        clients.append(back)
        # Dealt with p1 counted connected (through the dead node) and without a bet.
        await back.wait(lambda: phase_of(back, "k") == "setting", within=20)
        assert seat_status(back, "k", 1) == "playing"
        # The dead node stops counting: p1 is away, and has not missed the round.
        await cluster.leave(dead)
        await back.wait(lambda: seat_status(back, "k", 1) == "away")
        await back.ok(HouseWay, table_id="k", mode="set")
        results = await back.event("k", Results, within=20)
        assert [r.seat for r in results.results] == [0]
        await back.phase("k", "betting", after=back.table("k").index(results))
        assert seat_status(back, "k", 1) == "away"
        stored = await TableStore(redis_client).load("k")
        assert stored is not None
        assert stored_state(stored).seat_of(players[1].player) == 1
        await close_all(clients)
        assert audit_passes(redis_url).strip().endswith("audit passed")
    finally:
        await close_all(clients)
