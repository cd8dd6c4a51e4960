"""Game logs as stored in Redis: one protocol ``RoundRecord`` per player and round.

A record is kept in the same msgpack form the history reply carries, so a page of
history is read back, validated by the protocol's own decoder, and sent as it is.
"""

from __future__ import annotations

import msgpack

from protocol.codec import as_map, decode_server
from protocol.messages import OkReply
from protocol.structs import HistoryPage, RoundRecord

_RID = "log"


def pack_record(record: RoundRecord) -> bytes:
    """The stored bytes of one round record."""
    page = as_map(OkReply(rid=_RID, result=HistoryPage(rounds=(record,))))
    packed: bytes = msgpack.packb(page["result"]["rounds"][0])
    return packed


def record_table(blob: bytes) -> str | None:
    """The table of a stored record (None if it has none: it is then never matched)."""
    record = msgpack.unpackb(blob, raw=False)
    table = record.get("table_id") if isinstance(record, dict) else None
    return table if isinstance(table, str) else None


def record_ended_ms(blob: bytes) -> int:
    """When a stored record's round ended (epoch ms; 0 if it says nothing)."""
    record = msgpack.unpackb(blob, raw=False)
    ended = record.get("ended_ms") if isinstance(record, dict) else None
    return ended if isinstance(ended, int) else 0


def unpack_records(blobs: list[bytes], next_cursor: str | None) -> HistoryPage:
    """A history page of stored records, each checked by the protocol's decoder."""
    result: dict[str, object] = {
        "kind": "history",
        "rounds": [msgpack.unpackb(b, raw=False) for b in blobs],
    }
    if next_cursor is not None:
        result["next_cursor"] = next_cursor
    decoded = decode_server(msgpack.packb({"type": "ok", "rid": _RID, "result": result}))
    assert isinstance(decoded, OkReply)
    assert isinstance(decoded.result, HistoryPage)
    return decoded.result
