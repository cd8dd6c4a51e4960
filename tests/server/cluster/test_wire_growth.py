"""Messages between nodes and the lobby summaries may grow between releases
(``server/cluster/wire.py``, ``server/cluster/lobby.py``): a
reader ignores trailing items it does not know, in a message and in each of its
items, and reads the rest as before; a kind it does not know is refused (the relay
logs and drops it)."""

from __future__ import annotations

from typing import Any

import msgpack
import pytest

from server.cluster import wire
from server.cluster.lobby import Summary, read_summary
from server.table.state import Phase


def grown(message: bytes, *extra: Any, inner: bool = False) -> bytes:
    """``message`` with ``extra`` items after its own (and after each item of its list
    of items, with ``inner``)."""
    value = msgpack.unpackb(message, raw=False)
    if inner:
        value[2] = [[*item, *extra] for item in value[2]]
    packed: bytes = msgpack.packb([*value, *extra], use_bin_type=True)
    return packed


def test_every_message_reads_the_same_with_items_added_after_its_own() -> None:
    table_message, private = wire.events("n#1", "t", [(7, (b"pub", {"p1": b"own"}))])
    for extra in ((), ("later", 1), ({"k": 1},)):
        assert wire.read_table_message(grown(table_message, *extra, inner=True)) == (
            wire.read_table_message(table_message)
        )
        assert wire.read_private(grown(private["p1"], *extra, inner=True)) == (
            "t",
            [(7, b"own")],
        )
        held = wire.held("n#1", 9)
        assert wire.read_table_message(grown(held, *extra)).held_seq == 9
        for request in (
            wire.call(1, "n#1", "p1", "s1", "Ann", b"frame"),
            wire.attach(2, "n#1", "p1", 4),
            wire.attach(3, "n#1", "p1", None),
            wire.presence(4, "n#1", "p1"),
        ):
            assert wire.read_request(grown(request, *extra)) == wire.read_request(request)
        for node_message in (
            wire.reply(5, [b"a", b"b"], 3),
            wire.not_here(6),
            wire.take("t"),
            wire.announced("n#2"),
            wire.drain("n#2"),
        ):
            assert wire.read_node_message(grown(node_message, *extra)) == (
                wire.read_node_message(node_message)
            )
        assert wire.read_resumed(grown(wire.resumed("n#1", "s1"), *extra)) == ("n#1", "s1")
        assert wire.read_joined(grown(wire.joined("n#3"), *extra)) == "n#3"


def test_a_kind_it_does_not_know_or_a_message_cut_short_is_refused() -> None:
    unknown: bytes = msgpack.packb(["later-kind", 1, 2], use_bin_type=True)
    for read in (wire.read_table_message, wire.read_request, wire.read_node_message):
        with pytest.raises(ValueError, match="unknown"):
            read(unknown)
    short: bytes = msgpack.packb(["call", 1, "n#1"], use_bin_type=True)
    with pytest.raises(ValueError, match="unknown request"):
        wire.read_request(short)
    assert wire.read_joined(unknown) is None


def test_a_lobby_summary_reads_the_same_with_items_added() -> None:
    plain = msgpack.packb(["betting", [["p1", 500], ["p2", 20]]])
    more = msgpack.packb(["betting", [["p1", 500, "x"], ["p2", 20, 1]], {"later": 1}])
    assert (
        read_summary(plain) == read_summary(more) == Summary(Phase.BETTING, {"p1": 500, "p2": 20})
    )
    assert read_summary(msgpack.packb(["betting"])) is None
    assert read_summary(msgpack.packb(["nonsense", []])) is None
