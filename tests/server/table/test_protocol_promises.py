"""What protocol/PROTOCOL.md promises of the table's events and refusals, in the pure
core: the deal, hands set at the deadline, bonus classes, amounts in the table's unit,
the betting phase's commitment, and which error wins when two apply (section 10)."""

from __future__ import annotations

import pytest

from protocol.errors import ErrorCode
from protocol.examples import SPLITS
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
)
from server.rules import bonus as bonus_rules
from server.rules.values import high_name, high_value, low_name, low_value
from server.table.errors import TableError
from server.table.events import (
    Event,
    PlaceBet,
    Rebuy,
    SetHand,
    SitDown,
    SitOut,
    StandUp,
    Tick,
    UseHouseWay,
)
from server.table.machine import suggestion
from server.table.state import Phase, TableConfig, TableState
from server.table.views import snapshot
from tests.server.table.helpers import CONFIG, T0, Harness, phase, seated, seed


def refused(h: Harness, event: Event) -> ErrorCode:
    """The code ``event`` is refused with; the table unchanged."""
    before = h.state
    with pytest.raises(TableError) as info:
        h.apply(event)
    assert h.state is before
    return info.value.code


def asked(state: TableState, player: str) -> ErrorCode:
    """The code a house way suggestion for ``player`` is refused with."""
    with pytest.raises(TableError) as info:
        suggestion(state, player)
    return info.value.code


def to_setting(h: Harness) -> None:
    h.now += CONFIG.dealing_ms
    h.apply(Tick(seed(5)))
    assert phase(h) is Phase.SETTING


def test_the_deal_is_one_cards_event_per_seat_with_a_bet_each_its_own_seq() -> None:
    # Section 9: one `cards` per seat with a bet, in seat order, each with its own
    # seq; every other recipient gets `hidden` with that seq.
    h = seated(3)
    h.apply(PlaceBet("p2", 20))
    h.apply(SitOut("p1"))
    t = h.apply(PlaceBet("p0", 30))
    hands = deal(seed(1))
    assert [type(o.public) for o in t.events] == [BetPlaced, PhaseChange, Hidden, Hidden]
    first, second = t.events[2], t.events[3]
    assert second.seq == first.seq + 1
    assert first.private == {"p0": Cards("t1", first.seq, 1, 0, hands[0])}
    assert second.private == {"p2": Cards("t1", second.seq, 1, 2, hands[2])}
    assert first.public == Hidden("t1", first.seq)


def test_a_hand_set_at_the_deadline_is_announced_by_hand_set() -> None:
    # Section 9: `hand_set` with `house_way: true`, "asked for, or at the deadline".
    h = seated(3)
    for p in ("p0", "p1", "p2"):
        h.apply(PlaceBet(p, 20))
    to_setting(h)
    h.apply(UseHouseWay("p1"))
    h.now += CONFIG.setting_ms
    t = h.apply(Tick(seed(5)))
    assert [o.public for o in t.events[:2]] == [
        HandSet("t1", t.events[0].seq, 1, 0, house_way=True),
        HandSet("t1", t.events[0].seq + 1, 1, 2, house_way=True),
    ]
    assert [type(o.public) for o in t.events[2:]] == [PhaseChange, Reveal]


def _seed_whose_seat_0_holds(wanted: set[bonus_rules.BonusClass]) -> bytes:
    for n in range(10_000):
        if bonus_rules.classify_bonus(deal(seed(n))[0]) in wanted:
            return seed(n)
    raise AssertionError(f"no seed deals {wanted} to seat 0")


@pytest.mark.parametrize("pays", [True, False])
def test_a_bonus_class_is_a_paying_line_of_the_pay_table_or_nil(pays: bool) -> None:
    # SeatResult.bonus_class: "the pay-table line the seven cards made, nil if none";
    # the game log's record says the same.
    table = bonus_rules.pay_table(CONFIG.rules.bonus_pay_table)
    paying = {c for c in bonus_rules.BonusClass if table.odds_of(c)}
    wanted = paying if pays else set(bonus_rules.BonusClass) - paying
    h = Harness(now=T0)
    h.accounts["p0"] = 5000
    h.apply(SitDown("p0", "Ann", 0, 1000, _seed_whose_seat_0_holds(wanted)))
    h.apply(PlaceBet("p0", 100, 10))
    to_setting(h)
    h.apply(UseHouseWay("p0"))
    h.now += CONFIG.revealing_ms
    t = h.apply(Tick(seed(6)))
    results = next(o.public for o in t.events if isinstance(o.public, Results))
    (result,) = results.results
    ((_, record),) = t.logs
    if pays:
        assert result.bonus_payout > 0
        assert result.bonus_class in {bonus_rules.BONUS_CLASS_CODES[c] for c in paying}
    else:
        assert (result.bonus_payout, result.bonus_class) == (0, None)
    assert record.bonus_class == result.bonus_class


