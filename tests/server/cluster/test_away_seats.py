"""A player whose node dies, seated at a table another node holds, as processes.

Three nodes on one Redis. The player sits, through node A, at a table held by node B
(one the placement keeps on B once A is gone, so no taking over settles the seat: B
alone must notice that A died, ``Router.nodes_changed``). A is killed (SIGKILL) with the
player's bet placed in the betting phase, or with their cards dealt and their hand not
set. Then the player does not come back, comes back through B or the third node C
with their resume token within the grace time (before B counts A dead, or after B has
marked them away), or comes back after it. Each time the seat follows docs/RULES.md,
"Disconnection": away once B learns of the death (unless they are back by then), the
round completes (their hand set by the house way if they are not back to set it) and
is settled once, the seat is freed once the grace time has run out with the table
balance back in the account, or kept for a player back in time; and the money audits.
"""

from __future__ import annotations

import time

import pytest
import redis.asyncio

from protocol.messages import (
    Bet,
    BetPlaced,
    Cards,
    GetBalance,
    HandSet,
    HouseWay,
    Join,
    Leave,
    PhaseChange,
    Results,
)
from protocol.structs import Balances
from server.cluster.placement import assign, node_name
from server.store.nodes.shared import ClusterStore
from server.store.players.accounts import AccountStore
from tests.helpers import until
from tests.server.cluster.conftest import Nodes
from tests.server.helpers import Client, assert_gapless, close_all, quick_tables, seat_status

TABLES = ["t1", "t2", "t3", "t4", "t5", "t6"]
NAMES = ["n1", "n2", "n3"]
BUY_IN = 1000
BET = 50
# The durations hold on a loaded machine (2 cores, the suite's workers beside CPU hogs:
# loops late by over 0.5 s, processes over 7 s to start). A node's registration is
# renewed every third of the lease: 2 s survives a 1.3 s stall.
LEASE_MS = 2000
NOTICED_S = LEASE_MS / 1000 + 10
"""How long B may take to count A dead once A is killed (the test's bound)."""
BETTING_MS = 30_000
"""Round 1's betting covers the kill, B noticing it and a resume (before the other's bet
closes it). It is never waited out: betting ends once every player has bet."""
SETTING_MS = 30_000
"""The setting where a player comes back covers the kill, B noticing, a resume and their
hand set; never waited out: it ends once every hand is set."""
UNATTENDED_SETTING_MS = 10_000
"""The setting where nobody comes back is waited out (the lost hand is set by the house
way at its deadline): it covers only the other's hand set before the kill."""
GRACE_MS = 12_000
"""Covers the kill, B noticing it and a resume (the check counts it from the kill, which
is before the grace starts at B); waited out in every variant."""


async def a_table_that_stays(
    nodes: Nodes, client: redis.asyncio.Redis
) -> tuple[str, str, str, str]:
    """(table, A, B, C): B holds the table now and still would without A."""
    holders = await nodes.settled(client, TABLES)
    live = (await ClusterStore(client).live_nodes()).instances
    for table in TABLES:
        b = holders[table]
        for a in NAMES:
            if a == b:
                continue
            without = [i for i in live if node_name(i) != a]
            if node_name(assign(TABLES, without)[table]) == b:
                (c,) = set(NAMES) - {a, b}
                return table, a, b, c
    raise AssertionError(f"no table stays where it is when a node dies: {holders}")


async def resume(nodes: Nodes, name: str, token: str, table: str, seen: int) -> Client:
    """The lost player's session resumed through node ``name``."""
    back = await Client.hello(
        nodes.url(name), label="back", resume_token=token, last_seq=[(table, seen)]
    )
    assert back.welcome is not None
    assert back.welcome.resumed
    return back


