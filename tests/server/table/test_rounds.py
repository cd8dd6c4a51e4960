"""Scripted rounds through the pure table, asserting the exact messages and money."""

from __future__ import annotations

import dataclasses

import pytest

from protocol.errors import ErrorCode
from protocol.fairness import commitment, deal
from protocol.messages import (
    BetPlaced,
    Cards,
    Commitment,
    HandSet,
    Hidden,
    PhaseChange,
    Results,
    Reveal,
    RoundVoid,
    SeatChange,
    SeedReveal,
)
from protocol.structs import SeatView, Wager
from server.rules.houseways import house_way
from server.rules.options import RuleOptions
from server.rules.settlement import settle_values
from server.rules.splits import FoulPolicy, all_splits
from server.rules.values import high_name, high_value, low_name, low_value
from server.table.errors import TableError
from server.table.events import (
    Disconnect,
    PlaceBet,
    Reconnect,
    SetHand,
    SitDown,
    SitOut,
    StandUp,
    Tick,
    UseHouseWay,
    Void,
)
from server.table.ledger import Kind, Pot
from server.table.machine import TRANSITIONS, step
from server.table.state import Phase, TableConfig, copy_with, new_table
from server.table.views import snapshot
from tests.server.table.helpers import CONFIG, T0, Harness, phase, seated, seed


def test_sitting_down_opens_betting_with_a_commitment() -> None:
    h = Harness(now=T0)
    h.accounts["p0"] = 5000
    t = h.apply(SitDown("p0", "Ann", 2, 1000, seed(7)))
    assert [o.public for o in t.events] == [
        SeatChange(
            table_id="t1",
            seq=1,
            seat=SeatView(
                seat=2,
                status="playing",
                balance=1000,
                bet=0,
                bonus=0,
                hand_set=False,
                player_id="p0",
                name="Ann",
            ),
        ),
        PhaseChange(
            table_id="t1", seq=2, round=1, phase="betting", deadline_ms=T0 + CONFIG.betting_ms
        ),
        Commitment(table_id="t1", seq=3, round=1, commitment=commitment(seed(7))),
    ]
    assert [(e.kind, e.amount, e.source, e.dest) for e in t.entries] == [
        (Kind.BUY_IN, 1000, Pot.ACCOUNT, Pot.TABLE)
    ]
    assert h.accounts["p0"] == 4000
    assert t.state.version == 1


def test_full_round_one_player_exact_messages() -> None:
    h = seated(1)
    hands = deal(seed(1))
    t = h.apply(PlaceBet("p0", 100, 10))
    # Everyone seated has bet: betting closes at once and the cards are dealt.
    assert [type(o.public) for o in t.events] == [BetPlaced, PhaseChange, Hidden]
    assert t.events[0].public == BetPlaced(
        table_id="t1",
        seq=4,
        round=1,
        seat=0,
        amount=100,
        bonus=10,
        balance=890,
        wagers=(Wager(kind="bonus", amount=10),),
    )
    assert t.events[1].public == PhaseChange(
        table_id="t1", seq=5, round=1, phase="dealing", deadline_ms=T0 + CONFIG.dealing_ms
    )
    assert t.events[2].private == {
        "p0": Cards(table_id="t1", seq=6, round=1, seat=0, cards=hands[0])
    }
    h.now += CONFIG.dealing_ms
    t = h.apply(Tick(seed(2)))
    assert [o.public for o in t.events] == [
        PhaseChange(
            table_id="t1",
            seq=7,
            round=1,
            phase="setting",
            deadline_ms=h.now + CONFIG.setting_ms,
        )
    ]
    split = house_way(hands[0], CONFIG.rules.house_way, CONFIG.rules.wheel)
    t = h.apply(SetHand("p0", (split.low[0], split.low[1])))
    assert t.reply is not None
    assert t.reply.applied
    assert t.reply.low == split.low
    assert [type(o.public) for o in t.events] == [HandSet, PhaseChange, Reveal]
    assert t.events[0].public == HandSet(table_id="t1", seq=8, round=1, seat=0, house_way=False)
    reveal = t.events[2].public
    assert isinstance(reveal, Reveal)
    assert [v.hand for v in reveal.hands] == [0, 6]  # empty seats' hands are never shown
    dealer = house_way(hands[6], CONFIG.rules.house_way, CONFIG.rules.wheel)
    assert reveal.hands[1].low == dealer.low
    assert reveal.hands[1].house_way
    assert reveal.hands[0].high_name == high_name(high_value(split.high))
    assert reveal.hands[0].low_name == low_name(low_value(split.low))

    h.now += CONFIG.revealing_ms
    t = h.apply(Tick(seed(2)))
    assert [type(o.public) for o in t.events] == [PhaseChange, Results, SeedReveal]
    expected = settle_values(
        high_value(split.high),
        low_value(split.low),
        high_value(dealer.high),
        low_value(dealer.low),
        100,
        commission_pct=5,
    )
    results = t.events[1].public
    assert isinstance(results, Results)
    (r,) = results.results
    assert (r.outcome, r.high, r.low) == (
        expected.outcome.value,
        expected.high.value,
        expected.low.value,
    )
    assert r.commission == expected.commission
    assert t.events[2].public == SeedReveal(
        table_id="t1", seq=13, round=1, seed=seed(1).hex(), commitment=commitment(seed(1))
    )
    (log,) = t.logs
    assert log[0] == "p0"
    assert log[1].seed == seed(1).hex()
    assert log[1].cards == hands[0]
    assert log[1].hand is not None
    assert log[1].hand.low == split.low
    assert h.total() == 5000

    h.now += CONFIG.settling_ms
    t = h.apply(Tick(seed(3)))
    assert [o.public for o in t.events] == [
        PhaseChange(
            table_id="t1", seq=14, round=2, phase="betting", deadline_ms=h.now + CONFIG.betting_ms
        ),
        Commitment(table_id="t1", seq=15, round=2, commitment=commitment(seed(3))),
    ]


