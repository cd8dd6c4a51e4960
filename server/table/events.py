"""Events: everything that can happen to a table, as frozen records.

The shell turns client requests, timers and faults into these and feeds them to
:func:`server.table.machine.step` with the current time. Randomness enters only as
the ``seed`` of an event that may open a new round (32 bytes from the shell's
CSPRNG); the machine never draws a random number itself.
"""

from __future__ import annotations

from dataclasses import dataclass

from server.table.state import TableConfig


@dataclass(frozen=True, slots=True)
class Tick:
    """Time passed: fires every deadline at or before ``now_ms``.

    ``seed`` is used only if this tick opens betting for a new round.
    """

    seed: bytes


@dataclass(frozen=True, slots=True)
class SitDown:
    """``player`` takes ``seat`` (None: the first free seat) with a buy-in of ``buy_in``
    chips from their account."""

    player: str
    name: str
    seat: int | None
    buy_in: int
    seed: bytes  # opens betting if the table was empty


@dataclass(frozen=True, slots=True)
class StandUp:
    """``player`` leaves: at once between rounds, after the round when in one."""

    player: str


@dataclass(frozen=True, slots=True)
class Rebuy:
    """``player`` moves ``amount`` more chips from their account to the table."""

    player: str
    amount: int


@dataclass(frozen=True, slots=True)
class CashOut:
    """``player`` moves ``amount`` chips (0: all) from the table back to their account.

    The seat is kept; allowed between rounds, like a rebuy.
    """

    player: str
    amount: int = 0


@dataclass(frozen=True, slots=True)
class PlaceBet:
    """``player`` sets their main bet to ``amount`` and bonus bet to ``bonus``, and
    their other side bets to ``side`` ((kind, stake) pairs; a kind not named: none).

    A bet replaces the previous one of this round; ``amount`` 0 removes them all.
    """

    player: str
    amount: int
    bonus: int = 0
    side: tuple[tuple[str, int], ...] = ()


@dataclass(frozen=True, slots=True)
class Rebet:
    """``player`` repeats their last round's bets."""

    player: str


@dataclass(frozen=True, slots=True)
class ClearBet:
    """``player`` removes their bets of this round."""

    player: str


@dataclass(frozen=True, slots=True)
class SitOut:
    """``player`` sits this round out (betting can close without them)."""

    player: str


@dataclass(frozen=True, slots=True)
class SetHand:
    """``player`` sets their hand by naming the two cards of the low hand."""

    player: str
    low: tuple[int, int]


@dataclass(frozen=True, slots=True)
class UseHouseWay:
    """``player`` asks the house to set their hand."""

    player: str


@dataclass(frozen=True, slots=True)
class Disconnect:
    """``player``'s last connection dropped; their seat is kept for the grace time."""

    player: str


@dataclass(frozen=True, slots=True)
class Reconnect:
    """``player`` is back."""

    player: str


@dataclass(frozen=True, slots=True)
class TakeOver:
    """A process has just taken the table (it started, restarted, or took it over
    from one that stopped): the players' connections went with the previous holder,
    and a betting phase in progress starts again with its full length so that they
    can come back and bet (docs/RULES.md, "Disconnection"). Its host applies it before
    anything else; who is away is said by :class:`Disconnect` afterwards."""


@dataclass(frozen=True, slots=True)
class Void:
    """A malfunction: the round in play cannot be completed (docs/RULES.md, "Faults")."""

    reason: str


@dataclass(frozen=True, slots=True)
class ChangeConfig:
    """The table's settings are to become ``config`` (the tables file changed).

    Between rounds they apply at once; during a round they wait in the state and
    apply when it ends: changing the commission, pay table or foul policy of bets
    already placed would change a game in progress (a hand fouled under ``lose``
    could not even be settled under ``reject``). The seat count cannot change
    (seats would be orphaned): refused.
    """

    config: TableConfig


@dataclass(frozen=True, slots=True)
class CloseTable:
    """An operator closes the table: from now on nobody sits down, buys in again or
    bets; the round in play, if any, finishes, and then every seat stands up, its
    chips back to its player's account (:mod:`~server.table.closing`)."""


Event = (
    Tick
    | SitDown
    | StandUp
    | Rebuy
    | CashOut
    | PlaceBet
    | Rebet
    | ClearBet
    | SitOut
    | SetHand
    | UseHouseWay
    | Disconnect
    | Reconnect
    | TakeOver
    | Void
    | ChangeConfig
    | CloseTable
)
