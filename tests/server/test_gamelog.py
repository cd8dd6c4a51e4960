"""Game logs as stored: a record packed as an array of its values, read back as the
protocol's map; records stored as maps (earlier versions) still read."""

from __future__ import annotations

import dataclasses

import msgpack

from protocol.codec import as_map
from protocol.examples import RECORD
from protocol.messages import OkReply
from protocol.structs import HandView, HistoryPage, RoundRecord, WagerResult
from server import gamelog
from server.gamelog import pack_record, read_record, record_ended_ms, record_table, unpack_records

# The protocol's own example of a played round, and the same round voided.
PLAYED = RECORD
VOIDED = dataclasses.replace(
    RECORD,
    outcome="void",
    bonus_bet=0,
    payout=100,
    commission=0,
    bonus_payout=0,
    seed=None,
    cards=(),
    hand=None,
    dealer=None,
    high=None,
    low=None,
    bonus_class=None,
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
    assert (record_table(blob), record_ended_ms(blob)) == (PLAYED.table_id, PLAYED.ended_ms)
    assert unpack_records([blob], None).rounds == (PLAYED,)
    assert pack_record(PLAYED) == blob  # the same bytes again: delivered once by them


def test_every_record_reads_back_as_it_was_whatever_its_form() -> None:
    for record in (PLAYED, VOIDED):
        assert read_record(pack_record(record)) == as_protocol(record)
        assert unpack_records([pack_record(record)], None).rounds == (record,)


def test_a_record_stored_as_a_map_by_an_earlier_version_is_read() -> None:
    earlier = msgpack.packb(as_protocol(PLAYED))
    assert read_record(earlier) == as_protocol(PLAYED)
    assert record_table(earlier) == PLAYED.table_id
    assert unpack_records([earlier, pack_record(VOIDED)], "c").rounds == (PLAYED, VOIDED)


def test_format_1_names_every_field_of_the_protocol_record() -> None:
    """The array's fields are written out in the store (they must not move with the
    protocol); today they are the protocol's, in its order, but ``wagers`` (minor 6),
    which an array gives from its bonus fields."""
    assert tuple(f.name for f in dataclasses.fields(RoundRecord)) == (*gamelog._RECORD, "wagers")
    assert tuple(f.name for f in dataclasses.fields(HandView)) == gamelog._HAND


def test_a_record_with_a_side_bet_beyond_the_bonus_is_stored_as_the_map() -> None:
    """Format 1 stores the bonus bet's fields alone: a record whose ``wagers`` say more
    (an Envy win) is kept whole, as the map, and reads back as it was."""
    envy = dataclasses.replace(
        PLAYED, wagers=(*PLAYED.wagers, WagerResult("envy", 0, 50, "four_of_a_kind"))
    )
    blob = pack_record(envy)
    assert isinstance(msgpack.unpackb(blob), dict)
    assert unpack_records([blob], None).rounds == (envy,)
    assert isinstance(msgpack.unpackb(pack_record(PLAYED)), list)
