"""The commission-free main bet's house edge from the simulator's counts, and beside the
published figures; the simulated rates of the dealer's barred hands beside the exact
census (docs/RULES.md, "The math, checked")."""

from __future__ import annotations

import hashlib
import random
from itertools import combinations
from math import sqrt

import pytest

from server.rules.bonus import pay_table
from server.rules.dealer_census import KNOWN
from server.rules.dealer_hands import is_queen_high_pai_gow
from server.rules.edges import Z_95, main_edge
from server.rules.houseways import house_way
from server.rules.options import CommissionFree, CommissionRounding, HouseWay, RuleOptions
from server.rules.sim import SimResult, simulate
from server.rules.values import WheelRank, high_value, low_value

EZ = RuleOptions(commission_free=CommissionFree.EZ)
NINE = RuleOptions(commission_free=CommissionFree.NINE_LOW)
SEED = hashlib.sha256(b"commission-free").digest()


def counts(
    wins: int,
    pushes: int,
    losses: int,
    queen_high: tuple[int, int, int] = (0, 0, 0),
    nine_low: tuple[int, int, int] = (0, 0, 0),
) -> SimResult:
    return SimResult(
        rounds=wins + pushes + losses,
        wins=wins,
        pushes=pushes,
        losses=losses,
        player_way=HouseWay.PARTY,
        dealer_way=HouseWay.PARTY,
        commission_pct=5,
        pay_table=pay_table("standard"),
        queen_high=queen_high,
        nine_low=nine_low,
    )


def test_the_barred_rounds_push_and_wins_keep_the_whole_bet() -> None:
    result = counts(30, 40, 30, queen_high=(4, 1, 2), nine_low=(1, 0, 3))
    ez = main_edge(result, None, EZ)
    assert ez.edge == pytest.approx(((30 - 2) - (30 - 4)) / 100)
    assert (ez.bet, ez.commission) == (None, None)
    # Every bet size the same: no commission to round.
    small = main_edge(result, 10, EZ)
    assert small.commission == 0
    assert small.edge == pytest.approx(ez.edge)
    nine = main_edge(result, None, NINE)
    assert nine.edge == pytest.approx(((30 - 3) - (30 - 1)) / 100)
    # The interval is the normal one of the per-round results +1, 0, -1.
    mean = -ez.edge
    variance = ((26 + 28) / 100 - mean * mean) * 100 / 99
    assert ez.half_width == pytest.approx(Z_95 * sqrt(variance / 100))
    # A table with a commission reads none of the barred counts.
    assert main_edge(result, None, RuleOptions(commission_rounding=CommissionRounding.UP)).edge == (
        pytest.approx((30 - 30 * 0.95) / 100)
    )


@pytest.mark.slow
def test_the_nine_low_main_bet_s_edge_is_near_the_published_figure() -> None:
    # The Wizard of Odds, "Commission Free Pai Gow Poker" (Trump Plaza house way):
    # 2.51 %; the Shuffle Master math report it cites gives 2.4 % (Four Queens way). As
    # for the main bet with a commission (test_edges.py): three standard errors of the
    # simulation, and 0.3 points for house ways that are not the published ones (the
    # two published ways differ by 0.11 points on this bet). Taking the commission
    # anyway (about 1.4 points more) or pushing nothing on the barred hand (1.2 points
    # less) falls outside it; pushing its wins only (0.03 points) does not, and
    # test_commission_free.py holds that rule.
    result = simulate(SEED, 100_000, HouseWay.PAIR_CLASSES, options=NINE)
    edge = main_edge(result, None, NINE)
    assert abs(edge.edge - 0.0251) <= edge.half_width / Z_95 * 3 + 0.003, edge
    _check_barred_shares(result, HouseWay.PAIR_CLASSES)