def test_six_players_full_round_conserves_chips_and_pays_each() -> None:
    h = seated(6)
    for i in range(6):
        h.apply(PlaceBet(f"p{i}", 50 + 10 * i, 5))
    assert phase(h) is Phase.DEALING
    h.now += CONFIG.dealing_ms
    h.apply(Tick(seed(9)))
    for i in range(5):
        h.apply(UseHouseWay(f"p{i}"))
    assert phase(h) is Phase.SETTING
    h.apply(UseHouseWay("p5"))
    assert phase(h) is Phase.REVEALING
    h.now += CONFIG.revealing_ms
    t = h.apply(Tick(seed(9)))
    results = t.events[1].public
    assert isinstance(results, Results)
    assert len(results.results) == 6
    assert len(t.logs) == 6
    assert h.total() == 6 * 5000
    for r in results.results:
        seat = h.state.seats[r.seat]
        assert seat is not None
        assert seat.balance == r.balance


def test_the_fast_copy_makes_what_dataclasses_replace_makes() -> None:
    """The state machine's copy with changes (each event numbered, each state and seat
    changed) equals :func:`dataclasses.replace`, for every message of a whole round,
    and refuses a class whose fields are not all its own slots (it would copy them
    wrong)."""
    h = seated(6)
    for i in range(6):
        h.apply(PlaceBet(f"p{i}", 50 + 10 * i, 5))
    h.now += CONFIG.dealing_ms
    h.apply(Tick(seed(9)))
    for i in range(6):
        h.apply(UseHouseWay(f"p{i}"))
    h.now += CONFIG.revealing_ms
    h.apply(Tick(seed(9)))
    messages = [m for o in h.outbound for m in (o.public, *o.private.values())]
    assert len({type(m) for m in messages}) >= 6
    for m in messages:
        assert copy_with(m, {"seq": m.seq + 1}) == dataclasses.replace(m, seq=m.seq + 1)
    assert copy_with(h.state, {"version": 9}) == dataclasses.replace(h.state, version=9)

    @dataclasses.dataclass(frozen=True, slots=True)
    class Base:
        a: int

    @dataclasses.dataclass(frozen=True, slots=True)
    class Derived(Base):
        b: int

    with pytest.raises(TypeError, match="not all its own slots"):
        copy_with(Derived(1, 2), {"b": 3})
    with pytest.raises(AssertionError, match="no such field"):
        copy_with(h.state, {"versoin": 9})


def test_betting_timeout_without_bets_waits_idle_then_a_bet_reopens() -> None:
    h = seated(2)
    h.now += CONFIG.betting_ms
    t = h.apply(Tick(seed(5)))
    assert phase(h) is Phase.IDLE
    assert h.state.deadline is None
    assert [o.public for o in t.events] == [
        PhaseChange(table_id="t1", seq=t.events[0].seq, round=1, phase="idle")
    ]
    h.now += 3_600_000  # an hour with nobody betting: nothing happens
    assert step(h.state, Tick(seed(5)), h.now).state is h.state
    h.apply(PlaceBet("p0", 20))
    assert phase(h) is Phase.BETTING
    assert h.state.deadline == h.now + CONFIG.betting_ms
    assert h.state.commitment == commitment(seed(1))  # the committed round is still this one


