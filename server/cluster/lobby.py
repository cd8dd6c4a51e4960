"""What every node may know of a table held elsewhere: its summary.

The lobby (``list_tables``) and a player's table balances (``balance``, and the reply
to a money request) need a few public facts of every table: its phase and who sits
there with which table balance, all of which its events show anyone watching. The
table's holder writes them after each change (:func:`summary`); the other nodes read
them instead of the table's state, which holds cards they may not see.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import msgpack

from server.store import ClusterStore
from server.table.state import Phase, TableState

CACHE_S = 1.0
"""How old the lobby's summaries may be when ``list_tables`` answers from them."""


@dataclass(frozen=True, slots=True)
class Summary:
    """A table as the lobby shows it: its phase and seated players' table balances."""

    phase: Phase
    balances: dict[str, int]


def summary(state: TableState) -> bytes:
    """The summary of ``state``, as stored."""
    seats = [[seat.player, seat.balance] for _, seat in state.occupied()]
    packed: bytes = msgpack.packb([state.phase.value, seats], use_bin_type=True)
    return packed


def read_summary(stored: bytes) -> Summary | None:
    """A stored summary; None if it cannot be read (written by another version). Items
    after the ones read here, in the summary or in a seat's pair, are a later release's
    and are ignored."""
    try:
        value = msgpack.unpackb(stored, raw=False)
        phase, seats = value[0], value[1]
        return Summary(Phase(phase), {str(s[0]): int(s[1]) for s in seats})
    except (ValueError, TypeError, IndexError, KeyError):
        return None


class Lobby:
    """The summaries and watcher counts of the tables, read at most every
    :data:`CACHE_S` seconds for the lobby."""

    def __init__(
        self, store: ClusterStore, instance: str, live: Callable[[], Sequence[str]]
    ) -> None:
        """``live()``: the live node instances (watchers on dead ones do not count, nor
        this node's own, ``instance``: the caller counts those itself)."""
        self.store = store
        self.instance = instance
        self.live = live
        self._read_at = -CACHE_S
        self._summaries: dict[str, Summary] = {}
        self._watchers: dict[str, int] = {}
        self._lock = asyncio.Lock()

    async def refresh(self, table_ids: Sequence[str]) -> None:
        """Read the summaries of ``table_ids`` if the last read is older than
        :data:`CACHE_S` (one read at a time; callers meanwhile get its result)."""
        loop = asyncio.get_running_loop()
        if loop.time() - self._read_at < CACHE_S:
            return
        async with self._lock:
            if loop.time() - self._read_at < CACHE_S:
                return
            stored = await self.store.summaries(list(table_ids))
            counts = await self.store.watchers(list(table_ids))
            live = set(self.live()) - {self.instance}
            self._summaries = {
                t: s for t, blob in stored.items() if (s := read_summary(blob)) is not None
            }
            self._watchers = {
                t: sum(n for i, n in per_node.items() if i in live)
                for t, per_node in counts.items()
            }
            self._read_at = loop.time()

    def summary(self, table_id: str) -> Summary | None:
        """The table's summary as last read (None: not known yet)."""
        return self._summaries.get(table_id)

    def watchers(self, table_id: str) -> int:
        """Connections watching the table on the other live nodes, as last read."""
        return self._watchers.get(table_id, 0)

    async def balances(self, player: str, table_ids: Sequence[str]) -> dict[str, int]:
        """``player``'s balance at each of ``table_ids`` where the summary seats them
        (read now: a money reply states them)."""
        stored = await self.store.summaries(list(table_ids))
        out = {}
        for table_id, blob in stored.items():
            found = read_summary(blob)
            if found is not None and player in found.balances:
                out[table_id] = found.balances[player]
        return out
