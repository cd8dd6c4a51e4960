"""What the metrics and the archiver read off the tables: a settled round's money, the
seats taken, a stored table's money."""

from __future__ import annotations

from collections.abc import Iterable

from server.host import TableHost
from server.store import StoredTable, stored_state
from server.table.state import SeatResult


def round_money(results: Iterable[SeatResult]) -> tuple[int, int, int]:
    """A settled round's money for the metrics: (chips wagered, chips the house won from
    the seats it beat, chips it paid to the seats that beat it)."""
    wagered = won = paid = 0
    for r in results:
        wagered += r.bet + sum(w.stake for w in r.wagers)
        won += max(0, -r.net)
        paid += max(0, r.net)
    return wagered, won, paid


def seats_taken(hosts: Iterable[TableHost]) -> int:
    """Seats taken at the tables held among ``hosts``."""
    return sum(
        sum(seat is not None for seat in state.seats)
        for state in (h.state for h in hosts if h.ready)
        if state is not None
    )


def table_money(stored: StoredTable) -> tuple[int, int, int]:
    """A stored table's money: (table balances, held bets, house result)."""
    return stored_state(stored).money()
