"""The table state machine: ``step(state, event, now_ms) -> Transition``.

Pure: no I/O, no clock (time is ``now_ms``), no randomness (a new round's seed comes
inside the event that opens it). Every legal (phase, event) pair is a row of
:data:`TRANSITIONS`; anything else is refused with ``wrong_phase`` and changes
nothing. A handler either raises :class:`TableError` before changing anything, or
returns the new state, the table events to send (numbered, already filtered per
recipient), the ledger entries to apply atomically with the state, the game logs,
and the reply to the request.

The round (RULES.md; DESIGN.md)::

    idle --bet--> betting --deadline or all decided--> dealing --deadline--> setting
    setting --deadline or all set--> revealing --deadline--> settling --deadline--> betting
    betting --deadline, no bet--> idle        any round phase --void--> settling

A deadline already past when a tick comes (after a restart) fires at once, and the
next phase gets its whole length from that tick: players who could not act while
the server was down still get their full time to set.

Chips are never created or lost: every handler that moves chips lists the movement
as a :class:`LedgerEntry` and changes the pots (seat balance, bets held, house) by
exactly that amount.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from protocol.errors import ErrorCode
from protocol.fairness import DEALER_HAND, commitment, deal
from protocol.structs import HandChoice, RoundRecord
from server.rules import bonus as bonus_rules
from server.rules.houseways import house_way
from server.rules.settlement import settle_values
from server.rules.splits import FoulPolicy, SplitError, split_with_low
from server.rules.values import high_name, high_value, low_name, low_value
from server.table import views
from server.table.errors import TableError
from server.table.events import (
    CashOut,
    ClearBet,
    Disconnect,
    Event,
    PlaceBet,
    Rebet,
    Rebuy,
    Reconnect,
    SetHand,
    SitDown,
    SitOut,
    StandUp,
    Tick,
    UseHouseWay,
    Void,
)
from server.table.ledger import Kind, LedgerEntry, Pot
from server.table.state import (
    PHASES_WITH_CARDS,
    Phase,
    Seat,
    SeatResult,
    SetBy,
    TableState,
    evolve,
)
from server.table.views import Message, Outbound

GameLog = tuple[str, RoundRecord]


@dataclass(frozen=True, slots=True)
class Transition:
    """What one event did: the new state and everything the shell must store and send."""

    state: TableState
    events: tuple[Outbound, ...] = ()
    entries: tuple[LedgerEntry, ...] = ()
    logs: tuple[GameLog, ...] = ()
    reply: HandChoice | None = None


class _Step:
    """The working set of one step: the state so far and what it produced."""

    def __init__(self, state: TableState, now: int) -> None:
        self.start = state
        self.state = state
        self.now = now
        self.version = state.version + 1  # the version this step writes
        self.events: list[Outbound] = []
        self.entries: list[LedgerEntry] = []
        self.logs: list[GameLog] = []
        self.reply: HandChoice | None = None

    def set(self, **changes: Any) -> None:
        self.state = evolve(self.state, **changes)

    def set_seat(self, index: int, seat: Seat | None) -> None:
        seats = list(self.state.seats)
        seats[index] = seat
        self.state = evolve(self.state, seats=tuple(seats))

    def emit(self, public: Message, private: dict[str, Message] | None = None) -> None:
        """Send one table event: ``public`` to everyone but the keys of ``private``."""
        seq = self.state.seq + 1
        self.state = evolve(self.state, seq=seq)
        numbered = {p: views.with_seq(m, seq) for p, m in (private or {}).items()}
        self.events.append(Outbound(seq, views.with_seq(public, seq), numbered))

    def move(self, key: str, kind: Kind, player: str, amount: int, source: Pot, dest: Pot) -> None:
        if amount > 0:
            self.entries.append(LedgerEntry(key, kind, player, amount, source, dest))

    def result(self) -> Transition:
        if self.state is self.start:
            return Transition(state=self.start, reply=self.reply)
        return Transition(
            state=evolve(self.state, version=self.version),
            events=tuple(self.events),
            entries=tuple(self.entries),
            logs=tuple(self.logs),
            reply=self.reply,
        )


Handler = Callable[[_Step, Any], None]


def step(state: TableState, event: Event, now_ms: int) -> Transition:
    """Apply ``event`` at time ``now_ms``. Raises :class:`TableError` if it is not legal now.

    A refused event changes nothing. An event that changes nothing (a tick before
    any deadline) returns the same state, with no events and the same version.
    """
    handler = TRANSITIONS.get((state.phase, type(event)))
    if handler is None:
        raise TableError(
            ErrorCode.WRONG_PHASE,
            f"{_event_name(event)} is not allowed while the table is {state.phase.value}",
        )
    work = _Step(state, now_ms)
    handler(work, event)
    return work.result()


def next_wakeup(state: TableState) -> int | None:
    """The earliest time at which a :class:`Tick` would change ``state``, or None."""
    times = [state.deadline] if state.deadline is not None else []
    if state.phase in (Phase.IDLE, Phase.BETTING):
        times.extend(
            s.disconnected_at + state.config.grace_ms
            for _, s in state.occupied()
            if s.disconnected_at is not None and not s.has_bet
        )
    return min(times, default=None)


def _event_name(event: Event) -> str:
    return type(event).__name__


def _seat_index(work: _Step, player: str) -> tuple[int, Seat]:
    index = work.state.seat_of(player)
    if index is None:
        raise TableError(ErrorCode.NOT_SEATED, "you have no seat at this table")
    seat = work.state.seats[index]
    assert seat is not None
    return index, seat


def _key(work: _Step, who: str, label: str) -> str:
    """A ledger key unique to this step (table, version, who, what)."""
    return f"{work.state.config.table_id}:v{work.version}:{who}:{label}"


def _round_key(work: _Step, seat: int, label: str) -> str:
    """A ledger key unique to the round's settlement of one seat: settled once, ever."""
    return f"{work.state.config.table_id}:r{work.state.round_no}:s{seat}:{label}"


