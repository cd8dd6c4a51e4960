"""What nodes tell each other over Redis pub/sub: msgpack arrays, each named by its
first item, on the channels of :mod:`server.store.keys`.

On a table's events channel (``table_channel``), from the node holding the table:

- ``["events", holder, [[seq, public frame, [players with a private frame]], ...]]``:
  the events of one commit, in order. A node relays ``public`` to its connections,
  except to those of a player named in the list, who get their private frame;
- ``["held", holder, seq]``: the table is held by ``holder`` from now on, its last
  event ``seq`` (nodes that relay it catch up if they are behind).

On a player's channel (``player_channel``), published before the events they belong to:
``["private", table_id, [[seq, frame], ...]]``: the player's own frames, their cards.

On a table's requests channel (``table_requests``), heard by the node holding it, each
with a request id and the instance to answer:

- ``["call", id, from, player, session_id, name, frame]``: a client's request (its
  frame, as the client sent it) from a connection of ``from``;
- ``["attach", id, from, player, last_seq]``: the frames that bring a connection of
  ``player`` up to date from ``last_seq`` (-1: a snapshot);
- ``["presence", id, from, player]``: bring the player's seat in line with where
  they are connected.

On the channel of every node (``nodes_channel``): ``["resumed", sender, session_id]``:
a connection of ``sender`` resumed the session; any other connection of it closes;
``["joined", sender]``: ``sender`` registered as a node (started, or back after it was
taken for dead): a node that was alone publishes again and announces its tables.

On a node's channel (``node_channel``): ``["reply", id, frames, seq]`` (the frames to
send to the connection, in order, and for ``attach`` the last event they reach),
``["nothere", id]`` (this node does not hold the table: ask again),
``["take", table_id]`` (a hint: the table was just given up for you to take), and
``["announced", sender]`` (``sender`` has announced every table it holds, after your
``joined``).

Every frame is a protocol frame, encoded once by the node that made it: private ones
travel only on their player's channel, so a node never receives a card its
connections may not see.

Between releases (docs/DESIGN.md, "Releases side by side"): a reader ignores items
after the ones it knows, so a later release may add trailing items that an earlier
one can do without; a message an earlier release cannot read at all (a new kind, a
changed item) is logged and dropped by it (each message here is at most once anyway),
so its sender sends it only once every live node reads it
(``ClusterStore.formats_on``). Release 0.1.0 read every message at its exact length:
while one of its nodes is live, no message grows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import msgpack

from server.host.fanout import Frames

EventItem = tuple[int, bytes, list[str]]
"""One event as relayed: its seq, its public frame, the players with a private frame."""


def _pack(value: list[Any]) -> bytes:
    packed: bytes = msgpack.packb(value, use_bin_type=True)
    return packed


def unpack(message: bytes) -> list[Any]:
    """A message of this module as a list; ValueError if it is not one."""
    try:
        value = msgpack.unpackb(message, raw=False)
    except Exception as exc:
        raise ValueError(f"not a cluster message: {exc}") from None
    if not isinstance(value, list) or not value or not isinstance(value[0], str):
        raise ValueError("not a cluster message")
    return value


# --- events --------------------------------------------------------------------------


def events(
    holder: str, table_id: str, numbered: list[tuple[int, Frames]]
) -> tuple[bytes, dict[str, bytes]]:
    """The messages of one commit's events: the table's, and one per player with a
    private frame (``player -> message``)."""
    items: list[list[Any]] = []
    private: dict[str, list[list[Any]]] = {}
    for seq, (public, own) in numbered:
        items.append([seq, public, sorted(own)])
        for player, frame in own.items():
            private.setdefault(player, []).append([seq, frame])
    return _pack(["events", holder, items]), private_messages(table_id, private)


def private_messages(table_id: str, frames: dict[str, list[list[Any]]]) -> dict[str, bytes]:
    """``player -> ["private", table_id, [[seq, frame], ...]]``."""
    return {p: _pack(["private", table_id, items]) for p, items in frames.items()}


def held(holder: str, seq: int) -> bytes:
    """The notice that ``holder`` holds the table, its last event ``seq``."""
    return _pack(["held", holder, seq])


@dataclass(frozen=True, slots=True)
class Relayed:
    """A message of a table's events channel: ``items`` (empty for ``held``) and,
    for ``held``, the last seq."""

    holder: str
    items: list[EventItem]
    held_seq: int | None = None


def read_table_message(message: bytes) -> Relayed:
    """A table channel's message; ValueError if it is none."""
    value = unpack(message)
    if value[0] == "events" and len(value) >= 3:
        items = [(int(i[0]), bytes(i[1]), [str(p) for p in i[2]]) for i in value[2]]
        return Relayed(str(value[1]), items)
    if value[0] == "held" and len(value) >= 3:
        return Relayed(str(value[1]), [], int(value[2]))
    raise ValueError(f"unknown table message {value[0]!r}")


