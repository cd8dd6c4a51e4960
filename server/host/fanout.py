"""Fan-out: the connections at a table, the frames each of them receives, and replay.

Each event of a change is encoded once, to a public frame and a private frame per
player the event tells something only they may see; the same frames are stored for
replay (:func:`pack_outbound`) and sent to every subscriber (:meth:`FanOut.send`).
A subscriber that missed events (a resumed session, or a table lost and taken again)
gets them from the replay buffer, in its own version, or a snapshot when the buffer no
longer reaches back that far.

A process has one :class:`FanOut` per table, whoever holds the table: its events come
from the host's commits when the table is held here, and from the node that holds it
otherwise (``server/cluster``). Either way each subscriber gets every event once, in
order: the fan-out keeps the last ``seq`` sent to each, drops what it already had,
and holds back what comes early (while the answer to a request it made elsewhere is
on its way, or while a gap is filled from the replay buffer).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol

import msgpack

from protocol.codec import encode
from server.store import Replay
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


@dataclass(slots=True)
class _Sub:
    last: int  # the seq of the last event sent to it
    held: list[tuple[int, bytes]] | None = None  # frames waiting to be sent, by seq
    pinned: bool = False  # held until release(): the reply to a request goes first


class FanOut:
    """The subscribers of one table, in the order they came, and what they are sent.

    ``on_gap(sub)``, if set, is called when an event comes for ``sub`` after one it
    has not had: the subscriber is held from then on, and whoever fills the gap calls
    :meth:`fill`. Without it the event is sent anyway. ``on_count(table_id, n)``, if
    set, is told the number of subscribers each time it changes.
    """

    def __init__(self, table_id: str) -> None:
        self.table_id = table_id
        self._subscribers: dict[Subscriber, _Sub] = {}  # an ordered set, with each one's place
        self.seq = 0
        """The highest ``seq`` sent through this fan-out."""
        self.on_gap: Callable[[Subscriber], None] | None = None
        self.on_count: Callable[[str, int], None] | None = None

    def __len__(self) -> int:
        return len(self._subscribers)

    def __iter__(self) -> Iterator[Subscriber]:
        return iter(self._subscribers)

    def __contains__(self, sub: object) -> bool:
        return sub in self._subscribers

    def add(self, sub: Subscriber, last: int = 0, *, held: bool = False) -> None:
        """Send this table's events after ``last`` to ``sub`` from now on (held back, if
        ``held``, until :meth:`release`)."""
        fresh = sub not in self._subscribers
        self._subscribers[sub] = _Sub(last, [] if held else None, held)
        if fresh and self.on_count is not None:
            self.on_count(self.table_id, len(self._subscribers))

    def discard(self, sub: Subscriber) -> None:
        """Stop sending this table's events to ``sub``."""
        if self._subscribers.pop(sub, None) is not None and self.on_count is not None:
            self.on_count(self.table_id, len(self._subscribers))

    def last(self, sub: Subscriber) -> int | None:
        """The seq of the last event sent to ``sub`` (None: not a subscriber)."""
        record = self._subscribers.get(sub)
        return None if record is None else record.last

    def behind(self) -> int | None:
        """The lowest last seq of the subscribers (None: no subscriber)."""
        return min((r.last for r in self._subscribers.values()), default=None)

    # --- sending -------------------------------------------------------------------

    def send(self, frames: Frames, seq: int, private_to: Collection[str] = ()) -> None:
        """Queue event ``seq`` to every subscriber that has not had it, each its own
        frame. ``private_to``: players who have a private frame of this event, for a
        relayed event whose private frames this process may lack (a subscriber of such
        a player without one is treated as having a gap, never sent the public one)."""
        self.seq = max(self.seq, seq)
        public, private = frames
        for sub, record in list(self._subscribers.items()):
            if seq <= record.last:
                continue
            player = sub.player_id
            frame = public if player is None else private.get(player, public)
            missing = player in private_to and player not in private
            if record.held is not None:
                if not missing:
                    record.held.append((seq, frame))
                continue
            if (seq != record.last + 1 or missing) and self.on_gap is not None:
                record.held = [] if missing else [(seq, frame)]
                self.on_gap(sub)
                continue
            record.last = seq
            sub.send_bytes(frame)

    def hold(self, sub: Subscriber) -> bool:
        """Hold events back from ``sub`` until :meth:`release`; False if it is no
        subscriber (or already held)."""
        record = self._subscribers.get(sub)
        if record is None or record.pinned:
            return False
        record.pinned = True
        if record.held is None:
            record.held = []
        return True

    def release(
        self, sub: Subscriber, first: Sequence[bytes] = (), upto: int | None = None
    ) -> None:
        """Send ``first`` to ``sub`` (frames that bring it to event ``upto``, if given),
        then the events held back from it that follow, in order."""
        record = self._subscribers.get(sub)
        for frame in first:
            sub.send_bytes(frame)
        if record is None:
            return
        if upto is not None and upto > record.last:
            record.last = upto
        record.pinned = False
        held, record.held = record.held or [], None
        for seq, frame in sorted(held, key=lambda item: item[0]):
            if seq <= record.last:
                continue
            if seq != record.last + 1 and self.on_gap is not None:
                record.held = [(s, f) for s, f in held if s >= seq]
                self.on_gap(sub)
                return
            record.last = seq
            sub.send_bytes(frame)

    def fill(
        self, sub: Subscriber, missed: Sequence[tuple[int, bytes]], skip: bool = False
    ) -> None:
        """Fill ``sub``'s gap with the events it missed (seq, frame), then send what
        was held back from it. ``skip``: the events are not to be had; send what was
        held anyway, so that the client sees the gap and asks for a snapshot
        (protocol/PROTOCOL.md, section 3)."""
        record = self._subscribers.get(sub)
        if record is None:
            return
        if record.pinned:
            # The reply to its request goes first: what it missed waits with the rest.
            assert record.held is not None
            record.held.extend(missed)
            return
        for seq, frame in missed:
            if seq == record.last + 1:
                record.last = seq
                sub.send_bytes(frame)
        held, record.held = record.held or [], None
        for seq, frame in sorted(held, key=lambda item: item[0]):
            if seq <= record.last:
                continue
            if seq != record.last + 1 and not skip:
                # Still a hole (events came after the buffer was read): read again.
                record.held = [(s, f) for s, f in held if s >= seq]
                if self.on_gap is not None:
                    self.on_gap(sub)
                return
            record.last = seq
            sub.send_bytes(frame)

    # --- replay --------------------------------------------------------------------

    async def missed(self, replay: Replay, sub: Subscriber, last_seq: int) -> list[bytes] | None:
        """The frames ``sub`` missed after ``last_seq``, or None when a snapshot is needed."""
        stored = await replay.events_since(self.table_id, last_seq)
        if stored is None:
            return None
        return [frame_for(blob, sub.player_id) for _, blob in stored]

    async def catch_up(self, replay: Replay, state: TableState, clock: Callable[[], int]) -> None:
        """Bring every subscriber to ``state`` (the table as just loaded): the events
        stored after the last one each was sent, or a snapshot of ``state`` each if
        the replay buffer no longer reaches back that far."""
        behind = self.behind()
        if behind is None or behind >= state.seq:
            return
        stored = await replay.events_since(self.table_id, behind)
        for sub, record in list(self._subscribers.items()):
            if record.last >= state.seq:
                continue
            if stored is None:
                record.last = state.seq
                sub.send_bytes(encode(snapshot(state, sub.player_id, clock())))
                continue
            for seq, blob in stored:
                if seq == record.last + 1 and seq <= state.seq:
                    record.last = seq
                    sub.send_bytes(frame_for(blob, sub.player_id))
        self.seq = max(self.seq, state.seq)
