"""Words and symbols for people: cards with suit symbols, one line per event, JSON lines.

Shared by the scripted mode (``paigow-cli play``) and the full-screen table, so an
event reads the same everywhere.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from clients.errors import plain_error
from clients.events import ClientEvent, Connected, Disconnected, Notice, Verified
from clients.model import DEALER
from protocol.cards import JOKER, RANK_CHARS, SUIT_SYMBOLS
from protocol.codec import as_map
from protocol.errors import CloseCode
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
from protocol.structs import HandView, RoundRecord, SeatResult, WagerResult

TRY_LATER = int(CloseCode.TRY_AGAIN_LATER)

RED_SUITS = (1, 2)  # diamonds, hearts


def card_label(card: int) -> str:
    """A card with its suit symbol: ``A♠``, ``10♥``; the joker is ``JK★``."""
    if card == JOKER:
        return "JK★"
    rank = RANK_CHARS[card >> 2]
    return ("10" if rank == "T" else rank) + SUIT_SYMBOLS[card & 3]


def cards_label(cards: Iterable[int]) -> str:
    """Cards separated by spaces, with suit symbols."""
    return " ".join(card_label(c) for c in cards)


def who(hand: int) -> str:
    """``dealer`` for hand 6, else ``seat N``, numbered from 1 for people (wire seat + 1)."""
    return "dealer" if hand == DEALER else f"seat {hand + 1}"


def hand_line(h: HandView) -> str:
    """A revealed hand: both halves, named."""
    foul = " FOUL" if h.foul else ""
    way = " (house way)" if h.house_way and h.hand != DEALER else ""
    return (
        f"{who(h.hand)}: {cards_label(h.high)} [{h.high_name}] / "
        f"{cards_label(h.low)} [{h.low_name}]{foul}{way}"
    )


def result_line(r: SeatResult, foul: bool = False) -> str:
    """A seat's settlement: outcome (``foul``: a fouled split's), both comparisons, what
    each bet did and the net, and the new balance."""
    why = "a foul" if foul else f"high {r.high}, low {r.low}"
    return f"{who(r.seat)}: {r.outcome.upper()} ({why}) {money_line(r)}; balance {r.balance}"


def money_line(r: SeatResult) -> str:
    """What each bet of a result did, and the net: see :func:`stakes_line`."""
    return stakes_line(
        r.bet, r.payout, r.commission, r.bonus_bet, r.bonus_payout, r.bonus_class, r.wagers
    )


def stakes_line(
    bet: int,
    payout: int,
    commission: int,
    bonus_bet: int,
    bonus_payout: int,
    bonus_class: str | None,
    wagers: Sequence[WagerResult] = (),
) -> str:
    """Each stake and what it did, then the round's net, every amount said once:
    ``bet 100 won 95 (commission 5), bonus 10 won 20 (straight): net +115``.

    A stake's gain is said net of the stake (the protocol's payouts include it), so the
    amounts add up to the net shown here and beside the seat: "bonus 5 paid 20" next to
    "+15" counted the same bonus two ways.
    """
    parts = [f"bet {bet} {_did(payout - bet, payout)}"]
    if commission:
        parts[0] += f" (commission {commission})"
    if bonus_bet:
        bonus = f"bonus {bonus_bet} {_did(bonus_payout - bonus_bet, bonus_payout)}"
        if bonus_class and bonus_payout:
            bonus += f" ({bonus_class.replace('_', ' ')})"
        parts.append(bonus)
    net = payout + bonus_payout - bet - bonus_bet
    # The other side bets (protocol minor 6), each by its kind: a staked one as the
    # bonus bet, one that rides on another (stake 0, the Envy bonus) by its win alone.
    for w in wagers:
        if w.kind == "bonus":
            continue
        name = w.kind.replace("_", " ")
        line = (
            f"{name} {w.stake} {_did(w.payout - w.stake, w.payout)}"
            if w.stake
            else (f"{name} won {w.payout}")
        )
        if w.pay_class and w.payout:
            line += f" ({w.pay_class.replace('_', ' ')})"
        elif w.pay_class:
            # A share of a progressive's meter: the class alone, its chips paid into the
            # account, not in the payout (protocol/PROTOCOL.md, section 9); the stake is spent.
            what = w.pay_class.replace("_", " ")
            line = f"{name} {w.stake} hit the JACKPOT ({what}), its share paid to the account"
        parts.append(line)
        net += w.payout - w.stake
    return ", ".join(parts) + f": net {net:+d}"


def _did(gain: int, back: int) -> str:
    """What a stake did, from its gain (net of the stake) and what came back."""
    if gain > 0:
        return f"won {gain}"
    if gain == 0:
        return "returned"
    return "lost" if back == 0 else f"lost {-gain}"


def record_line(r: RoundRecord) -> str:
    """One history record for a person."""
    # Seats are numbered from 1 for people, as on the table screen and the hand below.
    text = f"#{r.round} {r.table_id} {who(r.seat)}: {r.outcome.upper()} "
    text += stakes_line(
        r.bet, r.payout, r.commission, r.bonus_bet, r.bonus_payout, r.bonus_class, r.wagers
    )
    text += f"; balance {r.balance}"
    if r.cards:
        text += f"\n    cards {cards_label(r.cards)}"
    if r.hand is not None:
        text += f"\n    {hand_line(r.hand).replace('seat', 'you, seat', 1)}"
    if r.dealer is not None:
        text += f"\n    {hand_line(r.dealer)}"
    if r.high is not None and r.low is not None:
        text += f"\n    high {r.high}, low {r.low}"
    if r.void_reason:
        text += f"\n    void: {r.void_reason}"
    return text


def describe(event: ClientEvent) -> str | None:
    """One line for a person, or None for events not worth a line (``hidden``)."""
    if isinstance(event, Connected):
        w = event.welcome
        state = "resumed" if w.resumed else "connected"
        return f"{state} as {w.name} ({w.player_id}), protocol {w.version}.{w.minor}"
    if isinstance(event, Disconnected):
        code = f" [{event.code}]" if event.code is not None else ""
        if event.retrying and event.code == TRY_LATER:
            return f"server busy{code}: {event.reason}; retrying in {event.delay_s:.1f}s"
        if event.retrying:
            return f"connection lost{code}: {event.reason}; retrying in {event.delay_s:.1f}s"
        return f"disconnected{code}: {event.reason}"
    if isinstance(event, Verified):
        v = event.verification
        mark = "verified ✓" if v.ok else "NOT VERIFIED ✗"
        return f"round {v.round}: {mark}: {v.detail}"
    if isinstance(event, Notice):
        return f"server: {plain_error(event.error)}"
    if isinstance(event, Snapshot):
        return f"{event.table_id}: round {event.round}, {event.phase}"
    if isinstance(event, PhaseChange):
        return f"round {event.round}: {event.phase}"
    if isinstance(event, SeatChange):
        s = event.seat
        if s.status == "empty":
            return f"{who(s.seat)} is free"
        return f"{who(s.seat)}: {s.name} {s.status.replace('_', ' ')}, balance {s.balance}"
    if isinstance(event, BetPlaced):
        bonus = f" + bonus {event.bonus}" if event.bonus else ""
        return f"{who(event.seat)} bets {event.amount}{bonus} (balance {event.balance})"
    if isinstance(event, Cards):
        return f"your cards: {cards_label(event.cards)}"
    if isinstance(event, Commitment):
        return f"round {event.round}: the shuffle is committed (SHA-256 {event.commitment[:12]}…)"
    if isinstance(event, HandSet):
        how = " by the house way" if event.house_way else ""
        return f"{who(event.seat)} has set{how}"
    if isinstance(event, Reveal):
        return "reveal: " + "; ".join(hand_line(h) for h in event.hands)
    if isinstance(event, Results):
        return "results: " + "; ".join(result_line(r) for r in event.results)
    if isinstance(event, SeedReveal):
        return f"round {event.round}: the shuffle's seed is revealed ({event.seed[:12]}…)"
    if isinstance(event, RoundVoid):
        return f"round {event.round} void ({event.reason}): {event.message}; bets returned"
    if isinstance(event, Hidden):
        return None
    return None


def note_line(kind: str, data: dict[str, Any]) -> str:
    """One line for a person about what scripted play did (``paigow-cli play``'s notes:
    ``bet``, ``hand``, ``round``, ``error``); cards with their suits, as on the screen."""
    round_no = data.get("round")
    if kind == "bet":
        bonus = f" and {data['bonus']} on the bonus" if data.get("bonus") else ""
        return f"round {round_no}: you bet {data['amount']}{bonus}"
    if kind == "hand":
        low = cards_label(data.get("low", ()))
        return (
            f"round {round_no}: you set high {data['high_name']} / low {data['low_name']}"
            f" (low hand {low})"
        )
    if kind == "round":
        outcome = str(data.get("outcome", ""))
        if outcome == "void":
            return f"round {round_no}: void, your bets returned"
        return f"round {round_no}: you {outcome}"
    if kind == "error":
        return f"refused: {data.get('message') or data.get('code')}"
    return f"{kind}: " + ", ".join(f"{k} {v}" for k, v in data.items())


def to_json(event: ClientEvent) -> dict[str, Any]:
    """A JSON-ready map: a server event's wire map, or ``client.*`` for the client's own."""
    if isinstance(event, Connected):
        w = event.welcome
        return {
            "type": "client.connected",
            "player_id": w.player_id,
            "name": w.name,
            "resumed": w.resumed,
            "version": w.version,
        }
    if isinstance(event, Disconnected):
        return {
            "type": "client.disconnected",
            "code": event.code,
            "reason": event.reason,
            "retrying": event.retrying,
            "delay_s": round(event.delay_s, 3),
        }
    if isinstance(event, Verified):
        v = event.verification
        return {
            "type": "client.verified",
            "table_id": v.table_id,
            "round": v.round,
            "ok": v.ok,
            "detail": v.detail,
        }
    if isinstance(event, Notice):
        return {"type": "client.notice", **as_map(event.error)}
    return as_map(event)
