"""A changed table config (the tables file changed): applied between rounds only.

:class:`~server.table.events.ChangeConfig` records the new settings in the state as
pending; :func:`apply_pending`, run by the machine after every step, makes them the
table's as soon as no round is in play (:meth:`TableState.between_rounds`): at once
if none is, else at the end of the step that ends the round, so the round in play
is settled under the settings it was played with and the next uses the new ones.
"""

from __future__ import annotations

from protocol.errors import ErrorCode
from server.table.errors import TableError
from server.table.events import ChangeConfig
from server.table.work import Work


def change_config(work: Work, event: ChangeConfig) -> None:
    """Make ``event.config`` the pending config (none if it is the table's own); refused
    if it has another seat count."""
    config = work.state.config
    if event.config.seats != config.seats:
        raise TableError(
            ErrorCode.BAD_MESSAGE,
            f"the table has {config.seats} seats and keeps them "
            f"(the new settings ask for {event.config.seats})",
        )
    # Settings back to the table's own withdraw a change still pending.
    pending = None if event.config == config else event.config
    if pending != work.state.pending_config:
        work.set(pending_config=pending)


def apply_pending(work: Work) -> None:
    """The pending config becomes the table's, if no round is in play now."""
    pending = work.state.pending_config
    if pending is not None and work.state.between_rounds():
        work.set(config=pending, pending_config=None)