@pytest.mark.slow
def test_the_ez_main_bet_is_the_base_game_less_its_barred_rounds_not_the_published_2_47() -> None:
    # The Wizard of Odds' "EZ Pai Gow Poker" page gives 2.47 % for this bet; this
    # server's is 2.82 % (two million rounds, party way). Why the published figure is
    # not followed: docs/RULES.md, "The commission-free tables, exactly and simulated".
    # This test holds the three facts that reconciliation rests on, so that a change
    # moving the figure toward 2.47 % fails here and sends its author to it.
    result = simulate(SEED, 100_000, HouseWay.PAIR_CLASSES, options=EZ)
    n = result.rounds
    q_won, q_pushed, q_lost = result.queen_high
    nine_won, _, nine_lost = result.nine_low
    # 1. The EZ edge is exactly the commission-free base game's plus the net of the
    #    barred rounds the player would have won.
    base = (result.losses - result.wins) / n
    assert main_edge(result, None, EZ).edge == pytest.approx(base + (q_won - q_lost) / n)
    # 2. The base game, with the commission, is the published one (about 2.7 %).
    with_commission = main_edge(result, None, RuleOptions())
    assert abs(with_commission.edge - 0.027) <= with_commission.half_width / Z_95 * 3 + 0.003
    # 3. The barred rounds are worth what the published pages cannot be: the Wizard's
    #    EZ and Commission-Free tables (2.4694 % and 2.5096 %), read as one base game,
    #    make barring the queen-high pai gow cost the player 0.0402 points LESS than
    #    barring the nine-high low; here it costs about 0.3 points more. A round's
    #    share of that difference is its result (+1, 0, -1) if one hand bars it, less
    #    its result if the other does: a round both bar gives 0, so the mean square is
    #    at most the share of barred rounds not pushed, about 0.028 (a standard error
    #    under 0.06 points here).
    published = 0.024694 - 0.025096
    ours = ((q_won - q_lost) - (nine_won - nine_lost)) / n
    standard_error = sqrt((q_won + q_lost + nine_won + nine_lost) / n / n)
    assert ours - published > 3 * standard_error, (ours, published, standard_error)
    # The player nets most of each barred round: the published 2.47 % with this base
    # game would need about 0.65 of it.
    barred = q_won + q_pushed + q_lost
    assert (q_won - q_lost) / barred > 0.8, result.queen_high
    _check_barred_shares(result, HouseWay.PAIR_CLASSES)


def _check_barred_shares(result: SimResult, way: HouseWay) -> None:
    # The same rounds' barred hands, beside the exact census: within three standard
    # errors of a binomial share.
    census = KNOWN[way, WheelRank.SECOND]
    for simulated, exact in (
        (sum(result.queen_high), census.queen_high / census.hands),
        (sum(result.nine_low), census.nine_low / census.hands),
    ):
        se = sqrt(exact * (1 - exact) / result.rounds)
        assert abs(simulated / result.rounds - exact) <= 3 * se, (simulated, exact)


# --- The rounds the EZ rule bars, settled by an evaluator written apart from the engine ---
#
# The reconciliation with the published EZ figure (docs/RULES.md) rests on how often the
# player beats a dealer's queen-high pai gow. So that figure is checked here against a
# second, deliberately plain, evaluator: its own five-card ranking (the joker an ace, or
# any card that completes a straight or a flush; A-2-3-4-5 the second straight), its own
# two-card ranking, and the dealer's low hand taken as the pai gow's second and third
# cards, as every house way sets a hand that holds nothing.

_JOKER = 52
_ACE = 14
_STRAIGHT, _FLUSH, _STRAIGHT_FLUSH, _FIVE_ACES = 4, 5, 8, 9
Ranked = tuple[int, tuple[int, ...]]


