"""What each recipient sees: the table's state rendered as protocol messages.

This is the only place that turns table state into messages, so it is the one
place to check that nobody receives a card they may not see:

- a player's seven cards go to that player alone (everyone else gets ``hidden``
  with the same sequence number, so nobody sees a gap);
- the dealer's cards and other players' cards are public only from the reveal;
- the seed is public only once the round is settled or voided;
- hands dealt to empty seats are never sent (docs/RULES.md, "Cards and deal").
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

from protocol.fairness import DEALER_HAND
from protocol.messages import (
    BetPlaced,
    Cards,
    Commitment,
    HandSet,
    Hidden,
    PhaseChange,
    Results,
    Reveal,
    RoundVoid,
    SeatChange,
    SeedReveal,
    Snapshot,
)
from protocol.messages import TableEvent as Message
from protocol.structs import (
    HandChoice,
    HandView,
    RoundRecord,
    SeatRefund,
    SeatStatus,
    SeatView,
    Wager,
)
from protocol.structs import SeatResult as WireSeatResult
from protocol.structs import WagerResult as WireWagerResult
from server.rules.values import WheelRank, high_name, high_value, low_name, low_value
from server.table.state import Phase, Seat, SeatResult, SetBy, TableState, copy_with

__all__ = ["Message", "Outbound"]


@dataclass(frozen=True, slots=True)
class Outbound:
    """One table event: ``private[player]`` for those players, ``public`` for everyone else.

    Every recipient at the table (seated or watching) receives exactly one message
    with this ``seq``.
    """

    seq: int
    public: Message
    private: dict[str, Message] = field(default_factory=dict)


def with_seq(message: Message, seq: int) -> Message:
    """``message`` numbered ``seq``."""
    # Not dataclasses.replace: a fifth of a bet's step went to its introspection.
    return copy_with(message, {"seq": seq})


# --- parts ---------------------------------------------------------------------------


def seat_view(state: TableState, index: int) -> SeatView:
    """What everyone sees of seat ``index``."""
    seat = state.seats[index]
    if seat is None:
        return SeatView(seat=index, status="empty", balance=0, bet=0, bonus=0, hand_set=False)
    status: SeatStatus
    if not seat.connected:
        status = "away"
    elif seat.sitting_out:
        status = "sitting_out"
    else:
        status = "playing"
    return SeatView(
        seat=index,
        status=status,
        balance=seat.balance,
        bet=seat.bet,
        bonus=seat.bonus,
        hand_set=seat.low is not None,
        player_id=seat.player,
        name=seat.name,
        wagers=wire_wagers(seat.side),
    )


@lru_cache(maxsize=1024)
def wire_wagers(side: tuple[tuple[str, int], ...]) -> tuple[Wager, ...]:
    """A seat's side stakes as the protocol carries them (minor 6); the same few
    stakes come again and again, and the messages are immutable, so they are shared."""
    return tuple(Wager(kind=kind, amount=amount) for kind, amount in side)


def wire_wager_results(result: SeatResult) -> tuple[WireWagerResult, ...]:
    """A seat's side bets settled, as the protocol carries them (minor 6)."""
    return tuple(
        WireWagerResult(kind=w.kind, stake=w.stake, payout=w.payout, pay_class=w.pay_class)
        for w in result.wagers
    )


def _halves(
    cards: tuple[int, ...], low: tuple[int, ...]
) -> tuple[tuple[int, ...], tuple[int, ...]]:
    return tuple(c for c in cards if c not in low), tuple(low)


def hand_view(
    hand: int, cards: tuple[int, ...], low: tuple[int, ...], wheel: WheelRank, by_house: bool
) -> HandView:
    """A set hand, both halves named."""
    high_cards, low_cards = _halves(cards, low)
    high, low_v = high_value(high_cards, wheel), low_value(low_cards)
    return HandView(
        hand=hand,
        high=high_cards,
        low=low_cards,
        high_name=high_name(high),
        low_name=low_name(low_v),
        house_way=by_house,
        foul=not high > low_v,
    )


def hand_choice(
    state: TableState, high: tuple[int, ...], low: tuple[int, ...], applied: bool
) -> HandChoice:
    """The reply to ``set_hand``/``house_way``: a split and both hands' names."""
    wheel = state.config.rules.wheel
    return HandChoice(
        table_id=state.config.table_id,
        round=state.round_no,
        high=high,
        low=low,
        high_name=high_name(high_value(high, wheel)),
        low_name=low_name(low_value(low)),
        applied=applied,
    )


