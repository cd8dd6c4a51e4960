"""The end of a round: its settlement (or its void, on a malfunction), then the
moment between rounds when leavers stand up and betting reopens.

A round is settled once, ever: the ledger keys of its settlement name the round and
the seat, not the step, so a settlement stored twice cannot pay twice.
"""

from __future__ import annotations

from typing import Any

from protocol.fairness import DEALER_HAND
from server.rules.dealer_hands import pushes_main_bet
from server.rules.settlement import settle_values
from server.rules.side_bets import SIDE_BETS
from server.rules.values import high_value, low_value
from server.rules.wagers import SideDeal, side_deal_others
from server.table import views
from server.table.betting import open_betting
from server.table.events import Void
from server.table.ledger import Kind, Pot, win_kind
from server.table.seats import remove_seat, return_bets
from server.table.state import Phase, Seat, SeatResult, TableConfig, WagerResult, evolve
from server.table.work import Work, round_key


def settle(work: Work) -> None:
    """Pay or take every bet of the round, bonus bets too, and reveal the round's seed."""
    state = work.state
    rules = state.config.rules
    assert state.hands is not None
    assert state.dealer_low is not None
    assert state.seed is not None
    dealer_cards = state.hands[DEALER_HAND]
    dealer_high_cards = tuple(c for c in dealer_cards if c not in state.dealer_low)
    dealer_high = high_value(dealer_high_cards, rules.wheel)
    dealer_low = low_value(state.dealer_low)
    # A commission-free table's barred dealer hand pushes every main bet (docs/RULES.md,
    # "Commission-free tables").
    dealer_barred = pushes_main_bet(rules.commission_free, dealer_cards, state.dealer_low)
    in_round = [i for i, _ in state.in_round()]
    results = []
    house = state.house
    for index, seat in state.in_round():
        assert seat.low is not None
        cards = state.hands[index]
        high_cards = tuple(c for c in cards if c not in seat.low)
        s = settle_values(
            high_value(high_cards, rules.wheel),
            low_value(seat.low),
            dealer_high,
            dealer_low,
            seat.bet,
            commission_pct=rules.commission_pct,
            foul=rules.foul,
            rounding=rules.commission_rounding,
            commission_free=rules.commission_free,
            dealer_barred=dealer_barred,
        )

        def key(label: str, i: int = index) -> str:
            return round_key(work, i, label)

        p = seat.player
        if s.net >= 0:  # win or push: the stake comes back
            work.move(key("bet_back"), Kind.BET_RETURNED, p, seat.bet, Pot.HELD, Pot.TABLE)
            work.move(key("win"), Kind.WIN, p, s.won, Pot.HOUSE, Pot.TABLE)
            work.move(key("commission"), Kind.COMMISSION, p, s.commission, Pot.TABLE, Pot.HOUSE)
        else:
            work.move(key("bet_lost"), Kind.BET_LOST, p, seat.bet, Pot.HELD, Pot.HOUSE)
        wagers = settle_side_bets(work, index, seat, dealer_cards, in_round)
        returned = s.returned + sum(w.payout for w in wagers)
        net = s.net + sum(w.payout - w.stake for w in wagers)
        house -= net
        balance = seat.balance + returned
        result = SeatResult(
            seat=index,
            player=p,
            outcome=s.outcome.value,
            high=s.high.value,
            low=s.low.value,
            bet=seat.bet,
            payout=s.returned,
            commission=s.commission,
            net=net,
            balance=balance,
            wagers=wagers,
        )
        results.append(result)
        work.set_seat(
            index,
            evolve(
                seat,
                balance=balance,
                bet=0,
                side=(),
                last_bet=seat.bet,
                last_side=seat.side,
                sit_out_rounds=0,
            ),
        )
        work.logs.append((p, views.game_log(state, index, seat, result, work.now)))
    work.set(
        phase=Phase.SETTLING,
        deadline=work.now + state.config.settling_ms,
        results=tuple(results),
        house=house,
        settled_options=_settled_options(state.config, results),
    )
    work.emit(views.phase_changed(work.state))
    work.emit(views.settled(work.state))
    work.emit(views.seed_revealed(work.state))


def _settled_options(config: TableConfig, results: list[SeatResult]) -> tuple[tuple[str, Any], ...]:
    """The options of each side bet settled past the commit (``SideBet.past_commit``)
    that ``results`` hold a wager of, as ``config`` (the round's) sets them: kept with
    the results (``TableState.settled_options``)."""
    if not config.side_bets:  # the common table: the bonus bet alone
        return ()
    staked = {w.kind for r in results for w in r.wagers if w.stake}
    return tuple(
        (kind, options)
        for kind, options in config.side_bets
        if kind in staked and SIDE_BETS[kind].past_commit
    )


