"""Tables live on three server processes sharing one Redis: a table created in the
catalog is played from every node, a changed limit applies at the next round on all of
them, and a table closed with players seated returns every chip.

The processes run ``python -m server`` against the session's Redis (flushed first), as
an operator runs three ``paigow-server --redis-url ...``; the catalog is changed as the
operator changes it: the create, whose time to playable is measured, through the
operator's API of the first node (an admin token minted by ``paigow-server admin
token``), the change and the close by ``paigow-server table ...``.
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import aiohttp
import pytest
import redis.asyncio

from protocol.messages import (
    Bet,
    GetTableInfo,
    HouseWay,
    Join,
    ListTables,
    PhaseChange,
    Rebuy,
    Results,
    Snapshot,
)
from protocol.replies import ErrorReply, OkReply
from protocol.structs import TableList
from server.catalog import close_table, create_table
from server.store import TableCatalog, TableStatus
from server.store.players.accounts import AccountStore
from server.store.tables.parts import stored_state
from server.store.tables.store import TableStore
from server.table.state import TableState
from tests.e2e.process_helpers import SECRET, audit_passes, start
from tests.helpers import until
from tests.server.helpers import Client, close_all
from tests.server.processes import ServerProcess, free_port, run_cli

LIVE = {
    "id": "live",
    "name": "Live",
    "min_bet": 10,
    "max_bet": 100,
    "denominations": [5, 10, 25],
    "min_buy_in": 100,
    "max_buy_in": 5000,
    "betting_ms": 20_000,  # ends as soon as every seated player bet
    "dealing_ms": 100,
    "setting_ms": 60_000,  # ends when every hand is set (the test says when)
    "revealing_ms": 100,
    "settling_ms": 300,
}


async def playable(client: Client, table_id: str, began: float, within: float) -> float:
    """Seconds from ``began`` until ``client`` sees ``table_id`` in its node's lobby and
    is seated at it (joins that found the table not yet held are asked again)."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        listed = await client.call(ListTables)
        lobby = listed.result if isinstance(listed, OkReply) else None
        assert lobby is None or isinstance(lobby, TableList)
        if lobby is not None and any(t.table_id == table_id for t in lobby.tables):
            reply = await client.call(Join, table_id=table_id, buy_in=1000)
            if isinstance(reply, OkReply):
                return time.monotonic() - began
            assert isinstance(reply, ErrorReply)
            if reply.code == "already_seated":  # an `unavailable` that was applied
                return time.monotonic() - began
            assert reply.code in ("no_such_table", "unavailable", "rate_limited"), reply
        await asyncio.sleep(0.01)
    raise AssertionError(f"{client.label}: {table_id} not playable within {within} s")


def table_cli(redis_url: str, *args: str) -> str:
    done = run_cli(["--redis-url", redis_url, "table", *args])
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


async def in_phase(client: Client, phase: str, round_no: int = 1) -> None:
    """Wait until ``client`` last heard ``live`` enter ``phase`` (a snapshot's or an
    event's) in round ``round_no`` or a later one."""

    def there() -> bool:
        heard = [m for m in client.table("live") if isinstance(m, Snapshot | PhaseChange)]
        return bool(heard) and heard[-1].phase == phase and heard[-1].round >= round_no

    await client.wait(there, within=30)


async def house_way_everywhere(players: list[Client]) -> None:
    """Each player has the house set their hand: the round goes on to its end. Through
    the table's moves, as a client does (its holder, its lease lost on a loaded machine,
    may answer ``unavailable``); ``already_set`` says an earlier try was applied."""
    replies = await asyncio.gather(
        *(p.call_through_moves(HouseWay, table_id="live", mode="set") for p in players)
    )
    for p, reply in zip(players, replies, strict=True):
        applied = isinstance(reply, ErrorReply) and reply.code == "already_set"
        assert isinstance(reply, OkReply) or applied, f"{p.label}: {reply}"


async def bet_everywhere(players: list[Client], amount: int, round_no: int) -> None:
    """Each player bets ``amount`` once its node shows betting open at ``live``,
    through the table's moves (a bet again with its rid is applied once at most)."""
    for p in players:
        await in_phase(p, "betting", round_no)
    replies = await asyncio.gather(
        *(p.call_through_moves(Bet, table_id="live", amount=amount) for p in players)
    )
    for p, reply in zip(players, replies, strict=True):
        assert isinstance(reply, OkReply), f"{p.label}: {reply}"


