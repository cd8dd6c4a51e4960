"""The lines a person reads of a round's money: each stake, what it did and the net,
every amount said once and adding up to the net beside the seat."""

from __future__ import annotations

import re
from dataclasses import replace

from clients.text import money_line, result_line
from protocol.messages import Snapshot
from protocol.structs import SeatResult, WagerResult
from tests.clients.tui.helpers import vector


def _results() -> tuple[SeatResult, ...]:
    snapshot = vector("snapshot_settling")
    assert isinstance(snapshot, Snapshot)
    return snapshot.results


def _net(r: SeatResult) -> int:
    return r.payout + r.bonus_payout - r.bet - r.bonus_bet


STAKE = re.compile(r"\b(?:bet|bonus) (\d+) (?:won (\d+)|(returned)|lost(?: (\d+))?)")


def _gain(stake: re.Match[str]) -> int:
    """A stake's gain as its words say it: won N, returned, lost N, or lost (the stake)."""
    amount, won, returned, lost = stake.groups()
    if won is not None:
        return int(won)
    if returned is not None:
        return 0
    return -int(lost if lost is not None else amount)


def test_the_amounts_add_up_to_the_net() -> None:
    """Every gain and loss said is net of its stake, and they add up to the net said
    once (a payout, stake included, beside the net counted a bonus two ways)."""
    results = _results()
    assert any(r.bonus_bet and r.bonus_payout for r in results)  # the case of the issue
    for r in results:
        line = money_line(r)
        assert "paid" not in line
        stakes = list(STAKE.finditer(line))
        assert len(stakes) == (2 if r.bonus_bet else 1)
        assert sum(_gain(stake) for stake in stakes) == _net(r)
        assert line.endswith(f": net {_net(r):+d}")
        assert line.count("net ") == 1


def test_a_win_with_a_bonus_reads_once_each() -> None:
    win = SeatResult(
        seat=0, outcome="win", high="win", low="win", bet=100, payout=195, commission=5,
        bonus_bet=10, bonus_payout=30, balance=1115, bonus_class="straight",
    )  # fmt: skip
    assert money_line(win) == "bet 100 won 95 (commission 5), bonus 10 won 20 (straight): net +115"
    assert result_line(win) == (
        "seat 1: WIN (high win, low win) bet 100 won 95 (commission 5), "
        "bonus 10 won 20 (straight): net +115; balance 1115"
    )
    push = replace(win, outcome="push", low="lose", payout=100, commission=0, bonus_payout=0)
    assert money_line(push) == "bet 100 returned, bonus 10 lost: net -10"
    lose = replace(push, outcome="lose", high="lose", payout=0, bonus_bet=0)
    assert money_line(lose) == "bet 100 lost: net -100"


def test_an_envy_bonus_reads_beside_the_bonus_and_counts_in_the_net() -> None:
    """Protocol minor 6: the side bets beyond the bonus bet, from the `wagers` list."""
    win = SeatResult(
        seat=0, outcome="lose", high="lose", low="lose", bet=100, payout=0, commission=0,
        bonus_bet=10, bonus_payout=0, balance=940,
        wagers=(
            WagerResult("bonus", 10, 0),
            WagerResult("envy", 0, 50, "four_of_a_kind"),
        ),
    )  # fmt: skip
    assert money_line(win) == ("bet 100 lost, bonus 10 lost, envy won 50 (four of a kind): net -60")


def test_a_share_of_the_meter_is_said_though_its_chips_go_to_the_account() -> None:
    """Minor 7: a progressive hand taking a share of the meter has its class with payout
    0 (the share is paid into the account): the line says the jackpot, and the net counts
    only the stake, as the seat's chips do."""
    hit = SeatResult(
        seat=0, outcome="win", high="win", low="win", bet=100, payout=195, commission=5,
        bonus_bet=0, bonus_payout=0, balance=1090,
        wagers=(WagerResult("progressive", 5, 0, "natural_7_card_straight_flush"),),
    )  # fmt: skip
    assert money_line(hit) == (
        "bet 100 won 95 (commission 5), progressive 5 hit the JACKPOT "
        "(natural 7 card straight flush), its share paid to the account: net +90"
    )
    fixed = replace(hit, wagers=(WagerResult("progressive", 5, 40, "full_house"),))
    assert money_line(fixed) == (
        "bet 100 won 95 (commission 5), progressive 5 won 35 (full house): net +130"
    )
    nothing = replace(hit, wagers=(WagerResult("progressive", 5, 0),))
    assert "JACKPOT" not in money_line(nothing)
