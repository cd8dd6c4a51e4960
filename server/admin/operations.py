"""What an operator can do, once, for the API (:mod:`server.admin.api`) and the
``paigow-server`` commands alike: each function takes the stores and answers plain
data (JSON-ready dicts and lists), so the console, the API and the command line move
chips, end sessions and drain nodes by the same code.

Refusals raise :class:`~server.store.MoveRefused` (a move the account refused, nothing
written), :class:`NotFound` or :class:`Refused` (typed, with a code), or ``ValueError``
(bad arguments); the store's own errors pass through.
"""

from __future__ import annotations

import re
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import asdict
from typing import Any

from server.archive import Archive
from server.cluster import wire
from server.cluster.placement import assign, node_name
from server.store import (
    AuditReport,
    LedgerEntry,
    LiveNodes,
    Move,
    Moved,
    StoredTable,
    Stores,
    stored_state,
)
from server.table.state import Phase, TableState

LEDGER_PAGE = 20
"""Ledger entries in a player's look-up (more by pages: :func:`ledger`)."""

LEDGER_ID = re.compile(r"\d{1,20}-\d{1,20}")
"""A ledger entry's id (a Redis stream id)."""

SEARCH_LIMIT = 50
"""Accounts a search answers at most."""


class NotFound(LookupError):
    """What was named does not exist: ``code`` says what (``unknown_player``,
    ``unknown_node``, ``unknown_table``)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


class Refused(ValueError):
    """A request the server will not carry out as things stand (``code``: e.g.
    ``last_node``)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


def table_money(stored: StoredTable) -> tuple[int, int, int]:
    """A stored table's money for the audit: (table balances, held bets, house)."""
    return stored_state(stored).money()


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


# --- players ------------------------------------------------------------------------


async def move(
    stores: Stores,
    kind: Move,
    player: str,
    *,
    key: str,
    reason: str,
    by: str,
    amount: int = 0,
    create: bool = False,
    entry: str = "",
) -> dict[str, Any]:
    """A credit, debit or reversal (:meth:`~server.store.AccountStore.operate`), as
    the API answers it."""
    done: Moved = await stores.accounts.operate(
        kind, player, key=key, reason=reason, by=by, amount=amount, create=create, entry=entry
    )
    return {
        "player": player,
        "move": kind.value,
        "key": key,
        "applied": done.applied,
        "amount": done.amount,
        "balance": done.balance,
        "entry": done.entry,
    }


def _entry(e: LedgerEntry) -> dict[str, Any]:
    out = asdict(e)
    # An entry's id is its time in ms, then a sequence number (Redis's stream ids).
    out["at_ms"] = int(e.entry.split("-", 1)[0])
    return out


async def ledger(
    stores: Stores, player: str, count: int = LEDGER_PAGE, before: str = "+"
) -> list[dict[str, Any]]:
    """``player``'s newest ledger entries in Redis, newest first, before ``before``."""
    if not 1 <= count <= 500:
        raise ValueError("count is 1 to 500")
    if before != "+" and not LEDGER_ID.fullmatch(before):
        raise ValueError(f"not a ledger entry id: {before!r}")
    return [_entry(e) for e in await stores.accounts.ledger(player, count, before)]


async def player_view(stores: Stores, player: str) -> dict[str, Any]:
    """A player as the operator looks them up: balance, display name, guest or not,
    sessions (the live nodes where they are connected, when their sessions were last
    ended), seats and the newest ledger entries; :class:`NotFound` with no account."""
    accounts = stores.accounts
    balance = await accounts.balance(player)
    if balance is None:
        raise NotFound("unknown_player", f"no account {player!r}")
    flags = await accounts.account_flags(player)
    names = await accounts.display_names([player])
    live = (await live_nodes(stores)).expires
    nodes = [i for i in await stores.nodes.connected_on(player) if i in live]
    return {
        "player": player,
        "name": names.get(player),
        "balance": balance,
        "guest": bool(flags.get("guest")),
        "closed_ms": flags.get("closed"),
        "seen_ms": flags.get("seen"),
        "sessions": {
            "connected_on": sorted({node_name(i) for i in nodes}),
            "revoked_ms": await stores.sessions.revoked_at(player),
        },
        "seats": await stores.nodes.seated_tables(player),
        "ledger": await ledger(stores, player),
    }


