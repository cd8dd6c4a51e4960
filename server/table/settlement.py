"""The end of a round: its settlement (or its void, on a malfunction), then the
moment between rounds when leavers stand up and betting reopens.

A round is settled once, ever: the ledger keys of its settlement name the round and
the seat, not the step, so a settlement stored twice cannot pay twice.
"""

from __future__ import annotations

from protocol.fairness import DEALER_HAND
from server.rules import bonus as bonus_rules
from server.rules.dealer_hands import pushes_main_bet
from server.rules.settlement import settle_values
from server.rules.values import high_value, low_value
from server.table import views
from server.table.betting import open_betting
from server.table.events import Void
from server.table.ledger import Kind, Pot
from server.table.seats import remove_seat, return_bets
from server.table.state import Phase, SeatResult, evolve
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
    pay_table = bonus_rules.pay_table(rules.bonus_pay_table)
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
        bonus_class = bonus_rules.classify_bonus(cards) if seat.bonus else None
        # The pay table's payout is the stake plus the winnings, or 0 when the bet loses.
        bonus_back = pay_table.payout(bonus_class, seat.bonus) if bonus_class is not None else 0
        bonus_win = bonus_back - seat.bonus if bonus_back else 0

        def key(label: str, i: int = index) -> str:
            return round_key(work, i, label)

        p = seat.player
        if s.net >= 0:  # win or push: the stake comes back
            work.move(key("bet_back"), Kind.BET_RETURNED, p, seat.bet, Pot.HELD, Pot.TABLE)
            work.move(key("win"), Kind.WIN, p, s.won, Pot.HOUSE, Pot.TABLE)
            work.move(key("commission"), Kind.COMMISSION, p, s.commission, Pot.TABLE, Pot.HOUSE)
        else:
            work.move(key("bet_lost"), Kind.BET_LOST, p, seat.bet, Pot.HELD, Pot.HOUSE)
        if seat.bonus:
            if bonus_back:
                work.move(key("bonus_back"), Kind.BET_RETURNED, p, seat.bonus, Pot.HELD, Pot.TABLE)
                work.move(key("bonus_win"), Kind.BONUS_WIN, p, bonus_win, Pot.HOUSE, Pot.TABLE)
            else:
                work.move(key("bonus_lost"), Kind.BET_LOST, p, seat.bonus, Pot.HELD, Pot.HOUSE)
        returned = s.returned + bonus_back
        net = s.net + (bonus_win if bonus_back else -seat.bonus)
        house -= net
        balance = seat.balance + returned
        result = SeatResult(
            seat=index,
            player=p,
            outcome=s.outcome.value,
            high=s.high.value,
            low=s.low.value,
            bet=seat.bet,
            bonus=seat.bonus,
            # A line of the pay table, or nil: a bonus that pays nothing names no class
            # (protocol/PROTOCOL.md, section 9).
            bonus_class=(
                bonus_rules.BONUS_CLASS_CODES[bonus_class]
                if bonus_class is not None and bonus_back
                else None
            ),
            payout=s.returned,
            commission=s.commission,
            bonus_payout=bonus_back,
            net=net,
            balance=balance,
        )
        results.append(result)
        work.set_seat(
            index,
            evolve(
                seat,
                balance=balance,
                bet=0,
                bonus=0,
                last_bet=seat.bet,
                last_bonus=seat.bonus,
                sit_out_rounds=0,
            ),
        )
        work.logs.append((p, views.game_log(state, index, seat, result, work.now)))
    work.set(
        phase=Phase.SETTLING,
        deadline=work.now + state.config.settling_ms,
        results=tuple(results),
        house=house,
    )
    work.emit(views.phase_changed(work.state))
    work.emit(views.settled(work.state))
    work.emit(views.seed_revealed(work.state))


def void(work: Work, event: Void) -> None:
    """A malfunction: every bet of the round back (docs/RULES.md, "Faults"; the PartyCasino
    rules: "Les gains sont nuls en cas de dysfonctionnement")."""
    state = work.state
    reason = event.reason[:200]
    refunds = []
    for index, seat in state.occupied():
        if seat.bet or seat.bonus:
            refunds.append((index, seat.bet + seat.bonus))
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
    work.set(hands=None, dealer_low=None, results=(), voided=None)
    # A closing table opens no new round: its seats stand up (server/table/closing.py).
    if work.state.occupied() and not work.state.closing:
        assert work.seed is not None  # a tick's: every deadline comes with one
        open_betting(work, work.seed)
    else:
        work.set(phase=Phase.IDLE, deadline=None, seed=None, commitment=None)
        work.emit(views.phase_changed(work.state))
