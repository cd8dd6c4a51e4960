"""Settlement of one player against the dealer (docs/RULES.md, "Outcome")."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from server.rules.cards import parse_cards
from server.rules.options import RuleOptions
from server.rules.settlement import (
    FoulError,
    HalfResult,
    Outcome,
    commission,
    compare_half,
    outcome_of,
    settle,
    settle_values,
)
from server.rules.splits import FoulPolicy, Split
from server.rules.values import high_value, low_value


def split(high: str, low: str) -> Split:
    return Split(parse_cards(high, 5), parse_cards(low, 2))


# Reference hands, each beating the one below it on both halves.
STRONG = split("Ks Kd 9c 9d 2h", "Ah Qd")  # two pair / ace-queen
MIDDLE = split("Qs Qd 8c 8d 3h", "Ac Jd")  # two pair / ace-jack
WEAK = split("Js Jc 7h 6d 3c", "Kh Td")  # pair / king-ten


def test_compare_half() -> None:
    assert compare_half(2, 1) is HalfResult.WIN
    assert compare_half(1, 2) is HalfResult.LOSE
    assert compare_half(5, 5) is HalfResult.COPY


@pytest.mark.parametrize(
    ("high", "low", "expected"),
    [
        (HalfResult.WIN, HalfResult.WIN, Outcome.WIN),
        (HalfResult.WIN, HalfResult.LOSE, Outcome.PUSH),
        (HalfResult.LOSE, HalfResult.WIN, Outcome.PUSH),
        (HalfResult.WIN, HalfResult.COPY, Outcome.PUSH),  # PartyCasino: won, and a copy
        (HalfResult.COPY, HalfResult.WIN, Outcome.PUSH),
        (HalfResult.LOSE, HalfResult.COPY, Outcome.LOSE),  # PartyCasino: lost, and a copy
        (HalfResult.COPY, HalfResult.COPY, Outcome.LOSE),  # PartyCasino: two copies lose
        (HalfResult.LOSE, HalfResult.LOSE, Outcome.LOSE),
    ],
)
def test_outcome_of(high: HalfResult, low: HalfResult, expected: Outcome) -> None:
    assert outcome_of(high, low) is expected


def test_win_pays_even_money_less_commission() -> None:
    result = settle(STRONG, MIDDLE, 100)
    assert (result.outcome, result.high, result.low) == (
        Outcome.WIN,
        HalfResult.WIN,
        HalfResult.WIN,
    )
    assert (result.won, result.commission, result.net, result.returned) == (100, 5, 95, 195)
    assert result.house_net == -95


def test_push_returns_the_bet() -> None:
    mixed = Split(STRONG.high, WEAK.low)
    result = settle(mixed, MIDDLE, 100)
    assert (result.outcome, result.high, result.low) == (
        Outcome.PUSH,
        HalfResult.WIN,
        HalfResult.LOSE,
    )
    assert (result.won, result.commission, result.net, result.returned) == (0, 0, 0, 100)


def test_both_lost_loses_the_bet() -> None:
    result = settle(WEAK, MIDDLE, 100)
    assert result.outcome is Outcome.LOSE
    assert (result.net, result.returned) == (-100, 0)


def test_copy_goes_to_the_dealer() -> None:
    # The "Le Tirage" page: "la main à 2 cartes du Joueur comme celle du Dealer a une Reine et un
    # Valet ... le Dealer gagne la comparaison". Same Q-J low in other suits: a copy.
    player = split("As Ad 9c 8d 2h", "Qh Jd")
    dealer = split("Ks Kd 9s 8s 2c", "Qc Jc")
    result = settle(player, dealer, 50)
    assert (result.high, result.low, result.outcome) == (
        HalfResult.WIN,
        HalfResult.COPY,
        Outcome.PUSH,
    )
    both_copies = settle(player, Split(parse_cards("Ac Ah 9h 8h 2d", 5), dealer.low), 50)
    assert (both_copies.high, both_copies.outcome, both_copies.net) == (
        HalfResult.COPY,
        Outcome.LOSE,
        -50,
    )


@pytest.mark.parametrize(
    ("win", "pct", "expected"),
    [
        (100, 5, 5),
        (10, 5, 0),  # 0.5 rounds down: the player is never charged more than 5%
        (19, 5, 0),
        (20, 5, 1),
        (39, 5, 1),
        (40, 5, 2),
        (7, 0, 0),
        (7, 100, 7),
        (0, 5, 0),
    ],
)
def test_commission_rounds_down(win: int, pct: int, expected: int) -> None:
    assert commission(win, pct) == expected


@given(st.integers(0, 10**9), st.integers(0, 100))
def test_commission_never_exceeds_the_percentage(win: int, pct: int) -> None:
    cut = commission(win, pct)
    assert 0 <= cut * 100 <= win * pct
    assert (cut + 1) * 100 > win * pct  # and it is the largest such integer


def test_commission_option_is_used() -> None:
    result = settle(STRONG, MIDDLE, 1000, RuleOptions(commission_pct=3))
    assert (result.commission, result.net) == (30, 970)


def test_foul_loses_under_lose_policy() -> None:
    fouled = split("Ks Qd 9c 7d 2h", "Ah Ad")  # king high behind a pair of aces
    result = settle(fouled, WEAK, 100, RuleOptions(foul=FoulPolicy.LOSE))
    assert result.fouled
    assert result.outcome is Outcome.LOSE
    assert result.low is HalfResult.WIN  # the comparison is recorded; the foul decides
    assert (result.net, result.returned) == (-100, 0)


def test_foul_is_refused_under_reject_policy() -> None:
    fouled = split("Ks Qd 9c 7d 2h", "Ah Ad")
    with pytest.raises(FoulError):
        settle(fouled, WEAK, 100)


def test_bad_commission() -> None:
    with pytest.raises(ValueError, match="commission"):
        settle_values(2, 1, 1, 0, 100, commission_pct=101)


@pytest.mark.parametrize("bet", [-1, True, 1.5])
def test_bad_bet(bet: object) -> None:
    with pytest.raises(ValueError, match="bet"):
        settle(STRONG, MIDDLE, bet)  # type: ignore[arg-type]


values = st.integers(0, high_value(parse_cards("As Ac Ad Ah JK")))


@given(
    values,
    values,
    values,
    values,
    st.integers(0, 10**12),
    st.integers(0, 100),
    st.sampled_from(FoulPolicy),
)
def test_settlement_conserves_chips(
    ph: int, pl: int, dh: int, dl: int, bet: int, pct: int, foul: FoulPolicy
) -> None:
    try:
        result = settle_values(ph, pl, dh, dl, bet, commission_pct=pct, foul=foul)
    except FoulError:
        assert foul is FoulPolicy.REJECT
        assert ph <= pl
        return
    # The chips the player hands over come back as `returned`; the house keeps the rest.
    assert result.returned == result.bet + result.net
    assert result.net + result.house_net == 0
    assert result.returned >= 0
    assert result.commission * 100 <= result.won * pct
    assert result.net == result.won - result.commission - (
        bet if result.outcome is Outcome.LOSE else 0
    )
    expected = Outcome.LOSE if ph <= pl else outcome_of(compare_half(ph, dh), compare_half(pl, dl))
    assert result.outcome is expected


def test_low_values_compare_as_rules_say() -> None:
    # A-Q beats A-J ("Le Tirage" page); a pair beats no pair; the joker is an ace in the low.
    assert low_value(parse_cards("As Qd")) > low_value(parse_cards("Ah Jc"))
    assert low_value(parse_cards("2s 2d")) > low_value(parse_cards("Ah Kc"))
    assert low_value(parse_cards("JK Ad")) == low_value(parse_cards("As Ah"))
