"""A seated player's requests at the pure table, scripted: sitting down, bets and their
limits, rebets and rebuys, cashing out, hands set or refused; and what they change."""

from __future__ import annotations

import pytest

from protocol.errors import ErrorCode
from protocol.fairness import deal
from server.rules.houseways import house_way
from server.table.errors import TableError
from server.table.events import (
    CashOut,
    ClearBet,
    Event,
    PlaceBet,
    Rebet,
    Rebuy,
    SetHand,
    SitDown,
    StandUp,
    Tick,
    UseHouseWay,
)
from server.table.ledger import Kind, Pot
from server.table.machine import step, suggestion
from server.table.state import Phase
from tests.server.table.helpers import CONFIG, phase, seated, seed


def test_sitting_down_anywhere_takes_the_first_free_seat_or_finds_the_table_full() -> None:
    h = seated(2)
    h.apply(StandUp("p0"))
    h.accounts["p7"] = h.accounts["p8"] = 5000
    t = h.apply(SitDown("p7", "Gus", None, 100, seed(1)))
    assert t.state.seat_of("p7") == 0
    for i in range(2, CONFIG.seats):
        h.accounts[f"q{i}"] = 5000
        h.apply(SitDown(f"q{i}", "Q", None, 100, seed(1)))
    assert all(s is not None for s in h.state.seats)
    before = h.state
    with pytest.raises(TableError) as info:
        h.apply(SitDown("p8", "Hal", None, 100, seed(1)))
    assert info.value.code is ErrorCode.TABLE_FULL
    assert h.state is before
    # A seated player asking for any seat is told they have one, full table or not.
    with pytest.raises(TableError) as info:
        h.apply(SitDown("p7", "Gus", None, 100, seed(1)))
    assert info.value.code is ErrorCode.ALREADY_SEATED


def test_bets_limits_balance_and_phase_errors_change_nothing() -> None:
    h = seated(1, buy_in=100)
    cases: list[tuple[Event, ErrorCode]] = [
        (PlaceBet("p0", 5), ErrorCode.BET_LIMITS),
        (PlaceBet("p0", 2000), ErrorCode.BET_LIMITS),
        (PlaceBet("p0", 13), ErrorCode.BET_LIMITS),
        (PlaceBet("p0", 0, 10), ErrorCode.NO_BET),
        (PlaceBet("p0", 100, 10), ErrorCode.INSUFFICIENT_BALANCE),
        (PlaceBet("nobody", 10), ErrorCode.NOT_SEATED),
        (SetHand("p0", (0, 1)), ErrorCode.WRONG_PHASE),
        (Rebet("p0"), ErrorCode.NO_BET),
        (SitDown("p0", "Ann", 1, 100, seed(1)), ErrorCode.ALREADY_SEATED),
        (SitDown("p9", "Bob", 0, 100, seed(1)), ErrorCode.SEAT_TAKEN),
        (SitDown("p9", "Bob", 1, 1, seed(1)), ErrorCode.BET_LIMITS),
    ]
    for event, code in cases:
        before = h.state
        with pytest.raises(TableError) as info:
            h.apply(event)
        assert info.value.code is code, event
        assert h.state is before
    with pytest.raises(TableError) as info:
        h.apply(PlaceBet("p0", 100, 10))
    assert "lower the bet or rebuy" in info.value.message


def test_change_rebet_clear_and_rebuy() -> None:
    h = seated(2)
    h.apply(PlaceBet("p0", 100, 10))
    h.apply(PlaceBet("p0", 40))
    seat = h.state.seats[0]
    assert seat is not None
    assert (seat.bet, seat.bonus, seat.balance) == (40, 0, 960)
    h.apply(ClearBet("p0"))
    seat = h.state.seats[0]
    assert seat is not None
    assert (seat.bet, seat.balance) == (0, 1000)
    h.apply(Rebuy("p0", 500))
    assert h.accounts["p0"] == 3500
    h.apply(PlaceBet("p0", 30, 5))
    h.apply(PlaceBet("p1", 30))
    for ms in (CONFIG.dealing_ms, CONFIG.setting_ms, CONFIG.revealing_ms, CONFIG.settling_ms):
        h.now += ms
        h.apply(Tick(seed(5)))
    assert phase(h) is Phase.BETTING
    h.apply(Rebet("p0"))
    seat = h.state.seats[0]
    assert seat is not None
    assert (seat.bet, seat.bonus) == (30, 5)


