"""Game logs as stored in Redis: one protocol ``RoundRecord`` per player and round.

A record is stored as the msgpack array of its values in the order of the protocol's
fields (``[1, table_id, round, ...]``, a played hand likewise, the commitment and the
seed as 32 bytes instead of 64 hex digits): 194 bytes where the map the history reply
carries took 511, in every player's list of every round and in the archive. It is read
back as that map, validated by the protocol's own decoder, and sent. A record the
array would not give back exactly (one without its hands: a voided round) is stored as
the map, as every record was before issue 16; both are read.
"""

from __future__ import annotations

from typing import Any

import msgpack

from protocol.codec import as_map, decode_server
from protocol.messages import OkReply
from protocol.structs import HistoryPage, RoundRecord

_RID = "log"
_FORMAT = 1  # the first item of a record stored as an array
# Format 1's fields, written out: a record stored in it must read back the same when
# the protocol's records grow a field (such a record is then stored as the map).
_RECORD = (
    "table_id", "round", "ended_ms", "seat", "outcome", "bet", "bonus_bet", "payout",
    "commission", "bonus_payout", "balance", "commitment", "seed", "cards", "hand",
    "dealer", "high", "low", "bonus_class", "void_reason",
)  # fmt: skip
_HAND = ("hand", "high", "low", "high_name", "low_name", "house_way", "foul")
_HANDS = ("hand", "dealer")
_HEX = ("commitment", "seed")


def pack_record(record: RoundRecord) -> bytes:
    """The stored bytes of one round record (see the module docstring)."""
    page = as_map(OkReply(rid=_RID, result=HistoryPage(rounds=(record,))))
    mapped: dict[str, Any] = page["result"]["rounds"][0]
    as_map_bytes: bytes = msgpack.packb(mapped, use_bin_type=True)
    try:
        packed: bytes = msgpack.packb(_values(mapped), use_bin_type=True)
    except (KeyError, ValueError, TypeError):
        return as_map_bytes
    # Kept as an array only if it reads back as exactly the map would have.
    if read_record(packed) != msgpack.unpackb(as_map_bytes, raw=False):
        return as_map_bytes
    return packed


def read_record(blob: bytes) -> dict[str, Any]:
    """A stored record as the protocol's map (either form; {} for something else)."""
    stored = msgpack.unpackb(blob, raw=False)
    if isinstance(stored, list) and stored and stored[0] == _FORMAT:
        return _mapped(stored)
    return stored if isinstance(stored, dict) else {}


def _values(mapped: dict[str, Any]) -> list[Any]:
    out: list[Any] = [_FORMAT]
    for name in _RECORD:
        value = mapped[name]
        if name in _HANDS and value is not None:
            value = [value[k] for k in _HAND]
        elif name in _HEX and value is not None:
            value = bytes.fromhex(value)
        out.append(value)
    return out


def _mapped(values: list[Any]) -> dict[str, Any]:
    mapped: dict[str, Any] = {}
    for name, stored in zip(_RECORD, values[1:], strict=True):
        value = stored
        if name in _HANDS and stored is not None:
            value = dict(zip(_HAND, stored, strict=True))
        elif name in _HEX and isinstance(stored, bytes):
            value = stored.hex()
        mapped[name] = value
    mapped["wagers"] = _bonus_wagers(mapped)
    return mapped


def _bonus_wagers(mapped: dict[str, Any]) -> list[dict[str, Any]]:
    """The ``wagers`` (protocol minor 6) of a record whose only side bet was the bonus
    bet, from its bonus fields: format 1 does not store them. A record whose list says
    more (another side bet, a void's refund) does not read back so, and is stored as
    the map (:func:`pack_record`)."""
    stake = mapped.get("bonus_bet")
    if not stake:
        return []
    return [
        {
            "kind": "bonus",
            "stake": stake,
            "payout": mapped.get("bonus_payout"),
            "pay_class": mapped.get("bonus_class"),
        }
    ]


def record_table(blob: bytes) -> str | None:
    """The table of a stored record (None if it has none: it is then never matched)."""
    table = read_record(blob).get("table_id")
    return table if isinstance(table, str) else None


def record_ended_ms(blob: bytes) -> int:
    """When a stored record's round ended (epoch ms; 0 if it says nothing)."""
    ended = read_record(blob).get("ended_ms")
    return ended if isinstance(ended, int) else 0


def unpack_records(blobs: list[bytes], next_cursor: str | None) -> HistoryPage:
    """A history page of stored records, each checked by the protocol's decoder."""
    result: dict[str, object] = {
        "kind": "history",
        "rounds": [read_record(b) for b in blobs],
    }
    if next_cursor is not None:
        result["next_cursor"] = next_cursor
    decoded = decode_server(msgpack.packb({"type": "ok", "rid": _RID, "result": result}))
    assert isinstance(decoded, OkReply)
    assert isinstance(decoded.result, HistoryPage)
    return decoded.result