def test_buy_ins_and_rebuys_are_multiples_of_the_unit() -> None:
    # Section 8, table_info.bet_unit: "every bet, bonus, buy-in and rebuy is a multiple".
    config = TableConfig(table_id="t1", name="Tens", denominations=(10, 25))
    assert config.bet_unit == 5  # the greatest common divisor, not the smallest chip
    h = seated(1, config=config)
    h.accounts["p9"] = 5000
    assert refused(h, SitDown("p9", "Bob", 1, 103, seed(1))) is ErrorCode.BET_LIMITS
    assert refused(h, Rebuy("p0", 7)) is ErrorCode.BET_LIMITS
    h.apply(SitDown("p9", "Bob", 1, 105, seed(1)))
    h.apply(Rebuy("p0", 15))
    assert h.accounts == {"p0": 5000 - 1015, "p9": 5000 - 105}


def test_betting_reopened_from_idle_opens_with_the_commitment_again() -> None:
    # Section 4: a `commitment` event opens every betting phase.
    h = seated(1)
    h.now += CONFIG.betting_ms
    h.apply(Tick(seed(5)))
    assert phase(h) is Phase.IDLE
    t = h.apply(PlaceBet("p0", 20))
    phase_event, commit, bet = (o.public for o in t.events[:3])
    assert isinstance(phase_event, PhaseChange)
    assert (phase_event.phase, phase_event.round) == ("betting", 1)
    assert commit == Commitment("t1", commit.seq, 1, commitment(seed(1)))
    assert isinstance(bet, BetPlaced)


def test_a_suggestion_is_refused_as_setting_the_hand_would_be() -> None:
    # Section 6: `house_way` outside dealing and setting is `wrong_phase`, whatever
    # the seat; then `not_seated`, then `no_bet`.
    h = seated(2)
    h.apply(PlaceBet("p0", 20))
    assert refused(h, SetHand("p0", (0, 1))) is ErrorCode.WRONG_PHASE
    assert refused(h, UseHouseWay("p0")) is ErrorCode.WRONG_PHASE
    assert asked(h.state, "p0") is ErrorCode.WRONG_PHASE
    assert asked(h.state, "nobody") is ErrorCode.WRONG_PHASE
    h.apply(SitOut("p1"))
    to_setting(h)
    assert asked(h.state, "nobody") is ErrorCode.NOT_SEATED
    assert asked(h.state, "p1") is ErrorCode.NO_BET
    h.apply(UseHouseWay("p0"))  # the last hand set: revealing
    assert asked(h.state, "p0") is ErrorCode.WRONG_PHASE


def test_when_two_errors_apply_the_first_in_the_order_of_section_10_wins() -> None:
    h = seated(2)
    h.accounts["p9"] = 5000
    # The seat before the request's own checks.
    assert refused(h, SitDown("p0", "Ann", 1, 1, seed(1))) is ErrorCode.ALREADY_SEATED
    assert refused(h, SitDown("p9", "Bob", 0, 1, seed(1))) is ErrorCode.SEAT_TAKEN
    assert refused(h, PlaceBet("nobody", 7)) is ErrorCode.NOT_SEATED
    assert refused(h, Rebuy("nobody", 7)) is ErrorCode.NOT_SEATED
    # The phase before the seat.
    assert refused(h, SetHand("nobody", (0, 1))) is ErrorCode.WRONG_PHASE
    h.apply(PlaceBet("p0", 20))
    h.apply(PlaceBet("p1", 20))
    assert refused(h, PlaceBet("nobody", 7)) is ErrorCode.WRONG_PHASE
    # Rebuy and cash-out: legal by the player's own bet, so the seat, then the phase.
    assert refused(h, Rebuy("p0", 7)) is ErrorCode.WRONG_PHASE
    to_setting(h)
    assert refused(h, SetHand("nobody", (0, 1))) is ErrorCode.NOT_SEATED
    h.apply(UseHouseWay("p0"))
    # The request's own checks in the order its errors are listed: already set first.
    others = [c for c in range(53) if c not in deal(seed(1))[0]]
    assert refused(h, SetHand("p0", (others[0], others[1]))) is ErrorCode.ALREADY_SET


def test_hand_names_are_in_sentence_case_as_the_worked_example_shows() -> None:
    # Section 2: hand names are English, the first letter a capital.
    for high, low, high_text, low_text in SPLITS:
        assert high_name(high_value(high)) == high_text
        assert low_name(low_value(low)) == low_text
        assert high_text == high_text[0].upper() + high_text[1:].lower()


def test_idle_carries_the_round_waiting_for_a_bet_or_the_last_one_dealt() -> None:
    # Section 4: betting closed with no bet keeps the round's number and commitment;
    # a table left empty after a round shows the last round dealt, with no commitment.
    h = seated(1)
    h.now += CONFIG.betting_ms
    t = h.apply(Tick(seed(5)))
    assert t.events[-1].public == PhaseChange("t1", t.events[-1].seq, 1, "idle")
    assert snapshot(h.state, None, h.now).commitment == commitment(seed(1))
    h.apply(PlaceBet("p0", 20))
    to_setting(h)
    h.apply(UseHouseWay("p0"))
    h.now += CONFIG.revealing_ms
    h.apply(Tick(seed(6)))
    h.apply(StandUp("p0"))
    h.now += CONFIG.settling_ms
    t = h.apply(Tick(seed(7)))
    assert t.events[-1].public == PhaseChange("t1", t.events[-1].seq, 1, "idle")
    assert snapshot(h.state, None, h.now).commitment is None