async def search(stores: Stores, query: str = "") -> list[dict[str, Any]]:
    """Accounts whose player id or display name holds ``query`` (any case; all of
    them for ""), sorted by player, at most :data:`SEARCH_LIMIT`."""
    listed = await stores.accounts.list_accounts()
    names = await stores.accounts.display_names([p for p, _ in listed])
    q = query.strip().lower()
    rows = [
        {"player": p, "name": names.get(p), "balance": b}
        for p, b in listed
        if not q or q in p.lower() or q in (names.get(p) or "").lower()
    ]
    return rows[:SEARCH_LIMIT]


async def revoke_sessions(stores: Stores, player: str) -> dict[str, Any]:
    """End ``player``'s sessions (``paigow-server session revoke``): their connections
    close on every node, their resumes are refused."""
    heard = await stores.sessions.revoke(player, _now_ms())
    return {"player": player, "nodes_told": heard}


# --- the audit ----------------------------------------------------------------------


AuditExtra = Callable[[AuditReport], Awaitable[None]]
"""A further check the audit adds to its report (wallet mode's: the wallet's sums)."""


async def audit(
    stores: Stores, archive: Archive | None, extra: AuditExtra | None = None
) -> dict[str, Any]:
    """The audit (``paigow-server audit``): its sums, problems, notes and text; ``extra``
    adds its check to the report (wallet mode: the wallet's debits and credits)."""
    report = await stores.audit(table_money, archive=archive)
    if extra is not None:
        await extra(report)
    return {
        "ok": report.ok,
        "credited": report.credited,
        "removed": report.removed,
        "accounts": report.accounts,
        "accounts_total": report.accounts_total,
        "tables": report.tables,
        "tables_total": report.tables_total,
        "held_total": report.held_total,
        "house_total": report.house_total,
        "meters_total": report.meters_total,
        "jackpot_house_total": report.jackpot_house_total,
        "in_transit": report.in_transit,
        "ledger_entries": report.ledger_entries,
        "problems": list(report.problems),
        "notes": list(report.notes),
        "text": report.explain(),
    }


# --- nodes --------------------------------------------------------------------------


async def live_nodes(stores: Stores) -> LiveNodes:
    """The live node instances: none on a Redis Cluster, where a node stays alone and
    registers nowhere (the nodes' shared data is not split by slot)."""
    if stores.redis_cluster:
        return LiveNodes(now=0, expires={})
    return await stores.nodes.live_nodes()


async def nodes(stores: Stores, table_ids: Sequence[str]) -> dict[str, Any]:
    """The live nodes (name, instance, URL, tables held, registration left) and, for
    each of ``table_ids``, its holder and where the placement puts it
    (``paigow-server nodes``)."""
    live = await live_nodes(stores)
    info = await stores.nodes.node_info(live.instances)
    ids = list(table_ids)
    holders = await stores.tables.leases.holders(ids)
    held = {t: h[1] for t, h in zip(ids, holders, strict=True) if h is not None}
    placed = assign(ids, live.instances)
    return {
        "nodes": [
            {
                "name": node_name(i),
                "instance": i,
                "url": info[i].get("url"),
                "started_s": int(info[i]["started"]) if "started" in info[i] else None,
                # None: a node of 0.1.0, which did not announce its release
                "release": info[i].get("release"),
                "tables_held": sum(1 for h in held.values() if h == i),
                "registration_left_ms": live.expires[i] - live.now,
            }
            for i in live.instances
        ],
        "tables": [
            {
                "table": t,
                "holder": node_name(held[t]) if t in held else None,
                "holder_live": t in held and held[t] in live.expires,
                "placed_on": node_name(placed[t]) if t in placed else None,
            }
            for t in ids
        ],
    }


