"""A progressive jackpot shared by two tables on two server processes: contributions
from both tables, a forced top hand, the meter paid once and reset to its seed, though
the holder of the winning table is killed with SIGKILL at the worst moment, and the
audit clean after (issue 40, item 3's must-show).

The deal is fixed, and the kill placed, by the test's own entry point around the server
(tests/e2e/jackpot_seam.py); a ``python -m server`` given the same environment deals
from its seeds and kills nothing (the last test).
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
import redis.asyncio

from protocol.messages import Bet, Cards, Join
from protocol.structs import Wager
from server.store import AccountStore, JackpotStore, TableStore
from server.store.client.replies import stream_entries
from tests.e2e import jackpot_seam
from tests.e2e.process_helpers import SECRET, audit_passes
from tests.helpers import until
from tests.server.helpers import Client, close_all
from tests.server.processes import ServerProcess, server_args

SEED = 1000
WAGER = 10
CONTRIBUTION = WAGER * 5000 // 10_000  # chips a wager puts on the meter
BUY_IN = 500
WITHIN_S = 60.0  # every wait of the test is bounded by this (a loaded machine is slow)

TABLES = f"""
[[table]]
id = "t1"
name = "One"
min_bet = 10
max_bet = 500
denominations = [5, 10, 25]
min_buy_in = 100
max_buy_in = 5000
betting_ms = 30000
dealing_ms = 100
setting_ms = 300
revealing_ms = 100
settling_ms = 300

[[table]]
id = "t2"
name = "Two"
min_bet = 10
max_bet = 500
denominations = [5, 10, 25]
min_buy_in = 100
max_buy_in = 5000
betting_ms = 30000
dealing_ms = 100
setting_ms = 300
revealing_ms = 100
settling_ms = 300

[jackpot.shared]
seed = {SEED}
contribution_bps = 5000
wager = {WAGER}
tables = ["t1", "t2"]
"""


def _start(
    processes: list[ServerProcess],
    redis_url: str,
    tmp_path: Path,
    name: str,
    *,
    module: str,
    env: dict[str, str],
) -> ServerProcess:
    tables = tmp_path / "tables.toml"
    tables.write_text(TABLES)
    args = server_args(
        redis_url,
        tables,
        tmp_path / f"data-{name}",
        secret=SECRET,
        lease_ms=1000,
        extra=["--node-name", name],
    )
    process = ServerProcess(args, tmp_path / f"server-{name}.log", env=env, module=module)
    processes.append(process)
    return process


async def _ledger(client: redis.asyncio.Redis) -> list[dict[str, str]]:
    """The jackpot's ledger entries, their fields as text."""
    raw = await client.xrange(JackpotStore(client).keys.jackpot_ledger("shared"))
    return [{k: v.decode() for k, v in fields.items()} for _, fields in stream_entries(raw)]


async def _seat_and_bet(url: str, table_id: str, seat: int) -> Client:
    client = await Client.hello(url, label=f"{table_id}-{seat}")
    try:
        await client.ok(Join, table_id=table_id, buy_in=BUY_IN, seat=seat)
        await client.ok(
            Bet, table_id=table_id, amount=10, wagers=(Wager(kind="progressive", amount=WAGER),)
        )
    except BaseException:
        await client.close()
        raise
    return client


@pytest.mark.asyncio
@pytest.mark.parametrize("moment", ["after_hit", "before_calls"])
async def test_two_tables_two_nodes_one_meter_paid_once_through_a_kill(
    moment: str,
    redis_url: str,
    redis_client: redis.asyncio.Redis,
    tmp_path: Path,
    processes: list[ServerProcess],
) -> None:
    mark = tmp_path / "killed"
    env = {jackpot_seam.KILL_ENV: moment, jackpot_seam.MARK_ENV: str(mark)}
    nodes = [
        _start(processes, redis_url, tmp_path, name, module="tests.e2e.jackpot_seam", env=env)
        for name in ("a", "b")
    ]
    for node in nodes:
        await node.started(WITHIN_S)
    jackpots = JackpotStore(redis_client)
    accounts = AccountStore(redis_client)
    clients: list[Client] = []
    try:
        # Table t2: its player at seat 1 holds nothing that pays; the wager contributes.
        clients.append(await _seat_and_bet(nodes[0].url, "t2", 1))

        async def meter_is(chips: int) -> bool:
            return (await jackpots.read("shared")).meter == chips

        await until(lambda: meter_is(SEED + CONTRIBUTION), WITHIN_S, "t2's contribution")

        # Table t1: its player at seat 0 holds the top hand: contribution, then a hit of
        # the whole meter, through the node that holds t1, killed on the way.
        winner = await Client.hello(nodes[1].url, label="winner")
        clients.append(winner)
        before = await accounts.balance(winner.player)
        assert before is not None
        await winner.ok(Join, table_id="t1", buy_in=BUY_IN, seat=0)
        await winner.ok(
            Bet, table_id="t1", amount=10, wagers=(Wager(kind="progressive", amount=WAGER),)
        )
        cards = await winner.event("t1", Cards, lambda m: m.seat == 0, within=WITHIN_S)
        assert sorted(cards.cards) == sorted(jackpot_seam.TOP)

        await until(mark.exists, WITHIN_S, "the holder of t1 to kill itself")
        pid = int(mark.read_text())
        (dead,) = [n for n in nodes if n.proc.pid == pid]
        assert await dead.exited(WITHIN_S) == -9
        (alive,) = [n for n in nodes if n is not dead]
        assert alive.proc.poll() is None

        # The survivor takes t1 over in its settling phase and finishes the calls: the
        # meter paid once, its whole (seed + both contributions), and reset to the seed.
        won = SEED + 2 * CONTRIBUTION

        async def paid() -> bool:
            meter = await jackpots.read("shared")
            return meter.hits == 1 and not await jackpots.pending("shared")

        await until(paid, WITHIN_S, "the hit to reach its player")
        meter = await jackpots.read("shared")
        assert meter.meter == SEED
        assert meter.paid == won
        assert meter.contributed == 2 * CONTRIBUTION
        assert meter.seeded == 2 * SEED  # the start, and the reset after the hit
        assert meter.hits == 1
        # Its player's account has it once (the buy-in left it, the table balance is
        # still at the table).
        assert await accounts.balance(winner.player) == before - BUY_IN + won
        entries = await _ledger(redis_client)
        kinds = sorted(fields["kind"] for fields in entries)
        assert kinds == ["contribution", "contribution", "hit", "seed", "seed"]

        # No chip made or lost: the meter is in the audit's sum.
        report = audit_passes(redis_url)
        assert report.strip().endswith("audit passed"), report
        assert "in transit: 0 " in report, report
    finally:
        await close_all(clients)