# --- seats and money ---------------------------------------------------------------


def _sit_down(work: _Step, event: SitDown) -> None:
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
    if not config.min_buy_in <= event.buy_in <= config.max_buy_in:
        raise TableError(
            ErrorCode.BET_LIMITS,
            f"the buy-in is {config.min_buy_in} to {config.max_buy_in} chips",
        )
    work.move(
        _key(work, event.player, "buy_in"),
        Kind.BUY_IN,
        event.player,
        event.buy_in,
        Pot.ACCOUNT,
        Pot.TABLE,
    )
    work.set_seat(seat, Seat(player=event.player, name=event.name, balance=event.buy_in))
    work.emit(views.seat_changed(work.state, seat))
    if state.phase is Phase.IDLE and state.seed is None:
        _open_betting(work, event.seed)


def _stand_up(work: _Step, event: StandUp) -> None:
    index, seat = _seat_index(work, event.player)
    if work.state.phase in PHASES_WITH_CARDS and seat.has_bet:
        # RULES.md: a round always completes; the player leaves when it ends.
        work.set_seat(index, evolve(seat, leaving=True))
        work.emit(views.seat_changed(work.state, index))
        return
    _remove_seat(work, index)


def _remove_seat(work: _Step, index: int) -> None:
    """Stand a seat up now: its bets back to the table balance, then all to the account."""
    seat = work.state.seats[index]
    assert seat is not None
    _return_bets(work, index, seat)
    seat = _seat_at(work, index)
    work.move(
        _key(work, seat.player, "cash_out"),
        Kind.CASH_OUT,
        seat.player,
        seat.balance,
        Pot.TABLE,
        Pot.ACCOUNT,
    )
    work.set_seat(index, None)
    work.emit(views.seat_changed(work.state, index))