async def drain(stores: Stores, name: str, sender: str) -> dict[str, Any]:
    """Ask every live instance of node ``name`` to drain, as on SIGTERM: it hands its
    tables to the other nodes, closes its connections (1001: they resume elsewhere)
    and stops. Refused (``last_node``) when no other node would be left to take its
    tables; :class:`NotFound` when no live node has that name. ``sender``: who asks
    (the node relaying an API call, or a command)."""
    live = (await live_nodes(stores)).instances
    targets = [i for i in live if node_name(i) == name]
    if not targets:
        raise NotFound("unknown_node", f"no live node named {name!r}")
    if len(targets) == len(live):
        raise Refused("last_node", f"{name} is the only live node: nobody would take its tables")
    told = 0
    for instance in targets:
        told += int(
            await stores.nodes.publish(stores.nodes.keys.node_channel(instance), wire.drain(sender))
        )
    return {"node": name, "instances": targets, "told": told}


# --- tables -------------------------------------------------------------------------


def _seat_view(index: int, state: TableState) -> dict[str, Any] | None:
    seat = state.seats[index]
    if seat is None:
        return None
    return {
        "seat": index,
        "player": seat.player,
        "name": seat.name,
        "balance": seat.balance,
        "bet": seat.bet,
        "bonus": seat.bonus,
        "side_bets": dict(seat.side),  # every side bet held, the bonus bet included
        "connected": seat.connected,
        "sitting_out": seat.sitting_out,
        "leaving": seat.leaving,
    }


def table_view(state: TableState, holder: str | None) -> dict[str, Any]:
    """What the operator sees of a table: its settings, phase and round, its seats,
    money and last results; never a card (the deal, the seed) of a round in play."""
    c = state.config
    balances, held, house = state.money()
    return {
        "table": c.table_id,
        "name": c.name,
        "holder": holder,
        "version": state.version,
        "phase": state.phase.value,
        "round": state.round_no,
        "deadline_ms": state.deadline,
        "limits": {
            "min_bet": c.min_bet,
            "max_bet": c.max_bet,
            "bonus_min": c.bonus_min,
            "bonus_max": c.bonus_max,
            "min_buy_in": c.min_buy_in,
            "max_buy_in": c.max_buy_in,
            "seats": c.seats,
            # Every side bet offered: (min, max) of a stake; a riding one's qualifying
            # stake on the bet it rides on, and 0.
            "side_bets": {kind: list(c.limits(kind)) for kind in c.side_kinds},
        },
        "seats": [v for i in range(len(state.seats)) if (v := _seat_view(i, state)) is not None],
        "results": [
            {"seat": r.seat, "player": r.player, "outcome": r.outcome, "net": r.net}
            for r in state.results
        ]
        if state.phase is Phase.SETTLING
        else [],
        "voided": state.voided,
        "money": {"table_balances": balances, "held": held, "house": house},
        "pending_change": state.pending_config is not None,
    }


async def tables(stores: Stores, table_ids: Sequence[str]) -> list[dict[str, Any]]:
    """Each of ``table_ids`` as stored now (its last commit), with the node holding it;
    a table never played yet shows as ``idle`` with no version."""
    ids = list(table_ids)
    holders = await stores.tables.leases.holders(ids)
    out = []
    for table_id, holder in zip(ids, holders, strict=True):
        holder_name = node_name(holder[1]) if holder is not None else None
        stored = await stores.tables.load(table_id)
        if stored is None:
            out.append({"table": table_id, "holder": holder_name, "phase": "idle", "version": 0})
            continue
        try:
            out.append(table_view(stored_state(stored), holder_name))
        except ValueError as exc:  # written by another version: say so, list the others
            out.append({"table": table_id, "holder": holder_name, "unreadable": str(exc)})
    return out
