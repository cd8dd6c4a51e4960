"""``paigow-rules edge``: the house edge of every bet of a table of a tables file."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest

from server.rules.bonus import pay_table
from server.rules.edges import bonus_edge, queens_dragon_edge, tiger9_edge
from server.rules.options import HouseWay
from server.rules.values import WheelRank
from tests.server.rules_cli.test_cli import run

TABLES = """
[[table]]
id = "small"
name = "Small"
min_bet = 10
max_bet = 200
commission_rounding = "up"
bonus_pay_table = "jackpot-5000"

[[table]]
id = "whole"
name = "Whole"
min_bet = 20
max_bet = 400
commission_rounding = "whole"
house_way = "pair-classes"
"""


def test_every_bet_of_each_table(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "tables.toml"
    path.write_text(TABLES)
    argv = ["edge", "--tables-file", str(path), "--hands", "3000", "--seed", "s", "--json"]
    code, out, err = run(capsys, argv)
    assert (code, err) == (0, "")
    small, whole = (json.loads(line) for line in out.splitlines())
    assert (small["table"], small["commission_rounding"]) == ("small", "up")
    # The minimum, the maximum and the exact percentage, each with its commission.
    assert [(m["at"], m["bet"], m["commission"]) for m in small["main"]] == [
        ("minimum", 10, 1),
        ("maximum", 200, 10),
        ("exact percentage", None, None),
    ]
    at_min, at_max, exact = small["main"]
    # Rounded up, 1 chip on a win of 10 is 10 %: the edge is above the exact one by
    # the win rate times the 5 points more.
    sim = small["simulation"]
    assert sim["rounds"] == sim["wins"] + sim["pushes"] + sim["losses"] == 3000
    wins = sim["wins"] / 3000
    assert at_min["edge"] - exact["edge"] == pytest.approx(wins * 0.05)
    assert at_max["edge"] == pytest.approx(exact["edge"])
    assert 0 < exact["half_width_95"] < 0.05
    # The bonus exactly, on the table's own pay table.
    assert small["bonus"]["pay_table"] == "jackpot-5000"
    assert Fraction(small["bonus"]["edge_fraction"]) == bonus_edge(pay_table("jackpot-5000"))
    # A whole table's minimum pays exactly 5 %; its own house way was simulated.
    assert [m["commission"] for m in whole["main"]] == [1, 20, None]
    assert whole["main"][0]["edge"] == pytest.approx(whole["main"][2]["edge"])
    assert whole["house_way"] == "pair-classes"


def test_the_built_in_tables_in_text(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, ["edge", "--table", "jade", "--hands", "500"])
    assert code == 0
    assert out.startswith("jade: Jade")
    assert "main bet of 10 (minimum), commission 1 on a win" in out
    assert "bonus bet, standard pay table (exact)" in out
    assert "+7.7656%" in out


def test_bad_arguments(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, err = run(capsys, ["edge", "--table", "nope", "--hands", "10"])
    assert code == 2
    assert "no table 'nope'" in err
    code, _, err = run(capsys, ["edge", "--hands", "1"])
    assert code == 2
    assert "--hands 1: at least 2 rounds" in err
    bad = tmp_path / "bad.toml"
    bad.write_text('[[table]]\nid = "b"\nname = "B"\ncommission_rounding = "sideways"\n')
    code, _, err = run(capsys, ["edge", "--tables-file", str(bad), "--hands", "10"])
    assert code == 2
    assert "commission_rounding" in err


FREE_TABLES = """
[[table]]
id = "ez"
name = "EZ"
commission_free = "ez"
[table.side_bets.queens_dragon]

[[table]]
id = "tiger"
name = "Tiger"
commission_free = "nine_low"
house_way = "pair-classes"
[table.side_bets.tiger9]

[[table]]
id = "bare"
name = "Bare"
commission_free = "ez"