@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("stage", "back"),
    [
        ("betting", "never"),
        ("betting", "holder"),
        ("betting", "early-third"),
        ("setting", "third"),
        ("setting", "early-holder"),
        ("setting", "too-late"),
    ],
)
async def test_the_seat_of_a_player_whose_node_dies_follows_the_grace_time(
    nodes: Nodes, redis_client: redis.asyncio.Redis, stage: str, back: str
) -> None:
    """See the module docstring."""
    setting_ms = UNATTENDED_SETTING_MS if back in ("never", "too-late") else SETTING_MS
    nodes.tables(
        quick_tables(*TABLES, betting_ms=BETTING_MS, setting_ms=setting_ms, grace_ms=GRACE_MS)
    )
    await nodes.start(*NAMES, lease_ms=LEASE_MS)
    table, a, b, c = await a_table_that_stays(nodes, redis_client)
    accounts = AccountStore(redis_client)
    lost = await Client.hello(nodes.url(a), label="lost")
    # Seated through the holder: it watches, and keeps the table in play.
    other = await Client.hello(nodes.url(b), label="other")
    clients = [lost, other]
    try:
        start = await lost.ok(GetBalance)
        assert isinstance(start, Balances)
        await lost.ok(Join, table_id=table, buy_in=BUY_IN, seat=0)
        await other.ok(Join, table_id=table, buy_in=BUY_IN, seat=1)
        await lost.ok(Bet, table_id=table, amount=BET)
        await other.event(table, BetPlaced, lambda m: m.seat == 0 and m.amount == BET)
        if stage == "setting":
            await other.ok(Bet, table_id=table, amount=BET)
            await lost.event(table, Cards)  # dealt; their hand is not set
            await other.phase(table, "setting")
            await other.ok(HouseWay, table_id=table, mode="set")
        assert lost.welcome is not None
        token = lost.welcome.resume_token

        nodes.processes[a].kill()
        killed = time.monotonic()
        seen = lost.last_seq(table)
        through = {"holder": b, "third": c}.get(back.removeprefix("early-"))
        returned: Client | None = None
        if back.startswith("early-"):
            assert through is not None
            # Back before B counts A dead: B must then find them connected elsewhere.
            returned = await resume(nodes, through, token, table, seen)
            clients.append(returned)

            async def a_dead_to_b() -> bool:
                return await nodes.live_seen(b) == 2

            await until(a_dead_to_b, NOTICED_S, "A dead to B")
        else:
            # B learns of the death once A's registration runs out: the seat is away.
            await other.wait(lambda: seat_status(other, table, 0) == "away", within=NOTICED_S)
        # B's grace time, if any, began by now (it tells of the away seat after, and
        # settles the seat once it counts A dead).
        grace_began_by = time.monotonic()
        assert (await nodes.holders(redis_client, [table]))[table] == b
        if stage == "betting":
            await other.ok(Bet, table_id=table, amount=BET)  # the last to decide: dealt

        if through is not None:
            if returned is None:
                returned = await resume(nodes, through, token, table, seen)
                clients.append(returned)
                # Counted from the kill, before B's grace time began: surely in it.
                assert time.monotonic() - killed < GRACE_MS / 1000, "not back in the grace time"
            await other.wait(lambda: seat_status(other, table, 0) == "playing")
            # They finish the round themselves: their cards (dealt while they were
            # away, in the betting stage), their hand set.
            if stage == "betting":
                await returned.event(table, Cards, lambda m: m.round == 1)
                await returned.phase(table, "setting")
            await returned.ok(HouseWay, table_id=table, mode="set")
            if stage == "betting":
                await other.ok(HouseWay, table_id=table, mode="set")
            results = await other.event(table, Results, lambda m: m.round == 1, within=15)
            assert {r.seat for r in results.results} == {0, 1}
            # The seat is kept past the grace time (B's, begun by then): no event says
            # a seat was *not* freed, so the time is waited out, then looked at.
            await until(
                lambda: time.monotonic() > grace_began_by + GRACE_MS / 1000 + 2,
                GRACE_MS / 1000 + 10,
                "the grace time to pass",
            )
            assert seat_status(other, table, 0) == "playing"
            # Between rounds, they leave: their table balance back in their account.
            await returned.event(table, PhaseChange, lambda m: m.round == 2)
            await returned.ok(Leave, table_id=table)
            mine = next(r for r in results.results if r.seat == 0)
            await other.wait(lambda: seat_status(other, table, 0) == "empty")
            assert_gapless(returned.table(table), "back")
        else:
            # The round completes without them: their hand set by the house way at the
            # deadline, their bet settled; the seat is freed after the grace time.
            hand = await other.event(
                table, HandSet, lambda m: m.seat == 0, within=setting_ms / 1000 + 15
            )
            assert hand.house_way
            results = await other.event(table, Results, lambda m: m.round == 1, within=15)
            assert {r.seat for r in results.results} == {0, 1}
            mine = next(r for r in results.results if r.seat == 0)
            await other.wait(
                lambda: seat_status(other, table, 0) == "empty", within=GRACE_MS / 1000 + 15
            )
            assert time.monotonic() - killed >= GRACE_MS / 1000
        expected = start.account - BUY_IN + mine.balance

        async def returned_to_account() -> bool:
            return await accounts.balance(lost.player) == expected

        await until(returned_to_account, 10, "the table balance to reach the account")
        if back == "too-late":
            late = await Client.hello(nodes.url(c), label="late", resume_token=token)
            clients.append(late)
            assert late.welcome is not None
            assert late.welcome.resumed
            balances = await late.ok(GetBalance)
            assert isinstance(balances, Balances)
            assert (balances.account, balances.tables) == (expected, ())
        assert other.closed is None
        assert_gapless(other.table(table), "other")
        assert [m.round for m in other.table(table) if isinstance(m, Results)].count(1) == 1
    finally:
        await close_all(clients)
    nodes.audit()
