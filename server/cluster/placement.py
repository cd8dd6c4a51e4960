"""Which node should hold which table: rendezvous hashing with bounded loads.

Every node computes the same answer from the same two lists (the live nodes, the
tables of the tables file) without talking to the others (docs/DESIGN.md, "Several
nodes on one Redis"). Each table ranks the nodes by a hash of (node name, table): the
node ranked first holds it, unless it already holds its share, ``ceil(tables /
nodes)``; then the next one does. The share keeps the spread even with few tables
(plain rendezvous hashing gave 4, 1 and 1 of 6 tables to three nodes), and a node
joining or leaving still moves few tables: mostly the ones it wins or loses.

The hash is of the node's *name* (what an operator calls it), not of the instance
(which is new at every start): a node restarted under its name gets its tables back.
Pure: no I/O, no clock.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable, Mapping

INSTANCE_SEPARATOR = "#"
"""Between a node's name and the random part of its instance: ``node-1#9f2c41d0``."""


def node_name(instance: str) -> str:
    """The name part of a node instance."""
    return instance.split(INSTANCE_SEPARATOR, 1)[0]


def weight(name: str, table_id: str) -> int:
    """The rank of node ``name`` for ``table_id``: the higher, the earlier."""
    digest = hashlib.blake2b(f"{name}\0{table_id}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big")


def ranked(table_id: str, instances: Iterable[str]) -> list[str]:
    """The node instances in the order ``table_id`` prefers them (ties between two
    instances of one name broken by the instance, so that every node agrees)."""
    return sorted(instances, key=lambda i: (weight(node_name(i), table_id), i), reverse=True)


def assign(tables: Iterable[str], instances: Iterable[str]) -> dict[str, str]:
    """Table -> the node instance that should hold it; empty with no node.

    Tables are placed in order of how strongly they prefer their first node (then by
    id), each on the first node of its ranking that holds fewer than its share.
    """
    nodes = sorted(set(instances))
    table_ids = sorted(set(tables))
    if not nodes:
        return {}
    share = math.ceil(len(table_ids) / len(nodes))
    rankings = {t: ranked(t, nodes) for t in table_ids}
    # The strongest preferences first: a table its first node wants most is never the
    # one pushed to a second choice by a weaker claim.
    order = sorted(
        table_ids,
        key=lambda t: (-weight(node_name(rankings[t][0]), t), t),
    )
    load = dict.fromkeys(nodes, 0)
    placed: dict[str, str] = {}
    for t in order:
        node = next(n for n in rankings[t] if load[n] < share)
        placed[t] = node
        load[node] += 1
    return placed


def spread(placed: Mapping[str, str]) -> dict[str, list[str]]:
    """Node instance -> its tables, sorted (the inverse of :func:`assign`)."""
    out: dict[str, list[str]] = {}
    for table_id, node in sorted(placed.items()):
        out.setdefault(node, []).append(table_id)
    return out
