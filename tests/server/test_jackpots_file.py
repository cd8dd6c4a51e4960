"""The jackpots of a tables file: ``[jackpot.<name>]`` beside the tables."""

from __future__ import annotations

from pathlib import Path

import pytest

from server.jackpots_file import JackpotsFileError, load_jackpots, parse_jackpots
from server.rules.progressive import PROGRESSIVE, JackpotOptions, ProgressiveBetOptions
from server.tables_file import TablesFileError, offer_jackpots, parse_tables

TABLES = """
[[table]]
id = "north"
name = "North"

[[table]]
id = "south"
name = "South"
"""

GRAND = """
[jackpot.grand]
seed = 10000
contribution_bps = 1500
wager = 5
pay_table = "fortune"
tables = ["north", "south"]
"""


def test_a_jackpot_shared_by_two_tables(tmp_path: Path) -> None:
    jackpots = parse_jackpots(TABLES + GRAND)
    options, tables = jackpots["grand"]
    assert options == JackpotOptions("grand", seed=10_000, contribution_bps=1_500, wager=5)
    assert tables == ("north", "south")
    path = tmp_path / "tables.toml"
    path.write_text(TABLES + GRAND)
    assert load_jackpots(path) == jackpots
    # The tables' parser (as release 0.1.0's) reads the same file and ignores the section.
    assert [t.table_id for t in parse_tables(TABLES + GRAND)] == ["north", "south"]


def test_a_file_without_jackpots_has_none() -> None:
    assert parse_jackpots(TABLES) == {}


def test_the_built_in_file_s_fortune_table_has_its_jackpot() -> None:
    (name,) = load_jackpots(None)  # no file given: the built-in tables
    options, tables = load_jackpots(None)[name]
    assert (name, tables) == ("fortune", ("fortune",))
    assert (options.wager, options.seed, options.contribution_bps) == (5, 10_000, 1000)


@pytest.mark.parametrize(
    ("section", "message"),
    [
        ("[jackpot.grand]\ncontribution_bps = 1\n", "jackpot grand: `seed` is required"),
        ("[jackpot.grand]\nseed = 1\ncontribution_bps = 1\ncolour = 1\n", "unknown key 'colour'"),
        ("[jackpot.grand]\nseed = -1\ncontribution_bps = 1\n", "jackpot grand: seed is a whole"),
        ("[jackpot.grand]\nseed = 1\ncontribution_bps = 10001\n", "contribution_bps is a whole"),
        ('[jackpot.grand]\nseed = 1\ncontribution_bps = 1\npay_table = "x"\n', "not a progressive"),
        ('[jackpot.grand]\nseed = 1\ncontribution_bps = 1\ntables = ["west"]\n', "no table 'west'"),
        ('[jackpot.grand]\nseed = 1\ncontribution_bps = 1\ntables = "north"\n', "a list of table"),
        ('[jackpot."gr and"]\nseed = 1\ncontribution_bps = 1\n', "letters, digits"),
        ("jackpot = 3\n", "sections"),
    ],
)
def test_bad_sections_are_clear_errors(section: str, message: str) -> None:
    with pytest.raises(JackpotsFileError, match=message):
        parse_jackpots(section + TABLES)


def test_a_table_offers_one_jackpot_at_most() -> None:
    other = '[jackpot.minor]\nseed = 1\ncontribution_bps = 1\ntables = ["south"]\n'
    with pytest.raises(JackpotsFileError, match="table 'south' offers grand already"):
        parse_jackpots(TABLES + GRAND + other)


def test_the_tables_a_jackpot_lists_offer_its_wager() -> None:
    text = """
[[table]]
id = "a"
name = "A"
[[table]]
id = "b"
name = "B"
denominations = [5, 25]

[jackpot.j]
seed = 100
contribution_bps = 1500
wager = 5
tables = ["a", "b"]
"""
    configs = offer_jackpots(parse_tables(text), parse_jackpots(text))
    for config in configs:
        assert config.side_kinds == ("bonus", PROGRESSIVE)
        options = config.side_options(PROGRESSIVE)
        assert options == ProgressiveBetOptions("j", 100, 1500, 5, "fortune")
        assert config.limits(PROGRESSIVE) == (5, 5)
    alone = offer_jackpots(parse_tables(text), {})
    assert [c.side_kinds for c in alone] == [("bonus",), ("bonus",)]
    with pytest.raises(TablesFileError, match="multiples of 5"):
        offer_jackpots(parse_tables(text), parse_jackpots(text.replace("wager = 5", "wager = 3")))
    unlisted = text.replace('tables = ["a", "b"]', 'tables = ["a"]').replace(
        "\n[jackpot.j]", '[table.side_bets.progressive]\njackpot = "j"\nseed = 1\n\n[jackpot.j]'
    )
    with pytest.raises(TablesFileError, match="table b: a table offers the progressive"):
        offer_jackpots(parse_tables(unlisted), parse_jackpots(unlisted))