def settle_side_bets(
    work: Work, index: int, seat: Seat, dealer_cards: tuple[int, ...], in_round: list[int]
) -> tuple[WagerResult, ...]:
    """Settle seat ``index``'s side bets, each by its rule (server/rules/side_bets.py),
    each with its own ledger entries keyed by its kind; their results, in the
    registry's order. A staked bet lost goes to the house, else its stake comes back
    with its win; a riding bet the seat qualifies for pays its win."""
    state = work.state
    assert state.dealer_low is not None
    assert seat.low is not None
    config = state.config
    stakes = dict(seat.side)
    hands = state.hands
    assert hands is not None
    p = seat.player

    def key(label: str) -> str:
        return round_key(work, index, label)

    deal = SideDeal(
        cards=hands[index],
        low=seat.low,
        dealer=dealer_cards,
        dealer_low=state.dealer_low,
        others=side_deal_others(hands, index, in_round),
        stakes=stakes,
        rules=config.rules,
    )
    results = []
    for kind in config.side_kinds:
        bet = SIDE_BETS[kind]
        stake = stakes.get(kind, 0)
        if bet.staked and not stake:
            continue
        settled = bet.settle(deal, stake, config.side_options(kind))
        if not bet.staked and not settled.payout:
            continue  # a riding bet that pays nothing leaves no line
        back = settled.payout
        if not bet.staked:
            work.move(key(kind + "_win"), win_kind(kind), p, back, Pot.HOUSE, Pot.TABLE)
        elif back >= stake:  # the stake back, and the win (labels as 0.1.0's bonus)
            work.move(key(kind + "_back"), Kind.BET_RETURNED, p, stake, Pot.HELD, Pot.TABLE)
            work.move(key(kind + "_win"), win_kind(kind), p, back - stake, Pot.HOUSE, Pot.TABLE)
        else:  # lost, or (a rule that returns part of it) partly
            work.move(key(kind + "_back"), Kind.BET_RETURNED, p, back, Pot.HELD, Pot.TABLE)
            work.move(key(kind + "_lost"), Kind.BET_LOST, p, stake - back, Pot.HELD, Pot.HOUSE)
        results.append(WagerResult(kind, stake, settled.payout, settled.pay_class))
    return tuple(results)


def void(work: Work, event: Void) -> None:
    """A malfunction: every bet of the round back (docs/RULES.md, "Faults"; the PartyCasino
    rules: "Les gains sont nuls en cas de dysfonctionnement")."""
    state = work.state
    reason = event.reason[:200]
    refunds = []
    for index, seat in state.occupied():
        if seat.held:
            refunds.append((index, seat.held))
            return_bets(work, index, seat, void=True)
    work.set(
        phase=Phase.SETTLING,
        deadline=work.now + state.config.settling_ms,
        voided=reason,
        results=(),
        dealer_low=None,
    )
    work.emit(views.phase_changed(work.state))
    work.emit(views.voided(work.state, tuple(refunds)))
    if state.seed is not None:
        work.emit(views.seed_revealed(work.state))
    for index, seat in state.in_round():
        work.logs.append((seat.player, views.void_log(state, index, seat, work.now)))


def end_round(work: Work) -> None:
    """Between rounds: leavers, the missing and the long-gone stand up; betting reopens."""
    state = work.state
    for index, seat in state.occupied():
        gone = (
            seat.disconnected_at is not None
            and work.now - seat.disconnected_at >= state.config.grace_ms
        )
        too_long_out = seat.sit_out_rounds > state.config.max_sit_out_rounds
        if seat.leaving or seat.missed or gone or too_long_out:
            remove_seat(work, index)
        else:
            work.set_seat(
                index, evolve(seat, low=None, set_by=None, fouled=False, sitting_out=False)
            )
    work.set(hands=None, dealer_low=None, results=(), voided=None, settled_options=())
    # A closing table opens no new round: its seats stand up (server/table/closing.py).
    if work.state.occupied() and not work.state.closing:
        assert work.seed is not None  # a tick's: every deadline comes with one
        open_betting(work, work.seed)
    else:
        work.set(phase=Phase.IDLE, deadline=None, seed=None, commitment=None)
        work.emit(views.phase_changed(work.state))
