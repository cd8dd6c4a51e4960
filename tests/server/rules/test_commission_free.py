"""The commission-free main bet (docs/RULES.md, "Commission-free tables"): a win pays
even money with no commission, and the dealer's barred hand pushes every main bet, won
or lost; a foul that loses still loses, copies go to the dealer as ever."""

from __future__ import annotations

import pytest

from server.rules.cards import parse_cards
from server.rules.dealer_hands import is_nine_high_low, is_queen_high_pai_gow
from server.rules.houseways import house_way
from server.rules.options import CommissionFree, CommissionRounding, HouseWay, RuleOptions
from server.rules.settlement import Outcome, settle, settle_values
from server.rules.splits import FoulPolicy, split_with_low

EZ = RuleOptions(commission_free=CommissionFree.EZ)
NINE = RuleOptions(commission_free=CommissionFree.NINE_LOW)

# The dealer's queen-high pai gow, and a hand that beats it on both halves.
DEALER_QH = house_way(parse_cards("Qs Td 8c 7h 5s 3d 2c"), HouseWay.PARTY)
STRONG = house_way(parse_cards("As Ad Kc Kh 9s 6d 4c"), HouseWay.PARTY)
WEAK = house_way(parse_cards("Js 9d 7c 6h 4s 3d 2h"), HouseWay.PARTY)
# The dealer's nine-high low under the party way: a pair behind, the best two singles
# (nine and seven) in front.
DEALER_NINE = house_way(parse_cards("Ks Kd 7c 4h 9s 2d 3c"), HouseWay.PARTY)


def test_the_dealer_hands_are_what_they_say() -> None:
    assert is_queen_high_pai_gow(DEALER_QH.high + DEALER_QH.low)
    assert sorted((c >> 2) + 2 for c in DEALER_NINE.low) == [7, 9]
    assert is_nine_high_low(DEALER_NINE.low)


@pytest.mark.parametrize("options", [EZ, NINE], ids=["ez", "nine_low"])
def test_a_win_pays_even_money_without_commission(options: RuleOptions) -> None:
    s = settle_values(
        900, 100, 500, 50, 10, commission_pct=5, commission_free=options.commission_free
    )
    assert (s.outcome, s.won, s.commission, s.net, s.returned) == (Outcome.WIN, 10, 0, 10, 20)
    assert not s.dealer_push


def test_the_barred_hand_pushes_a_win_and_a_loss_at_ez() -> None:
    won = settle(STRONG, DEALER_QH, 100, EZ)
    assert (won.outcome, won.net, won.returned, won.dealer_push) == (Outcome.PUSH, 0, 100, True)
    lost = settle(WEAK, DEALER_QH, 100, EZ)
    assert (lost.outcome, lost.net, lost.returned, lost.dealer_push) == (Outcome.PUSH, 0, 100, True)
    # The halves are still recorded as they compared.
    assert (won.high.value, won.low.value) == ("win", "win")
    # Without the option the same hands are a win with its commission, and a loss.
    assert (settle(STRONG, DEALER_QH, 100).net, settle(WEAK, DEALER_QH, 100).net) == (95, -100)
    # At a nine_low table the queen-high pai gow (low ten-eight) pushes nothing.
    assert settle(STRONG, DEALER_QH, 100, NINE).net == 100


def test_the_nine_high_low_pushes_at_nine_low_only() -> None:
    pushed = settle(STRONG, DEALER_NINE, 40, NINE)
    assert (pushed.outcome, pushed.net, pushed.dealer_push) == (Outcome.PUSH, 0, True)
    assert settle(STRONG, DEALER_NINE, 40, EZ).net == 40


def test_a_foul_that_loses_still_loses_on_the_barred_hand() -> None:
    cards = parse_cards("As Ad Kc Kh 9s 6d 4c")
    fouled = split_with_low(cards, parse_cards("As Ad"))  # aces in front of a pair of kings
    options = RuleOptions(foul=FoulPolicy.LOSE, commission_free=CommissionFree.EZ)
    s = settle(fouled, DEALER_QH, 50, options)
    assert (s.outcome, s.fouled, s.net, s.dealer_push) == (Outcome.LOSE, True, -50, False)


def test_copies_still_go_to_the_dealer() -> None:
    s = settle_values(500, 50, 500, 40, 10, commission_free=CommissionFree.EZ)
    assert (s.outcome, s.dealer_push) == (Outcome.PUSH, False)  # a copy high, a win low
    s = settle_values(500, 40, 500, 40, 10, commission_free=CommissionFree.EZ)
    assert s.outcome is Outcome.LOSE


def test_a_commission_free_table_takes_no_whole_rounding() -> None:
    with pytest.raises(ValueError, match="commission-free"):
        RuleOptions(commission_free=CommissionFree.EZ, commission_rounding=CommissionRounding.WHOLE)
    with pytest.raises(ValueError, match="commission_free is one of"):
        RuleOptions(commission_free="ez")  # type: ignore[arg-type]
    # Up or down: no commission is taken, so either is harmless.
    RuleOptions(commission_free=CommissionFree.NINE_LOW, commission_rounding=CommissionRounding.UP)
