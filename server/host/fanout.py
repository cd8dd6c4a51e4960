"""Fan-out: the connections at a table, the frames each of them receives, and replay.

Each event of a change is encoded once, to a public frame and a private frame per
player the event tells something only they may see; the same frames are stored for
replay (:func:`pack_outbound`) and sent to every subscriber (:meth:`FanOut.send`).
A subscriber that missed events (a resumed session, or a table lost and taken again)
gets them from the replay buffer, in its own version, or a snapshot when the buffer no
longer reaches back that far.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Protocol

import msgpack

from protocol.codec import encode
from server.store.tables import TableStore
from server.table.state import TableState
from server.table.views import Outbound, snapshot


class Subscriber(Protocol):
    """A connection that receives a table's events."""

    player_id: str | None

    def send_bytes(self, data: bytes) -> None:
        """Queue one frame; never blocks (a slow client is dropped instead)."""


Frames = tuple[bytes, dict[str, bytes]]
"""An event's frames: the public one, and the private one of each player who has one."""


def encode_outbound(out: Outbound) -> Frames:
    """An event's frames, encoded once for storing and sending: public, then private."""
    return encode(out.public), {p: encode(m) for p, m in out.private.items()}


def pack_outbound(frames: Frames) -> bytes:
    """An event as stored for replay: the public frame and each private frame."""
    packed: bytes = msgpack.packb(list(frames), use_bin_type=True)
    return packed


def frame_for(stored: bytes, player: str | None) -> bytes:
    """The frame ``player`` (None: a spectator) receives of a stored event."""
    public, private = msgpack.unpackb(stored, raw=False)
    return pick_frame((public, private), player)


def pick_frame(frames: Frames, player: str | None) -> bytes:
    """``player``'s own frame of an event if it has one, else the public one."""
    public, private = frames
    return private.get(player, public) if player is not None else public


class FanOut:
    """The subscribers of one table, in the order they came, and what they are sent."""

    def __init__(self, table_id: str) -> None:
        self.table_id = table_id
        self._subscribers: dict[Subscriber, None] = {}  # an ordered set

    def __len__(self) -> int:
        return len(self._subscribers)

    def __iter__(self) -> Iterator[Subscriber]:
        return iter(self._subscribers)

    def add(self, sub: Subscriber) -> None:
        """Send this table's events to ``sub`` from now on."""
        self._subscribers[sub] = None

    def discard(self, sub: Subscriber) -> None:
        """Stop sending this table's events to ``sub``."""
        self._subscribers.pop(sub, None)

    def send(self, frames: Frames) -> None:
        """Queue one event to every subscriber, each its own frame."""
        for sub in list(self._subscribers):
            sub.send_bytes(pick_frame(frames, sub.player_id))

    async def missed(self, store: TableStore, sub: Subscriber, last_seq: int) -> list[bytes] | None:
        """The frames ``sub`` missed after ``last_seq``, or None when a snapshot is needed."""
        stored = await store.events_since(self.table_id, last_seq)
        if stored is None:
            return None
        return [frame_for(blob, sub.player_id) for _, blob in stored]

    async def catch_up(
        self, store: TableStore, sent: int, state: TableState, clock: Callable[[], int]
    ) -> None:
        """Send every subscriber the events stored after ``sent`` (the last one they
        were sent), or a snapshot of ``state`` each if the replay buffer no longer
        reaches back that far."""
        stored = await store.events_since(self.table_id, sent)
        for sub in list(self._subscribers):
            if stored is None:
                now = clock()
                sub.send_bytes(encode(snapshot(state, sub.player_id, now)))
            else:
                for _, blob in stored:
                    sub.send_bytes(frame_for(blob, sub.player_id))