def read_private(message: bytes) -> tuple[str, list[tuple[int, bytes]]]:
    """A player channel's message: the table, and the player's frames by seq."""
    value = unpack(message)
    if value[0] != "private" or len(value) < 3:
        raise ValueError("not a private message")
    return str(value[1]), [(int(f[0]), bytes(f[1])) for f in value[2]]


# --- requests and replies ------------------------------------------------------------


def call(req: int, sender: str, player: str, session_id: str, name: str, frame: bytes) -> bytes:
    """A client's request for the holder."""
    return _pack(["call", req, sender, player, session_id, name, frame])


def attach(req: int, sender: str, player: str, last_seq: int | None) -> bytes:
    """Ask the holder for the frames that bring a connection of ``player`` up to date."""
    return _pack(["attach", req, sender, player, -1 if last_seq is None else last_seq])


def presence(req: int, sender: str, player: str) -> bytes:
    """Ask the holder to bring ``player``'s seat in line with their connections."""
    return _pack(["presence", req, sender, player])


@dataclass(frozen=True, slots=True)
class Request:
    """A request for the holder, as read from a table's requests channel."""

    kind: str
    req: int
    sender: str
    player: str
    session_id: str = ""
    name: str = ""
    frame: bytes = b""
    last_seq: int | None = None


def read_request(message: bytes) -> Request:
    """A table requests channel's message; ValueError if it is none."""
    value = unpack(message)
    kind = value[0]
    if kind == "call" and len(value) >= 7:
        _, req, sender, player, session_id, name, frame = value[:7]
        return Request(
            kind, int(req), str(sender), str(player), str(session_id), str(name), bytes(frame)
        )
    if kind == "attach" and len(value) >= 5:
        seq = int(value[4])
        last_seq = None if seq < 0 else seq
        return Request(kind, int(value[1]), str(value[2]), str(value[3]), last_seq=last_seq)
    if kind == "presence" and len(value) >= 4:
        return Request(kind, int(value[1]), str(value[2]), str(value[3]))
    raise ValueError(f"unknown request {kind!r}")


def reply(req: int, frames: list[bytes], seq: int = 0) -> bytes:
    """The holder's answer: the frames for the connection, and the seq they reach."""
    return _pack(["reply", req, frames, seq])


def not_here(req: int) -> bytes:
    """This node does not hold the table (any more): ask again."""
    return _pack(["nothere", req])


def take(table_id: str) -> bytes:
    """A hint: ``table_id`` was given up for the receiver to take now."""
    return _pack(["take", table_id])


def resumed(sender: str, session_id: str) -> bytes:
    """A connection of ``sender`` resumed ``session_id``."""
    return _pack(["resumed", sender, session_id])


def read_resumed(message: bytes) -> tuple[str, str]:
    """A ``resumed`` message: its sender and session."""
    value = unpack(message)
    if value[0] != "resumed" or len(value) < 3:
        raise ValueError("not a resumed message")
    return str(value[1]), str(value[2])


def joined(sender: str) -> bytes:
    """``sender`` registered as a node."""
    return _pack(["joined", sender])


def read_joined(message: bytes) -> str | None:
    """The sender of a ``joined`` message; None if it is another message."""
    value = unpack(message)
    if value[0] != "joined" or len(value) < 2:
        return None
    return str(value[1])


def announced(sender: str) -> bytes:
    """``sender`` announced every table it holds."""
    return _pack(["announced", sender])


def drain(sender: str) -> bytes:
    """An operator asks the receiver to drain (as on SIGTERM); ``sender``: who relayed
    it (``server/admin``)."""
    return _pack(["drain", sender])


@dataclass(frozen=True, slots=True)
class NodeMessage:
    """A message of a node's channel: ``kind`` is ``reply``, ``nothere``, ``take``,
    ``announced`` or ``drain``."""

    kind: str
    req: int = 0
    frames: tuple[bytes, ...] = ()
    seq: int = 0
    table_id: str = ""
    sender: str = ""


def read_node_message(message: bytes) -> NodeMessage:
    """A node channel's message; ValueError if it is none."""
    value = unpack(message)
    kind = value[0]
    if kind == "reply" and len(value) >= 4:
        return NodeMessage(kind, int(value[1]), tuple(bytes(f) for f in value[2]), int(value[3]))
    if kind == "nothere" and len(value) >= 2:
        return NodeMessage(kind, int(value[1]))
    if kind == "take" and len(value) >= 2:
        return NodeMessage(kind, table_id=str(value[1]))
    if kind in ("announced", "drain") and len(value) >= 2:
        return NodeMessage(kind, sender=str(value[1]))
    raise ValueError(f"unknown node message {kind!r}")
