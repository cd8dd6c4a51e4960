"""Random event sequences against the pure table (hypothesis state machine).

Invariants after every step: chips are conserved and the ledger moves exactly the
chips the state moved; no message or snapshot shows a card to someone who may not
see it; the parts of each step's state that changed, written over the parts stored
so far, give that state back exactly (as the store keeps it); deadlines always lie
ahead after a tick, so every round reaches settling; the phase moves only as the
machine's tables say; a changed config waits only while a round is in play; and
replaying the same events gives the same states.
"""

from __future__ import annotations

import contextlib
from dataclasses import replace

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from server.rules.envy import EnvyOptions
from server.rules.options import RuleOptions
from server.rules.splits import FoulPolicy
from server.table.errors import TableError
from server.table.events import (
    CashOut,
    ChangeConfig,
    ClearBet,
    CloseTable,
    Disconnect,
    Event,
    PlaceBet,
    Rebet,
    Rebuy,
    Reconnect,
    SetHand,
    SitDown,
    SitOut,
    StandUp,
    Tick,
    UseHouseWay,
    Void,
)
from server.table.machine import step
from server.table.state import Phase, TableConfig, new_table
from tests.server.table.helpers import Harness, Overdrawn, seed

PLAYERS = [f"p{i}" for i in range(5)]
ACTOR = st.integers(0, 63)  # picks a seated player when there is one
CONFIG = TableConfig(table_id="prop", name="Property table", grace_ms=20_000)
START = 5_000
# Settings the tables file may change to (phases no longer than CONFIG's, see the
# invariant on deadlines), and one with a seat count the table refuses.
CONFIGS = [
    CONFIG,
    replace(
        CONFIG, min_bet=20, max_bet=100, setting_ms=10_000,
        rules=RuleOptions(commission_pct=10, foul=FoulPolicy.LOSE),
    ),
    replace(CONFIG, seats=4),
    # The Envy bonus, paying often (on hands far more common than at a casino), so that
    # its lines run through the invariants (docs/DESIGN.md, "Wagers").
    replace(
        CONFIG,
        side_bets=(("envy", EnvyOptions(pays=(("three_of_a_kind", 20), ("straight", 15)))),),
    ),
]  # fmt: skip


class TableMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.h = Harness(state=new_table(CONFIG), now=1_000)
        self.h.accounts = dict.fromkeys(PLAYERS, START)
        self.total = self.h.total()

    def _actor(self, k: int) -> str:
        """Mostly a seated player (so events are often legal), sometimes anyone."""
        seated = [s.player for _, s in self.h.state.occupied()]
        if seated and k % 8:
            return seated[k % len(seated)]
        return PLAYERS[k % len(PLAYERS)]

    def _do(self, event: Event) -> None:
        with contextlib.suppress(TableError, Overdrawn):
            self.h.apply(event)

    @rule(
        player=st.sampled_from(PLAYERS),
        seat=st.none() | st.integers(0, 5),  # None: the first free seat
        buy_in=st.integers(50, 6000),
    )
    def sit(self, player: str, seat: int | None, buy_in: int) -> None:
        self._do(SitDown(player, player.upper(), seat, buy_in, seed(self.h.now)))

    @rule(k=ACTOR, seat=st.integers(0, 5))
    def sit_and_bet(self, k: int, seat: int) -> None:
        player = PLAYERS[k % len(PLAYERS)]
        self._do(SitDown(player, player.upper(), seat, 500, seed(self.h.now)))
        self._do(PlaceBet(player, 20, 5 * (k % 2)))

    @rule(k=ACTOR)
    def play(self, k: int) -> None:
        """What a player usually does in the phase: bet, or ask the house way."""
        player = self._actor(k)
        if self.h.state.phase in (Phase.IDLE, Phase.BETTING):
            self._do(PlaceBet(player, 20 + 5 * (k % 4)))
        else:
            self._do(UseHouseWay(player))

    @rule(k=ACTOR)
    def stand(self, k: int) -> None:
        player = self._actor(k)
        self._do(StandUp(player))

    @rule(
        k=ACTOR,
        amount=st.sampled_from([0, 5, 10, 15, 20, 100, 100, 995, 1000, 1005]),
        bonus=st.sampled_from([0, 0, 5, 50, 105]),
    )
    def bet(self, k: int, amount: int, bonus: int) -> None:
        player = self._actor(k)
        self._do(PlaceBet(player, amount, bonus))

    @rule(k=ACTOR)
    def rebet(self, k: int) -> None:
        player = self._actor(k)
        self._do(Rebet(player))

    @rule(k=ACTOR)
    def clear(self, k: int) -> None:
        player = self._actor(k)
        self._do(ClearBet(player))

    @rule(k=ACTOR)
    def sit_out(self, k: int) -> None:
        player = self._actor(k)
        self._do(SitOut(player))

    @rule(k=ACTOR, amount=st.integers(0, 1200))
    def cash_out(self, k: int, amount: int) -> None:
        self._do(CashOut(self._actor(k), amount))

    @rule(k=ACTOR, amount=st.integers(-5, 3000))
    def rebuy(self, k: int, amount: int) -> None:
        player = self._actor(k)
        self._do(Rebuy(player, amount))

    @rule(k=ACTOR, i=st.integers(0, 6), j=st.integers(0, 6))
    def set_hand(self, k: int, i: int, j: int) -> None:
        player = self._actor(k)
        state = self.h.state
        index = state.seat_of(player)
        if index is not None and state.hands is not None:
            cards = state.hands[index]
            self._do(SetHand(player, (cards[i], cards[j])))
        else:
            self._do(SetHand(player, (i, j)))

    @rule(k=ACTOR)
    def house_way(self, k: int) -> None:
        player = self._actor(k)
        self._do(UseHouseWay(player))

    @rule(k=ACTOR)
    def disconnect(self, k: int) -> None:
        player = self._actor(k)
        self._do(Disconnect(player))

    @rule(k=ACTOR)
    def reconnect(self, k: int) -> None:
        player = self._actor(k)
        self._do(Reconnect(player))

    @rule(ms=st.sampled_from([1, 500, 1_500, 1_500, 4_000, 4_000, 15_000, 30_000, 70_000]))
    def tick(self, ms: int) -> None:
        self.h.now += ms
        self._do(Tick(seed(self.h.now)))
        deadline = self.h.state.deadline
        assert deadline is None or deadline > self.h.now

    @rule(config=st.sampled_from(CONFIGS))
    def change_config(self, config: TableConfig) -> None:
        self._do(ChangeConfig(config))

    @rule()
    def close(self) -> None:
        self._do(CloseTable())

    @invariant()
    def a_closing_table_keeps_seats_only_for_the_round_in_play(self) -> None:
        state = self.h.state
        if state.closing and state.between_rounds() and state.phase is not Phase.SETTLING:
            assert not state.occupied()
            assert state.phase is Phase.IDLE

    @precondition(lambda self: self.h.state.phase is not Phase.IDLE)
    @rule()
    def void(self) -> None:
        self._do(Void("test fault"))

    @invariant()
    def chips_are_conserved(self) -> None:
        assert self.h.total() == self.total
        assert all(v >= 0 for v in self.h.accounts.values())
        for _, s in self.h.state.occupied():
            assert s.balance >= 0
            assert s.bet >= 0
            assert s.bonus >= 0

    @invariant()
    def a_changed_config_waits_only_for_the_round_in_play(self) -> None:
        state = self.h.state
        assert state.pending_config is None or not state.between_rounds()
        assert state.config.seats == CONFIG.seats

    @invariant()
    def timed_phases_have_deadlines(self) -> None:
        state = self.h.state
        assert (state.deadline is None) == (state.phase is Phase.IDLE)
        if state.phase in (Phase.DEALING, Phase.SETTING, Phase.REVEALING):
            assert state.in_round()
            # A round in play ends within the sum of its phase lengths.
            limit = CONFIG.dealing_ms + CONFIG.setting_ms + CONFIG.revealing_ms
            assert state.deadline is not None
            assert state.deadline - self.h.now <= limit

    def teardown(self) -> None:
        # The same events at the same times give the same states.
        replay = new_table(CONFIG)
        for event, now in self.h.log:
            replay = step(replay, event, now).state
        assert replay == self.h.state


TableMachine.TestCase.settings = settings(
    max_examples=300,
    stateful_step_count=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
TestTable = TableMachine.TestCase
