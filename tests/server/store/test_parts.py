"""The state in parts: what a change writes, what a stored table refuses to read, and
that tables stored by earlier servers read the same.

The property test (``test_properties.py``, through the harness) checks that the parts
of every step, written over the stored ones, give the new state exactly.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import msgpack
import pytest

from server.rules.options import HouseWay, RuleOptions
from server.rules.splits import FoulPolicy
from server.rules.values import WheelRank
from server.store.tables import parts as pt
from server.store.tables.parts import (
    CONFIG_PART,
    DEAL_PART,
    HEADER_PART,
    PENDING_CONFIG_PART,
    from_bytes,
    from_parts,
    seat_part,
    to_parts,
)
from server.table.events import PlaceBet, SitDown, Tick
from server.table.state import (
    Phase,
    Seat,
    SeatResult,
    SetBy,
    TableConfig,
    TableState,
    WagerResult,
    evolve,
    new_table,
)
from tests.server.table.helpers import (
    CONFIG,
    Harness,
    legacy_blob,
    legacy_parts,
    plain_parts,
    seed,
)

T0 = 1_000_000
DATA = Path(__file__).parent / "data"


def six_seated() -> Harness:
    h = Harness(state=new_table(CONFIG), now=T0)
    for i in range(6):
        h.accounts[f"p{i}"] = 5000
        h.apply(SitDown(f"p{i}", f"Player {i}", i, 1000, seed(1)))
    return h


def test_a_bet_writes_the_header_and_its_seat_only() -> None:
    h = six_seated()
    h.apply(PlaceBet("p0", 100))  # betting is open; p0 is not the last to bet
    before = h.state
    h.apply(PlaceBet("p3", 50, 5))
    written = to_parts(h.state, before)
    assert set(written) == {HEADER_PART, seat_part(3)}
    # A thirtieth of what storing the whole state wrote (53 bytes of 1,552; 388 in the
    # parts of format 2).
    assert 25 * sum(map(len, written.values())) < len(legacy_blob(h.state))


def test_every_part_when_nothing_is_stored() -> None:
    state = six_seated().state
    parts = to_parts(state, None)
    every = {HEADER_PART, DEAL_PART, CONFIG_PART, PENDING_CONFIG_PART}
    assert set(parts) == every | {seat_part(i) for i in range(6)}
    assert from_parts(parts) == state
    empty = new_table(CONFIG)
    assert msgpack.unpackb(to_parts(empty, None)[seat_part(5)]) is None  # a part too


def test_every_part_clears_a_pending_config_stored_before() -> None:
    """A writer that does not know what is stored (a commit of its failed) writes the
    pending config too when there is none: the failed commit may have stored one, and
    it must not come back when the table is read."""
    state = six_seated().state
    pending = evolve(state, pending_config=replace(CONFIG, max_bet=2000), version=state.version + 1)
    applied = evolve(pending, pending_config=None, version=pending.version + 1)
    stored = to_parts(pending, state)
    assert PENDING_CONFIG_PART in stored
    stored = {**to_parts(state, None), **stored, **to_parts(applied, None)}
    assert from_parts(stored) == applied
    assert from_parts(stored).pending_config is None


def test_a_new_config_is_written_and_an_equal_rebuilt_one_too() -> None:
    state = six_seated().state
    changed = evolve(state, config=replace(CONFIG, max_bet=2000), version=state.version + 1)
    assert set(to_parts(changed, state)) == {HEADER_PART, CONFIG_PART}
    # Identity is the test: an equal config rebuilt is written again (harmless).
    rebuilt = evolve(state, config=replace(CONFIG), version=state.version + 1)
    assert CONFIG_PART in to_parts(rebuilt, state)


def test_a_round_in_play_reads_back_equal() -> None:
    h = six_seated()
    for i in range(6):
        h.apply(PlaceBet(f"p{i}", 100))
    h.now += 2_000
    h.apply(Tick(seed(2)))
    assert h.state.phase is Phase.SETTING
    assert h.state.seed is not None
    assert h.state.hands is not None
    assert from_parts(h.parts) == h.state


def test_parts_missing_garbled_or_of_another_format_are_refused() -> None:
    state = six_seated().state
    parts = to_parts(state, None)
    for name in (HEADER_PART, DEAL_PART, CONFIG_PART, seat_part(5)):
        with pytest.raises(ValueError, match=f"part '{name}' is missing"):
            from_parts({k: v for k, v in parts.items() if k != name})
    for name in (HEADER_PART, CONFIG_PART, seat_part(2)):
        with pytest.raises(ValueError, match="not a stored table state"):
            from_parts({**parts, name: b"\xc1 garbage"})
        with pytest.raises(ValueError, match="not a stored table state"):
            from_parts({**parts, name: msgpack.packb({"what": 1})})
    _, header = msgpack.unpackb(parts[HEADER_PART])
    with pytest.raises(ValueError, match="unknown table state format 4"):
        from_parts({**parts, HEADER_PART: msgpack.packb([4, header])})
    seats = pt.HEADER_FIELDS.index("seats")
    with pytest.raises(ValueError, match="seat count"):
        from_parts({**parts, HEADER_PART: msgpack.packb([3, [*header[:seats], -1]])})
    _, old_header = msgpack.unpackb(legacy_parts(state)[HEADER_PART])
    with pytest.raises(ValueError, match="seat count"):
        from_parts({**parts, HEADER_PART: msgpack.packb([2, {**old_header, "seats": -1}])})
    # A record of format 3 has at most its fields; a record of format 2 (a map) is
    # not one of format 3.
    with pytest.raises(ValueError, match="not a record of 8 fields"):
        from_parts({**parts, HEADER_PART: msgpack.packb([3, [*header, 0]])})
    with pytest.raises(ValueError, match="not a record of 18 fields"):
        from_parts({**parts, seat_part(0): legacy_parts(state)[seat_part(0)]})
    # A whole-state blob is not a header, nor a header a blob.
    with pytest.raises(ValueError, match="format 1"):
        from_parts({**parts, HEADER_PART: legacy_blob(state)})
    with pytest.raises(ValueError, match="format 3"):
        from_bytes(parts[HEADER_PART])


def test_a_record_written_before_a_field_was_added_reads_with_its_default() -> None:
    """A field added to a record goes last, with a default: the arrays written before
    it, one short, read with that default."""
    state = six_seated().state
    parts = to_parts(state, None)
    seat = msgpack.unpackb(parts[seat_part(1)])
    # A seat with no side bet beyond the bonus bet is written without the last two
    # fields (the other side bets'), as release 0.1.0 wrote it.
    assert len(seat) == len(pt.SEAT_FIELDS) - 2
    assert seat[-1] is False  # fouled, the last field 0.1.0 wrote
    shorter = {**parts, seat_part(1): msgpack.packb(seat[:-1])}
    assert from_parts(shorter) == state
    _, header = msgpack.unpackb(parts[HEADER_PART])
    assert header[-1] == 0  # house, the last field of the header
    assert from_parts({**parts, HEADER_PART: msgpack.packb([3, header[:-1]])}) == state


def test_a_seat_takes_a_quarter_of_the_bytes_of_format_2() -> None:
    """Records as arrays, not maps keyed by field name: a seated player with a bet in
    about 40 bytes, where format 2 took about 167; the header and a seat are in every
    commit."""
    h = six_seated()
    h.apply(PlaceBet("p3", 100, 5))
    new, old = to_parts(h.state, None), legacy_parts(h.state)
    assert len(new[seat_part(3)]) <= 45
    assert len(old[seat_part(3)]) >= 160
    # The header (every commit) is a tenth of what it was; the deal (a few commits a
    # round) no larger than the header was.
    assert 10 * len(new[HEADER_PART]) < len(old[HEADER_PART])
    assert len(new[DEAL_PART]) < len(old[HEADER_PART])


def test_a_table_stored_whole_reads_back() -> None:
    h = six_seated()
    h.apply(PlaceBet("p1", 100, 5))
    assert from_bytes(legacy_blob(h.state)) == h.state


def test_the_state_writers_name_every_slot_in_order() -> None:
    """A field added to a record must be added to its writer in server/store/tables/parts.py."""
    seat = Seat(player="p", name="P", balance=1, low=(1, 2), set_by=SetBy.PLAYER)
    result = SeatResult(0, "p", "win", "win", "win", 1, 2, 0, 1, 2)
    table = TableState(config=TableConfig(table_id="t", name="T"), seats=(seat,))
    # The stored names are the slots, the bonus bet's as 0.1.0 stored it (read through
    # the records' properties) in place of the list of side bets, which ends them.
    assert set(Seat.__slots__) - {"side", "last_side"} == set(pt.SEAT_FIELDS) - {
        "bonus",
        "last_bonus",
        "side",
        "last_side",
    }
    assert pt.SEAT_FIELDS[-2:] == ("side", "last_side")
    assert set(SeatResult.__slots__) | {"bonus", "bonus_class", "bonus_payout"} == set(
        pt.RESULT_FIELDS
    )
    assert pt.RESULT_FIELDS[-1] == "wagers"
    # The header and the deal: every field but the configs, in slot order, the seats
    # (their count) in their place.
    configs = ("config", "pending_config", "closing")  # parts of their own
    deal = set(pt.DEAL_FIELDS)
    assert tuple(n for n in TableState.__slots__ if n in deal) == pt.DEAL_FIELDS
    header = tuple(n for n in TableState.__slots__ if n not in configs and n not in deal)
    assert header == pt.HEADER_FIELDS
    # The hand-written writers give one value per field, as the walk of the slots does.
    table = evolve(table, results=(result,))
    assert to_parts(table, None) == plain_parts(table)


def fixed_state() -> TableState:
    """A state with every kind of field set, none at its default where avoidable."""
    config = TableConfig(
        table_id="t9",
        name="Fixed",
        max_bet=2000,
        denominations=(5, 25),
        seats=3,
        setting_ms=20_000,
        rules=RuleOptions(
            wheel=WheelRank.LOWEST,
            foul=FoulPolicy.LOSE,
            commission_pct=4,
            house_way=HouseWay.PAIR_CLASSES,
        ),
    )
    ann = Seat(
        player="ann", name="Ann", balance=1_190, last_bet=100, last_side=(("bonus", 5),),
        low=(3, 17), set_by=SetBy.PLAYER,
    )  # fmt: skip
    bob = Seat(
        player="bob", name="Bob", balance=400, connected=False, disconnected_at=1_000_500,
        sit_out_rounds=2, sitting_out=True, missed=True, leaving=True, fouled=True,
        set_by=SetBy.HOUSE_WAY_TIMEOUT,
    )  # fmt: skip
    result = SeatResult(
        seat=0, player="ann", outcome="win", high="win", low="win", bet=100,
        payout=196, commission=4, net=91, balance=1_190,
        wagers=(WagerResult("bonus", 5, 0, "three_of_a_kind"),),
    )  # fmt: skip
    return TableState(
        config=config,
        version=41,
        seq=97,
        phase=Phase.SETTLING,
        deadline=1_004_000,
        round_no=7,
        seed=bytes(range(32)),
        commitment="ab" * 32,
        hands=tuple(tuple(range(7 * h, 7 * h + 7)) for h in range(4)),
        dealer_low=(50, 51),
        seats=(ann, None, bob),
        results=(result,),
        voided=None,
        house=-91,
    )


def stored_bytes(name: str) -> list[list[str]]:
    """The lines of a file of ``data/``, split in words, without its comment lines."""
    lines = (DATA / name).read_text().splitlines()
    return [line.split() for line in lines if line and not line.startswith("#")]


def test_parts_stored_by_earlier_servers_read_and_are_written_byte_for_byte() -> None:
    """The format is a promise to every table in Redis: the parts the writer of format
    3 stored for :func:`fixed_state` (kept in ``data/``) read back as that state, and
    the writer of today gives the very same bytes."""
    stored = {name: bytes.fromhex(hexed) for name, hexed in stored_bytes("table_parts_v3.txt")}
    state = fixed_state()
    assert from_parts(stored) == state
    written = to_parts(state, None)
    # Every part now includes the pending config, None here (an absent one reads so).
    assert written.pop(PENDING_CONFIG_PART) == msgpack.packb(None)
    assert written == stored


def test_parts_stored_by_the_writer_of_format_2_read() -> None:
    """The parts the first writer of parts (format 2, each record a map keyed by field
    name) stored for :func:`fixed_state` read back as that state: tables in Redis at
    the upgrade are taken over, and their first commit writes every part anew."""
    stored = {name: bytes.fromhex(hexed) for name, hexed in stored_bytes("table_parts_v2.txt")}
    state = fixed_state()
    assert from_parts(stored) == state
    assert legacy_parts(state) == stored  # the tests' stand-in for that writer


def test_a_table_stored_whole_by_earlier_servers_reads() -> None:
    """A table stored whole (format 1), as servers before parts left it."""
    [[hexed]] = stored_bytes("table_whole_v1.txt")
    raw = bytes.fromhex(hexed)
    assert from_bytes(raw) == fixed_state()
    assert legacy_blob(fixed_state()) == raw  # the tests' stand-in for that writer