def _return_bets(work: _Step, index: int, seat: Seat, void: bool = False) -> None:
    """Seat ``index``'s bets back to its table balance (keyed by round when voiding)."""

    def key(label: str) -> str:
        if void:
            return _round_key(work, index, "void_" + label)
        return _key(work, seat.player, label)

    work.move(key("bet_back"), Kind.BET_RETURNED, seat.player, seat.bet, Pot.HELD, Pot.TABLE)
    work.move(key("bonus_back"), Kind.BET_RETURNED, seat.player, seat.bonus, Pot.HELD, Pot.TABLE)
    work.set_seat(index, evolve(seat, balance=seat.balance + seat.bet + seat.bonus, bet=0, bonus=0))


def _seat_at(work: _Step, index: int) -> Seat:
    seat = work.state.seats[index]
    assert seat is not None
    return seat


def _rebuy(work: _Step, event: Rebuy) -> None:
    index, seat = _seat_index(work, event.player)
    config = work.state.config
    if work.state.phase in PHASES_WITH_CARDS and seat.has_bet:
        raise TableError(ErrorCode.WRONG_PHASE, "rebuy between rounds, not during one")
    if event.amount <= 0 or seat.balance + event.amount > config.max_buy_in:
        raise TableError(
            ErrorCode.BET_LIMITS,
            f"a rebuy is positive and keeps the table balance at most {config.max_buy_in}",
        )
    work.move(
        _key(work, event.player, "rebuy"),
        Kind.REBUY,
        event.player,
        event.amount,
        Pot.ACCOUNT,
        Pot.TABLE,
    )
    work.set_seat(index, evolve(seat, balance=seat.balance + event.amount))
    work.emit(views.seat_changed(work.state, index))


def _cash_out(work: _Step, event: CashOut) -> None:
    index, seat = _seat_index(work, event.player)
    if work.state.phase in PHASES_WITH_CARDS and seat.has_bet:
        raise TableError(ErrorCode.WRONG_PHASE, "cash out between rounds, not during one")
    amount = event.amount or seat.balance
    if amount < 0 or amount > seat.balance:
        raise TableError(
            ErrorCode.INSUFFICIENT_BALANCE,
            f"you can cash out at most your table balance of {seat.balance}",
        )
    work.move(
        _key(work, event.player, "cash_out"),
        Kind.CASH_OUT,
        event.player,
        amount,
        Pot.TABLE,
        Pot.ACCOUNT,
    )
    if amount:
        work.set_seat(index, evolve(seat, balance=seat.balance - amount))
        work.emit(views.seat_changed(work.state, index))


def _disconnect(work: _Step, event: Disconnect) -> None:
    index, seat = _seat_index(work, event.player)
    if seat.connected:
        work.set_seat(index, evolve(seat, connected=False, disconnected_at=work.now))
        work.emit(views.seat_changed(work.state, index))


def _reconnect(work: _Step, event: Reconnect) -> None:
    index, seat = _seat_index(work, event.player)
    if not seat.connected:
        work.set_seat(index, evolve(seat, connected=True, disconnected_at=None))
        work.emit(views.seat_changed(work.state, index))


# --- betting -----------------------------------------------------------------------


def _open_betting(work: _Step, seed: bytes) -> None:
    """A new round: its seed is committed to now and stays secret until it is settled."""
    work.set(
        phase=Phase.BETTING,
        deadline=work.now + work.state.config.betting_ms,
        round_no=work.state.round_no + 1,
        seed=bytes(seed),
        commitment=commitment(bytes(seed)),
        hands=None,
        dealer_low=None,
        results=(),
        voided=None,
    )
    work.emit(views.phase_changed(work.state))
    work.emit(views.commitment(work.state))


def _check_bet(work: _Step, amount: int, bonus: int) -> None:
    config = work.state.config
    unit = config.bet_unit
    if amount == 0:
        if bonus:
            raise TableError(ErrorCode.NO_BET, "a bonus bet needs a main bet")
        return
    if not config.min_bet <= amount <= config.max_bet or amount % unit:
        raise TableError(
            ErrorCode.BET_LIMITS,
            f"the bet is {config.min_bet} to {config.max_bet} chips, in multiples of {unit}",
        )
    if bonus and (not config.bonus_min <= bonus <= config.bonus_max or bonus % unit):
        raise TableError(
            ErrorCode.BET_LIMITS,
            f"the bonus bet is {config.bonus_min} to {config.bonus_max} chips, "
            f"in multiples of {unit}",
        )