def test_betting_timeout_deals_to_bettors_and_stands_up_who_missed() -> None:
    h = seated(3)
    h.apply(PlaceBet("p0", 20))
    h.apply(SitOut("p1"))
    h.now += CONFIG.betting_ms
    t = h.apply(Tick(seed(5)))
    assert phase(h) is Phase.DEALING
    assert set(t.events[-1].private) == {"p0"}
    # Round runs out by its deadlines: p0 is set by the house way.
    for ms in (CONFIG.dealing_ms, CONFIG.setting_ms, CONFIG.revealing_ms):
        h.now += ms
        h.apply(Tick(seed(5)))
    assert phase(h) is Phase.SETTLING
    seat0 = h.state.seats[0]
    assert seat0 is not None
    assert seat0.set_by is not None
    assert seat0.set_by.value == "house_way_timeout"
    h.now += CONFIG.settling_ms
    h.apply(Tick(seed(6)))
    # p2 neither bet nor sat out: stood up with the balance returned.
    assert h.state.seat_of("p2") is None
    assert h.accounts["p2"] == 5000
    assert h.state.seat_of("p1") == 1


def test_setting_timeout_sets_by_house_way_and_records_it() -> None:
    h = seated(2)
    h.apply(PlaceBet("p0", 20))
    h.apply(PlaceBet("p1", 20))
    h.now += CONFIG.dealing_ms
    h.apply(Tick(seed(5)))
    low = house_way(deal(seed(1))[0], CONFIG.rules.house_way, CONFIG.rules.wheel).low
    h.apply(SetHand("p0", (low[0], low[1])))
    h.now += CONFIG.setting_ms
    t = h.apply(Tick(seed(5)))
    reveal = t.events[-1].public
    assert isinstance(reveal, Reveal)
    assert [v.house_way for v in reveal.hands] == [False, True, True]
    h.now += CONFIG.revealing_ms
    t = h.apply(Tick(seed(5)))
    assert t.logs[1][1].hand is not None
    assert t.logs[1][1].hand.house_way


def _foul_low(cards: tuple[int, ...]) -> tuple[int, int]:
    for s in all_splits(cards):
        if s.is_foul():
            return (s.low[0], s.low[1])
    raise AssertionError("no foul possible")


def _to_setting(h: Harness) -> None:
    h.apply(PlaceBet("p0", 100))
    h.now += CONFIG.dealing_ms
    h.apply(Tick(seed(5)))


@pytest.mark.parametrize("n", range(1, 40))
def test_foul_rejected_then_set_again(n: int) -> None:
    h = seated(0)
    h.accounts["p0"] = 5000
    h.apply(SitDown("p0", "Ann", 0, 1000, seed(n)))
    _to_setting(h)
    cards = deal(seed(n))[0]
    try:
        bad = _foul_low(cards)
    except AssertionError:
        return  # this deal has no foul (rare)
    before = h.state
    with pytest.raises(TableError) as info:
        h.apply(SetHand("p0", bad))
    assert info.value.code is ErrorCode.FOUL
    assert "set again" in info.value.message
    assert h.state is before
    h.apply(UseHouseWay("p0"))
    assert phase(h) is Phase.REVEALING


def test_foul_loses_under_lose_policy() -> None:
    config = TableConfig(table_id="t1", name="Lose", rules=RuleOptions(foul=FoulPolicy.LOSE))
    for n in range(1, 50):
        h = Harness(state=new_table(config), now=T0)
        h.accounts["p0"] = 5000
        h.apply(SitDown("p0", "Ann", 0, 1000, seed(n)))
        _to_setting(h)
        try:
            bad = _foul_low(deal(seed(n))[0])
        except AssertionError:
            continue
        h.apply(SetHand("p0", bad))
        h.now += CONFIG.revealing_ms
        t = h.apply(Tick(seed(5)))
        results = t.events[1].public
        assert isinstance(results, Results)
        assert results.results[0].outcome == "lose"
        assert results.results[0].payout == 0
        reveal_hand = t.logs[0][1].hand
        assert reveal_hand is not None
        assert reveal_hand.foul
        assert h.total() == 5000
        return
    raise AssertionError("no deal with a foul found")


def test_disconnect_mid_setting_and_return_sees_own_cards_and_deadline() -> None:
    h = seated(2)
    h.apply(PlaceBet("p0", 20))
    h.apply(PlaceBet("p1", 20))
    h.now += CONFIG.dealing_ms
    h.apply(Tick(seed(5)))
    h.apply(Disconnect("p1"))
    seat = h.state.seats[1]
    assert seat is not None
    assert not seat.connected
    h.now += 5000
    h.apply(Reconnect("p1"))
    snap = snapshot(h.state, "p1", h.now)
    assert snap.your_cards == deal(seed(1))[1]
    assert snap.phase == "setting"
    assert snap.deadline_ms == h.state.deadline
    assert snapshot(h.state, None, h.now).your_cards == ()
    h.apply(UseHouseWay("p1"))
    h.apply(UseHouseWay("p0"))
    assert phase(h) is Phase.REVEALING