@pytest.mark.asyncio
@pytest.mark.slow
async def test_a_table_created_changed_and_closed_live_on_three_nodes(
    redis_url: str,
    redis_client: redis.asyncio.Redis,
    tmp_path: Path,
    processes: list[ServerProcess],
) -> None:
    for i in range(3):
        (tmp_path / f"n{i}").mkdir()
    admin_port = free_port()
    nodes = [
        start(
            processes,
            redis_url,
            tmp_path / f"n{i}",
            setting_ms=2000,
            lease_ms=1000,
            name=f"n{i}",
            extra=["--admin-port", str(admin_port)] if i == 0 else (),
        )
        for i in range(3)
    ]
    for n in nodes:
        await n.started(within=60)
    minted = run_cli(
        ["--redis-url", redis_url, "--token-secret", SECRET, "admin", "token", "--name", "floor"]
    )
    assert minted.returncode == 0, minted.stderr
    admin_token = minted.stdout.strip()
    players = [await Client.hello(n.url, label=f"p{i}") for i, n in enumerate(nodes)]
    try:
        accounts = AccountStore(redis_client)
        before = {p.player: await accounts.balance(p.player) for p in players}

        # Created through the operator's API: every node's client sees it in its lobby
        # and sits down.
        async with aiohttp.ClientSession() as http:
            began = time.monotonic()
            async with http.post(
                f"http://127.0.0.1:{admin_port}/api/v1/tables",
                json=LIVE,
                headers={"Authorization": f"Bearer {admin_token}"},
            ) as response:
                assert response.status == 201, await response.text()
        took = await asyncio.gather(*(playable(p, "live", began, 30) for p in players))
        print(
            "create (through the API) to playable: "
            + ", ".join(f"n{i} {s * 1000:.0f} ms" for i, s in enumerate(took))
            + f"; all three {max(took) * 1000:.0f} ms"
        )
        holder = (await TableStore(redis_client).leases.holders(["live"]))[0]
        assert holder is not None  # one node holds it: the others forward to it

        # A bet over the limit is refused from every node; a round is played.
        for p in players:
            await in_phase(p, "betting")
            over = await p.call_through_moves(Bet, table_id="live", amount=200)
            assert isinstance(over, ErrorReply), over
            assert over.code == "bet_limits", over
        await bet_everywhere(players, 50, 1)
        await in_phase(players[0], "dealing")

        # Changed while the round is in play: the round keeps its limits, the next
        # round takes the new ones, on every node.
        listed = json.loads(table_cli(redis_url, "change", "live", "max_bet=300", "--json"))
        assert listed[0]["max_bet"] == 300
        for p in players:

            async def shows_new_limit(p: Client = p) -> bool:
                return bool((await p.ok(GetTableInfo, table_id="live")).max_bet == 300)

            await until(shows_new_limit, 10, f"{p.label}'s node to show max_bet 300", every=0.1)

        async def pending() -> TableState | None:
            stored = await TableStore(redis_client).load("live")
            state = stored_state(stored) if stored is not None else None
            return state if state is not None and state.pending_config is not None else None

        during = await until(pending, 10, "the change to be pending at the holder")
        assert during.phase in ("dealing", "setting")
        assert during.round_no == 1
        assert during.config.max_bet == 100  # the round in play keeps its limits
        assert during.pending_config is not None
        assert during.pending_config.max_bet == 300
        await house_way_everywhere(players)
        await bet_everywhere(players, 200, 2)  # over the old limit: accepted everywhere

        # Closed with the players seated and the round in play: no new bet, the round
        # ends, every seat stands up with its chips back to the account.
        await in_phase(players[0], "dealing", 2)
        table_cli(redis_url, "close", "live")
        for p in players:  # from every node, as soon as the holder closes it

            async def refused(p: Client = p) -> bool:
                reply = await p.call(Rebuy, table_id="live", amount=100)
                assert isinstance(reply, ErrorReply), reply
                return reply.code == "table_closing"

            await until(refused, 10, f"{p.label}'s rebuy to be refused: table_closing", every=0.1)
        await house_way_everywhere(players)  # the round in play finishes

        async def closed() -> bool:
            read = await TableCatalog(redis_client).read()
            return read.tables["live"].status is TableStatus.CLOSED

        await until(closed, 30, "the table to be closed")
        for p in players:

            async def gone(p: Client = p) -> bool:
                lobby = await p.ok(ListTables)
                return all(t.table_id != "live" for t in lobby.tables)

            await until(gone, 10, f"the table to leave {p.label}'s lobby", every=0.1)
        stored = await TableStore(redis_client).load("live")
        assert stored is not None
        state = stored_state(stored)
        assert state.closing
        assert not state.occupied()
        after = {p.player: await accounts.balance(p.player) for p in players}
        moved = sum((after[p] or 0) - (before[p] or 0) for p in after)
        assert moved == -state.house  # what the players lost the house won, no more
        assert "live" not in table_cli(redis_url, "list")
        assert "closed" in table_cli(redis_url, "list", "--all")
        await close_all(players)
        assert audit_passes(redis_url).strip().endswith("audit passed")
    finally:
        await close_all(players)


