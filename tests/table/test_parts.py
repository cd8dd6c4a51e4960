"""The state in parts: what a change writes, and what a stored table refuses to read.

The property test (``test_properties.py``, through the harness) checks that the parts
of every step, written over the stored ones, give the new state exactly.
"""

from __future__ import annotations

from dataclasses import replace

import msgpack
import pytest

from server.table.events import PlaceBet, SitDown, Tick
from server.table.state import (
    CONFIG_PART,
    HEADER_PART,
    Phase,
    evolve,
    from_bytes,
    from_parts,
    new_table,
    seat_part,
    to_parts,
)
from tests.table.helpers import CONFIG, Harness, legacy_blob, seed

T0 = 1_000_000


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
    # About a quarter of what storing the whole state wrote (388 bytes of 1,552).
    assert 3 * sum(map(len, written.values())) < len(legacy_blob(h.state))


def test_every_part_when_nothing_is_stored() -> None:
    state = six_seated().state
    parts = to_parts(state, None)
    assert set(parts) == {HEADER_PART, CONFIG_PART, *(seat_part(i) for i in range(6))}
    assert from_parts(parts) == state
    empty = new_table(CONFIG)
    assert msgpack.unpackb(to_parts(empty, None)[seat_part(5)]) is None  # a part too


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
    for name in (HEADER_PART, CONFIG_PART, seat_part(5)):
        with pytest.raises(ValueError, match=f"part '{name}' is missing"):
            from_parts({k: v for k, v in parts.items() if k != name})
    for name in (HEADER_PART, CONFIG_PART, seat_part(2)):
        with pytest.raises(ValueError, match="not a stored table state"):
            from_parts({**parts, name: b"\xc1 garbage"})
        with pytest.raises(ValueError, match="not a stored table state"):
            from_parts({**parts, name: msgpack.packb({"what": 1})})
    _, header = msgpack.unpackb(parts[HEADER_PART])
    with pytest.raises(ValueError, match="unknown table state format 3"):
        from_parts({**parts, HEADER_PART: msgpack.packb([3, header])})
    with pytest.raises(ValueError, match="seat count"):
        from_parts({**parts, HEADER_PART: msgpack.packb([2, {**header, "seats": -1}])})
    # A whole-state blob is not a header, nor a header a blob.
    with pytest.raises(ValueError, match="format 1"):
        from_parts({**parts, HEADER_PART: legacy_blob(state)})
    with pytest.raises(ValueError, match="format 2"):
        from_bytes(parts[HEADER_PART])


def test_a_table_stored_whole_reads_back() -> None:
    h = six_seated()
    h.apply(PlaceBet("p1", 100, 5))
    assert from_bytes(legacy_blob(h.state)) == h.state