def _bet(work: _Step, player: str, amount: int, bonus: int) -> None:
    index, seat = _seat_index(work, player)
    _check_bet(work, amount, bonus)
    available = seat.balance + seat.bet + seat.bonus
    if amount + bonus > available:
        raise TableError(
            ErrorCode.INSUFFICIENT_BALANCE,
            f"a bet of {amount + bonus} is above your table balance of {available}: "
            "lower the bet or rebuy",
        )
    if amount == seat.bet and bonus == seat.bonus and not (amount and seat.sitting_out):
        # The bet stands as asked (a request sent twice, a clear with nothing to
        # clear): nothing to store or announce; the ok is the answer.
        _maybe_close_betting(work)
        return
    # Only the differences move, each as its own ledger entry.
    for label, kind, old, new in (
        ("bet", Kind.BET, seat.bet, amount),
        ("bonus", Kind.BONUS_BET, seat.bonus, bonus),
    ):
        if new > old:
            work.move(_key(work, player, label), kind, player, new - old, Pot.TABLE, Pot.HELD)
        elif old > new:
            work.move(
                _key(work, player, label + "_back"),
                Kind.BET_RETURNED,
                player,
                old - new,
                Pot.HELD,
                Pot.TABLE,
            )
    if work.state.phase is Phase.IDLE and amount:
        # The table was waiting for a first bet: betting opens for the committed round,
        # and says so before the bet that opened it.
        work.set(phase=Phase.BETTING, deadline=work.now + work.state.config.betting_ms)
        work.emit(views.phase_changed(work.state))
    seat = evolve(
        seat,
        balance=available - amount - bonus,
        bet=amount,
        bonus=bonus,
        sitting_out=False if amount else seat.sitting_out,
    )
    work.set_seat(index, seat)
    work.emit(views.bet_changed(work.state, index))
    _maybe_close_betting(work)


def _place_bet(work: _Step, event: PlaceBet) -> None:
    _bet(work, event.player, event.amount, event.bonus)


def _rebet(work: _Step, event: Rebet) -> None:
    _, seat = _seat_index(work, event.player)
    if not seat.last_bet:
        raise TableError(ErrorCode.NO_BET, "there is no previous bet to repeat")
    _bet(work, event.player, seat.last_bet, seat.last_bonus)


def _clear_bet(work: _Step, event: ClearBet) -> None:
    _bet(work, event.player, 0, 0)


def _sit_out(work: _Step, event: SitOut) -> None:
    index, seat = _seat_index(work, event.player)
    if seat.has_bet:
        _bet(work, event.player, 0, 0)
        seat = _seat_at(work, index)
    work.set_seat(index, evolve(seat, sitting_out=True))
    work.emit(views.seat_changed(work.state, index))
    _maybe_close_betting(work)


def _maybe_close_betting(work: _Step) -> None:
    """Betting closes early once every seated player has bet or sits out (and one bet)."""
    if work.state.phase is not Phase.BETTING:
        return
    seats = work.state.occupied()
    if any(s.has_bet for _, s in seats) and all(s.has_bet or s.sitting_out for _, s in seats):
        _close_betting(work)


def _close_betting(work: _Step) -> None:
    state = work.state
    if not state.in_round():
        # RULES.md/issue: no bet at the table, no round: the table waits.
        work.set(phase=Phase.IDLE, deadline=None)
        work.emit(views.phase_changed(work.state))
        return
    assert state.seed is not None
    # Who neither bet nor sat out has missed the round and stands up when it ends;
    # who sat out counts it, and stands up after too many in a row.
    for index, seat in state.occupied():
        if not seat.has_bet:
            if seat.sitting_out:
                work.set_seat(index, evolve(seat, sit_out_rounds=seat.sit_out_rounds + 1))
            else:
                work.set_seat(index, evolve(seat, missed=True))
    hands = deal(state.seed)
    work.set(phase=Phase.DEALING, deadline=work.now + state.config.dealing_ms, hands=hands)
    work.emit(views.phase_changed(work.state))
    public, private = views.cards_dealt(work.state)
    work.emit(public, private)