def _plain_five(cards: list[tuple[int, int]]) -> Ranked:
    """(category, tie-break) of five (rank, suit) cards, no joker among them."""
    ranks = sorted((r for r, _ in cards), reverse=True)
    flush = len({s for _, s in cards}) == 1
    counts: dict[int, int] = {}
    for r in ranks:
        counts[r] = counts.get(r, 0) + 1
    groups = sorted(counts.items(), key=lambda g: (-g[1], -g[0]))
    shape = tuple(c for _, c in groups)
    order = tuple(r for r, _ in groups)
    straight: tuple[int, ...] | None = None
    if len(counts) == 5 and ranks[0] - ranks[4] == 4:
        straight = (2, 14) if ranks[0] == _ACE else (0, ranks[0])
    elif ranks == [14, 5, 4, 3, 2]:
        straight = (1, 5)
    if straight and flush:
        return _STRAIGHT_FLUSH, straight
    by_shape = {(5,): _FIVE_ACES, (4, 1): 7, (3, 2): 6, (3, 1, 1): 3, (2, 2, 1): 2}
    if shape in ((5,), (4, 1), (3, 2)):
        return by_shape[shape], order
    if flush:
        return _FLUSH, tuple(ranks)
    if straight:
        return _STRAIGHT, straight
    if shape in by_shape:
        return by_shape[shape], order
    return (1, order) if shape == (2, 1, 1, 1) else (0, tuple(ranks))


def _five(codes: tuple[int, ...]) -> Ranked:
    others = [((c >> 2) + 2, c & 3) for c in codes if c != _JOKER]
    if len(others) == 5:
        return _plain_five(others)
    best = _plain_five([*others, (_ACE, 9)])  # an ace of no suit: never a flush card
    for rank in range(2, 15):
        for suit in range(4):
            if (rank, suit) not in others:
                ranked = _plain_five([*others, (rank, suit)])
                if rank == _ACE or ranked[0] in (_STRAIGHT, _FLUSH, _STRAIGHT_FLUSH):
                    best = max(best, ranked)
    return best


def _two(codes: tuple[int, ...]) -> Ranked:
    a, b = sorted((_ACE if c == _JOKER else (c >> 2) + 2 for c in codes), reverse=True)
    return (1, (a,)) if a == b else (0, (a, b))


def _sound(high: Ranked, low: Ranked) -> bool:
    """The five-card hand outranks (or equals) the two-card one: not a foul."""
    if high[0] != low[0]:
        return high[0] > low[0]
    return high[1][: len(low[1])] >= low[1]


def test_the_barred_rounds_settle_as_an_evaluator_written_apart_settles_them() -> None:
    rng = random.Random(20261207)
    deck = list(range(53))
    rounds = engine_wins = best_wins = 0
    while rounds < 400:
        dealer = rng.sample(deck, 7)
        if not is_queen_high_pai_gow(dealer):
            continue
        player = rng.sample([c for c in deck if c not in dealer], 7)
        rounds += 1
        theirs = house_way(dealer, HouseWay.PARTY)
        mine = house_way(player, HouseWay.PARTY)
        by_rank = sorted(dealer, key=lambda c: c >> 2, reverse=True)
        assert sorted(theirs.low) == sorted(by_rank[1:3]), theirs
        dealer_high, dealer_low = _five(tuple(theirs.high)), _two(tuple(theirs.low))
        engine = (high_value(mine.high) > high_value(theirs.high)) + (
            low_value(mine.low) > low_value(theirs.low)
        )
        apart = (_five(tuple(mine.high)) > dealer_high) + (_two(tuple(mine.low)) > dealer_low)
        assert engine == apart, (player, dealer)
        best = 0
        for low in combinations(player, 2):
            high = tuple(c for c in player if c not in low)
            h, lo = _five(high), _two(low)
            if _sound(h, lo):
                best = max(best, (h > dealer_high) + (lo > dealer_low))
        assert engine <= best
        engine_wins += engine == 2
        best_wins += best == 2
    # The house way wins about 86 % of these rounds, and no split of the player's cards
    # beats the dealer's in about 7 % of them: a player who sets hands as well as the
    # published base game assumes nets far more than the 0.65 of a barred round that the
    # published EZ figure needs.
    assert 0.8 < engine_wins / rounds <= best_wins / rounds < 0.96, (engine_wins, best_wins)
