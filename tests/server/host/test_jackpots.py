"""The jackpot calls a settled round owes, made by the table's holder on the real store:
each contribution and hit once, whoever makes them and however often (a holder that
takes the table over in its settling phase makes them again), and none for a round
that owes none."""

from __future__ import annotations

import asyncio

import pytest
import redis.asyncio

from protocol.messages import Bet, Join
from protocol.structs import Wager
from server.host.jackpots import Owed, TableJackpots, owed
from server.rules.progressive import PROGRESSIVE, ProgressiveBetOptions
from server.store import AccountStore, JackpotStore, StoreUnavailable
from server.table import betting
from server.table.events import PlaceBet, SitDown, Tick, UseHouseWay, Void
from server.table.state import Phase, TableConfig, TableState, new_table
from tests.conftest import FAST_TABLES
from tests.helpers import until, url
from tests.server.conftest import StartApp
from tests.server.helpers import Client
from tests.server.processes import free_port
from tests.server.table.helpers import T0, Harness, seed

WAGER = 10
SEED = 1000
OPTIONS = ProgressiveBetOptions("shared", seed=SEED, contribution_bps=5000, wager=WAGER)
TOP = tuple((r - 2) << 2 for r in range(8, 15))  # a natural seven-card straight flush


def _settled(monkeypatch: pytest.MonkeyPatch, *, void: bool = False) -> TableState:
    """A round settling at t1: ann (seat 0) holds the top hand, bob (seat 1) nothing
    that pays; both staked the progressive."""
    rest = [c for c in range(53) if c not in TOP]
    hands = (TOP, *(tuple(rest[7 * k : 7 * k + 7]) for k in range(6)))
    monkeypatch.setattr(betting, "deal", lambda _seed: hands)
    config = TableConfig(table_id="t1", name="Fortune", side_bets=((PROGRESSIVE, OPTIONS),))
    h = Harness(state=new_table(config), now=T0)
    for i, player in enumerate(("ann", "bob")):
        h.accounts[player] = 5000
        h.apply(SitDown(player, player, i, 1000, seed(1)))
    for player in ("ann", "bob"):
        h.apply(PlaceBet(player, 100, 0, ((PROGRESSIVE, WAGER),)))
    if void:
        h.apply(Void("test"))
        return h.state
    h.now += config.dealing_ms
    h.apply(Tick(seed(2)))
    for player in ("ann", "bob"):
        h.apply(UseHouseWay(player))
    h.now += config.revealing_ms
    h.apply(Tick(seed(2)))
    assert h.state.phase is Phase.SETTLING
    return h.state


def test_a_settled_round_owes_each_wagers_contribution_and_the_top_hands_hit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    state = _settled(monkeypatch)
    options, calls = owed(state)
    assert options == OPTIONS
    assert calls == [Owed(0, "ann", WAGER, 10_000), Owed(1, "bob", WAGER, 0)]
    assert owed(_settled(monkeypatch, void=True)) == (None, [])


@pytest.mark.asyncio
async def test_the_calls_are_made_once_whoever_makes_them(
    monkeypatch: pytest.MonkeyPatch, redis_client: redis.asyncio.Redis
) -> None:
    state = _settled(monkeypatch)
    store = JackpotStore(redis_client)
    accounts = AccountStore(redis_client)
    holder = TableJackpots("t1", store)
    assert holder.due(state)
    await holder.pay(state)
    assert not holder.due(state)
    won = SEED + 2 * WAGER // 2
    meter = await store.read("shared")
    assert (meter.meter, meter.contributed, meter.paid, meter.hits) == (SEED, WAGER, won, 1)
    assert await accounts.balance("ann") == won
    # The holder that takes the table over in its settling phase makes them again:
    # each answers what it did, nothing moves.
    taker = TableJackpots("t1", store)
    assert taker.due(state)
    await taker.pay(state)
    again = await store.read("shared")
    assert again == meter
    assert await accounts.balance("ann") == won
    assert await store.pending("shared") == []


@pytest.mark.asyncio
async def test_a_store_away_leaves_the_calls_due(monkeypatch: pytest.MonkeyPatch) -> None:
    state = _settled(monkeypatch)
    away = redis.asyncio.Redis(port=free_port(), socket_connect_timeout=0.5)
    try:
        holder = TableJackpots("t1", JackpotStore(away))
        with pytest.raises(StoreUnavailable):
            await holder.pay(state)
        assert holder.due(state)  # the next commit makes them first, or is not made
    finally:
        await away.aclose()


@pytest.mark.asyncio
async def test_no_commit_ends_a_round_before_its_calls_answered(
    monkeypatch: pytest.MonkeyPatch,
    start_app: StartApp,
    redis_client: redis.asyncio.Redis,
) -> None:
    """The store of the jackpots away when the round settles: the round stays settling
    (its end is not committed, its results kept) until the calls answer, then ends."""
    rest = [c for c in range(53) if c not in TOP]
    hands = (TOP, *(tuple(rest[7 * k : 7 * k + 7]) for k in range(6)))
    monkeypatch.setattr(betting, "deal", lambda _seed: hands)
    tables = FAST_TABLES + (
        f"\n[jackpot.shared]\nseed = {SEED}\ncontribution_bps = 5000\nwager = {WAGER}\n"
        'tables = ["fast"]\n'
    )
    app = await start_app(tables=tables)
    host = app.hosts["fast"]
    calls = host.applier.jackpots
    real = calls.store
    away = redis.asyncio.Redis(port=free_port(), socket_connect_timeout=0.2)
    calls.store = JackpotStore(away)
    player = await Client.hello(url(app), label="p")
    try:
        await player.ok(Join, table_id="fast", buy_in=500, seat=0)
        await player.ok(
            Bet, table_id="fast", amount=10, wagers=(Wager(kind="progressive", amount=WAGER),)
        )
        await until(
            lambda: host.state is not None and host.state.phase is Phase.SETTLING,
            10,
            "the round to settle",
        )
        settled = host.state
        assert settled is not None
        # Long past its settling deadline (300 ms), the round is still settling.
        await asyncio.sleep(1.5)
        assert host.state is not None
        assert host.state.phase is Phase.SETTLING
        assert host.state.round_no == settled.round_no
        assert (await JackpotStore(redis_client).read("shared")).started is False
        calls.store = real  # back: the next tick's commit makes the calls first
        await until(
            lambda: host.state is not None and host.state.phase is not Phase.SETTLING,
            10,
            "the round to end",
        )
        meter = await JackpotStore(redis_client).read("shared")
        assert (meter.hits, meter.paid, meter.meter) == (1, SEED + WAGER // 2, SEED)
    finally:
        await player.close()
        await away.aclose()
