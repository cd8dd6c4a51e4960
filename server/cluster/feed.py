"""The events of tables held elsewhere, relayed to this node's connections.

Each table has one fan-out per node (``server/host/fanout.py``), fed by the table's
commits while it is held here and by :class:`Feeds` while it is held elsewhere: the
node listens to the table's events channel while one of its connections watches it,
and to each connected player's channel. A player's private frame comes before the
event it belongs to and is paired with it; a connection that would get an event with
a gap before it, or without the private frame it is owed, is held back while the
missing frames are read from the table's replay buffer (``EVENTS_FOR``: only the
frames of that connection's player ever leave Redis). So every connection gets each
event once, in order, whichever node it came through, as a resuming client does
(docs/DESIGN.md, "Several nodes on one Redis"). When the buffer no longer reaches back
that far the held events are sent anyway: the client sees the gap and asks for a
snapshot (protocol/PROTOCOL.md, section 3).
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Callable, Coroutine, Mapping
from typing import Any

from server.cluster import wire
from server.host import Subscriber, TableHost
from server.store import ClusterStore, Relay, StoreUnavailable
from server.tasks import cancel_and_wait

log = logging.getLogger(__name__)


class Feeds:
    """This node's share of the events of the tables held elsewhere."""

    def __init__(
        self,
        relay: Relay,
        store: ClusterStore,
        hosts: Mapping[str, TableHost],
        on_held: Callable[[str, str], None],
    ) -> None:
        """``on_held(table_id, holder)`` is told each ``held`` notice."""
        self.relay = relay
        self.store = store
        self.hosts = hosts
        self.on_held = on_held
        self._relayed: set[str] = set()
        self._private: dict[str, dict[int, dict[str, bytes]]] = {}  # table -> seq -> frames
        self._filling: set[tuple[str, Subscriber]] = set()
        self._tasks: set[asyncio.Task[None]] = set()
        self.filled = 0
        """Gaps filled from a replay buffer so far."""

    def watch(self, hosts: Mapping[str, TableHost]) -> None:
        """Fill the gaps of the subscribers of ``hosts``'s tables (once they exist)."""
        for table_id, host in hosts.items():
            host.subscribers.on_gap = functools.partial(self._gap, table_id)

    def _spawn(self, coro: Coroutine[Any, Any, None], name: str) -> None:
        task = asyncio.create_task(coro, name=name)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def stop(self) -> None:
        """Stop the catch-ups in progress."""
        await cancel_and_wait(*self._tasks)

    # --- listening -----------------------------------------------------------------

    async def relay_table(self, table_id: str) -> None:
        """Listen to ``table_id``'s events (before asking its holder for a snapshot:
        every event after it is heard)."""
        self._relayed.add(table_id)
        channel = self.store.keys.table_channel(table_id)
        await self.relay.listen(channel, functools.partial(self._table_message, table_id))

    async def unrelay_table(self, table_id: str) -> None:
        """Stop listening to ``table_id``'s events."""
        self._relayed.discard(table_id)
        self._private.pop(table_id, None)
        await self.relay.forget(self.store.keys.table_channel(table_id))

    def relaying(self, table_id: str) -> bool:
        """Whether ``table_id``'s events are listened to."""
        return table_id in self._relayed

    async def listen_player(self, player: str) -> None:
        """Hear ``player``'s private frames (they have a connection here)."""
        channel = self.store.keys.player_channel(player)
        await self.relay.listen(channel, functools.partial(self._private_message, player))

    async def forget_player(self, player: str) -> None:
        """Stop hearing ``player``'s private frames."""
        await self.relay.forget(self.store.keys.player_channel(player))

    # --- holders coming and going --------------------------------------------------

    def table_lost(self, table_id: str) -> None:
        """``table_id`` is no longer held here: its subscribers get its events from the
        new holder, from the last one each was sent."""
        if self.hosts[table_id].subscribers:
            self._spawn(self._follow(table_id), f"follow-{table_id}")

    def table_held(self, table_id: str) -> None:
        """``table_id`` is held here: its commits feed its subscribers."""
        if table_id in self._relayed:
            self._spawn(self.unrelay_table(table_id), f"unrelay-{table_id}")

    def watchers(self, table_id: str, count: int) -> None:
        """``table_id`` has ``count`` subscribers here now."""
        if count == 0 and table_id in self._relayed:
            self._spawn(self.unrelay_table(table_id), f"unrelay-{table_id}")

    def reconnected(self) -> None:
        """The pub/sub connection was lost and made again: catch every table up."""
        for table_id in list(self._relayed):
            self._spawn(self.catch_up(table_id), f"catch-up-{table_id}")

    async def _follow(self, table_id: str) -> None:
        try:
            await self.relay_table(table_id)
            await self.catch_up(table_id)
        except StoreUnavailable as exc:
            log.warning("table %s: cannot follow its new holder yet: %s", table_id, exc)

    async def catch_up(self, table_id: str) -> None:
        """Send every subscriber of ``table_id`` the events stored since the last one
        it was sent (one read for all of them)."""
        host = self.hosts[table_id]
        fan = host.subscribers
        behind = fan.behind()
        if behind is None or host.ready:
            return
        players = sorted({s.player_id for s in fan if s.player_id is not None})
        replay = await self.store.events_for(table_id, behind, players)
        for sub in list(fan):
            if replay is None:
                fan.fill(sub, [], skip=True)
                continue
            player = sub.player_id
            missed = [
                (seq, private.get(player, public) if player else public)
                for seq, public, private in replay.events
            ]
            fan.fill(sub, missed)
        if replay is not None:
            self.filled += 1

    # --- messages ------------------------------------------------------------------

    def _table_message(self, table_id: str, data: bytes) -> None:
        message = wire.read_table_message(data)
        host = self.hosts.get(table_id)
        if host is None:
            return
        if message.held_seq is not None:
            self.on_held(table_id, message.holder)
            if not host.ready and message.held_seq > host.subscribers.seq:
                self._spawn(self.catch_up(table_id), f"catch-up-{table_id}")
            return
        if host.ready:
            return  # held here now: its own commits feed its subscribers
        fan = host.subscribers
        pending = self._private.get(table_id, {})
        for seq, public, players in message.items:
            fan.send((public, pending.pop(seq, {})), seq, players)
        for seq in [s for s in pending if s <= fan.seq]:
            del pending[seq]

    def _private_message(self, player: str, data: bytes) -> None:
        table_id, frames = wire.read_private(data)
        if table_id not in self._relayed or self.hosts[table_id].ready:
            return  # not relayed here: the table's own commits, or nobody watching
        pending = self._private.setdefault(table_id, {})
        for seq, frame in frames:
            pending.setdefault(seq, {})[player] = frame

    def _gap(self, table_id: str, sub: Subscriber) -> None:
        key = (table_id, sub)
        if key not in self._filling:
            self._filling.add(key)
            self._spawn(self._fill(table_id, sub), f"fill-{table_id}")

    async def _fill(self, table_id: str, sub: Subscriber) -> None:
        fan = self.hosts[table_id].subscribers
        key = (table_id, sub)
        missed: list[tuple[int, bytes]] = []
        skip = False
        try:
            last = fan.last(sub)
            if last is None:
                return
            player = sub.player_id
            replay = await self.store.events_for(table_id, last, [player] if player else [])
            if replay is None:
                skip = True
            else:
                self.filled += 1
                missed = [
                    (seq, private.get(player, public) if player else public)
                    for seq, public, private in replay.events
                ]
        except StoreUnavailable as exc:
            log.warning("table %s: a gap not filled (%s); sent as it is", table_id, exc)
            skip = True
        finally:
            # Before filling: a hole still left asks for another fill.
            self._filling.discard(key)
        fan.fill(sub, missed, skip=skip)
