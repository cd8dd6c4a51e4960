"""The terminal client's rules page says how the table rounds the commission, and the
main bet's steps (table_info.commission_rounding and main_bet_unit, protocol minor 4)."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from rich.console import Console

from clients.tui.dialogs import info_text
from protocol.examples import TABLE_INFO


def page(**changes: Any) -> str:
    console = Console(width=80, record=True, color_system=None)
    console.print(info_text(dataclasses.replace(TABLE_INFO, **changes), None))
    return console.export_text()


@pytest.mark.parametrize(
    ("changes", "steps", "rounding"),
    [
        ({}, "in multiples of 5", "rounded down"),  # a server of an earlier minor
        ({"commission_rounding": "up", "main_bet_unit": 5}, "in multiples of 5", "rounded up"),
        (
            {"commission_rounding": "whole", "main_bet_unit": 20, "min_bet": 20},
            "in multiples of 20",
            "exact: whole-chip bets",
        ),
    ],
)
def test_the_rules_page_tells_the_rounding(
    changes: dict[str, Any], steps: str, rounding: str
) -> None:
    text = page(**changes)
    assert steps in text
    assert "commission 5% of a win," in text
    assert rounding in text
    assert max(len(line) for line in text.splitlines()) <= 80


@pytest.mark.parametrize(
    ("free", "barred"),
    [("ez", "if dealer: Q-high pai gow"), ("nine_low", "if dealer's low is 9-high")],
)
def test_the_rules_page_tells_a_commission_free_table(free: str, barred: str) -> None:
    # table_info.commission_free (minor 5); such a table sends a commission_pct of 0.
    text = page(commission_free=free, commission_pct=0)
    assert "commission none; every bet pushes" in text
    assert barred in text
    assert "% of a win" not in text
    assert max(len(line) for line in text.splitlines()) <= 80
