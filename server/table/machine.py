"""The table state machine: ``step(state, event, now_ms) -> Transition``.

Pure: no I/O, no clock (time is ``now_ms``), no randomness (a new round's seed comes
inside the event that opens it). Two tables below say everything the round does,
and nothing outside them changes a phase:

- :data:`DEADLINES`: what each phase's deadline does (every phase but ``idle`` has
  one), and the phases it may lead to;
- :data:`TRANSITIONS`: which events are legal in which phase, the handler each runs
  (see :data:`ROWS` for the phases each may lead to). Anything else is refused with
  ``wrong_phase`` and changes nothing.

The round, as the tables say it (docs/RULES.md, "The round"; docs/DESIGN.md, "The
state machine"; a test checks this diagram against the tables)::

    idle      -> betting    SitDown, PlaceBet, Rebet
    idle      -> dealing    PlaceBet, Rebet
    betting   -> idle       deadline, StandUp, CloseTable, PlaceBet, ClearBet
    betting   -> dealing    deadline, Tick, StandUp, PlaceBet, Rebet, ClearBet, SitOut
    betting   -> settling   Void
    dealing   -> setting    deadline
    dealing   -> revealing  deadline
    dealing   -> settling   Void
    setting   -> revealing  deadline, SetHand, UseHouseWay
    setting   -> settling   Void
    revealing -> settling   deadline, Void
    settling  -> idle       deadline
    settling  -> betting    deadline

Betting closes early, to the deal, as soon as no seated player is left without a bet
(and one has bet): by the last bet or sit-out, or by the last seat without a bet
leaving, whether it stood up (``StandUp``) or was released after the grace time (a
``Tick`` before the betting deadline).

A changed config (:class:`ChangeConfig`) is legal in every phase and changes none:
it applies between rounds only, at once or at the end of the step that ends the
round in play (:mod:`~server.table.config_change`). So is closing the table
(:class:`CloseTable`): no new seat, rebuy or bet from then on, and its seats stand up
once no round is in play (:mod:`~server.table.closing`).

A deadline already past when a tick comes (after a restart) fires at once, and the
next phase gets its whole length from that tick: players who could not act while
the server was down still get their full time to set.

A handler (in :mod:`~server.table.seats`, :mod:`~server.table.betting`,
:mod:`~server.table.setting`, :mod:`~server.table.settlement`) either raises
:class:`TableError` before changing anything, or leaves in its
:class:`~server.table.work.Work` the new state, the table events to send (numbered,
already filtered per recipient), the ledger entries to apply atomically with the
state, the game logs, and the reply to the request. Chips are never created or
lost: every handler that moves chips lists the movement as a :class:`LedgerEntry`
and changes the pots (seat balance, bets held, house) by exactly that amount.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from protocol.errors import ErrorCode
from protocol.structs import HandChoice
from server.table import betting, closing, config_change, seats, setting, settlement
from server.table.errors import TableError
from server.table.events import (
    CashOut,
    ChangeConfig,
    ClearBet,
    CloseTable,
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
    TakeOver,
    Tick,
    UseHouseWay,
    Void,
)
from server.table.ledger import LedgerEntry
from server.table.setting import suggestion
from server.table.state import Phase, TableState, evolve
from server.table.views import Outbound
from server.table.work import GameLog, Handler, Work

__all__ = [
    "DEADLINES",
    "ROWS",
    "TRANSITIONS",
    "Deadline",
    "GameLog",
    "Transition",
    "diagram",
    "next_wakeup",
    "step",
    "suggestion",
]


@dataclass(frozen=True, slots=True)
class Transition:
    """What one event did: the new state and everything the shell must store and send."""

    state: TableState
    events: tuple[Outbound, ...] = ()
    entries: tuple[LedgerEntry, ...] = ()
    logs: tuple[GameLog, ...] = ()
    reply: HandChoice | None = None


# A refusal's words are read by players (clients show the server's message as it is):
# the request in words, never the name of a class of this module.
_ACTS: dict[type[Event], str] = {
    SitDown: "Sitting down",
    StandUp: "Standing up",
    Rebuy: "A rebuy",
    CashOut: "A cash-out",
    PlaceBet: "A bet",
    Rebet: "Repeating the last bet",
    ClearBet: "Taking a bet back",
    SitOut: "Sitting out",
    SetHand: "Setting a hand",
    UseHouseWay: "Setting a hand the house way",
}


def step(state: TableState, event: Event, now_ms: int) -> Transition:
    """Apply ``event`` at time ``now_ms``. Raises :class:`TableError` if it is not legal now.

    A refused event changes nothing. An event that changes nothing (a tick before
    any deadline) returns the same state, with no events and the same version.
    """
    closing.refuse(state, event)  # before the phase: protocol/PROTOCOL.md, section 10
    handler = TRANSITIONS.get((state.phase, type(event)))
    if handler is None:
        act = _ACTS.get(type(event), type(event).__name__)
        raise TableError(
            ErrorCode.WRONG_PHASE,
            f"{act} is not allowed while the table is {state.phase.value}",
        )
    work = Work(state, now_ms, event.seed if isinstance(event, Tick) else None)
    handler(work, event)
    config_change.apply_pending(work)  # the round may have ended
    closing.finish(work)  # ... and a closing table's seats stand up then
    if work.state is state and not work.events:
        return Transition(state=state, reply=work.reply)
    return Transition(
        state=evolve(work.state, version=work.version, seq=work.seq),
        events=tuple(work.events),
        entries=tuple(work.entries),
        logs=tuple(work.logs),
        reply=work.reply,
    )


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


def _tick(work: Work, event: Tick) -> None:
    """Fire the deadlines passed, in order, so that a table that was down catches up;
    between rounds, stand up who has been away too long (which may close betting)."""
    for _ in range(16):
        deadline = work.state.deadline
        if deadline is None or work.now < deadline:
            break
        DEADLINES[work.state.phase].run(work)
    if work.state.phase in (Phase.IDLE, Phase.BETTING):
        seats.stand_up_the_gone(work)


# --- the two tables ---------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Deadline:
    """What a phase's deadline does (``run``), and the phases it may lead to."""

    run: Callable[[Work], None]
    to: tuple[Phase, ...]


