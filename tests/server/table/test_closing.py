"""Closing a table (``CloseTable``): no new seat, rebuy or bet from then on; the round
in play finishes, then every seat stands up with its chips back to its account, and
no new round opens."""

from __future__ import annotations

import msgpack
import pytest

from protocol.errors import ErrorCode
from server.store.tables.parts import CLOSING_PART, from_parts, to_parts
from server.table.closing import is_closed
from server.table.errors import TableError
from server.table.events import (
    CashOut,
    ClearBet,
    CloseTable,
    Event,
    PlaceBet,
    Rebet,
    Rebuy,
    SitDown,
    StandUp,
    Tick,
    UseHouseWay,
)
from server.table.ledger import Kind, Pot
from server.table.machine import TRANSITIONS
from server.table.state import Phase
from tests.server.table.helpers import Harness, phase, seated, seed


def close(h: Harness) -> None:
    """Close the table; the chips in the harness's accounts and at the table add up."""
    total = h.total()
    h.apply(CloseTable())
    assert h.state.closing
    assert h.total() == total


def test_legal_in_every_phase() -> None:
    assert all((p, CloseTable) in TRANSITIONS for p in Phase)


def test_an_idle_table_closes_at_once_every_seat_cashed_out() -> None:
    h = seated(2)
    h.now += h.state.config.betting_ms
    h.apply(Tick(seed(2)))  # nobody bet: idle
    assert phase(h) is Phase.IDLE
    t = h.apply(CloseTable())
    assert is_closed(t.state)
    assert {(e.kind, e.player, e.amount, e.source, e.dest) for e in t.entries} == {
        (Kind.CASH_OUT, "p0", 1000, Pot.TABLE, Pot.ACCOUNT),
        (Kind.CASH_OUT, "p1", 1000, Pot.TABLE, Pot.ACCOUNT),
    }
    assert h.accounts == {"p0": 5000, "p1": 5000}


def test_betting_with_no_bet_ends_and_the_seats_stand_up() -> None:
    h = seated(2)
    assert phase(h) is Phase.BETTING
    close(h)
    assert is_closed(h.state)
    assert h.state.deadline is None
    assert h.accounts == {"p0": 5000, "p1": 5000}


@pytest.mark.parametrize(
    "event",
    [
        SitDown("p9", "Late", None, 500, seed(9)),
        Rebuy("p0", 100),
        PlaceBet("p1", 100),
        Rebet("p0"),
    ],
    ids=lambda e: type(e).__name__,
)
def test_a_closing_table_refuses_seats_chips_and_bets_before_the_phase(event: Event) -> None:
    h = seated(2)
    h.accounts["p9"] = 5000
    h.apply(PlaceBet("p0", 100))
    close(h)  # a bet is in: the round goes on
    assert phase(h) is Phase.BETTING
    with pytest.raises(TableError) as refused:
        h.apply(event)
    assert refused.value.code is ErrorCode.TABLE_CLOSING
    h.now += h.state.config.betting_ms
    h.apply(Tick(seed(2)))
    assert phase(h) is Phase.DEALING
    with pytest.raises(TableError) as refused:  # not wrong_phase: closing comes first
        h.apply(event)
    assert refused.value.code is ErrorCode.TABLE_CLOSING


def test_the_round_in_play_finishes_then_every_seat_stands_up_and_no_round_opens() -> None:
    h = seated(3)
    for p in ("p0", "p1"):
        h.apply(PlaceBet(p, 100))
    h.now += h.state.config.betting_ms
    h.apply(Tick(seed(2)))
    assert phase(h) is Phase.DEALING
    close(h)
    assert len(h.state.occupied()) == 3  # seats kept while the round plays
    h.apply(CashOut("p2", 100))  # a seat not in the round still cashes out
    h.apply(StandUp("p2"))  # ... and stands up
    h.now += h.state.config.dealing_ms
    h.apply(Tick(seed(3)))
    for _, s in h.state.in_round():
        h.apply(UseHouseWay(s.player))
    h.now += h.state.config.revealing_ms
    h.apply(Tick(seed(4)))
    assert phase(h) is Phase.SETTLING
    assert h.state.occupied()  # the results are shown for the settling time
    h.now += h.state.config.settling_ms
    t = h.apply(Tick(seed(5)))
    assert is_closed(t.state)
    assert t.state.round_no == 1  # no new round
    assert t.state.seed is None
    assert sum(h.accounts.values()) + t.state.house == 3 * 5000
    assert {e.player for e in t.entries if e.dest is Pot.ACCOUNT} == {"p0", "p1"}


def test_betting_closes_when_the_last_bet_is_cleared() -> None:
    h = seated(2)
    h.apply(PlaceBet("p0", 100))
    close(h)
    t = h.apply(ClearBet("p0"))
    assert is_closed(t.state)
    assert h.accounts == {"p0": 5000, "p1": 5000}


def test_a_bet_of_zero_still_takes_a_bet_back_and_betting_ends() -> None:
    h = seated(2)
    h.apply(PlaceBet("p0", 100))
    close(h)
    with pytest.raises(TableError) as refused:
        h.apply(PlaceBet("p0", 50))  # lowered is still a bet
    assert refused.value.code is ErrorCode.TABLE_CLOSING
    t = h.apply(PlaceBet("p0", 0))
    assert is_closed(t.state)
    assert h.accounts == {"p0": 5000, "p1": 5000}


def test_closing_twice_changes_nothing() -> None:
    h = seated(2)
    h.apply(PlaceBet("p0", 100))
    close(h)
    before = h.state
    t = h.apply(CloseTable())
    assert t.state is before
    assert t.events == ()


def test_the_closing_is_stored_once_as_a_part_of_its_own() -> None:
    h = seated(2)
    h.apply(PlaceBet("p0", 100))
    before = h.state
    h.apply(CloseTable())
    parts = to_parts(h.state, before)
    assert msgpack.unpackb(parts[CLOSING_PART]) is True
    assert CLOSING_PART in to_parts(h.state, None)
    assert CLOSING_PART not in to_parts(before, None)  # never closed: no such part
    assert from_parts(h.parts).closing
    h.apply(ClearBet("p0"))
    assert CLOSING_PART not in to_parts(h.state, before=h.state)
