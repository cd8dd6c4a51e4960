"""``paigow-rules dealer-census``: the dealer's queen-high pai gows and nine-high lows,
counted exactly; here on a cut-down deck (the full deck's counts are checked against
the ones checked in by tests/server/rules/test_dealer_census.py)."""

from __future__ import annotations

import json

import pytest

from server.rules.dealer_census import dealer_census
from server.rules.options import HouseWay
from tests.server.rules_cli.test_cli import run

RANKS = "4,7,9,11,14"


def test_a_cut_down_deck_in_json_and_text(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, ["dealer-census", "--ranks", RANKS, "--json"])
    assert (code, err) == (0, "")
    rows = [json.loads(line) for line in out.splitlines()]
    assert [r["house_way"] for r in rows] == [w.value for w in HouseWay]
    for row in rows:
        census = dealer_census(HouseWay(row["house_way"]), ranks=(4, 7, 9, 11, 14))
        assert (row["hands"], row["nine_high_low"], row["queen_high_pai_gow"]) == (
            census.hands,
            census.nine_low,
            0,  # five ranks never make seven different ones
        )
        assert row["as_checked_in"] is None  # nothing is checked in for this deck
    code, out, _ = run(capsys, ["dealer-census", "--ranks", RANKS, "--way", "party"])
    assert code == 0
    assert out.startswith("house way party, wheel second (not checked in)")
    lines = [line.split() for line in out.splitlines()[1:]]
    assert lines[0] == ["queen-high", "pai", "gow", "0", "of", "116,280", "(none)"]
    assert lines[1][:6] == ["nine-high", "low", "hand", "32", "of", "116,280"]


def test_bad_ranks(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, ["dealer-census", "--ranks", "2,x"])
    assert code == 2
    assert "ranks are numbers" in err
    code, _, err = run(capsys, ["dealer-census", "--ranks", "1,2,3"])
    assert code == 2
    assert "ranks are 2..14" in err
