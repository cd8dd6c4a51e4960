"""Betting: a round opens, players bet, rebet, clear or sit out, and betting closes
with the deal (or, with no bet at the table, the table waits).

A bet moves only the difference from the bet it replaces, each way as its own
ledger entry, between the seat's table balance and the bets held.
"""

from __future__ import annotations

from collections.abc import Mapping

from protocol.errors import ErrorCode
from protocol.fairness import commitment, deal
from server.rules.bonus import BONUS
from server.rules.side_bets import SIDE_BETS
from server.table import views
from server.table.errors import TableError
from server.table.events import ClearBet, PlaceBet, Rebet, SitOut, TakeOver
from server.table.ledger import Kind, Pot, stake_kind
from server.table.state import Phase, TableConfig, evolve, side_stakes
from server.table.work import Work, ledger_key, seat_at, seat_index


def open_betting(work: Work, seed: bytes) -> None:
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


def taken_over(work: Work, event: TakeOver) -> None:
    """A process took the table over: a betting phase in progress starts again with its
    full length, so that players whose connections went with the previous holder (and
    bets on their way then) can come back and bet (docs/RULES.md, "Disconnection")."""
    if work.state.phase is Phase.BETTING:
        work.set(deadline=work.now + work.state.config.betting_ms)
        work.emit(views.phase_changed(work.state))


def check_bet(work: Work, amount: int, stakes: Mapping[str, int]) -> None:
    """Refuse a bet outside the table's limits or not made of its chips, a side bet the
    table does not offer, and a main bet whose commission a ``whole`` table could not
    take exactly."""
    config = work.state.config
    unit = config.bet_unit
    for kind, stake in stakes.items():
        if (
            stake
            and kind != BONUS
            and (kind not in config.side_kinds or not SIDE_BETS[kind].staked)
        ):
            raise TableError(ErrorCode.BET_LIMITS, f"this table takes no {kind} bet")
    if amount == 0:
        if any(stakes.values()):
            raise TableError(ErrorCode.NO_BET, "a side bet needs a main bet")
        return
    if not config.min_bet <= amount <= config.max_bet or amount % unit:
        raise TableError(
            ErrorCode.BET_LIMITS,
            f"the bet is {config.min_bet} to {config.max_bet} chips, in multiples of {unit}",
        )
    for kind, stake in stakes.items():
        if not stake:
            continue
        low, high = config.limits(kind)
        if not low <= stake <= high or stake % unit:
            raise TableError(
                ErrorCode.BET_LIMITS,
                f"the {SIDE_BETS[kind].label.lower()} bet is {low} to {high} chips, "
                f"in multiples of {unit}",
            )
    step = config.main_bet_unit
    if amount % step:
        # commission_rounding = "whole" (docs/RULES.md, "Commission"): the commission
        # on every main bet the table takes is exact, neither given away nor rounded up.
        # The limits are multiples of the step (TableConfig), so both multiples around
        # a bet within them are within them too.
        below = amount - amount % step
        raise TableError(
            ErrorCode.COMMISSION_NOT_WHOLE,
            f"this table takes its {config.rules.commission_pct}% commission in whole "
            f"chips: a main bet is a multiple of {step}; bet {below} or {below + step}, "
            f"not {amount}",
        )


def bet(work: Work, player: str, amount: int, stakes: Mapping[str, int]) -> None:
    """Set ``player``'s bets of this round to ``amount`` and the side bets ``stakes``
    (by kind; a kind not named, or 0: none)."""
    index, seat = seat_index(work, player)
    check_bet(work, amount, stakes)
    side = side_stakes(stakes)
    total = amount + sum(s for _, s in side)
    available = seat.balance + seat.held
    if total > available:
        raise TableError(
            ErrorCode.INSUFFICIENT_BALANCE,
            f"a bet of {total} is above your table balance of {available}: lower the bet or rebuy",
        )
    if amount == seat.bet and side == seat.side and not (amount and seat.sitting_out):
        # The bet stands as asked (a request sent twice, a clear with nothing to
        # clear): nothing to store or announce; the ok is the answer.
        maybe_close_betting(work)
        return
    # Only the differences move, each wager as its own ledger entry (the labels: the
    # main bet's "bet", a side bet's its kind).
    moves = [("bet", Kind.BET, seat.bet, amount)]
    if side != seat.side:
        old_side, new_side = dict(seat.side), dict(side)
        moves += [
            (kind, stake_kind(kind), old_side.get(kind, 0), new_side.get(kind, 0))
            for kind in SIDE_BETS
            if kind in old_side or kind in new_side
        ]
    for label, kind, old, new in moves:
        if new > old:
            work.move(ledger_key(work, player, label), kind, player, new - old, Pot.TABLE, Pot.HELD)
        elif old > new:
            work.move(
                ledger_key(work, player, label + "_back"),
                Kind.BET_RETURNED,
                player,
                old - new,
                Pot.HELD,
                Pot.TABLE,
            )
    if work.state.phase is Phase.IDLE and amount:
        # The table was waiting for a first bet: betting opens for the committed round,
        # and says so before the bet that opened it. Every betting phase opens with the
        # round's commitment (protocol/PROTOCOL.md, section 4): the same one again here.
        work.set(phase=Phase.BETTING, deadline=work.now + work.state.config.betting_ms)
        work.emit(views.phase_changed(work.state))
        work.emit(views.commitment(work.state))
    seat = evolve(
        seat,
        balance=available - total,
        bet=amount,
        side=side,
        sitting_out=False if amount else seat.sitting_out,
    )
    work.set_seat(index, seat)
    work.emit(views.bet_changed(work.state, index))
    maybe_close_betting(work)


