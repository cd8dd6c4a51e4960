"""The jackpot calls a settled round owes, made by the table's holder on the real store:
each contribution and hit once, whoever makes them and however often (a holder that
takes the table over in its settling phase makes them again), and none for a round
that owes none."""

from __future__ import annotations

import asyncio
from dataclasses import replace

import msgpack
import pytest
import redis.asyncio

from protocol.messages import Bet, Join
from protocol.structs import Wager
from server.app import App
from server.catalog import change_table
from server.host import TableHost
from server.host.jackpots import Owed, TableJackpots, owed
from server.rules.progressive import PROGRESSIVE, ProgressiveBetOptions
from server.seating import Seating
from server.store import AccountStore, JackpotStore, StoreUnavailable
from server.store.tables.parts import DEAL_FIELDS, DEAL_PART, from_parts, to_parts
from server.store.tables.store import TableStore
from server.table import betting
from server.table.events import ChangeConfig, PlaceBet, SitDown, Tick, UseHouseWay, Void
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


CONFIG = TableConfig(table_id="t1", name="Fortune", side_bets=((PROGRESSIVE, OPTIONS),))


def _settled(
    monkeypatch: pytest.MonkeyPatch, *, void: bool = False, change: TableConfig | None = None
) -> TableState:
    """A round settling at t1: ann (seat 0) holds the top hand, bob (seat 1) nothing
    that pays; both staked the progressive. ``change``: settings changed once the bets
    are in (pending until the round ends)."""
    rest = [c for c in range(53) if c not in TOP]
    hands = (TOP, *(tuple(rest[7 * k : 7 * k + 7]) for k in range(6)))
    monkeypatch.setattr(betting, "deal", lambda _seed: hands)
    config = CONFIG
    h = Harness(state=new_table(config), now=T0)
    for i, player in enumerate(("ann", "bob")):
        h.accounts[player] = 5000
        h.apply(SitDown(player, player, i, 1000, seed(1)))
    for player in ("ann", "bob"):
        h.apply(PlaceBet(player, 100, 0, ((PROGRESSIVE, WAGER),)))
    if change is not None:
        h.apply(ChangeConfig(change))
        assert h.state.pending_config == change
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


WITHOUT = replace(CONFIG, side_bets=())
"""The table's settings with the progressive dropped."""
ELSEWHERE = replace(
    CONFIG,
    side_bets=(
        (
            PROGRESSIVE,
            ProgressiveBetOptions("other", seed=7, contribution_bps=100, wager=WAGER),
        ),
    ),
)
"""The table's settings with another jackpot, seed and rate."""


@pytest.mark.parametrize("change", [WITHOUT, ELSEWHERE], ids=["dropped", "another-jackpot"])
def test_a_change_pending_during_the_round_leaves_its_calls_as_they_were(
    monkeypatch: pytest.MonkeyPatch, change: TableConfig
) -> None:
    """The step that settles the round applies the pending settings: the round's calls
    are still those of the settings its wagers were taken under, and so are they once
    the state is stored and read back (the harness checks each step's parts)."""
    state = _settled(monkeypatch, change=change)
    assert state.config == change  # applied with the settlement
    expected = (OPTIONS, [Owed(0, "ann", WAGER, 10_000), Owed(1, "bob", WAGER, 0)])
    assert owed(state) == expected
    assert owed(from_parts(to_parts(state, None))) == expected


