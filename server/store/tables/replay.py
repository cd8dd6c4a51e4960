"""A table's events kept for replay, and the messages they are published as.

Each commit appends its events to the table's stream, as one entry (id ``<seq>-0`` of
its first event, :func:`unpack_entry`; the last ``events_cap`` entries kept) and may
publish them; a connection that comes back reads the
events it missed, or learns that it needs a snapshot (docs/DESIGN.md, "Replay, game
logs, sessions").
"""

from __future__ import annotations

import redis.asyncio

from server.store.client.replies import StreamEntry, as_int, stream_entries
from server.store.errors import store_call
from server.store.keys import Keys

SEQ_BYTES = 8
"""A published event starts with its sequence number in this many bytes, big endian."""


def encode_published(seq: int, event: bytes) -> bytes:
    """The pub/sub message of an event: ``seq`` as 8 bytes big endian, then the event."""
    return seq.to_bytes(SEQ_BYTES, "big") + event


def decode_published(message: bytes) -> tuple[int, bytes]:
    """The inverse of :func:`encode_published`."""
    if len(message) < SEQ_BYTES:
        raise ValueError("a published event starts with an 8-byte sequence number")
    return int.from_bytes(message[:SEQ_BYTES], "big"), message[SEQ_BYTES:]


class Replay:
    """The tables' replay buffers (``store.replay`` of a
    :class:`~server.store.tables.store.TableStore`), read; the commits write them.
    Raises :class:`~server.store.errors.StoreUnavailable` where Redis failed."""

    def __init__(self, client: redis.asyncio.Redis, keys: Keys) -> None:
        self.redis = client
        self.keys = keys

    @store_call
    async def events_since(self, table_id: str, seq: int) -> list[tuple[int, bytes]] | None:
        """The events after ``seq``, oldest first; None if the replay buffer no longer
        reaches back to ``seq + 1`` (or ``seq`` is not one of this table's): the caller
        then sends a snapshot.
        """
        if seq < 0:
            return None
        k = self.keys
        events = k.table_events(table_id)
        # One transaction: the last seq, the oldest kept and the newer ones agree. A
        # commit's events are one entry: the one holding seq + 1, then the later ones.
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.hget(k.table_state(table_id), "seq")
            pipe.xrange(events, min="-", max="+", count=1)
            pipe.xrevrange(events, max=f"{seq + 1}-0", min="-", count=1)
            pipe.xrange(events, min=f"{seq + 2}-0", max="+")
            last_raw, oldest, holding, newer = await pipe.execute()
        last = as_int(last_raw)
        if seq == last:
            return []
        first = stream_entries(oldest)
        if seq > last or not first or _stream_seq(first[0][0]) > seq + 1:
            return None
        found = stream_entries(holding) + stream_entries(newer)
        return [(n, e) for entry in found for n, e in unpack_entry(entry) if n > seq]


def unpack_entry(entry: StreamEntry) -> list[tuple[int, bytes]]:
    """The events of one entry of a table's replay stream, ``(seq, event)`` in order:
    the entry's id is its first event's seq, and field ``e`` holds that event, ``e1``
    the next one, and so on (one entry a commit; an entry of an earlier version holds
    one event, in ``e``)."""
    start = _stream_seq(entry[0])
    found = []
    for name, event in entry[1].items():
        if name == "e":
            found.append((start, event))
        elif name.startswith("e") and name[1:].isdigit():
            found.append((start + int(name[1:]), event))
    return sorted(found)


def _stream_seq(entry_id: str) -> int:
    return int(entry_id.split("-", 1)[0])
