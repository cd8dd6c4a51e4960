"""``paigow-server nodes``: the live nodes, and which one holds each table; ``nodes drain
NAME``: that node hands its tables over and stops."""

from __future__ import annotations

import sys
from typing import Any

from server.admin import operations as ops
from server.catalog import list_tables
from server.cli.common import open_stores, whoami
from server.cluster.placement import assign, node_name
from server.config import Settings
from server.tables_file import load_tables


def add_parser(sub: Any) -> None:
    """``nodes [drain NAME]``."""
    nodes = sub.add_parser("nodes", help="the live nodes, and which one holds each table")
    nodes_sub = nodes.add_subparsers(dest="action")
    drain = nodes_sub.add_parser("drain", help="a node hands its tables over and stops")
    drain.add_argument("name")


async def drain(settings: Settings, name: str) -> int:
    """Ask node ``name`` to drain (exit 1: no such node, or refused)."""
    async with await open_stores(settings) as stores:
        try:
            done = await ops.drain(stores, name, f"cli:{whoami()}")
        except (ops.NotFound, ops.Refused) as exc:
            print(f"paigow-server: {exc}", file=sys.stderr)
            return 1
        print(f"{name}: asked to drain ({done['told']} processes told)")
        return 0


async def nodes(settings: Settings) -> int:
    """Print the live nodes, then each table's holder and where placement puts it."""
    async with await open_stores(settings) as stores:
        cluster = stores.nodes
        live = await ops.live_nodes(stores)
        info = await cluster.node_info(live.instances)
        table_ids = [v.table_id for v in await list_tables(stores.catalog)]
        if not table_ids:  # no server started yet: the tables it would seed
            table_ids = [t.table_id for t in load_tables(settings.tables_file)]
        holders = await stores.tables.leases.holders(table_ids)
        placed = assign(table_ids, live.instances)
        held = {t: h[1] for t, h in zip(table_ids, holders, strict=True) if h is not None}
        print("node\tinstance\turl\ttables held\tregistration left (ms)\trelease")
        for instance in live.instances:
            count = sum(1 for h in held.values() if h == instance)
            url = info[instance].get("url", "-")
            left = live.expires[instance] - live.now
            release = info[instance].get("release", "0.1.0")  # 0.1.0 announced none
            print(f"{node_name(instance)}\t{instance}\t{url}\t{count}\t{left}\t{release}")
        print()
        print("table\tholder\tplaced on")
        for table_id in table_ids:
            holder = held.get(table_id)
            shown = "-" if holder is None else node_name(holder)
            if holder is not None and holder not in live.expires:
                shown += " (not live)"
            target = placed.get(table_id)
            print(f"{table_id}\t{shown}\t{node_name(target) if target else '-'}")
        return 0
