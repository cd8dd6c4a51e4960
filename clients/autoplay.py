"""Playing rounds without a person: the loop behind ``paigow-cli play`` and the bots.

:func:`play_rounds` sits at a table through a :class:`~clients.core.Client` and
reacts to its table model: it bets in each betting phase, sets the hand when the
cards come (by the house way, or a random split that does not foul), and counts
the rounds settled (or voided) for its seat. Everything goes through the same core
as the interactive client, so there is one code path that speaks the protocol.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from clients import handrank
from clients.core import (
    Client,
    ClientError,
    ClientEvent,
    ConnectionLost,
    Disconnected,
    ServerError,
    SessionEnded,
    Verified,
)
from clients.model import TableModel, Verification
from protocol.messages import Results, RoundVoid
from protocol.structs import HandChoice, SeatResult

Strategy = Literal["house-way", "random"]
STRATEGIES: tuple[Strategy, ...] = ("house-way", "random")

FINAL_BET_REFUSALS = frozenset(
    {"bet_limits", "commission_not_whole", "insufficient_balance", "no_bet", "not_seated"}
)
"""Refusals of a bet that the next betting phase would repeat word for word: the bet
itself is wrong for the table (limits, chip unit), or there are no chips left to bet
after a rebuy was tried. Play ends on one rather than waiting for rounds that cannot
come."""


@dataclass
class PlayStats:
    """What :func:`play_rounds` did: rounds, results, voids, money and fairness checks."""

    rounds: int = 0
    results: list[SeatResult] = field(default_factory=list)
    voids: int = 0
    wagered: int = 0
    net: int = 0  # chips won (positive) or lost, bets and bonuses included
    verified: int = 0
    unverified: list[Verification] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    played: set[int] = field(default_factory=set)  # round numbers settled for our seat


async def choose_split(
    client: Client, table_id: str, strategy: Strategy, rng: random.Random
) -> HandChoice:
    """Set the hand at ``table_id`` by ``strategy``; the reply names both hands."""
    model = client.model(table_id)
    if strategy == "random":
        lows = handrank.legal_lows(model.your_cards)
        rng.shuffle(lows)
        for low in lows[:3]:
            with contextlib.suppress(ServerError):
                return await client.set_hand(table_id, low)
    return await client.house_way(table_id, apply=True)


async def play_rounds(
    client: Client,
    table_id: str,
    *,
    bet: int,
    rounds: int,
    bonus: int = 0,
    buy_in: int | None = None,
    strategy: Strategy = "house-way",
    rng: random.Random | None = None,
    round_timeout_s: float = 120.0,
    on_note: Callable[[str, dict[str, object]], None] | None = None,
) -> PlayStats:
    """Join ``table_id`` (unless seated) and play ``rounds`` rounds, then return the stats.

    ``on_note(kind, data)`` is told of what the player did (``bet``, ``hand``,
    ``round``, ``error``), for logs. Server errors are kept in the stats and the play
    goes on (a missed betting phase just waits for the next one), except a bet refused
    for good (:data:`FINAL_BET_REFUSALS`: below the minimum, above the maximum, not a
    multiple of the table's unit, no chips left), which is raised as the
    :class:`ServerError` it is; a connection ended for good (another client took the
    session over, say) raises :class:`SessionEnded`; a stuck table raises
    ``TimeoutError`` after ``round_timeout_s`` without progress.
    """
    rng = rng or random.Random()
    stats = PlayStats()
    note = on_note or (lambda kind, data: None)
    model = client.model(table_id)
    if model.my_seat is None or model.my_seat.status == "empty":
        if not model.synced:
            await client.watch(table_id)
        if model.your_seat is None:
            info = await client.table_info(table_id)
            amount = (
                buy_in
                if buy_in is not None
                else min(info.buy_in_max, max(bet * 20, info.buy_in_min))
            )
            await client.join(table_id, amount)
    queue = client.listen()
    try:
        await _loop(
            client, model, queue, stats, bet, bonus, rounds, strategy, rng, note, round_timeout_s
        )
    finally:
        client.unlisten(queue)
    return stats


def _count(
    event: ClientEvent,
    model: TableModel,
    stats: PlayStats,
    note: Callable[[str, dict[str, object]], None],
) -> None:
    """Count a settled or voided round of our seat, and a fairness check; a connection
    ended for good (taken over by another client, say) ends the play."""
    if isinstance(event, Disconnected) and not event.retrying:
        code = f" ({event.code})" if event.code is not None else ""
        raise SessionEnded(f"disconnected{code}: {event.reason}")
    seat = model.your_seat
    if isinstance(event, Results) and event.table_id == model.table_id:
        for result in event.results:
            if result.seat == seat:
                stats.rounds += 1
                stats.played.add(event.round)
                stats.results.append(result)
                stats.wagered += result.bet + result.bonus_bet
                stats.net += result.payout + result.bonus_payout - result.bet - result.bonus_bet
                note("round", {"round": event.round, "outcome": result.outcome})
    elif isinstance(event, RoundVoid) and event.table_id == model.table_id:
        if any(r.seat == seat for r in event.refunds):
            stats.rounds += 1
            stats.voids += 1
            note("round", {"round": event.round, "outcome": "void"})
    elif isinstance(event, Verified) and event.verification.table_id == model.table_id:
        if event.verification.round not in stats.played:
            return
        if event.verification.ok:
            stats.verified += 1
        else:
            stats.unverified.append(event.verification)


async def _loop(
    client: Client,
    model: TableModel,
    queue: asyncio.Queue[ClientEvent],
    stats: PlayStats,
    bet: int,
    bonus: int,
    rounds: int,
    strategy: Strategy,
    rng: random.Random,
    note: Callable[[str, dict[str, object]], None],
    round_timeout_s: float,
) -> None:
    table_id = model.table_id
    acted_bet: tuple[int, str | None] | None = None
    acted_set: tuple[int, str | None] | None = None
    bet_in = False  # our bet for the betting phase in progress was accepted or tried
    phase_seen = model.phase
    while True:
        while not queue.empty():
            _count(queue.get_nowait(), model, stats, note)
        if stats.rounds >= rounds and (
            stats.verified + len(stats.unverified) + stats.voids >= stats.rounds
        ):
            return
        key = (model.round, model.commitment)
        seat = model.my_seat
        if model.phase not in ("idle", "betting"):
            bet_in = False
        elif model.phase == "idle" and phase_seen == "betting":
            # Betting closed without our bet (it failed, or never reached the server):
            # the table waits idle for a bet, with the same round and commitment.
            acted_bet, bet_in = None, False
        phase_seen = model.phase
        betting = False  # a bet request is in flight (its refusal may end the play)
        try:
            if (
                stats.rounds < rounds
                and seat is not None
                # The ok to a join comes before its seat event: until that event the
                # seat reads empty, without the chips brought (no rebuy for them).
                and seat.status != "empty"
                and model.phase in ("idle", "betting")
                and seat.bet == 0
                and acted_bet != key
                and not bet_in
            ):
                # The ok to a bet comes before the events it causes, so the model can
                # still show betting without our bet (even a new round number, when the
                # join opened it): one bet per betting phase, until the phase moves on.
                acted_bet = key
                bet_in = True
                if seat.balance < bet + bonus:
                    with contextlib.suppress(ServerError):
                        await client.rebuy(table_id, max(bet * 10, bet + bonus))
                betting = True
                await client.bet(table_id, bet, bonus)
                betting = False
                note("bet", {"round": model.round, "amount": bet, "bonus": bonus})
                continue
            if (
                seat is not None
                and model.phase == "setting"
                and model.your_cards
                and not seat.hand_set
                and acted_set != key
            ):
                acted_set = key
                choice = await choose_split(client, table_id, strategy, rng)
                hand = {"round": choice.round, "high_name": choice.high_name}
                note("hand", {**hand, "low_name": choice.low_name, "low": list(choice.low)})
                continue
        except ServerError as exc:
            stats.errors.append(str(exc))
            note("error", {"code": exc.code, "message": str(exc)})
            if betting and exc.code in FINAL_BET_REFUSALS:
                raise
            if betting and exc.retryable and exc.code != "wrong_phase":
                # Not taken, but it may be now (the table was not hosted yet, say): try
                # again on the next event (a phase moved on needs no retry).
                acted_bet, bet_in = None, False
        except ConnectionLost:
            # The core reconnects and resumes; the loop picks up from the model. A bet
            # lost on the way is tried again then (placing the same bet twice is
            # harmless), or the table could wait for it forever.
            acted_bet, bet_in = None, False
        except ClientError as exc:
            stats.errors.append(str(exc))
            note("error", {"code": "client", "message": str(exc)})
        async with asyncio.timeout(round_timeout_s):
            got = await queue.get()
        _count(got, model, stats, note)
