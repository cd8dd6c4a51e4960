"""A changed table config (``ChangeConfig``): at once between rounds, else pending in
the state until the round in play ends; never a change of seat count."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import msgpack
import pytest

from protocol.errors import ErrorCode
from server.rules.options import RuleOptions
from server.store.tables.parts import PENDING_CONFIG_PART, from_parts, to_parts
from server.table.errors import TableError
from server.table.events import ChangeConfig, ClearBet, PlaceBet, SitDown, Tick, UseHouseWay
from server.table.machine import TRANSITIONS
from server.table.state import Phase, TableConfig, TableState, new_table
from tests.server.table.helpers import CONFIG, Harness, phase, seed

T0 = 1_000_000
# Every kind of setting changes: limits, timers and the rules a round is settled by.
NEW = replace(
    CONFIG, max_bet=2000, betting_ms=20_000, rules=RuleOptions(commission_pct=10)
)  # fmt: skip


def seated(players: int) -> Harness:
    h = Harness(state=new_table(CONFIG), now=T0)
    for i in range(players):
        h.accounts[f"p{i}"] = 5000
        h.apply(SitDown(f"p{i}", f"Player {i}", i, 3000, seed(1)))
    return h


def bet_all(h: Harness) -> None:
    """Everyone seated bets: betting closes early and the cards are dealt."""
    for _, s in h.state.occupied():
        h.apply(PlaceBet(s.player, 100))
    assert phase(h) is Phase.DEALING


def to_revealing(h: Harness) -> None:
    h.now += h.state.config.dealing_ms
    h.apply(Tick(seed(2)))
    for _, s in h.state.in_round():
        h.apply(UseHouseWay(s.player))
    assert phase(h) is Phase.REVEALING


def settle(h: Harness) -> None:
    h.now += h.state.config.revealing_ms
    h.apply(Tick(seed(3)))
    assert phase(h) is Phase.SETTLING


def change(h: Harness, config: TableConfig) -> TableState:
    """Apply the change; it never sends anything nor moves chips. The state before."""
    before = h.state
    t = h.apply(ChangeConfig(config))
    assert (t.events, t.entries, t.logs) == ((), (), ())
    assert t.state.phase is before.phase
    return before


def test_legal_in_every_phase() -> None:
    assert all((p, ChangeConfig) in TRANSITIONS for p in Phase)


def idle_empty() -> Harness:
    return Harness(state=new_table(CONFIG), now=T0)


def idle_after_no_bet() -> Harness:
    h = seated(1)
    h.now += CONFIG.betting_ms
    h.apply(Tick(seed(2)))
    assert phase(h) is Phase.IDLE
    return h


def betting_no_bet() -> Harness:
    h = seated(2)
    assert phase(h) is Phase.BETTING
    return h


def settling() -> Harness:
    h = seated(1)
    bet_all(h)
    to_revealing(h)
    settle(h)
    return h


@pytest.mark.parametrize("between", [idle_empty, idle_after_no_bet, betting_no_bet, settling])
def test_between_rounds_it_applies_at_once(between: Callable[[], Harness]) -> None:
    h = between()
    before = change(h, NEW)
    assert h.state.config == NEW
    assert h.state.pending_config is None
    assert h.state.version == before.version + 1
    if phase(h) is Phase.BETTING:  # the new limits hold for this round's bets
        assert CONFIG.max_bet < 2000
        h.apply(PlaceBet("p0", 2000))


@pytest.mark.parametrize("when", [Phase.BETTING, Phase.DEALING, Phase.SETTING, Phase.REVEALING])
def test_during_a_round_it_waits_for_the_settlement(when: Phase) -> None:
    """The round in play is settled under the settings it was played with (as on a
    table that never changed), and the next round opens under the new ones."""
    h, same = seated(2), seated(2)
    for table in (h, same):
        table.apply(PlaceBet("p0", 100))  # a bet in: a round is in play
        if when is not Phase.BETTING:
            table.apply(PlaceBet("p1", 100))
        if when in (Phase.SETTING, Phase.REVEALING):
            table.now += CONFIG.dealing_ms
            table.apply(Tick(seed(2)))
        if when is Phase.REVEALING:
            for _, s in table.state.in_round():
                table.apply(UseHouseWay(s.player))
        assert phase(table) is when
    before = change(h, NEW)
    assert h.state.pending_config == NEW
    assert h.state.config is before.config
    for table in (h, same):
        if phase(table) is Phase.BETTING:
            table.apply(PlaceBet("p1", 100))
        if phase(table) is Phase.DEALING:
            table.now += CONFIG.dealing_ms
            table.apply(Tick(seed(2)))
        if phase(table) is Phase.SETTING:
            for _, s in table.state.in_round():
                table.apply(UseHouseWay(s.player))
        assert table.state.config == CONFIG  # still, until the round is settled
        settle(table)
    assert h.state.results == same.state.results
    assert h.state.deadline == same.state.deadline  # settling lasts as it did
    assert h.state.config == NEW
    assert h.state.pending_config is None
    h.now += CONFIG.settling_ms
    h.apply(Tick(seed(4)))
    assert phase(h) is Phase.BETTING
    assert h.state.deadline == h.now + NEW.betting_ms


def test_the_last_bet_taken_back_ends_the_wait() -> None:
    h = seated(2)
    h.apply(PlaceBet("p0", 100))
    change(h, NEW)
    assert h.state.config == CONFIG
    h.apply(ClearBet("p0"))  # no bet in any more: between rounds
    assert h.state.config == NEW
    assert h.state.pending_config is None


def test_settings_back_to_the_table_s_own_withdraw_a_pending_change() -> None:
    h = seated(1)
    bet_all(h)
    change(h, NEW)
    assert h.state.pending_config == NEW
    change(h, replace(CONFIG))  # equal, not the same object
    assert h.state.pending_config is None
    assert h.state.config is CONFIG
    to_revealing(h)
    settle(h)
    assert h.state.config is CONFIG


def test_the_same_change_again_changes_nothing() -> None:
    h = seated(1)
    bet_all(h)
    change(h, NEW)
    before = h.state
    assert h.apply(ChangeConfig(replace(NEW))).state is before


@pytest.mark.parametrize("seats", [4, 1])
def test_a_different_seat_count_is_refused(seats: int) -> None:
    for h in (idle_empty(), seated(1)):
        before = h.state
        with pytest.raises(TableError) as info:
            h.apply(ChangeConfig(replace(NEW, seats=seats)))
        assert info.value.code is ErrorCode.BAD_MESSAGE
        assert "6 seats" in info.value.message
        assert h.state is before


def test_a_pending_change_is_stored_and_read_back() -> None:
    """The harness stores every step's parts (as the store does): a table taken over
    mid-round has its pending change, and applies it when the round ends."""
    h = seated(2)
    bet_all(h)
    before = change(h, NEW)
    written = to_parts(h.state, before)
    assert PENDING_CONFIG_PART in written
    reloaded = from_parts(h.parts)
    assert reloaded == h.state
    assert reloaded.pending_config == NEW
    # A table stored before pending configs existed has none.
    without = {k: v for k, v in h.parts.items() if k != PENDING_CONFIG_PART}
    assert from_parts(without).pending_config is None
    # Another owner carries on from the stored parts.
    taken = Harness(state=reloaded, accounts=dict(h.accounts), now=h.now)
    to_revealing(taken)
    settle(taken)
    assert taken.state.config == NEW
    assert taken.state.pending_config is None
    assert msgpack.unpackb(taken.parts[PENDING_CONFIG_PART]) is None
    assert from_parts(taken.parts) == taken.state