# --- setting -----------------------------------------------------------------------


def _in_round_seat(work: _Step, player: str) -> tuple[int, Seat]:
    index, seat = _seat_index(work, player)
    if not seat.has_bet:
        raise TableError(ErrorCode.NO_BET, "you have no bet in this round")
    if seat.low is not None:
        raise TableError(ErrorCode.ALREADY_SET, "your hand is already set for this round")
    return index, seat


def _hand(state: TableState, index: int) -> tuple[int, ...]:
    assert state.hands is not None
    return state.hands[index]


def _set_hand(work: _Step, event: SetHand) -> None:
    index, seat = _in_round_seat(work, event.player)
    cards = _hand(work.state, index)
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


def _use_house_way(work: _Step, event: UseHouseWay) -> None:
    index, seat = _in_round_seat(work, event.player)
    _record_set(work, index, seat, _house_low(work.state, index), SetBy.HOUSE_WAY_ASKED, False)


def _house_low(state: TableState, index: int) -> tuple[int, ...]:
    rules = state.config.rules
    low: tuple[int, ...] = house_way(_hand(state, index), rules.house_way, rules.wheel).low
    return low


def suggestion(state: TableState, player: str) -> HandChoice:
    """The house way's split of ``player``'s hand, without setting it (a query)."""
    index = state.seat_of(player)
    if index is None:
        raise TableError(ErrorCode.NOT_SEATED, "you have no seat at this table")
    seat = state.seats[index]
    assert seat is not None
    if state.phase not in (Phase.DEALING, Phase.SETTING) or not seat.has_bet:
        raise TableError(ErrorCode.NO_BET, "there is no hand of yours to set now")
    rules = state.config.rules
    split = house_way(_hand(state, index), rules.house_way, rules.wheel)
    return views.hand_choice(state, split.high, split.low, applied=False)


def _record_set(
    work: _Step, index: int, seat: Seat, low: tuple[int, ...], by: SetBy, fouled: bool
) -> None:
    work.set_seat(index, evolve(seat, low=tuple(low), set_by=by, fouled=fouled))
    work.emit(views.hand_set(work.state, index))
    high = tuple(c for c in _hand(work.state, index) if c not in low)
    work.reply = views.hand_choice(work.state, high, tuple(low), applied=True)
    if work.state.phase is Phase.SETTING and all(
        s.low is not None for _, s in work.state.in_round()
    ):
        _reveal(work)


# --- reveal, settlement, next round -------------------------------------------------


def _start_setting(work: _Step) -> None:
    work.set(phase=Phase.SETTING, deadline=work.now + work.state.config.setting_ms)
    work.emit(views.phase_changed(work.state))
    if all(s.low is not None for _, s in work.state.in_round()):
        _reveal(work)


def _reveal(work: _Step) -> None:
    """Set every unset hand by the house way, set the dealer's, and show every hand."""
    for index, seat in work.state.in_round():
        if seat.low is None:
            low = _house_low(work.state, index)
            work.set_seat(index, evolve(seat, low=low, set_by=SetBy.HOUSE_WAY_TIMEOUT))
    work.set(
        phase=Phase.REVEALING,
        deadline=work.now + work.state.config.revealing_ms,
        dealer_low=_house_low(work.state, DEALER_HAND),
    )
    work.emit(views.phase_changed(work.state))
    work.emit(views.revealed(work.state))