def test_a_round_stored_without_settled_options_reads_its_settings_from_the_config(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A round settled by the code before the settled options were kept (its deal's
    array one field short) still reads, and owes its calls under the table's settings."""
    state = _settled(monkeypatch)
    assert state.settled_options == ((PROGRESSIVE, OPTIONS),)
    parts = to_parts(state, None)
    deal = msgpack.unpackb(parts[DEAL_PART])
    parts[DEAL_PART] = msgpack.packb(deal[: len(DEAL_FIELDS) - 1])
    read = from_parts(parts)
    assert read.settled_options == ()
    assert read == replace(state, settled_options=())
    assert owed(read) == owed(state)
    # The next round's deal holds none: its array is the one written before.
    assert len(msgpack.unpackb(to_parts(new_table(CONFIG), None)[DEAL_PART])) == 5


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


def _top_hand_dealt(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every round deals seat 0 the top hand (it takes the whole meter)."""
    rest = [c for c in range(53) if c not in TOP]
    hands = (TOP, *(tuple(rest[7 * k : 7 * k + 7]) for k in range(6)))
    monkeypatch.setattr(betting, "deal", lambda _seed: hands)


JACKPOT_TABLES = FAST_TABLES + (
    f"\n[jackpot.shared]\nseed = {SEED}\ncontribution_bps = 5000\nwager = {WAGER}\n"
    'tables = ["fast"]\n'
)


async def _bet_the_progressive(app: App) -> Client:
    player = await Client.hello(url(app), label="p")
    await player.ok(Join, table_id="fast", buy_in=500, seat=0)
    await player.ok(
        Bet, table_id="fast", amount=10, wagers=(Wager(kind="progressive", amount=WAGER),)
    )
    return player


@pytest.mark.asyncio
async def test_a_change_dropping_the_progressive_mid_round_still_makes_the_rounds_calls(
    monkeypatch: pytest.MonkeyPatch,
    start_app: StartApp,
    redis_client: redis.asyncio.Redis,
) -> None:
    """The operator drops the progressive from the table (the catalog's change, applied
    by the holder) while a round with a progressive wager is in play: the change waits
    for the round's end, the step that settles the round applies it, and the round's
    calls are made all the same: its wager fed the meter, its top hand took it."""
    _top_hand_dealt(monkeypatch)
    app = await start_app(tables=JACKPOT_TABLES)
    assert app.stores is not None
    host = app.hosts["fast"]
    player = await _bet_the_progressive(app)
    try:
        await until(
            lambda: host.state is not None and host.state.phase is Phase.DEALING,
            10,
            "the deal",
        )
        view = await change_table(app.stores.catalog, "fast", {"side_bets": {"progressive": False}})
        host.reconfigure(view.config)  # what the catalog's watch does (server/cluster/live.py)
        await host.reconcile()
        state = host.state
        assert state is not None
        assert state.pending_config == view.config  # the round in play keeps its settings
        in_play = (Phase.DEALING, Phase.SETTING, Phase.REVEALING)
        await until(
            lambda: host.state is not None and host.state.phase not in in_play,
            10,
            "the round to settle",
        )
        assert host.state is not None
        assert host.state.config == view.config  # the change applied
        assert PROGRESSIVE not in host.state.config.side_kinds

        async def the_round_paid() -> bool:
            return (await JackpotStore(redis_client).read("shared")).hits == 1

        await until(the_round_paid, 10, "the round's calls")
        meter = await JackpotStore(redis_client).read("shared")
        won = SEED + WAGER // 2
        assert (meter.contributed, meter.hits, meter.paid, meter.meter) == (
            WAGER // 2,
            1,
            won,
            SEED,
        )
        assert await JackpotStore(redis_client).pending("shared") == []  # delivered
    finally:
        await player.close()


@pytest.mark.asyncio
async def test_a_taker_with_changed_settings_makes_the_rounds_calls_as_it_was_played(
    monkeypatch: pytest.MonkeyPatch,
    start_app: StartApp,
    redis_client: redis.asyncio.Redis,
) -> None:
    """The holder stored the round's settlement, then went before its calls (its
    jackpots' store away). The table's settings changed meanwhile (the taker's have
    another jackpot, seed and rate): the taker applies them as it takes the table, in
    its settling phase, and makes the round's calls under the jackpot its wagers were
    taken for."""
    _top_hand_dealt(monkeypatch)
    app = await start_app(tables=JACKPOT_TABLES)
    host = app.hosts["fast"]
    away = redis.asyncio.Redis(port=free_port(), socket_connect_timeout=0.2)
    host.applier.jackpots.store = JackpotStore(away)
    player = await _bet_the_progressive(app)
    taker: TableHost | None = None
    try:
        await until(
            lambda: host.state is not None and host.state.phase is Phase.SETTLING,
            10,
            "the round to settle",
        )
        settled = host.state
        assert settled is not None
        await host.stop()  # gone before its calls: the round stays settling in the store
        changed = replace(
            settled.config,
            side_bets=(
                (
                    PROGRESSIVE,
                    ProgressiveBetOptions("other", seed=7, contribution_bps=100, wager=WAGER),
                ),
            ),
        )
        taker = TableHost(
            changed,
            TableStore(redis_client),
            "taker",
            accounts=AccountStore(redis_client),
            seating=Seating[TableHost](),
            jackpots=JackpotStore(redis_client),
        )
        taker.start()
        assert await taker.wait_ready(10)
        assert taker.state is not None
        assert taker.state.config == changed  # applied as it took the table
        store = JackpotStore(redis_client)
        meter = await store.read("shared")
        won = SEED + WAGER // 2
        assert (meter.contributed, meter.hits, meter.paid, meter.meter) == (
            WAGER // 2,
            1,
            won,
            SEED,
        )
        assert (await store.read("other")).started is False
    finally:
        if taker is not None:
            await taker.stop()
        await player.close()
        await away.aclose()
