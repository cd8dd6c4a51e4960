"""Seats of players who are away: the grace time decides, whatever the order in which
the table learns of the absence (docs/RULES.md, "Disconnection").

A player away keeps the seat for ``grace_ms`` from the moment the table knows; a round
dealt while they are away, or one they drop out of before it ends, is not held against
them as a missed round. After a crash a betting phase in progress starts again when the
new holder takes the table (``TakeOver``), and the new holder tells who is away
(``Disconnect``), maybe only after a betting deadline already past has fired.
"""

from __future__ import annotations

import pytest

from protocol.messages import PhaseChange
from server.table.events import ClearBet, Disconnect, PlaceBet, Reconnect, TakeOver, Tick
from server.table.state import Phase, TableState
from tests.server.table.helpers import CONFIG, Harness, phase, seated, seed


def play_out(h: Harness) -> None:
    """The round in play runs out by its deadlines, up to the next betting phase."""
    for ms in (CONFIG.dealing_ms, CONFIG.setting_ms, CONFIG.revealing_ms, CONFIG.settling_ms):
        h.now += ms
        h.apply(Tick(seed(h.now)))
    assert phase(h) is Phase.BETTING


def seat_of(state: TableState, player: str) -> int | None:
    return state.seat_of(player)


def test_away_when_betting_closes_the_player_keeps_the_seat() -> None:
    h = seated(2)
    h.apply(PlaceBet("p0", 20))
    h.apply(Disconnect("p1"))  # their network dropped during betting
    h.now += CONFIG.betting_ms
    h.apply(Tick(seed(5)))
    assert phase(h) is Phase.DEALING
    play_out(h)
    assert seat_of(h.state, "p1") == 1
    h.apply(Reconnect("p1"))
    seat = h.state.seats[1]
    assert seat is not None
    assert (seat.connected, seat.missed) == (True, False)


def test_a_drop_the_table_learns_of_after_the_deal_is_not_held_against_the_player() -> None:
    # The connection was lost before the deal, but the server noticed it only after
    # (a silent connection is found out by the heartbeat): the seat said connected
    # when betting closed.
    h = seated(2)
    h.apply(PlaceBet("p0", 20))
    h.now += CONFIG.betting_ms
    h.apply(Tick(seed(5)))
    seat = h.state.seats[1]
    assert seat is not None
    assert seat.missed
    h.apply(Disconnect("p1"))
    h.apply(Reconnect("p1"))  # back before the round ends
    play_out(h)
    assert seat_of(h.state, "p1") == 1


def test_connected_throughout_a_player_who_missed_the_round_is_stood_up() -> None:
    h = seated(2)
    h.apply(PlaceBet("p0", 20))
    h.now += CONFIG.betting_ms
    h.apply(Tick(seed(5)))
    play_out(h)
    assert seat_of(h.state, "p1") is None
    assert h.accounts["p1"] == 5000


def _crashed_in_betting() -> Harness:
    """Two seated; p0 bet, then the server died; the betting deadline passed while the
    table was not run. The stored seats still say connected."""
    h = seated(2)
    h.apply(PlaceBet("p0", 20))
    h.now += CONFIG.betting_ms + 2_000
    return h


def test_after_a_crash_betting_starts_again_for_those_who_could_not_bet() -> None:
    h = _crashed_in_betting()
    t = h.apply(TakeOver())
    assert phase(h) is Phase.BETTING
    assert h.state.deadline == h.now + CONFIG.betting_ms
    assert [o.public for o in t.events] == [
        PhaseChange("t1", t.events[0].seq, 1, "betting", h.now + CONFIG.betting_ms)
    ]
    h.apply(Tick(seed(5)))  # the deadline is no longer past: nothing fires
    assert phase(h) is Phase.BETTING
    # p1, back on the new server (its hello came first: never marked away), bets.
    h.apply(PlaceBet("p1", 20))
    assert phase(h) is Phase.DEALING


def test_after_a_crash_the_new_holder_tells_of_the_absence_before_the_deadline() -> None:
    h = _crashed_in_betting()
    h.apply(TakeOver())
    taken = h.now
    h.apply(Disconnect("p1"))  # no connection of p1 on the new server
    h.now = taken + CONFIG.betting_ms
    h.apply(Tick(seed(5)))
    play_out(h)
    assert seat_of(h.state, "p1") == 1
    seat = h.state.seats[1]
    assert seat is not None
    assert seat.disconnected_at == taken  # the grace time runs from the takeover


def test_after_a_crash_a_past_deadline_before_the_new_holder_s_word_keeps_the_seat() -> None:
    # The take-over was not stored (Redis failed): the deadline already past fires
    # with p1 counted as connected, and the new holder says p1 is away only after.
    h = _crashed_in_betting()
    h.apply(Tick(seed(5)))
    assert phase(h) is Phase.DEALING
    h.apply(Disconnect("p1"))
    play_out(h)
    assert seat_of(h.state, "p1") == 1


def test_the_grace_time_ends_at_the_first_moment_between_rounds() -> None:
    h = _crashed_in_betting()
    h.apply(TakeOver())
    taken = h.now
    h.apply(Disconnect("p1"))  # p1 never comes back
    while seat_of(h.state, "p1") is not None:
        assert h.now - taken < CONFIG.grace_ms + CONFIG.betting_ms
        if h.state.seats[0] is not None and not h.state.seats[0].has_bet:
            h.apply(PlaceBet("p0", 20))
        assert phase(h) is Phase.BETTING  # p1, away, holds the early close back
        assert h.state.deadline is not None
        h.now = h.state.deadline
        h.apply(Tick(seed(6)))
        if phase(h) is Phase.DEALING:
            play_out(h)
    # Stood up once the grace time ran out, with the table balance back in the
    # account; p0 plays on.
    assert h.now - taken >= CONFIG.grace_ms
    assert seat_of(h.state, "p0") == 0
    assert h.accounts["p1"] == 5000


@pytest.mark.parametrize("to", [Phase.IDLE, Phase.DEALING, Phase.SETTING])
def test_a_take_over_outside_betting_changes_nothing(to: Phase) -> None:
    h = seated(2)
    h.apply(PlaceBet("p0", 20))
    if to is Phase.IDLE:
        h.apply(ClearBet("p0"))
        h.now += CONFIG.betting_ms
        h.apply(Tick(seed(5)))
    else:
        h.apply(PlaceBet("p1", 20))
        if to is Phase.SETTING:
            h.now += CONFIG.dealing_ms
            h.apply(Tick(seed(5)))
    assert phase(h) is to
    before = h.state
    h.now += 10
    t = h.apply(TakeOver())
    assert t.state is before
    assert not t.events