def _seat_hand_view(state: TableState, index: int, seat: Seat) -> HandView:
    assert state.hands is not None
    assert seat.low is not None
    return hand_view(
        index,
        state.hands[index],
        seat.low,
        state.config.rules.wheel,
        seat.set_by is not SetBy.PLAYER,
    )


def _dealer_view(state: TableState) -> HandView:
    assert state.hands is not None
    assert state.dealer_low is not None
    return hand_view(
        DEALER_HAND, state.hands[DEALER_HAND], state.dealer_low, state.config.rules.wheel, True
    )


def _revealed_hands(state: TableState) -> tuple[HandView, ...]:
    if state.dealer_low is None:
        return ()
    hands = [_seat_hand_view(state, i, s) for i, s in state.in_round()]
    if not hands:  # after settlement the bets are cleared: the results say who played
        hands = [
            _seat_hand_view(state, r.seat, seat)
            for r in state.results
            if (seat := state.seats[r.seat]) is not None and seat.low is not None
        ]
    return (*hands, _dealer_view(state))


def wire_result(result: SeatResult) -> WireSeatResult:
    """A settled seat as the protocol carries it."""
    return WireSeatResult(
        seat=result.seat,
        outcome=result.outcome,  # type: ignore[arg-type]
        high=result.high,  # type: ignore[arg-type]
        low=result.low,  # type: ignore[arg-type]
        bet=result.bet,
        payout=result.payout,
        commission=result.commission,
        bonus_bet=result.bonus,
        bonus_payout=result.bonus_payout,
        balance=result.balance,
        bonus_class=result.bonus_class,
        wagers=wire_wager_results(result),
    )


# --- events --------------------------------------------------------------------------


def seat_changed(state: TableState, index: int) -> Message:
    """Seat ``index`` was taken, freed, or changed."""
    return SeatChange(table_id=state.config.table_id, seq=0, seat=seat_view(state, index))


def phase_changed(state: TableState) -> Message:
    """The table entered its current phase."""
    return PhaseChange(
        table_id=state.config.table_id,
        seq=0,
        round=state.round_no,
        phase=state.phase.value,
        deadline_ms=state.deadline,
    )


def commitment(state: TableState) -> Message:
    """The round's shuffle commitment, at the start of betting."""
    assert state.commitment is not None
    return Commitment(
        table_id=state.config.table_id, seq=0, round=state.round_no, commitment=state.commitment
    )


def bet_changed(state: TableState, index: int) -> Message:
    """Seat ``index``'s bets of this round."""
    seat = state.seats[index]
    assert seat is not None
    return BetPlaced(
        table_id=state.config.table_id,
        seq=0,
        round=state.round_no,
        seat=index,
        amount=seat.bet,
        bonus=seat.bonus,
        balance=seat.balance,
        wagers=wire_wagers(seat.side),
    )


def cards_dealt(state: TableState, index: int) -> tuple[Message, dict[str, Message]]:
    """Seat ``index``'s seven cards, to its player alone; everyone else gets ``hidden``
    (protocol/PROTOCOL.md, section 9: one ``cards`` event per seat with a bet)."""
    assert state.hands is not None
    seat = state.seats[index]
    assert seat is not None
    table_id = state.config.table_id
    cards = Cards(
        table_id=table_id, seq=0, round=state.round_no, seat=index, cards=state.hands[index]
    )
    return Hidden(table_id=table_id, seq=0), {seat.player: cards}


def hand_set(state: TableState, index: int) -> Message:
    """Seat ``index`` has set its hand (which cards is secret until the reveal)."""
    seat = state.seats[index]
    assert seat is not None
    return HandSet(
        table_id=state.config.table_id,
        seq=0,
        round=state.round_no,
        seat=index,
        house_way=seat.set_by is not SetBy.PLAYER,
    )


def revealed(state: TableState) -> Message:
    """Every hand in play and the dealer's, set, with both halves named."""
    return Reveal(
        table_id=state.config.table_id, seq=0, round=state.round_no, hands=_revealed_hands(state)
    )


