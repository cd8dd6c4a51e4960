"""Closing a table (an operator's ``close``): the round in play finishes, then every
seat stands up with its chips back to its player's account.

:class:`~server.table.events.CloseTable` marks the state ``closing``; from then on the
machine refuses what would put chips or players on the table (:data:`REFUSED`: a seat,
a rebuy, a bet), and :func:`finish`, run after every step as the pending config is,
stands every seat up as soon as no round is in play (idle, or betting with no bet in;
a settled round first runs out its settling time, so that its results are shown, and
its end opens no new round). A closing table with no seat left is closed: idle, no
deadline, nothing more to do; its host says so to the catalog.
"""

from __future__ import annotations

from protocol.errors import ErrorCode
from server.table import views
from server.table.errors import TableError
from server.table.events import CloseTable, Rebet, Rebuy, SitDown
from server.table.events import PlaceBet as _PlaceBet
from server.table.seats import remove_seat
from server.table.state import Phase, TableState
from server.table.work import Work

REFUSED = (SitDown, Rebuy, _PlaceBet, Rebet)
"""The events a closing table refuses: each would bring chips or a player to it (but a
``PlaceBet`` of 0, which takes a bet back)."""

CLOSING_MESSAGE = "the table is closing: it takes no new seat, chips or bet"


def close_table(work: Work, event: CloseTable) -> None:
    """Mark the table closing (once); :func:`finish` does the rest."""
    if not work.state.closing:
        work.set(closing=True)


def refuse(state: TableState, event: object) -> None:
    """Refuse ``event`` if the table is closing and it is one of :data:`REFUSED` (a bet
    of 0, which removes a bet, is not: a closing table lets bets go)."""
    if state.closing and isinstance(event, REFUSED):
        if isinstance(event, _PlaceBet) and event.amount == 0:
            return
        raise TableError(ErrorCode.TABLE_CLOSING, CLOSING_MESSAGE)


def finish(work: Work) -> None:
    """A closing table with no round in play: every seat stands up (its bets, none in
    play, and its balance back to its account); a betting phase with no bet ends."""
    state = work.state
    if not state.closing or state.phase is Phase.SETTLING or not state.between_rounds():
        return
    for index, _ in state.occupied():
        remove_seat(work, index)
    if work.state.phase is Phase.BETTING:
        # As betting that closes with no bet does: the round's seed stays unrevealed.
        work.set(phase=Phase.IDLE, deadline=None)
        work.emit(views.phase_changed(work.state))


def is_closed(state: TableState) -> bool:
    """Whether a closing table is done: nobody seated, no round in play."""
    return state.closing and state.phase is Phase.IDLE and not state.occupied()
