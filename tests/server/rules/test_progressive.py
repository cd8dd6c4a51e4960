"""The progressive wager: a hand's award, the pay table's checks, and its exact return
as a function of the meter, from the census of every seven-card hand."""

from __future__ import annotations

from fractions import Fraction

import pytest

from server.rules.bonus import BonusClass
from server.rules.bonus_census import bonus_census
from server.rules.cards import parse_cards
from server.rules.edges import progressive_edge
from server.rules.progressive import (
    DEFAULT_PROGRESSIVE_PAY_TABLE,
    Award,
    JackpotOptions,
    ProgressiveError,
    ProgressivePayTable,
    describe_pay_table,
    progressive_pay_table,
    progressive_return,
)

B = BonusClass
FORTUNE = progressive_pay_table(DEFAULT_PROGRESSIVE_PAY_TABLE)


@pytest.mark.parametrize(
    ("cards", "cls", "fixed", "meter_bps"),
    [
        ("8s 9s Ts Js Qs Ks As", B.NATURAL_SEVEN_CARD_STRAIGHT_FLUSH, 0, 10_000),
        ("As Ks Qs Js Ts Kh Qh", B.ROYAL_FLUSH_WITH_ROYAL_MATCH, 0, 1_000),
        ("3h 4h 5h JK 7h 8h 9h", B.SEVEN_CARD_STRAIGHT_FLUSH_WITH_JOKER, 8_000 * 3, 0),
        ("As Ad Ah Ac JK 2d 3c", B.FIVE_ACES, 4_000 * 3, 0),
        ("As Ks Qs Js Ts 2h 3c", B.ROYAL_FLUSH, 2_000 * 3, 0),
        ("9s 8s 7s 6s 5s 2h 3c", B.STRAIGHT_FLUSH, 100 * 3, 0),
        ("9s 9h 9d 9c 5s 2h 3c", B.FOUR_OF_A_KIND, 75 * 3, 0),
        ("9s 9h 9d 5c 5s 2h 3c", B.FULL_HOUSE, 5 * 3, 0),
        ("9s 9h 9d 5c 4s 2h Kc", B.THREE_OF_A_KIND, 0, 0),
    ],
)
def test_a_hand_wins_its_class_award(cards: str, cls: B, fixed: int, meter_bps: int) -> None:
    award = FORTUNE.hand(parse_cards(cards), 3)
    assert (award.cls, award.fixed, award.meter_bps) == (cls, fixed, meter_bps)
    assert award.wins == bool(fixed or meter_bps)


def test_bad_hands_and_wagers_are_refused() -> None:
    with pytest.raises(ValueError, match="seven"):
        FORTUNE.hand(parse_cards("9s 9h 9d 5c 4s 2h"), 1)
    for wager in (0, -1, True):
        with pytest.raises(ValueError, match="positive number of chips"):
            FORTUNE.hand(parse_cards("9s 9h 9d 5c 4s 2h Kc"), wager)


def test_a_share_of_the_meter_is_rounded_down() -> None:
    assert ProgressivePayTable.meter_share(12_345, 1_000) == 1_234
    assert ProgressivePayTable.meter_share(12_345, 10_000) == 12_345
    with pytest.raises(ValueError, match="a meter is >= 0"):
        ProgressivePayTable.meter_share(-1, 10)


def test_pay_tables_are_checked() -> None:
    with pytest.raises(ProgressiveError):
        Award()
    with pytest.raises(ProgressiveError):
        Award(meter_bps=10, fixed=1)
    with pytest.raises(ProgressiveError):
        Award(meter_bps=10_001)
    with pytest.raises(ProgressiveError):
        ProgressivePayTable("x", {B.FULL_HOUSE: Award(fixed=5)})  # nothing from the meter
    with pytest.raises(ProgressiveError):
        ProgressivePayTable("x", {B.NOTHING: Award(meter_bps=1)})
    with pytest.raises(ProgressiveError):
        progressive_pay_table("nope")
    assert describe_pay_table(FORTUNE)[:3] == [
        ("natural 7-card straight flush", "100% of the meter"),
        ("royal flush with royal match", "10% of the meter"),
        ("7-card straight flush with joker", "8000 for 1"),
    ]


def test_jackpot_options_are_checked() -> None:
    JackpotOptions("grand", seed=10_000, contribution_bps=2_000)
    for bad in (
        {"name": "gr and"},
        {"name": ""},
        {"seed": -1},
        {"contribution_bps": 10_001},
        {"wager": 0},
        {"pay_table": "nope"},
    ):
        args = {"name": "grand", "seed": 10_000, "contribution_bps": 2_000, **bad}
        with pytest.raises(ProgressiveError):
            JackpotOptions(**args)  # type: ignore[arg-type]