def settled(state: TableState) -> Message:
    """Each seat's outcome, payout, commission, bonus and new balance."""
    return Results(
        table_id=state.config.table_id,
        seq=0,
        round=state.round_no,
        results=tuple(wire_result(r) for r in state.results),
    )


def seed_revealed(state: TableState) -> Message:
    """The round's seed, now that it can no longer change anything."""
    assert state.seed is not None
    assert state.commitment is not None
    return SeedReveal(
        table_id=state.config.table_id,
        seq=0,
        round=state.round_no,
        seed=state.seed.hex(),
        commitment=state.commitment,
    )


def voided(state: TableState, refunds: tuple[tuple[int, int], ...]) -> Message:
    """The round was voided; ``refunds`` is (seat, chips returned) for each seat with bets."""
    return RoundVoid(
        table_id=state.config.table_id,
        seq=0,
        round=state.round_no,
        reason="malfunction",
        message=state.voided or "",
        refunds=tuple(
            SeatRefund(seat=i, refund=amount, balance=_balance(state, i)) for i, amount in refunds
        ),
    )


def _balance(state: TableState, index: int) -> int:
    seat = state.seats[index]
    return seat.balance if seat is not None else 0


def snapshot(state: TableState, player: str | None, now_ms: int) -> Snapshot:
    """The whole table as ``player`` (None: a spectator) may see it now."""
    index = state.seat_of(player) if player is not None else None
    seat = state.seats[index] if index is not None else None
    your_cards: tuple[int, ...] = ()
    if (
        seat is not None
        and index is not None
        and state.hands is not None
        and (seat.has_bet or any(r.seat == index for r in state.results))
    ):
        your_cards = state.hands[index]
    return Snapshot(
        table_id=state.config.table_id,
        seq=state.seq,
        round=state.round_no,
        phase=state.phase.value,
        server_time_ms=now_ms,
        seats=tuple(seat_view(state, i) for i in range(len(state.seats))),
        deadline_ms=state.deadline,
        commitment=state.commitment,
        your_seat=index,
        your_cards=your_cards,
        your_low=seat.low if seat is not None and seat.low is not None and your_cards else (),
        hands=_revealed_hands(state) if state.phase in (Phase.REVEALING, Phase.SETTLING) else (),
        results=tuple(wire_result(r) for r in state.results),
    )


# --- game logs -----------------------------------------------------------------------


def game_log(
    state: TableState, index: int, seat: Seat, result: SeatResult, now_ms: int
) -> RoundRecord:
    """The record of one player's settled round: everything needed to replay it."""
    assert state.seed is not None
    assert state.commitment is not None
    assert state.hands is not None
    return RoundRecord(
        table_id=state.config.table_id,
        round=state.round_no,
        ended_ms=now_ms,
        seat=index,
        outcome=result.outcome,  # type: ignore[arg-type]
        bet=result.bet,
        bonus_bet=result.bonus,
        payout=result.payout,
        commission=result.commission,
        bonus_payout=result.bonus_payout,
        balance=result.balance,
        commitment=state.commitment,
        seed=state.seed.hex(),
        cards=state.hands[index],
        hand=_seat_hand_view(state, index, seat),
        dealer=_dealer_view(state),
        high=result.high,  # type: ignore[arg-type]
        low=result.low,  # type: ignore[arg-type]
        bonus_class=result.bonus_class,
        wagers=wire_wager_results(result),
    )


def void_log(state: TableState, index: int, seat: Seat, now_ms: int) -> RoundRecord:
    """The record of one player's voided round: the bets came back."""
    assert state.commitment is not None
    return RoundRecord(
        table_id=state.config.table_id,
        round=state.round_no,
        ended_ms=now_ms,
        seat=index,
        outcome="void",
        bet=seat.bet,
        bonus_bet=seat.bonus,
        payout=seat.held,
        commission=0,
        bonus_payout=0,
        balance=seat.balance + seat.held,
        commitment=state.commitment,
        seed=state.seed.hex() if state.seed is not None else None,
        cards=state.hands[index] if state.hands is not None else (),
        void_reason="malfunction",
        # Every stake back, each side bet's as its own line.
        wagers=tuple(
            WireWagerResult(kind=kind, stake=stake, payout=stake) for kind, stake in seat.side
        ),
    )