IDLE, BETTING, DEALING, SETTING, REVEALING, SETTLING = Phase
_ANY = tuple(Phase)
_NOT_IDLE = (BETTING, DEALING, SETTING, REVEALING, SETTLING)
_IN_ROUND = (BETTING, DEALING, SETTING, REVEALING)  # a settled round is never voided
_NOT_BETTING = (IDLE, DEALING, SETTING, REVEALING, SETTLING)
_STAY = ()  # handlers that never change the phase
_NOT_BETTING = (IDLE, DEALING, SETTING, REVEALING, SETTLING)
_IN_CARDS = (DEALING, SETTING, REVEALING, SETTLING)  # a closing table waits for the end

# fmt: off
DEADLINES: dict[Phase, Deadline] = {
    BETTING:   Deadline(betting.close_betting,   (DEALING, IDLE)),  # no bet: no round
    DEALING:   Deadline(setting.start_setting,   (SETTING, REVEALING)),  # all set already
    SETTING:   Deadline(setting.reveal,          (REVEALING,)),
    REVEALING: Deadline(settlement.settle,       (SETTLING,)),
    SETTLING:  Deadline(settlement.end_round,    (BETTING, IDLE)),  # nobody left: idle
}
"""What each phase's deadline does: the timed transitions (``idle`` has no deadline)."""

ROWS: list[tuple[tuple[Phase, ...], type[Any], Handler, tuple[Phase, ...]]] = [
    # in phases      event         handler                      may lead to
    (_NOT_BETTING,   Tick,         _tick,                       _STAY),  # via DEADLINES
    ((BETTING,),     Tick,         _tick,                       (DEALING,)),  # the gone released
    ((IDLE,),        SitDown,      seats.sit_down,              (BETTING,)),  # the first seat
    (_NOT_IDLE,      SitDown,      seats.sit_down,              _STAY),
    (_NOT_BETTING,   StandUp,      seats.stand_up,              _STAY),
    # The last awaited leaves: the deal; the last seat of a closing table: idle.
    ((BETTING,),     StandUp,      seats.stand_up,              (DEALING, IDLE)),
    (_ANY,           Rebuy,        seats.rebuy,                 _STAY),
    (_ANY,           CashOut,      seats.cash_out,              _STAY),
    (_ANY,           Disconnect,   seats.disconnect,            _STAY),
    (_ANY,           Reconnect,    seats.reconnect,             _STAY),
    (_ANY,           TakeOver,     betting.taken_over,          _STAY),  # first, when taken
    (_ANY,           ChangeConfig, config_change.change_config, _STAY),  # between rounds
    ((IDLE, BETTING), CloseTable,  closing.close_table,         (IDLE,)),  # seats stand up
    (_IN_CARDS,      CloseTable,   closing.close_table,         _STAY),  # after the round
    ((IDLE,),        PlaceBet,     betting.place_bet,           (BETTING, DEALING)),
    ((BETTING,),     PlaceBet,     betting.place_bet,           (DEALING, IDLE)),  # closing
    ((IDLE,),        Rebet,        betting.rebet,               (BETTING, DEALING)),
    ((BETTING,),     Rebet,        betting.rebet,               (DEALING,)),
    ((BETTING,),     ClearBet,     betting.clear_bet,           (DEALING, IDLE)),  # closing
    ((IDLE,),        SitOut,       betting.sit_out,             _STAY),
    ((BETTING,),     SitOut,       betting.sit_out,             (DEALING,)),
    ((DEALING,),     SetHand,      setting.set_hand,            _STAY),
    ((SETTING,),     SetHand,      setting.set_hand,            (REVEALING,)),  # all set
    ((DEALING,),     UseHouseWay,  setting.use_house_way,       _STAY),
    ((SETTING,),     UseHouseWay,  setting.use_house_way,       (REVEALING,)),
    (_IN_ROUND,      Void,         settlement.void,             (SETTLING,)),
]
"""The events: in which phases each is legal, its handler, where it may lead."""
# fmt: on

TRANSITIONS: dict[tuple[Phase, type[Any]], Handler] = {
    (phase, event_type): handler for phases, event_type, handler, _ in ROWS for phase in phases
}
"""Every legal (phase, event type) and its handler (from :data:`ROWS`)."""


def diagram() -> list[str]:
    """The round as the tables say it: one line per change of phase and what makes it
    (the module docstring shows it)."""
    lines = []
    for source in Phase:
        for target in Phase:
            causes = ["deadline"] if source in DEADLINES and target in DEADLINES[source].to else []
            causes += [
                event_type.__name__
                for phases, event_type, _, to in ROWS
                if source in phases and target in to and event_type.__name__ not in causes
            ]
            if causes and target is not source:
                lines.append(f"{source.value:<9} -> {target.value:<9}  {', '.join(causes)}")
    return lines