def test_player_who_never_returns_is_set_settled_then_stood_up() -> None:
    h = seated(1)
    h.apply(PlaceBet("p0", 100))
    h.apply(Disconnect("p0"))
    for ms in (CONFIG.dealing_ms, CONFIG.setting_ms, CONFIG.revealing_ms):
        h.now += ms
        h.apply(Tick(seed(5)))
    assert h.state.results
    assert h.state.results[0].player == "p0"
    h.now += CONFIG.grace_ms
    h.apply(Tick(seed(6)))
    assert h.state.seat_of("p0") is None
    assert h.accounts["p0"] + h.state.house == h.total() == 5000


def test_leave_mid_round_leaves_after_settlement() -> None:
    h = seated(2)
    h.apply(PlaceBet("p0", 100))
    h.apply(PlaceBet("p1", 100))
    h.apply(StandUp("p0"))
    assert h.state.seat_of("p0") == 0
    for ms in (CONFIG.dealing_ms, CONFIG.setting_ms, CONFIG.revealing_ms):
        h.now += ms
        h.apply(Tick(seed(5)))
    assert any(r.player == "p0" for r in h.state.results)
    h.now += CONFIG.settling_ms
    h.apply(Tick(seed(6)))
    assert h.state.seat_of("p0") is None
    assert h.total() == 10_000


def test_stand_up_in_betting_returns_bet_and_balance() -> None:
    h = seated(2)
    h.apply(PlaceBet("p0", 100, 10))
    t = h.apply(StandUp("p0"))
    kinds = [(e.kind, e.amount) for e in t.entries]
    assert kinds == [(Kind.BET_RETURNED, 100), (Kind.BET_RETURNED, 10), (Kind.CASH_OUT, 1000)]
    assert h.accounts["p0"] == 5000


@pytest.mark.parametrize("phase_ms", [0, 1, 2])
def test_void_returns_every_bet(phase_ms: int) -> None:
    h = seated(3)
    h.apply(PlaceBet("p0", 100, 10))
    h.apply(PlaceBet("p1", 50))
    h.apply(PlaceBet("p2", 20))
    steps = (CONFIG.dealing_ms, CONFIG.setting_ms, CONFIG.revealing_ms)[:phase_ms]
    for ms in steps:
        h.now += ms
        h.apply(Tick(seed(5)))
    t = h.apply(Void("redis unavailable"))
    void = next(o.public for o in t.events if isinstance(o.public, RoundVoid))
    assert {(r.seat, r.refund) for r in void.refunds} == {(0, 110), (1, 50), (2, 20)}
    assert all(s.balance == 1000 for _, s in h.state.occupied())
    assert phase(h) is Phase.SETTLING
    assert len(t.logs) == 3
    assert all(log.outcome == "void" for _, log in t.logs)
    # A voided round is never settled afterwards.
    with pytest.raises(TableError):
        h.apply(Void("again"))
    h.now += CONFIG.settling_ms
    h.apply(Tick(seed(6)))
    assert h.state.round_no == 2
    assert h.total() == 15_000


def test_restart_catch_up_fires_past_deadlines_at_once() -> None:
    h = seated(1)
    h.apply(PlaceBet("p0", 100))
    # The server was down for ten minutes: the dealing deadline, long past, fires at
    # once, and the players get a whole setting phase from now (not zero time).
    h.now += 10 * 60_000
    h.apply(Tick(seed(5)))
    assert phase(h) is Phase.SETTING
    assert h.state.deadline == h.now + CONFIG.setting_ms


def test_transition_table_covers_every_phase_for_ticks() -> None:
    assert all((phase, Tick) in TRANSITIONS for phase in Phase)
    assert (Phase.SETTLING, Void) not in TRANSITIONS  # a settled round is never voided


def test_every_bonus_class_code_fits_the_wire() -> None:
    from protocol.codec import check
    from protocol.structs import SeatResult as WireResult
    from server.rules.bonus import BONUS_CLASS_CODES, BonusClass

    assert set(BONUS_CLASS_CODES) == set(BonusClass)
    for code in BONUS_CLASS_CODES.values():
        result = WireResult(
            seat=0, outcome="win", high="win", low="win", bet=10, payout=19, commission=1,
            bonus_bet=5, bonus_payout=0, balance=100, bonus_class=code,
        )  # fmt: skip
        check(Results(table_id="t1", seq=1, round=1, results=(result,)))
