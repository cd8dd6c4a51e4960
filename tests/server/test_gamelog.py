"""Game logs as stored: a record packed as an array of its values, read back as the
protocol's map; records stored as maps (earlier versions) still read."""

from __future__ import annotations

import dataclasses

import msgpack

from protocol.codec import as_map
from protocol.messages import OkReply
from protocol.structs import HandView, HistoryPage, RoundRecord
from server import gamelog
from server.gamelog import pack_record, read_record, record_ended_ms, record_table, unpack_records

PLAYED = RoundRecord(
    table_id="main-1",
    round=12,
    ended_ms=1_700_000_000_123,
    seat=3,
    outcome="win",
    bet=100,
    bonus_bet=10,
    payout=195,
    commission=5,
    bonus_payout=0,
    balance=1_095,
    commitment="ab" * 32,
    seed="0f" * 32,
    cards=(48, 51, 36, 21, 9, 41, 10),
    hand=HandView(0, (48, 51, 36, 21, 41), (9, 10), "Pair of aces", "Pair of fours", False, False),
    dealer=HandView(6, (14, 7, 25, 13, 15), (35, 29), "Three fives", "Ten-nine", True, False),
    high="win",
    low="win",
    bonus_class=None,
    void_reason=None,
)
VOIDED = RoundRecord(
    table_id="main-1",
    round=13,
    ended_ms=1_700_000_060_000,
    seat=3,
    outcome="void",
    bet=100,
    bonus_bet=0,
    payout=100,
    commission=0,
    bonus_payout=0,
    balance=1_095,
    commitment="cd" * 32,
    void_reason="server_fault",
)


def as_protocol(record: RoundRecord) -> dict[str, object]:
    """The record as the history reply carries it, through msgpack."""
    page = as_map(OkReply(rid="r", result=HistoryPage(rounds=(record,))))
    decoded: dict[str, object] = msgpack.unpackb(msgpack.packb(page["result"]["rounds"][0]))
    return decoded


def test_a_played_round_is_stored_as_an_array_less_than_half_the_map() -> None:
    blob = pack_record(PLAYED)
    mapped = msgpack.packb(as_protocol(PLAYED))
    assert isinstance(msgpack.unpackb(blob), list)
    assert len(blob) * 2 < len(mapped)
    assert read_record(blob) == as_protocol(PLAYED)
    assert (record_table(blob), record_ended_ms(blob)) == ("main-1", 1_700_000_000_123)
    assert unpack_records([blob], None).rounds == (PLAYED,)
    assert pack_record(PLAYED) == blob  # the same bytes again: delivered once by them


def test_every_record_reads_back_as_it_was_whatever_its_form() -> None:
    for record in (PLAYED, VOIDED):
        assert read_record(pack_record(record)) == as_protocol(record)
        assert unpack_records([pack_record(record)], None).rounds == (record,)


def test_a_record_stored_as_a_map_by_an_earlier_version_is_read() -> None:
    earlier = msgpack.packb(as_protocol(PLAYED))
    assert read_record(earlier) == as_protocol(PLAYED)
    assert record_table(earlier) == "main-1"
    assert unpack_records([earlier, pack_record(VOIDED)], "c").rounds == (PLAYED, VOIDED)


def test_format_1_names_every_field_of_the_protocol_record() -> None:
    """The array's fields are written out in the store (they must not move with the
    protocol); today they are the protocol's, in its order."""
    assert tuple(f.name for f in dataclasses.fields(RoundRecord)) == gamelog._RECORD
    assert tuple(f.name for f in dataclasses.fields(HandView)) == gamelog._HAND
