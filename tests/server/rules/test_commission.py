"""The commission's rounding (docs/RULES.md, "Commission"): down, up, or whole bets."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from server.rules.options import CommissionRounding, RuleOptions, whole_commission_step
from server.rules.settlement import Outcome, commission, settle_values

DOWN, UP, WHOLE = CommissionRounding.DOWN, CommissionRounding.UP, CommissionRounding.WHOLE


@pytest.mark.parametrize(
    ("win", "down", "up"),
    [(5, 0, 1), (10, 0, 1), (19, 0, 1), (20, 1, 1), (21, 1, 2), (25, 1, 2), (100, 5, 5)],
)
def test_five_percent_rounded_down_and_up(win: int, down: int, up: int) -> None:
    assert commission(win, 5, DOWN) == down
    assert commission(win, 5, UP) == up
    assert commission(win, 5) == down  # the default, as before the option


@given(st.integers(0, 10**9), st.integers(0, 100))
def test_down_and_up_bracket_the_exact_commission_by_less_than_a_chip(win: int, pct: int) -> None:
    exact = Fraction(win * pct, 100)
    down, up = commission(win, pct, DOWN), commission(win, pct, UP)
    assert down <= exact <= up <= win
    assert up - down == (0 if exact.denominator == 1 else 1)
    # Whole: exact where the table lets the bet through, never more than the win.
    assert commission(win, pct, WHOLE) == down


@given(st.integers(0, 100))
def test_the_whole_step_is_the_smallest_bet_whose_commission_is_whole(pct: int) -> None:
    step = whole_commission_step(pct)
    whole = [b for b in range(1, 101) if b * pct % 100 == 0]
    assert whole[0] == step
    assert whole == list(range(step, 101, step))  # exactly its multiples


def test_the_whole_step_at_common_percentages() -> None:
    assert [whole_commission_step(p) for p in (0, 1, 3, 4, 5, 10, 25, 50, 100)] == [
        1, 100, 100, 25, 20, 10, 4, 2, 1,
    ]  # fmt: skip


def test_a_winning_bet_is_settled_with_the_table_s_rounding() -> None:
    # Both halves won (values only matter by their order): a win of 10 at 5 %.
    down = settle_values(9, 2, 8, 1, 10, commission_pct=5)
    up = settle_values(9, 2, 8, 1, 10, commission_pct=5, rounding=UP)
    assert down.outcome is up.outcome is Outcome.WIN
    assert (down.commission, down.returned, down.net) == (0, 20, 10)
    assert (up.commission, up.returned, up.net) == (1, 19, 9)
    assert up.net + up.house_net == 0


def test_an_unknown_rounding_is_refused() -> None:
    with pytest.raises(ValueError, match="commission_rounding"):
        RuleOptions(commission_rounding="sideways")  # type: ignore[arg-type]
    assert RuleOptions().commission_rounding is DOWN