@pytest.mark.asyncio
async def test_two_tables_on_two_nodes_hitting_the_meter_at_once_are_paid_in_turn(
    redis_url: str,
    redis_client: redis.asyncio.Redis,
    tmp_path: Path,
    processes: list[ServerProcess],
) -> None:
    """Both tables deal the top hand at once, each held by its own node: the store pays
    one hit, then the other from the meter as the first left it (docs/RULES.md,
    "Progressive jackpot", two hits at once); nothing made, nothing lost."""
    nodes = [
        _start(processes, redis_url, tmp_path, name, module="tests.e2e.jackpot_seam", env={})
        for name in ("a", "b")
    ]
    for node in nodes:
        await node.started(WITHIN_S)
    store = TableStore(redis_client)

    async def split() -> bool:
        # Two nodes, two tables, loads bounded: one table each once both are live.
        held = await store.leases.holders(["t1", "t2"])
        return all(held) and held[0] != held[1] and held[0][1] != held[1][1]  # type: ignore[index]

    await until(split, WITHIN_S, "one table on each node")
    jackpots = JackpotStore(redis_client)
    accounts = AccountStore(redis_client)
    clients = [
        await Client.hello(node.url, label=f"winner-{table}")
        for node, table in zip(nodes, ("t1", "t2"), strict=True)
    ]
    try:
        before = [await accounts.balance(c.player) for c in clients]
        for client, table in zip(clients, ("t1", "t2"), strict=True):
            await client.ok(Join, table_id=table, buy_in=BUY_IN, seat=0)
        await asyncio.gather(
            *(
                client.ok(
                    Bet,
                    table_id=table,
                    amount=10,
                    wagers=(Wager(kind="progressive", amount=WAGER),),
                )
                for client, table in zip(clients, ("t1", "t2"), strict=True)
            )
        )

        async def both_paid() -> bool:
            meter = await jackpots.read("shared")
            return meter.hits == 2 and not await jackpots.pending("shared")

        await until(both_paid, WITHIN_S, "both hits to reach their players")
        meter = await jackpots.read("shared")
        # Whatever the order: each wager added its share before its own table's hit, the
        # first hit emptied the meter (reset to the seed), the second took what was on
        # it then; together they paid both seeds and both contributions.
        assert meter.meter == SEED
        assert meter.contributed == 2 * CONTRIBUTION
        assert meter.paid == 2 * SEED + 2 * CONTRIBUTION
        assert meter.seeded == 3 * SEED
        entries = await _ledger(redis_client)
        hits = [int(f["amount"]) for f in entries if f["kind"] == "hit"]
        assert sorted(hits) in (
            [SEED, SEED + 2 * CONTRIBUTION],
            [SEED + CONTRIBUTION, SEED + CONTRIBUTION],
        )
        by_player = {f["player"]: int(f["amount"]) for f in entries if f["kind"] == "hit"}
        for client, had in zip(clients, before, strict=True):
            assert had is not None
            assert await accounts.balance(client.player) == had - BUY_IN + by_player[client.player]
        report = audit_passes(redis_url)
        assert report.strip().endswith("audit passed"), report
    finally:
        await close_all(clients)


@pytest.mark.asyncio
async def test_the_server_itself_has_no_seam(
    redis_url: str,
    redis_client: redis.asyncio.Redis,
    tmp_path: Path,
    processes: list[ServerProcess],
) -> None:
    """``python -m server`` (what ``paigow-server`` runs) with the seam's environment:
    it deals from its seed, and a round's jackpot calls kill nothing."""
    mark = tmp_path / "killed"
    env = {jackpot_seam.KILL_ENV: "before_calls", jackpot_seam.MARK_ENV: str(mark)}
    node = _start(processes, redis_url, tmp_path, "plain", module="server", env=env)
    await node.started(WITHIN_S)
    player = await _seat_and_bet(node.url, "t1", 0)
    try:
        cards = await player.event("t1", Cards, lambda m: m.seat == 0, within=WITHIN_S)
        assert sorted(cards.cards) != sorted(jackpot_seam.TOP)
        jackpots = JackpotStore(redis_client)

        async def contributed() -> bool:
            return (await jackpots.read("shared")).contributed == CONTRIBUTION

        await until(contributed, WITHIN_S, "the round's contribution")
        assert not mark.exists()
        assert node.proc.poll() is None
    finally:
        await player.close()
