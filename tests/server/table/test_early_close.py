"""Betting closes as soon as no seated player is left without a bet (docs/RULES.md,
"The round"), however the last one without a bet left: standing up, stood up after
the grace time, away and then released, the last of several leaving in one step.

Each case would otherwise wait out the whole betting time for a player who is gone.
"""

from __future__ import annotations

from dataclasses import replace

from server.table.events import Disconnect, PlaceBet, SitDown, SitOut, StandUp, Tick
from server.table.state import Phase, new_table
from tests.server.table.helpers import CONFIG, T0, Harness, phase, seated, seed

# Grace shorter than betting, so a player can be released while betting is open.
SHORT_GRACE = replace(CONFIG, grace_ms=5_000)


def test_the_last_player_without_a_bet_standing_up_closes_betting() -> None:
    h = seated(3)
    h.apply(PlaceBet("p0", 20))
    h.apply(PlaceBet("p1", 30))
    t = h.apply(StandUp("p2"))
    assert phase(h) is Phase.DEALING
    assert h.state.deadline == h.now + CONFIG.dealing_ms
    assert h.state.seat_of("p2") is None
    assert h.accounts["p2"] == 5000
    # The bettors got their cards in the same step.
    dealt = {p for o in t.events for p in o.private}
    assert dealt == {"p0", "p1"}


def test_standing_up_while_others_still_have_to_bet_keeps_betting_open() -> None:
    h = seated(3)
    h.apply(PlaceBet("p0", 20))
    h.apply(StandUp("p2"))
    assert phase(h) is Phase.BETTING  # p1 has yet to bet or sit out


def test_the_last_undecided_standing_up_when_the_rest_sit_out_or_bet() -> None:
    h = seated(3)
    h.apply(PlaceBet("p0", 20))
    h.apply(SitOut("p1"))
    h.apply(StandUp("p2"))
    assert phase(h) is Phase.DEALING


def test_the_only_bettor_standing_up_leaves_no_round_to_deal() -> None:
    # No bet left at the table: no round to deal; betting stays open for whoever is
    # left, and its deadline decides.
    h = seated(2)
    h.apply(PlaceBet("p0", 20))
    h.apply(StandUp("p0"))
    assert phase(h) is Phase.BETTING
    h.apply(SitOut("p1"))
    assert phase(h) is Phase.BETTING


def test_the_last_player_without_a_bet_released_after_the_grace_time_closes_betting() -> None:
    h = seated(2, config=SHORT_GRACE)
    h.apply(Disconnect("p1"))  # away during betting, no bet
    h.apply(PlaceBet("p0", 20))
    assert phase(h) is Phase.BETTING  # p1 may still come back and bet
    h.now += SHORT_GRACE.grace_ms
    h.apply(Tick(seed(7)))
    assert h.state.seat_of("p1") is None
    assert phase(h) is Phase.DEALING
    assert h.state.deadline == h.now + SHORT_GRACE.dealing_ms


def test_a_bet_after_the_away_player_was_released_is_not_needed_to_close() -> None:
    # The away player is released first, while nobody has bet: betting stays open
    # (no bet, no round); the first bet of the one left then closes it at once.
    h = seated(2, config=SHORT_GRACE)
    h.apply(Disconnect("p1"))
    h.now += SHORT_GRACE.grace_ms
    h.apply(Tick(seed(7)))
    assert h.state.seat_of("p1") is None
    assert phase(h) is Phase.BETTING
    h.apply(PlaceBet("p0", 20))
    assert phase(h) is Phase.DEALING


def test_several_away_players_released_in_one_tick_close_betting_once() -> None:
    h = Harness(state=new_table(SHORT_GRACE), now=T0)
    for i in range(4):
        h.accounts[f"p{i}"] = 5000
        h.apply(SitDown(f"p{i}", f"Player {i}", i, 1000, seed(1)))
    h.apply(Disconnect("p2"))
    h.apply(Disconnect("p3"))
    h.apply(PlaceBet("p0", 20))
    h.apply(PlaceBet("p1", 20))
    h.now += SHORT_GRACE.grace_ms
    t = h.apply(Tick(seed(7)))
    assert [h.state.seat_of(p) for p in ("p2", "p3")] == [None, None]
    assert phase(h) is Phase.DEALING
    assert sum(1 for o in t.events if getattr(o.public, "phase", None) == "dealing") == 1


def test_an_away_player_still_in_grace_keeps_betting_open() -> None:
    # Away is not gone: within the grace time the seat may still bet.
    h = seated(2, config=SHORT_GRACE)
    h.apply(Disconnect("p1"))
    h.apply(PlaceBet("p0", 20))
    h.now += SHORT_GRACE.grace_ms - 1
    h.apply(Tick(seed(7)))
    assert phase(h) is Phase.BETTING
    assert h.state.seat_of("p1") == 1