def test_the_census_matches_the_published_seven_card_counts() -> None:
    # The combinations of a seven-card progressive over the 53-card deck as a published
    # analysis lists them (docs/RULES.md, "Progressive jackpot"): it has no royal match
    # and pays either kind of 7-card straight flush alike.
    c = bonus_census()
    assert sum(c.values()) == 154_143_080
    assert c[B.NATURAL_SEVEN_CARD_STRAIGHT_FLUSH] + c[B.SEVEN_CARD_STRAIGHT_FLUSH_WITH_JOKER] == 228
    assert c[B.FIVE_ACES] == 1_128
    assert c[B.ROYAL_FLUSH] + c[B.ROYAL_FLUSH_WITH_ROYAL_MATCH] == 26_092
    assert c[B.STRAIGHT_FLUSH] == 184_644
    assert c[B.FOUR_OF_A_KIND] == 307_472
    assert c[B.FULL_HOUSE] == 4_188_528


def test_the_return_is_linear_in_the_meter_and_breaks_even_exactly() -> None:
    r = progressive_return(bonus_census(), FORTUNE)
    hands = 154_143_080
    assert r.per_meter_chip == Fraction(32, hands) + Fraction(72, hands) / 10
    assert r.resets == Fraction(32, hands)
    fixed = (196 * 8_000 + 1_128 * 4_000 + 26_020 * 2_000 + 184_644 * 100) + (
        307_472 * 75 + 4_188_528 * 5
    )
    assert r.fixed == Fraction(fixed, hands)
    assert r.at(0) == r.fixed
    assert r.at(r.break_even()) == 1
    # A wager of 5 chips on the same meter: the fixed part scales, the meter does not.
    assert r.at(r.break_even(5), wager=5) == 1
    assert r.break_even(5) == 5 * r.break_even()
    assert r.long_run(2_000, 10_000) == r.fixed + Fraction(1, 5) + r.resets * 10_000
    assert progressive_edge(FORTUNE) == r


def test_the_fixed_part_measured_on_a_sample() -> None:
    from server.rules.progressive import sampled_return

    # The whole census as a sample: its mean is the exact fixed return.
    census = bonus_census()
    sampled = sampled_return(census, FORTUNE)
    assert sampled.fixed == pytest.approx(float(progressive_return(census, FORTUNE).fixed))
    assert sampled.meter_hands == 32 + 72
    assert 0 < sampled.half_width < 0.01
    # A small sample of full houses and nothing: 5 for 1 on half the hands.
    small = sampled_return({B.FULL_HOUSE: 50, B.NOTHING: 50}, FORTUNE)
    assert small.fixed == 2.5
    assert small.half_width == pytest.approx(1.959963984540054 * (6.25 * 100 / 99 / 100) ** 0.5)
    with pytest.raises(ValueError, match="two hands"):
        sampled_return({B.FULL_HOUSE: 1}, FORTUNE)


def test_the_built_in_jackpot_keeps_the_house_an_edge_over_the_meter_s_life() -> None:
    # The fixed amounts have no published source (docs/RULES.md, "Progressive jackpot"):
    # what keeps the house its edge is the jackpot's contribution rate and seed. The
    # built-in Fortune jackpot (a wager of 5, a tenth of it to the meter, a seed of
    # 10,000) returns 88.27 % over the meter's life, the seed's top-ups after a tenth of
    # the meter included (at most 72 hands in 154,143,080 take a tenth, each topped up by
    # at most a tenth of the seed).
    from server.jackpots_file import load_jackpots

    census = bonus_census()
    jackpots = load_jackpots(None)
    assert "fortune" in jackpots
    for options, _tables in jackpots.values():
        r = progressive_return(census, progressive_pay_table(options.pay_table))
        life = r.long_run(options.contribution_bps, options.seed, options.wager)
        top_ups = Fraction(72, 154_143_080) * Fraction(options.seed, 10) / options.wager
        assert life + top_ups < 1, (options, float(life))
    fortune = jackpots["fortune"][0]
    r = progressive_return(census, progressive_pay_table(fortune.pay_table))
    life = r.long_run(fortune.contribution_bps, fortune.seed, fortune.wager)
    assert round(float(life) * 100, 2) == 88.27
