"""The Queen's Dragon and the Tiger 9 (docs/RULES.md, "Commission-free tables"): side
bets on the dealer's hand alone, each a one-line pay table, settled to a payout."""

from __future__ import annotations

import pytest

from server.rules import queens_dragon, tiger9
from server.rules.cards import parse_cards

QUEEN_HIGH = parse_cards("Qs Td 8c 7h 5s 3d 2c")
KING_HIGH = parse_cards("Ks Td 8c 7h 5s 3d 2c")


def test_the_queen_s_dragon_pays_fifty_to_one_on_the_dealer_s_queen_high_pai_gow() -> None:
    assert dict(queens_dragon.PAY_TABLE) == {"queen-high-pai-gow": 50}
    won = queens_dragon.settle(QUEEN_HIGH, 10)
    assert (won.hand_class, won.odds, won.stake, won.payout, won.net) == (
        "queen-high-pai-gow",
        50,
        10,
        510,
        500,
    )
    lost = queens_dragon.settle(KING_HIGH, 10)
    assert (lost.hand_class, lost.odds, lost.payout, lost.net) == (None, 0, 0, -10)
    assert queens_dragon.settle(QUEEN_HIGH, 10, odds=40).payout == 410
    assert queens_dragon.classify(QUEEN_HIGH) == queens_dragon.QUEEN_HIGH_PAI_GOW


def test_the_tiger_9_pays_thirty_to_one_on_the_dealer_s_nine_high_low() -> None:
    assert dict(tiger9.PAY_TABLE) == {"nine-high-low": 30}
    won = tiger9.settle(parse_cards("9s 4d"), 5)
    assert (won.hand_class, won.payout, won.net) == ("nine-high-low", 155, 150)
    for low in ("9s 9d", "Ts 4d", "9s JK"):
        assert tiger9.settle(parse_cards(low), 5).net == -5
    assert tiger9.classify(parse_cards("8h 9c")) == tiger9.NINE_HIGH_LOW


def test_bad_input_is_refused() -> None:
    with pytest.raises(ValueError, match="stake"):
        queens_dragon.settle(QUEEN_HIGH, -1)
    with pytest.raises(ValueError, match="odds"):
        tiger9.settle(parse_cards("9s 4d"), 5, odds=0)
    with pytest.raises(ValueError, match="seven"):
        queens_dragon.settle(QUEEN_HIGH[:6], 5)
    with pytest.raises(ValueError, match="two different"):
        tiger9.settle((1, 1), 5)
    # A stake of 0 (no bet) settles to nothing either way.
    assert queens_dragon.settle(QUEEN_HIGH, 0).payout == 0
