"""Where each player is seated among the tables this process hosts.

The gateway asks on every hello, every departure and every money reply; scanning
every hosted table's seats for one player cost, with 1,667 tables and 10,000 players
leaving at once, 15 s of one core. The hosts keep this index instead, as their states
change, so a question costs the player's own tables. One index serves the whole
process: the app creates it and hands it to every host and to the gateway.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Generic, TypeVar

from server.table.state import Seat, TableState

H = TypeVar("H", bound=Hashable)
"""What a host is to the index: anything hashable (the shell's table hosts)."""


class Seating(Generic[H]):
    """Player -> the hosts whose current state seats them (any host state, ready or not)."""

    def __init__(self) -> None:
        self._hosts: dict[str, dict[H, None]] = {}

    def hosts_of(self, player: str) -> list[H]:
        """The hosts seating ``player``, in the order they seated them (a copy)."""
        return list(self._hosts.get(player, ()))

    def moved(self, host: H, before: TableState | None, after: TableState | None) -> None:
        """``host``'s state went from ``before`` to ``after``: update who sits where."""
        old = before.seats if before is not None else ()
        new = after.seats if after is not None else ()
        if old is new or same_players(old, new):  # a bet changes a seat, not its player
            return
        left = {s.player for s in old if s is not None}
        came = {s.player for s in new if s is not None}
        for player in left - came:
            hosts = self._hosts.get(player)
            if hosts is not None:
                hosts.pop(host, None)
                if not hosts:
                    del self._hosts[player]
        for player in came - left:
            self._hosts.setdefault(player, {})[host] = None


def same_players(old: tuple[Seat | None, ...], new: tuple[Seat | None, ...]) -> bool:
    """Whether the same players sit in the same seats: most changes (a bet, a hand set)
    leave them, and two sets of players a commit were a percent of the server's time."""
    if len(old) != len(new):
        return False
    for a, b in zip(old, new, strict=True):
        if a is not b and (a is None or b is None or a.player != b.player):
            return False
    return True