def _settle(work: _Step) -> None:
    state = work.state
    rules = state.config.rules
    assert state.hands is not None
    assert state.dealer_low is not None
    assert state.seed is not None
    dealer_cards = state.hands[DEALER_HAND]
    dealer_high_cards = tuple(c for c in dealer_cards if c not in state.dealer_low)
    dealer_high = high_value(dealer_high_cards, rules.wheel)
    dealer_low = low_value(state.dealer_low)
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
        )
        bonus_class = bonus_rules.classify_bonus(cards) if seat.bonus else None
        # The pay table's payout is the stake plus the winnings, or 0 when the bet loses.
        bonus_back = pay_table.payout(bonus_class, seat.bonus) if bonus_class is not None else 0
        bonus_win = bonus_back - seat.bonus if bonus_back else 0

        def key(label: str, i: int = index) -> str:
            return _round_key(work, i, label)

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
            bonus_class=(
                bonus_rules.BONUS_CLASS_CODES[bonus_class] if bonus_class is not None else None
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


def _void(work: _Step, event: Void) -> None:
    """RULES.md (seed 000, "Les gains sont nuls en cas de dysfonctionnement"): every bet back."""
    state = work.state
    reason = event.reason[:200]
    refunds = []
    for index, seat in state.occupied():
        if seat.bet or seat.bonus:
            refunds.append((index, seat.bet + seat.bonus))
            _return_bets(work, index, seat, void=True)
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


def _end_round(work: _Step, seed: bytes) -> None:
    """Between rounds: leavers, the missing and the long-gone stand up; betting reopens."""
    state = work.state
    for index, seat in state.occupied():
        gone = (
            seat.disconnected_at is not None
            and work.now - seat.disconnected_at >= state.config.grace_ms
        )
        too_long_out = seat.sit_out_rounds > state.config.max_sit_out_rounds
        if seat.leaving or seat.missed or gone or too_long_out:
            _remove_seat(work, index)
        else:
            work.set_seat(
                index, evolve(seat, low=None, set_by=None, fouled=False, sitting_out=False)
            )
    work.set(hands=None, dealer_low=None, results=(), voided=None)
    if work.state.occupied():
        _open_betting(work, seed)
    else:
        work.set(phase=Phase.IDLE, deadline=None, seed=None, commitment=None)
        work.emit(views.phase_changed(work.state))


def _tick(work: _Step, event: Tick) -> None:
    # Deadlines already past fire in order, so a table that was down catches up.
    for _ in range(16):
        state = work.state
        if state.deadline is None or work.now < state.deadline:
            break
        if state.phase is Phase.BETTING:
            _close_betting(work)
        elif state.phase is Phase.DEALING:
            _start_setting(work)
        elif state.phase is Phase.SETTING:
            _reveal(work)
        elif state.phase is Phase.REVEALING:
            _settle(work)
        elif state.phase is Phase.SETTLING:
            _end_round(work, event.seed)
    if work.state.phase in (Phase.IDLE, Phase.BETTING):
        for index, seat in work.state.occupied():
            if (
                seat.disconnected_at is not None
                and not seat.has_bet
                and work.now - seat.disconnected_at >= work.state.config.grace_ms
            ):
                _remove_seat(work, index)


# --- the transition table -------------------------------------------------------------

_ANY = tuple(Phase)
_BETWEEN_ROUNDS = (Phase.IDLE, Phase.BETTING)

_ROWS: list[tuple[tuple[Phase, ...], type[Any], Handler]] = [
    (_ANY, Tick, _tick),
    (_ANY, SitDown, _sit_down),
    (_ANY, StandUp, _stand_up),
    (_ANY, Rebuy, _rebuy),
    (_ANY, CashOut, _cash_out),
    (_ANY, Disconnect, _disconnect),
    (_ANY, Reconnect, _reconnect),
    (_BETWEEN_ROUNDS, PlaceBet, _place_bet),
    (_BETWEEN_ROUNDS, Rebet, _rebet),
    ((Phase.BETTING,), ClearBet, _clear_bet),
    (_BETWEEN_ROUNDS, SitOut, _sit_out),
    ((Phase.DEALING, Phase.SETTING), SetHand, _set_hand),
    ((Phase.DEALING, Phase.SETTING), UseHouseWay, _use_house_way),
    ((Phase.BETTING, Phase.DEALING, Phase.SETTING, Phase.REVEALING), Void, _void),
]

TRANSITIONS: dict[tuple[Phase, type[Any]], Handler] = {
    (phase, event_type): handler for phases, event_type, handler in _ROWS for phase in phases
}
"""Every legal (phase, event type) and its handler: the one place transitions live."""
