"""Placement: every node computes the same spread, even, and stable as nodes come and go."""

from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st

from server.cluster.placement import assign, node_name, ranked, spread

TABLES = [f"t{i}" for i in range(60)]
NODES = ["node-1#aa", "node-2#bb", "node-3#cc"]


def test_the_name_of_an_instance() -> None:
    assert node_name("node-1#9f2c") == "node-1"
    assert node_name("plain") == "plain"


def test_every_table_placed_once_and_evenly() -> None:
    placed = assign(TABLES, NODES)
    assert set(placed) == set(TABLES)
    counts = sorted(len(ts) for ts in spread(placed).values())
    assert counts == [20, 20, 20]


def test_few_tables_still_spread_evenly() -> None:
    placed = assign(["a", "b", "c", "d", "e", "f"], NODES)
    assert sorted(len(ts) for ts in spread(placed).values()) == [2, 2, 2]


def test_the_same_answer_whatever_the_order_of_the_lists() -> None:
    assert assign(TABLES, NODES) == assign(list(reversed(TABLES)), list(reversed(NODES)))


def test_no_node_no_placement() -> None:
    assert assign(TABLES, []) == {}


def test_a_restarted_node_gets_its_tables_back() -> None:
    """The hash is of the name: a new instance of node-2 holds what the old one did."""
    before = assign(TABLES, NODES)
    after = assign(TABLES, ["node-1#aa", "node-2#dd", "node-3#cc"])
    assert {t for t, n in before.items() if n == "node-2#bb"} == {
        t for t, n in after.items() if n == "node-2#dd"
    }


def test_a_node_joining_moves_only_tables_to_it() -> None:
    """Of the tables that move when a fourth node joins, most go to the new node (the
    shares shrink, so a few others may shift), and never more than half in all."""
    before = assign(TABLES, NODES)
    after = assign(TABLES, [*NODES, "node-4#dd"])
    moved = [t for t in TABLES if before[t] != after[t]]
    to_new = [t for t in moved if after[t] == "node-4#dd"]
    assert len(to_new) == 15
    assert len(moved) <= len(TABLES) // 2
    assert len(to_new) >= 0.6 * len(moved)


def test_a_node_leaving_moves_only_its_tables_and_a_few_more() -> None:
    before = assign(TABLES, NODES)
    after = assign(TABLES, NODES[:2])
    lost = {t for t, n in before.items() if n == NODES[2]}
    moved = {t for t in TABLES if before[t] != after[t]}
    assert lost <= moved
    assert len(moved) <= len(lost) * 1.5


def test_ranking_is_a_total_order_of_the_instances() -> None:
    order = ranked("t1", NODES)
    assert sorted(order) == sorted(NODES)
    assert ranked("t1", list(reversed(NODES))) == order


@given(
    st.sets(st.text("abcdef", min_size=1, max_size=4), min_size=1, max_size=40),
    st.sets(st.text("xyz", min_size=1, max_size=3), min_size=1, max_size=6),
)
def test_shares_are_bounded(tables: set[str], names: set[str]) -> None:
    instances = [f"{n}#1" for n in names]
    placed = assign(tables, instances)
    share = math.ceil(len(tables) / len(instances))
    assert set(placed) == tables
    assert all(len(ts) <= share for ts in spread(placed).values())
