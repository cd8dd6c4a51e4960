"""Seats and money: sitting down and standing up, chips between a player's account
and the table, and presence (away, back, gone for good).

Chips move between the account and the table only here, each movement a ledger
entry: a buy-in or rebuy (account to table), a cash-out (table to account), and
the cash-out of the whole balance when a seat stands up.
"""

from __future__ import annotations

from protocol.errors import ErrorCode
from server.table import views
from server.table.betting import maybe_close_betting, open_betting
from server.table.errors import TableError
from server.table.events import CashOut, Disconnect, Rebuy, Reconnect, SitDown, StandUp
from server.table.ledger import Kind, Pot
from server.table.state import PHASES_WITH_CARDS, Phase, Seat, evolve
from server.table.work import Work, ledger_key, round_key, seat_at, seat_index


def sit_down(work: Work, event: SitDown) -> None:
    """Take a seat with a buy-in; the first seat at an empty table opens betting."""
    state, config = work.state, work.state.config
    if state.seat_of(event.player) is not None:
        raise TableError(ErrorCode.ALREADY_SEATED, "you already have a seat at this table")
    # "Any free seat" is chosen here, from the state the event applies to: a choice
    # made earlier, from an older state, could find the seat taken meanwhile.
    seat = event.seat
    if seat is None:
        seat = next((i for i, s in enumerate(state.seats) if s is None), None)
        if seat is None:
            raise TableError(ErrorCode.TABLE_FULL, "every seat is taken")
    if not 0 <= seat < config.seats:
        raise TableError(ErrorCode.BAD_MESSAGE, f"seat {seat} is not 0..{config.seats - 1}")
    if state.seats[seat] is not None:
        raise TableError(ErrorCode.SEAT_TAKEN, f"seat {seat} is taken")
    unit = config.bet_unit
    if not config.min_buy_in <= event.buy_in <= config.max_buy_in or event.buy_in % unit:
        raise TableError(
            ErrorCode.BET_LIMITS,
            f"the buy-in is {config.min_buy_in} to {config.max_buy_in} chips, "
            f"in multiples of {unit}",
        )
    work.move(
        ledger_key(work, event.player, "buy_in"),
        Kind.BUY_IN,
        event.player,
        event.buy_in,
        Pot.ACCOUNT,
        Pot.TABLE,
    )
    work.set_seat(seat, Seat(player=event.player, name=event.name, balance=event.buy_in))
    work.emit(views.seat_changed(work.state, seat))
    if state.phase is Phase.IDLE and state.seed is None:
        open_betting(work, event.seed)


def stand_up(work: Work, event: StandUp) -> None:
    """Leave now, or when the round ends if the seat has a bet in it."""
    index, seat = seat_index(work, event.player)
    if work.state.phase in PHASES_WITH_CARDS and seat.has_bet:
        # A round always completes: the player leaves when it ends (docs/RULES.md,
        # "Bets and table money").
        work.set_seat(index, evolve(seat, leaving=True))
        work.emit(views.seat_changed(work.state, index))
        return
    remove_seat(work, index)
    # The seat that left may have been the last one betting waited for.
    maybe_close_betting(work)


def remove_seat(work: Work, index: int) -> None:
    """Stand a seat up now: its bets back to the table balance, then all to the account."""
    seat = seat_at(work, index)
    return_bets(work, index, seat)
    seat = seat_at(work, index)
    work.move(
        ledger_key(work, seat.player, "cash_out"),
        Kind.CASH_OUT,
        seat.player,
        seat.balance,
        Pot.TABLE,
        Pot.ACCOUNT,
    )
    work.set_seat(index, None)
    work.emit(views.seat_changed(work.state, index))