def test_a_bet_as_it_stands_changes_nothing() -> None:
    """The same bet again (a request sent twice), or a clear with nothing to clear: no
    new version, no event, no ledger entry; the requester's ok is the whole answer."""
    h = seated(2)
    h.apply(ClearBet("p0"))  # nothing to clear yet
    before = h.state
    for event in (ClearBet("p0"), PlaceBet("p0", 0)):
        t = step(before, event, h.now)
        assert t.state is before
        assert (t.events, t.entries) == ((), ())
    h.apply(PlaceBet("p0", 40, 5))
    placed = h.state
    t = step(placed, PlaceBet("p0", 40, 5), h.now)
    assert t.state is placed
    assert (t.events, t.entries) == ((), ())
    # A different bonus is a change.
    t = step(placed, PlaceBet("p0", 40, 0), h.now)
    assert t.state.version == placed.version + 1
    assert [e.kind for e in t.entries] == [Kind.BET_RETURNED]


def test_cash_out_part_keeps_the_seat_and_all_by_zero() -> None:
    h = seated(1)
    t = h.apply(CashOut("p0", 300))
    assert [(e.kind, e.amount, e.dest) for e in t.entries] == [(Kind.CASH_OUT, 300, Pot.ACCOUNT)]
    seat = h.state.seats[0]
    assert seat is not None
    assert seat.balance == 700
    assert h.accounts["p0"] == 4300
    with pytest.raises(TableError) as info:
        h.apply(CashOut("p0", 701))
    assert info.value.code is ErrorCode.INSUFFICIENT_BALANCE
    h.apply(CashOut("p0", 0))
    assert h.state.seat_of("p0") == 0
    assert h.accounts["p0"] == 5000


def test_rebuy_refused_during_a_round_in_play() -> None:
    h = seated(1)
    h.apply(PlaceBet("p0", 100))
    with pytest.raises(TableError) as info:
        h.apply(Rebuy("p0", 100))
    assert info.value.code is ErrorCode.WRONG_PHASE


def test_a_request_out_of_its_phase_is_refused_in_words() -> None:
    """Clients show the message as it is: the request in words, not a class's name."""
    h = seated(1)
    with pytest.raises(TableError) as info:
        h.apply(SetHand("p0", (0, 1)))
    assert info.value.code is ErrorCode.WRONG_PHASE
    assert info.value.message == "Setting a hand is not allowed while the table is betting"


def test_suggestion_does_not_set_and_matches_house_way() -> None:
    h = seated(1)
    h.apply(PlaceBet("p0", 100))
    choice = suggestion(h.state, "p0")
    assert not choice.applied
    expected = house_way(deal(seed(1))[0], CONFIG.rules.house_way, CONFIG.rules.wheel)
    assert choice.low == expected.low
    seat = h.state.seats[0]
    assert seat is not None
    assert seat.low is None


def test_already_set_and_bad_hand() -> None:
    h = seated(2)
    h.apply(PlaceBet("p0", 100))
    h.apply(PlaceBet("p1", 100))
    h.now += CONFIG.dealing_ms
    h.apply(Tick(seed(5)))
    other = deal(seed(1))[1]
    with pytest.raises(TableError) as info:
        h.apply(SetHand("p0", (other[0], other[1])))
    assert info.value.code is ErrorCode.BAD_HAND
    h.apply(UseHouseWay("p0"))
    with pytest.raises(TableError) as info:
        h.apply(UseHouseWay("p0"))
    assert info.value.code is ErrorCode.ALREADY_SET