[[table]]
id = "both"
name = "Both, at other odds"
[table.side_bets.queens_dragon]
odds = 40
[table.side_bets.tiger9]
odds = 25
"""


def test_a_commission_free_table_s_main_bet_and_side_bet(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "tables.toml"
    path.write_text(FREE_TABLES)
    argv = ["edge", "--tables-file", str(path), "--hands", "3000", "--seed", "s", "--json"]
    code, out, err = run(capsys, argv)
    assert (code, err) == (0, "")
    ez, tiger, bare, both = (json.loads(line) for line in out.splitlines())
    # No commission at any bet size: one line for the main bet.
    assert [(m["at"], m["bet"]) for m in ez["main"]] == [("no commission", None)]
    assert ez["commission_free"] == "ez"
    assert [(s["bet"], s["odds"]) for s in ez["side_bets"]] == [("queens_dragon", 50)]
    assert Fraction(ez["side_bets"][0]["edge_fraction"]) == queens_dragon_edge(50)
    assert [(s["bet"], s["odds"]) for s in tiger["side_bets"]] == [("tiger9", 30)]
    assert Fraction(tiger["side_bets"][0]["edge_fraction"]) == tiger9_edge(
        HouseWay.PAIR_CLASSES, WheelRank.SECOND, 30
    )
    # The side bets the table offers, not the barred hand's: none at a bare EZ table,
    # both at their own odds at a table with a commission.
    assert bare["side_bets"] == []
    assert [(s["bet"], s["odds"]) for s in both["side_bets"]] == [
        ("queens_dragon", 40),
        ("tiger9", 25),
    ]
    assert Fraction(both["side_bets"][0]["edge_fraction"]) == queens_dragon_edge(40)
    assert Fraction(both["side_bets"][1]["edge_fraction"]) == tiger9_edge(
        HouseWay.PARTY, WheelRank.SECOND, 25
    )
    code, out, _ = run(capsys, ["edge", "--tables-file", str(path), "--hands", "500"])
    assert code == 0
    assert "no commission, every main bet pushes on the dealer's queen-high pai gow" in out
    assert "Queen's Dragon at 50 to 1 (exact)" in out
    assert "+10.0222%" in out
    assert "Tiger 9 at 30 to 1 (exact)" in out
    assert "+22.4996%" in out


JACKPOT = """
[jackpot.grand]
seed = 10000
contribution_bps = 2000
wager = 5
tables = ["small"]
"""


def test_the_progressive_of_each_jackpot(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from server.rules.edges import progressive_edge
    from server.rules.progressive import progressive_pay_table

    path = tmp_path / "tables.toml"
    path.write_text(TABLES + JACKPOT)
    argv = ["edge", "--tables-file", str(path), "--hands", "3000", "--table", "small", "--json"]
    code, out, err = run(capsys, argv)
    assert (code, err) == (0, "")
    *_, line = out.splitlines()
    grand = json.loads(line)
    r = progressive_edge(progressive_pay_table("fortune"))
    assert (grand["jackpot"], grand["tables"], grand["wager"]) == ("grand", ["small"], 5)
    assert Fraction(grand["fixed_return_fraction"]) == r.fixed
    assert grand["break_even_meter"] == pytest.approx(float(r.break_even(5)))
    assert grand["return_at_seed"] == pytest.approx(float(r.at(10000, 5)))
    # The fixed amounts measured on the simulation's hands: its interval holds the exact.
    simulated = grand["simulated"]
    assert simulated["hands"] == 3000
    assert abs(simulated["fixed_return"] - float(r.fixed)) < simulated["half_width_95"]
    # The text: the same figures, and a jackpot of another table is left out.
    code, out, _ = run(capsys, ["edge", "--tables-file", str(path), "--hands", "200"])
    assert code == 0
    assert "jackpot grand: progressive wager of 5, fortune pay table (exact), tables small" in out
    assert f"break-even meter: {float(r.break_even(5)):,.0f} chips" in out
    code, out, _ = run(
        capsys, ["edge", "--tables-file", str(path), "--hands", "200", "--table", "whole"]
    )
    assert "jackpot grand" not in out


def test_a_bad_jackpot_is_a_clear_error(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "tables.toml"
    path.write_text(TABLES + JACKPOT.replace('"small"', '"nowhere"'))
    code, _, err = run(capsys, ["edge", "--tables-file", str(path), "--hands", "200"])
    assert code != 0
    assert "jackpot grand: no table 'nowhere' in the file" in err


ENVY_TABLE = """
[[table]]
id = "fortune"
name = "Fortune"
[table.side_bets.envy]
min_bonus = 5
pays = [["natural_7_card_straight_flush", 3000], ["royal_flush_royal_match", 1000],
        ["7_card_straight_flush_joker", 500], ["five_aces", 250], ["royal_flush", 50],
        ["straight_flush", 20], ["four_of_a_kind", 5]]
"""


def test_the_envy_bonus_for_one_to_five_others(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from server.rules.edges import envy_per_other
    from server.rules.envy import EnvyOptions

    path = tmp_path / "tables.toml"
    path.write_text(ENVY_TABLE)
    argv = ["edge", "--tables-file", str(path), "--hands", "200", "--json"]
    code, out, err = run(capsys, argv)
    assert (code, err) == (0, "")
    envy = json.loads(out)["envy"]
    per = Fraction(envy["per_other_fraction"])
    assert per == Fraction(25283, 550511)
    assert [(e["others"], e["chips"]) for e in envy["by_others"]] == [
        (n, pytest.approx(float(n * per))) for n in range(1, 6)
    ]
    # The published figure (the Wizard of Odds, as Casino City Times quotes it): each
    # other player takes 0.92 % off the edge of a 5-chip bonus bet on this pay table.
    assert envy["by_others"][0]["per_qualifying_chip"] == pytest.approx(0.0092, abs=5e-5)
    # The default pay table (four of a kind 50 chips ...).
    assert envy_per_other(EnvyOptions()) == Fraction(13737, 296429)
    code, out, _ = run(capsys, ["edge", "--tables-file", str(path), "--hands", "200"])
    assert code == 0
    assert "Envy bonus on a bonus bet of 5 or more (exact): 0.0459 chips per other player" in out
    assert "5 other players:   0.2296 chips a round, +4.5926% of a bonus bet of 5" in out
