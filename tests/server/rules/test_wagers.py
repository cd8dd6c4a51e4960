"""The side bets' definitions and their registry (server/rules/wagers.py)."""

from __future__ import annotations

import pytest

from server.rules.bonus import BONUS_BET
from server.rules.envy import ENVY_BET, EnvyOptions
from server.rules.side_bets import SIDE_BETS, side_bet
from server.rules.wagers import (
    Settled,
    SideBet,
    options_from_plain,
    options_to_plain,
    registry,
)


def test_the_registry_lists_the_bonus_then_envy_riding_on_it() -> None:
    assert list(SIDE_BETS) == ["bonus", "envy", "queens_dragon", "tiger9", "progressive"]
    assert BONUS_BET.staked
    assert not ENVY_BET.staked
    assert ENVY_BET.rides_on == "bonus"
    assert SIDE_BETS["queens_dragon"].staked
    assert SIDE_BETS["tiger9"].staked
    assert SIDE_BETS["progressive"].staked
    with pytest.raises(KeyError, match="known: bonus, envy, queens_dragon, tiger9, progressive"):
        side_bet("tiger")


def test_a_riding_bet_comes_after_what_it_rides_on_and_kinds_are_unique() -> None:
    with pytest.raises(ValueError, match="not listed before it"):
        registry(ENVY_BET, BONUS_BET)
    with pytest.raises(ValueError, match="two side bets"):
        registry(BONUS_BET, BONUS_BET)


@pytest.mark.parametrize("kind", ["main", "bet", "win", "commission", "Bonus", "", "a" * 25])
def test_a_kind_that_would_clash_or_is_not_a_code_is_refused(kind: str) -> None:
    with pytest.raises(ValueError, match=r"kind|main bet"):
        SideBet(
            kind=kind,
            label="X",
            options=EnvyOptions,
            settle=lambda deal, stake, options: Settled(None, 0),
            limits=lambda options: (1, 1),
            pay_lines=lambda rules, options: (),
        )


def test_options_read_back_from_plain_data_and_refuse_unknown_keys() -> None:
    options = EnvyOptions(min_bonus=10, pays=(("four_of_a_kind", 40),))
    assert options_from_plain(ENVY_BET, options_to_plain(options)) == options
    with pytest.raises(ValueError, match="no such option: bogus"):
        options_from_plain(ENVY_BET, {"bogus": 1})
    with pytest.raises(ValueError, match=r">= 0"):
        options_from_plain(ENVY_BET, {"pays": [["four_of_a_kind", -1]]})
