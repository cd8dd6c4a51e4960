"""What a table's holder tells the other nodes after each stored change.

One script call per change (``PUBLISH_COMMIT``, sharing round trips with the node's
other publications, in order): each private frame on its player's channel, then the
change's events on the table's channel (so that a node receives a player's frame
before the event it belongs to), the table's lobby summary when it changed, and the
seats index of the players who sat down or stood up. It follows the commit rather
than being part of it: a holder that dies in between leaves a gap, which the other
nodes fill from the table's replay buffer when the next holder says it holds the table
(:func:`~server.cluster.wire.held`).

Nobody hears a node alone on its Redis: it publishes nothing after its commits then (a
script call after each, which doubled the Redis work of a round), and remembers the
last state of each table it kept quiet. It still writes a table's picture when it takes
the table (:meth:`Publisher.held`) and when it loses it (:meth:`Publisher.released`):
a table between holders is read from its summary, by this node too, and shows as it
was. When another node appears (its ``joined`` notice, or the next heartbeat) the node
announces each quiet table, as a new holder does (the summary, the seats, the ``held``
notice whose seq lets relaying nodes catch up from the replay buffer), before it
publishes any later change: docs/DESIGN.md, "Several nodes on one Redis", says why no
newcomer sees a stale picture.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping
from typing import Any

from server.cluster import wire
from server.cluster.lobby import summary
from server.host.fanout import Frames
from server.seating import same_players
from server.store import ClusterStore
from server.table.machine import Transition
from server.table.state import TableState

log = logging.getLogger(__name__)


def _seated(state: TableState | None) -> set[str]:
    return {seat.player for _, seat in state.occupied()} if state is not None else set()


class Publisher:
    """The publications of the tables this node holds."""

    def __init__(
        self, store: ClusterStore, instance: str, alone: Callable[[], bool] = lambda: False
    ) -> None:
        """``alone()``: whether this node is the only live one (nothing to publish)."""
        self.store = store
        self.instance = instance
        self.alone = alone
        self._summaries: dict[str, bytes] = {}  # as last written, per table held here
        self._quiet: dict[str, TableState] = {}  # held here, changes unpublished: the last
        self.published = 0
        """Changes published so far."""
        self.skipped = 0
        """Changes left unpublished so far (this node alone)."""

    def committed(
        self,
        table_id: str,
        before: TableState | None,
        t: Transition,
        numbered: list[tuple[int, Frames]],
    ) -> None:
        """A change of ``table_id`` was stored (its events went to this node's
        subscribers): publish what the other nodes need of it, if there are any."""
        if self.alone():
            self._quiet[table_id] = t.state
            self.skipped += 1
            return
        keys = self.store.keys
        messages: list[tuple[str, bytes]] = []
        if numbered:
            table_message, private = wire.events(self.instance, table_id, numbered)
            messages = [(keys.player_channel(p), m) for p, m in sorted(private.items())]
            messages.append((keys.table_channel(table_id), table_message))
        if before is not None and same_players(before.seats, t.state.seats):
            sat: list[str] = []
            stood: list[str] = []
        else:
            was, now = _seated(before), _seated(t.state)
            sat, stood = sorted(now - was), sorted(was - now)
        self._send(table_id, t.state, sat, stood, messages)

    def held(self, table_id: str, state: TableState) -> None:
        """``table_id`` is held here from now: say so, with its summary and seats."""
        self._summaries.pop(table_id, None)
        self._quiet.pop(table_id, None)
        notice = (self.store.keys.table_channel(table_id), wire.held(self.instance, state.seq))
        self._send(table_id, state, sorted(_seated(state)), [], [notice])

    def released(self, table_id: str) -> None:
        """``table_id`` is no longer held here: its last changes, if they went
        unpublished, are written now (its summary and seats)."""
        self._summaries.pop(table_id, None)
        last = self._quiet.pop(table_id, None)
        if last is not None:
            self._send(table_id, last, sorted(_seated(last)), [], [])
            self._summaries.pop(table_id, None)

    def announce(self, held: Mapping[str, TableState]) -> int:
        """Another node may hear now: announce each of ``held`` (the tables held here,
        their states as last stored) whose changes were left unpublished, as
        :meth:`held` does; the tables announced. Before any later change is
        published: the publications keep their order."""
        if self.alone():
            return 0
        quiet = sorted(t for t in self._quiet if t in held)
        for table_id in quiet:
            self.held(table_id, held[table_id])
        return len(quiet)

    def _send(
        self,
        table_id: str,
        state: TableState,
        sat: list[str],
        stood: list[str],
        messages: list[tuple[str, bytes]],
    ) -> None:
        fresh = summary(state)
        changed = self._summaries.get(table_id) != fresh
        if not (messages or sat or stood or changed):
            return
        self._summaries[table_id] = fresh
        future = self.store.publish_commit(
            table_id, fresh if changed else None, sat, stood, messages
        )
        future.add_done_callback(self._done)
        self.published += 1

    def _done(self, future: asyncio.Future[Any]) -> None:
        if not future.cancelled() and future.exception() is not None:
            # The other nodes find the gap at the next event, or the next holder's notice.
            log.warning("publication failed: %s", future.exception())