def return_bets(work: Work, index: int, seat: Seat, void: bool = False) -> None:
    """Seat ``index``'s bets back to its table balance (keyed by round when voiding)."""

    def key(label: str) -> str:
        if void:
            return round_key(work, index, "void_" + label)
        return ledger_key(work, seat.player, label)

    work.move(key("bet_back"), Kind.BET_RETURNED, seat.player, seat.bet, Pot.HELD, Pot.TABLE)
    for kind, stake in seat.side:  # each side bet's own entry ("bonus_back" as in 0.1.0)
        work.move(key(kind + "_back"), Kind.BET_RETURNED, seat.player, stake, Pot.HELD, Pot.TABLE)
    work.set_seat(index, evolve(seat, balance=seat.balance + seat.held, bet=0, side=()))


def rebuy(work: Work, event: Rebuy) -> None:
    """More chips from the account to the table, between rounds."""
    index, seat = seat_index(work, event.player)
    config = work.state.config
    if work.state.phase in PHASES_WITH_CARDS and seat.has_bet:
        raise TableError(ErrorCode.WRONG_PHASE, "rebuy between rounds, not during one")
    unit = config.bet_unit
    if event.amount <= 0 or seat.balance + event.amount > config.max_buy_in or event.amount % unit:
        raise TableError(
            ErrorCode.BET_LIMITS,
            f"a rebuy is a multiple of {unit} that keeps the table balance at most "
            f"{config.max_buy_in}",
        )
    work.move(
        ledger_key(work, event.player, "rebuy"),
        Kind.REBUY,
        event.player,
        event.amount,
        Pot.ACCOUNT,
        Pot.TABLE,
    )
    work.set_seat(index, evolve(seat, balance=seat.balance + event.amount))
    work.emit(views.seat_changed(work.state, index))


def cash_out(work: Work, event: CashOut) -> None:
    """Chips from the table back to the account, between rounds; the seat is kept."""
    index, seat = seat_index(work, event.player)
    if work.state.phase in PHASES_WITH_CARDS and seat.has_bet:
        raise TableError(ErrorCode.WRONG_PHASE, "cash out between rounds, not during one")
    amount = event.amount or seat.balance
    if amount < 0 or amount > seat.balance:
        raise TableError(
            ErrorCode.INSUFFICIENT_BALANCE,
            f"you can cash out at most your table balance of {seat.balance}",
        )
    work.move(
        ledger_key(work, event.player, "cash_out"),
        Kind.CASH_OUT,
        event.player,
        amount,
        Pot.TABLE,
        Pot.ACCOUNT,
    )
    if amount:
        work.set_seat(index, evolve(seat, balance=seat.balance - amount))
        work.emit(views.seat_changed(work.state, index))


def disconnect(work: Work, event: Disconnect) -> None:
    """The player is away: the grace time runs from now. A round they missed is not
    held against them: their absence may have begun before the deal, the table told
    only now (a dropped connection noticed late, a server that crashed), and the grace
    time decides (docs/RULES.md, "Disconnection")."""
    index, seat = seat_index(work, event.player)
    if seat.connected:
        work.set_seat(index, evolve(seat, connected=False, disconnected_at=work.now, missed=False))
        work.emit(views.seat_changed(work.state, index))


def reconnect(work: Work, event: Reconnect) -> None:
    """The player is back."""
    index, seat = seat_index(work, event.player)
    if not seat.connected:
        work.set_seat(index, evolve(seat, connected=True, disconnected_at=None))
        work.emit(views.seat_changed(work.state, index))


def stand_up_the_gone(work: Work) -> None:
    """Stand up every seat with no bet away longer than the grace time (between rounds:
    a seat with a bet in a round stands up when it ends, see the settlement); betting
    closes then if those were the last seats it waited for."""
    for index, seat in work.state.occupied():
        if (
            seat.disconnected_at is not None
            and not seat.has_bet
            and work.now - seat.disconnected_at >= work.state.config.grace_ms
        ):
            remove_seat(work, index)
    # Checked once, after every release: the deal must not start between two of them.
    maybe_close_betting(work)