@pytest.mark.asyncio
@pytest.mark.slow
async def test_a_table_whose_holder_dies_mid_close_is_closed_by_the_next_holder(
    redis_url: str,
    redis_client: redis.asyncio.Redis,
    tmp_path: Path,
    processes: list[ServerProcess],
) -> None:
    """The holder stores the close (no new bet, the round in play goes on) and is
    killed before the round ends: the table's next holder finds the catalog saying
    ``closing`` and the state closing, finishes the round, stands every seat up with
    its chips back to the account (the killed node's player too, away by then) and
    closes the table; every chip is accounted for."""
    for i in range(3):
        (tmp_path / f"n{i}").mkdir()
    nodes = [
        start(
            processes, redis_url, tmp_path / f"n{i}", setting_ms=2000, lease_ms=1000, name=f"n{i}"
        )
        for i in range(3)
    ]
    for n in nodes:
        await n.started(within=60)
    players = [await Client.hello(n.url, label=f"p{i}") for i, n in enumerate(nodes)]
    try:
        accounts = AccountStore(redis_client)
        before = {p.player: await accounts.balance(p.player) for p in players}
        began = time.monotonic()
        # Nobody sets a hand: the holder that takes over sets them at the deadline.
        await create_table(TableCatalog(redis_client), {**LIVE, "setting_ms": 4000})
        await asyncio.gather(*(playable(p, "live", began, 30) for p in players))
        await bet_everywhere(players, 50, 1)
        await in_phase(players[0], "dealing")
        await close_table(TableCatalog(redis_client), "live")

        async def closing() -> TableState | None:
            stored = await TableStore(redis_client).load("live")
            state = stored_state(stored) if stored is not None else None
            return state if state is not None and state.closing else None

        during = await until(closing, 10, "the holder to store the close")
        assert during.phase in ("dealing", "setting")  # the round still in play
        assert len(during.occupied()) == 3
        holder = (await TableStore(redis_client).leases.holders(["live"]))[0]
        assert holder is not None
        dead = next(i for i in range(3) if holder[1].startswith(f"n{i}#"))
        nodes[dead].kill()
        alive = [p for i, p in enumerate(players) if i != dead]

        async def closed() -> bool:
            read = await TableCatalog(redis_client).read()
            return read.tables["live"].status is TableStatus.CLOSED

        await until(closed, 30, "the next holder to close the table")
        stored = await TableStore(redis_client).load("live")
        assert stored is not None
        state = stored_state(stored)
        assert not state.occupied()
        assert state.round_no == 1  # the round in play finished; no other began
        for p in alive:  # each was dealt in and settled, then stood up

            async def settled(p: Client = p) -> bool:
                return any(isinstance(m, Results) for m in p.table("live"))

            await until(settled, 10, f"{p.label} to hear the results")
        after = {p.player: await accounts.balance(p.player) for p in players}
        moved = sum((after[p] or 0) - (before[p] or 0) for p in after)
        assert moved == -state.house
        await close_all(players)
        assert audit_passes(redis_url).strip().endswith("audit passed")
    finally:
        await close_all(players)
