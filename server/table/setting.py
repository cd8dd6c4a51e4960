"""Setting the hands: each player with a bet splits their seven cards into a high and
a low hand, or asks the house to; when every hand is set, or the time is up (hands
still unset are set by the house way), the dealer's hand is set and all are shown.
"""

from __future__ import annotations

from protocol.errors import ErrorCode
from protocol.fairness import DEALER_HAND
from protocol.structs import HandChoice
from server.rules.houseways import house_way
from server.rules.splits import FoulPolicy, SplitError, split_with_low
from server.rules.values import high_name, high_value, low_name, low_value
from server.table import views
from server.table.errors import TableError
from server.table.events import SetHand, UseHouseWay
from server.table.state import Phase, Seat, SetBy, TableState, evolve
from server.table.work import Work, seat_index


def start_setting(work: Work) -> None:
    """The cards are out: the players' time to set begins (already over if all are set)."""
    work.set(phase=Phase.SETTING, deadline=work.now + work.state.config.setting_ms)
    work.emit(views.phase_changed(work.state))
    if all(s.low is not None for _, s in work.state.in_round()):
        reveal(work)


def _in_round_seat(work: Work, player: str) -> tuple[int, Seat]:
    index, seat = seat_index(work, player)
    if not seat.has_bet:
        raise TableError(ErrorCode.NO_BET, "you have no bet in this round")
    if seat.low is not None:
        raise TableError(ErrorCode.ALREADY_SET, "your hand is already set for this round")
    return index, seat


def hand(state: TableState, index: int) -> tuple[int, ...]:
    """The seven cards dealt to hand ``index`` (a seat, or the dealer's)."""
    assert state.hands is not None
    return state.hands[index]


def set_hand(work: Work, event: SetHand) -> None:
    """Set the hand as the player split it: refused if it is no split of their cards,
    or a foul under a table that refuses fouls."""
    index, seat = _in_round_seat(work, event.player)
    cards = hand(work.state, index)
    try:
        split = split_with_low(cards, event.low)
    except SplitError as exc:
        raise TableError(ErrorCode.BAD_HAND, str(exc)) from exc
    rules = work.state.config.rules
    fouled = split.is_foul(rules.wheel)
    if fouled and rules.foul is FoulPolicy.REJECT:
        high, low = high_value(split.high, rules.wheel), low_value(split.low)
        raise TableError(
            ErrorCode.FOUL,
            f"foul: the low hand ({low_name(low)}) outranks the high hand "
            f"({high_name(high)}); set again",
        )
    _record_set(work, index, seat, split.low, SetBy.PLAYER, fouled)


def use_house_way(work: Work, event: UseHouseWay) -> None:
    """Set the hand by the house way, as the player asked."""
    index, seat = _in_round_seat(work, event.player)
    _record_set(work, index, seat, house_low(work.state, index), SetBy.HOUSE_WAY_ASKED, False)


def house_low(state: TableState, index: int) -> tuple[int, ...]:
    """The low hand the house way makes of hand ``index``."""
    rules = state.config.rules
    low: tuple[int, ...] = house_way(hand(state, index), rules.house_way, rules.wheel).low
    return low


def suggestion(state: TableState, player: str) -> HandChoice:
    """The house way's split of ``player``'s hand, without setting it (a query).

    Refused as ``house_way``'s ``set`` would be, in the same order (the phase, the seat,
    the bet: protocol/PROTOCOL.md, section 10, "When two errors apply"), except that a
    hand already set may still be asked about.
    """
    if state.phase not in (Phase.DEALING, Phase.SETTING):
        raise TableError(
            ErrorCode.WRONG_PHASE,
            f"a house way suggestion is not allowed while the table is {state.phase.value}",
        )
    index = state.seat_of(player)
    if index is None:
        raise TableError(ErrorCode.NOT_SEATED, "you have no seat at this table")
    seat = state.seats[index]
    assert seat is not None
    if not seat.has_bet:
        raise TableError(ErrorCode.NO_BET, "you have no bet in this round")
    rules = state.config.rules
    split = house_way(hand(state, index), rules.house_way, rules.wheel)
    return views.hand_choice(state, split.high, split.low, applied=False)


def _record_set(
    work: Work, index: int, seat: Seat, low: tuple[int, ...], by: SetBy, fouled: bool
) -> None:
    work.set_seat(index, evolve(seat, low=tuple(low), set_by=by, fouled=fouled))
    work.emit(views.hand_set(work.state, index))
    high = tuple(c for c in hand(work.state, index) if c not in low)
    work.reply = views.hand_choice(work.state, high, tuple(low), applied=True)
    if work.state.phase is Phase.SETTING and all(
        s.low is not None for _, s in work.state.in_round()
    ):
        reveal(work)


def reveal(work: Work) -> None:
    """Set every unset hand by the house way (each one announced by ``hand_set``, as a
    hand set by request is), set the dealer's, and show every hand."""
    for index, seat in work.state.in_round():
        if seat.low is None:
            low = house_low(work.state, index)
            work.set_seat(index, evolve(seat, low=low, set_by=SetBy.HOUSE_WAY_TIMEOUT))
            work.emit(views.hand_set(work.state, index))
    work.set(
        phase=Phase.REVEALING,
        deadline=work.now + work.state.config.revealing_ms,
        dealer_low=house_low(work.state, DEALER_HAND),
    )
    work.emit(views.phase_changed(work.state))
    work.emit(views.revealed(work.state))