def place_bet(work: Work, event: PlaceBet) -> None:
    """Bet, replacing this round's bet."""
    stakes = dict(event.side)
    if event.bonus or BONUS not in stakes:
        stakes[BONUS] = event.bonus
    bet(work, event.player, event.amount, stakes)


def rebet(work: Work, event: Rebet) -> None:
    """Bet as in the player's last round."""
    _, seat = seat_index(work, event.player)
    if not seat.last_bet:
        raise TableError(ErrorCode.NO_BET, "there is no previous bet to repeat")
    # A side bet the table no longer offers, or no longer takes at that stake (its
    # limits or chips changed since), is left out: never changed, since a stake the
    # player did not choose could risk more than they did (protocol/PROTOCOL.md,
    # ``rebet``); the main bet is checked as any bet's.
    config = work.state.config
    offered = config.side_kinds
    stakes = {k: s for k, s in seat.last_side if k in offered and _takes(config, k, s)}
    bet(work, event.player, seat.last_bet, stakes)


def _takes(config: TableConfig, kind: str, stake: int) -> bool:
    """Whether a table of settings ``config`` takes a stake of ``stake`` on ``kind``."""
    if not SIDE_BETS[kind].staked:
        return False
    low, high = config.limits(kind)
    return low <= stake <= high and not stake % config.bet_unit


def clear_bet(work: Work, event: ClearBet) -> None:
    """Take this round's bets back."""
    bet(work, event.player, 0, {})


def sit_out(work: Work, event: SitOut) -> None:
    """Sit this round out: bets back, and betting need not wait for this seat."""
    index, seat = seat_index(work, event.player)
    if seat.has_bet:
        bet(work, event.player, 0, {})
        seat = seat_at(work, index)
    work.set_seat(index, evolve(seat, sitting_out=True))
    work.emit(views.seat_changed(work.state, index))
    maybe_close_betting(work)


def maybe_close_betting(work: Work) -> None:
    """Betting closes early once every seated player has bet or sits out (and one bet)."""
    if work.state.phase is not Phase.BETTING:
        return
    seats = work.state.occupied()
    if any(s.has_bet for _, s in seats) and all(s.has_bet or s.sitting_out for _, s in seats):
        close_betting(work)


def close_betting(work: Work) -> None:
    """The deal, or with no bet at the table no round: the table waits, idle."""
    state = work.state
    if not state.in_round():
        # No bet at the table, no round: the table waits (docs/RULES.md, "The round").
        work.set(phase=Phase.IDLE, deadline=None)
        work.emit(views.phase_changed(work.state))
        return
    assert state.seed is not None
    # Who neither bet nor sat out has missed the round and stands up when it ends;
    # who sat out counts it, and stands up after too many in a row; who is away has
    # the grace time to come back (docs/RULES.md, "Sitting out" and "Disconnection").
    for index, seat in state.occupied():
        if not seat.has_bet:
            if seat.sitting_out:
                work.set_seat(index, evolve(seat, sit_out_rounds=seat.sit_out_rounds + 1))
            elif seat.connected:
                work.set_seat(index, evolve(seat, missed=True))
    hands = deal(state.seed)
    work.set(phase=Phase.DEALING, deadline=work.now + state.config.dealing_ms, hands=hands)
    work.emit(views.phase_changed(work.state))
    for index, _ in work.state.in_round():  # one event per seat, in seat order
        work.emit(*views.cards_dealt(work.state, index))
