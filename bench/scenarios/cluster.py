"""Benchmark of several nodes on one Redis (issue 12): ``python -m bench.scenarios.cluster``.

What runs: an embedded Redis, two ``paigow-server`` nodes (``PAIGOW_BENCH_CLUSTER_NODES``,
at least 2; processes, their default
settings but for the tables), and 1,000 players (``clients.core.Client``, in this
process) seated six to a table at 167 tables whose betting phase lasts ten minutes, so
that a bet can be changed again and again (each change stored in Redis before its
``ok``, then ``bet_placed`` sent to the table). Half the tables have their players
connected to the node that holds the table (*local*), the other half to another node
(*cross-node*: each bet goes to the holder over Redis, and its events come back).
Seat 5 of each table never bets, so the betting phase stays open.

Printed, with the configuration:

1. the pub/sub transport beside a Redis stream, one publisher and one reader
   (how the choice of transport was made: docs/DESIGN.md, "Several nodes on one Redis");
2. p50/p99 of a bet for local and cross-node players at a human pace (each player every
   5 to 10 s), each group alone, with Redis commands and node CPU per bet;
3. kill -9 of a node holding a table in its setting phase: time until a player on
   another node, retrying every 20 ms, sees the table answer (its ``hand_set`` event);
4. SIGTERM of a node (drain): time until its tables are held elsewhere, and the
   slowest bet meanwhile of players connected to the other nodes.

The machine may be shared: the figures say what this machine did, not what it can do.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import platform
import random
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import redis.asyncio

from bench.load.stats import percentile
from bench.procs.procfs import cpu_seconds, raise_fd_limit
from bench.procs.servers import LOAD_FROM_LOOPBACK
from bench.procs.versions import named
from clients.core import Client
from clients.errors import ClientError, ServerError
from server.cluster.placement import assign, node_name
from server.store.embedded.process import EmbeddedRedis
from server.store.nodes.shared import ClusterStore
from server.store.tables.store import TableStore

ROOT = Path(__file__).resolve().parents[2]
PLAYERS = int(os.environ.get("PAIGOW_BENCH_CLUSTER_PLAYERS", "1000"))
NODES = max(2, int(os.environ.get("PAIGOW_BENCH_CLUSTER_NODES", "2")))
SEATS = 6
PASSIVE_SEAT = 5
WINDOW_S = float(os.environ.get("PAIGOW_BENCH_CLUSTER_WINDOW_S", "20"))
PACE_S = (5.0, 10.0)
TABLE = """[[table]]
id = "{id}"
name = "Bench {id}"
min_bet = 10
max_bet = 1000
min_buy_in = 100
max_buy_in = 10000
betting_ms = 600000
setting_ms = {setting_ms}
"""
LISTENING = re.compile(r"listening on ws://[^:]+:(\d+)/")


def log(text: str) -> None:
    print(f"[bench.scenarios.cluster] {text}", file=sys.stderr, flush=True)


class Node:
    """One ``paigow-server`` process."""

    def __init__(self, name: str, redis_url: str, folder: Path, tables: Path) -> None:
        self.name = name
        self.log = folder / f"{name}.log"
        env = {**os.environ, **LOAD_FROM_LOOPBACK, "PYTHONUNBUFFERED": "1"}
        args = [
            sys.executable, "-m", "server", "--redis-url", redis_url, "--port", "0",
            "--node-name", name, "--tables-file", str(tables), "--data-dir",
            str(folder / name), "--token-secret", "bench-cluster-secret-0123456789",
            # Every player is a guest from the loopback address: no limit on new guests.
            "--guests-per-minute", "0", "--guests-per-address", "0", "serve",
        ]  # fmt: skip
        with self.log.open("wb") as out:
            self.proc = subprocess.Popen(
                args, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT, env=env
            )
        self.port = 0

    def started(self, seconds: float = 60) -> None:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            match = LISTENING.search(self.log.read_text(errors="replace"))
            if match:
                self.port = int(match.group(1))
                return
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.name} exited:\n{self.log.read_text()[-2000:]}")
            time.sleep(0.05)
        raise RuntimeError(f"{self.name} did not start")

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/"

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(10)


async def holders(client: redis.asyncio.Redis, tables: list[str]) -> dict[str, str]:
    found = await TableStore(client).leases.holders(tables)
    return {t: node_name(h[1]) for t, h in zip(tables, found, strict=True) if h is not None}


async def settled(
    client: redis.asyncio.Redis, tables: list[str], seconds: float = 60, *, placed: bool = True
) -> dict[str, str]:
    """Wait until a live node holds every table (where the live nodes place it, if
    ``placed``: a table in the middle of a round moves only when it is over)."""
    deadline = time.monotonic() + seconds
    while True:
        live = await ClusterStore(client).live_nodes()
        where = {t: node_name(i) for t, i in assign(tables, live.instances).items()}
        held = await holders(client, tables)
        names = {node_name(i) for i in live.instances}
        everywhere = len(held) == len(tables) and set(held.values()) <= names
        if everywhere and (held == where or not placed):
            return held
        if time.monotonic() > deadline:
            wrong = {t: (held.get(t), where.get(t)) for t in tables if held.get(t) != where.get(t)}
            raise RuntimeError(f"tables not where they are placed (held, placed): {wrong}")
        await asyncio.sleep(0.1)


async def commands(client: redis.asyncio.Redis) -> int:
    stats = await client.info("commandstats")
    return sum(int(v["calls"]) for k, v in stats.items() if k.startswith("cmdstat_"))


async def seat(client: Client, table: str, index: int) -> None:
    await client.connect()
    for attempt in range(5):
        try:
            await client.join(table, 1000, index)
            return
        except ServerError as exc:
            if not exc.retryable or attempt == 4:
                raise
            await asyncio.sleep(0.2)


async def window(
    players: list[tuple[Client, str]], seconds: float, pace: tuple[float, float] = PACE_S
) -> list[float]:
    """Every player changes its bet every ``pace`` seconds (uniformly drawn) for
    ``seconds``: the latencies, sorted (a refused bet counts, a lost one does not)."""
    latencies: list[float] = []
    end = time.monotonic() + seconds

    async def play(client: Client, table: str) -> None:
        amount = 10
        await asyncio.sleep(random.uniform(0, pace[1]))
        while time.monotonic() < end:
            amount = 30 - amount
            started = time.perf_counter()
            try:
                await client.bet(table, amount)
                latencies.append(time.perf_counter() - started)
            except (ClientError, TimeoutError) as exc:
                failures.append(f"{type(exc).__name__}: {exc}")
            await asyncio.sleep(random.uniform(*pace))

    failures: list[str] = []

    await asyncio.gather(*(play(c, t) for c, t in players))
    if failures:
        log(f"{len(failures)} bets failed, the first: {failures[0]}")
    return sorted(latencies)


def ms(values: list[float], q: float) -> str:
    """The ``q``-th percentile of sorted seconds, in milliseconds."""
    return f"{percentile(values, q / 100) * 1000:6.2f}" if values else "   n/a"


async def transport(client: redis.asyncio.Redis, seconds: float = 5.0, rate: int = 2000) -> None:
    """Delivery latency of one publisher to one reader: PUBLISH/SUBSCRIBE beside
    XADD/XREAD BLOCK on a stream (the replay buffer's kind), same message sizes."""
    payload = os.urandom(120)

    def stamp() -> bytes:
        return time.perf_counter().hex().encode() + b"|" + payload

    def age(message: bytes) -> float:
        return time.perf_counter() - float.fromhex(message.split(b"|", 1)[0].decode())

    async def subscribe(got: list[float]) -> None:
        async with client.pubsub() as ps:
            await ps.subscribe("bench:chan")
            async for m in ps.listen():
                if m["type"] == "message":
                    got.append(age(m["data"]))  # noqa: PERF401 (as they come)

    async def read(got: list[float]) -> None:
        last: Any = "$"
        while True:
            reply: Any = await client.xread({"bench:stream": last}, block=1000, count=100)
            for _, entries in reply or ():
                for entry_id, fields in entries:
                    last = entry_id
                    got.append(age(fields[b"e"]))

    async def publish() -> None:
        await client.publish("bench:chan", stamp())

    async def add() -> None:
        await client.xadd("bench:stream", {"e": stamp()}, maxlen=256, approximate=True)

    print(f"\n1. transport, one publisher to one reader, {rate}/s for {seconds:g} s (ms)")
    print("   what                              p50     p99   received")
    runs = (
        ("pub/sub (PUBLISH, SUBSCRIBE)", publish, subscribe),
        ("stream (XADD, XREAD BLOCK)", add, read),
    )
    for name, send, receive in runs:
        got: list[float] = []
        reader = asyncio.create_task(receive(got))
        await asyncio.sleep(0.2)
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            await send()
            await asyncio.sleep(1 / rate)
        await asyncio.sleep(0.3)
        reader.cancel()
        await asyncio.gather(reader, return_exceptions=True)
        got.sort()
        print(f"   {name:32} {ms(got, 50)} {ms(got, 99)}   {len(got)}")


Player = tuple[Client, str, bool, int, str]
"""A seated player: its client, table, whether its node holds the table, its seat, its
node."""


async def bets(nodes: dict[str, Node], client: redis.asyncio.Redis, players: list[Player]) -> None:
    """Each group of players alone: the latency of a bet, Redis commands and CPU per bet."""
    pace = f"{PACE_S[0]:g} to {PACE_S[1]:g} s"
    print(f"\n2. a bet at a human pace ({pace}), each group alone for {WINDOW_S:g} s")
    print("   (Redis commands and node CPU per bet: beyond those of an idle window as long)")
    print("   players      bets   p50 ms  p99 ms  Redis cmds/bet  node CPU ms/bet (all nodes)")

    async def costs() -> tuple[float, int]:
        return sum(cpu_seconds(nd.proc.pid) for nd in nodes.values()), await commands(client)

    cpu0, cmd0 = await costs()
    await asyncio.sleep(WINDOW_S)  # idle: lease renewals and heartbeats only
    cpu1, cmd1 = await costs()
    idle_cpu, idle_cmds = cpu1 - cpu0, cmd1 - cmd0
    for label, local in (("local", True), ("cross-node", False)):
        group = [(c, t) for c, t, loc, i, _ in players if loc == local and i != PASSIVE_SEAT]
        cpu0, cmd0 = await costs()
        got = await window(group, WINDOW_S)
        cpu1, cmd1 = await costs()
        cmds = (cmd1 - cmd0 - idle_cmds) / max(1, len(got))
        cpu = (cpu1 - cpu0 - idle_cpu) / max(1, len(got))
        print(
            f"   {label:10} {len(group):5} {len(got):6}  {ms(got, 50)}  {ms(got, 99)}"
            f"  {cmds:14.1f}  {cpu * 1000:8.2f}"
        )


async def kill(nodes: dict[str, Node], held: dict[str, str], players: list[Player]) -> str:
    """kill -9 of a node holding a cross-node table in its setting phase; the table."""
    victim = sorted(nodes)[0]
    table = next(t for _, t, loc, _, _ in players if held[t] == victim and not loc)
    seated = [c for c, t, *_ in players if t == table]
    # Everyone has a bet: dealt (a bet that comes after the deal is refused: fine).
    await asyncio.gather(*(c.bet(table, 20) for c in seated), return_exceptions=True)
    mover = seated[0]
    deadline = time.monotonic() + 30
    while mover.model(table).phase != "setting" and time.monotonic() < deadline:  # noqa: ASYNC110
        await asyncio.sleep(0.02)
    nodes[victim].proc.send_signal(signal.SIGKILL)
    killed = time.perf_counter()
    while True:
        try:
            await mover.house_way(table, apply=True)
            break
        except (ServerError, TimeoutError):
            await asyncio.sleep(0.02)
    answered = time.perf_counter() - killed
    nodes[victim].proc.wait(10)
    print("\n3. kill -9 of the node holding a table in its setting phase (lease 2,000 ms)")
    print(f"   first answer of the table to a player on another node: {answered * 1000:,.0f} ms")
    return table


async def drain(
    nodes: dict[str, Node], held: dict[str, str], players: list[Player], busy: str
) -> None:
    """SIGTERM of a node while the players on other nodes at its tables keep betting
    (``busy``: a table not betting any more)."""
    alive = {n for n, node in nodes.items() if node.proc.poll() is None}
    if len(alive) < 2:
        print("\n4. SIGTERM of a node (drain): not measured, no node would be left to take")
        print("   its tables after the kill (PAIGOW_BENCH_CLUSTER_NODES=3 measures it)")
        return
    leaving = next(n for n in sorted(nodes) if n in alive)
    # Players connected to other nodes at the tables the leaving node holds: theirs
    # is the pause of a table moving.
    staying = [
        (c, t)
        for c, t, loc, i, home in players
        if held[t] == leaving and home in alive - {leaving} and i != PASSIVE_SEAT and t != busy
    ]
    log(f"draining {leaving}: {len(staying)} players of the other nodes betting meanwhile")
    began = time.perf_counter()
    nodes[leaving].proc.send_signal(signal.SIGTERM)
    during = asyncio.create_task(window(staying[:200], 3.0, pace=(0.2, 0.4)))
    code = await asyncio.to_thread(nodes[leaving].proc.wait, 60)
    exited = time.perf_counter() - began
    slow = await during
    found = re.search(r"tables handed over in ([0-9.]+) s", nodes[leaving].log.read_text())
    handed = f"{float(found.group(1)) * 1000:,.0f}" if found else "n/a"
    print(f"\n4. SIGTERM of {leaving} (drain; exit status {code})")
    print(f"   tables handed over in {handed} ms; the process exited after {exited * 1000:,.0f} ms")
    print(
        f"   bets meanwhile by players on the other nodes: {len(slow)},"
        f" p99 {ms(slow, 99)} ms, slowest {ms(slow, 100)} ms"
    )


async def main_async() -> None:
    raise_fd_limit()
    tables = [f"b{i:03d}" for i in range(-(-PLAYERS // SEATS))]
    folder = Path(tempfile.mkdtemp(prefix="paigow-bench-cluster-"))
    tables_file = folder / "tables.toml"
    tables_file.write_text("".join(TABLE.format(id=t, setting_ms=600_000) for t in tables))
    embedded = EmbeddedRedis(folder / "redis")
    await embedded.astart()
    client = embedded.client()
    nodes = {
        f"node-{n}": Node(f"node-{n}", embedded.url, folder, tables_file)
        for n in range(1, NODES + 1)
    }
    players: list[Player] = []
    try:
        await transport(client)
        for node in nodes.values():
            await asyncio.to_thread(node.started)
        held = await settled(client, tables)
        names = sorted(nodes)
        spread = ", ".join(f"{n} {list(held.values()).count(n)}" for n in names)
        log(f"{len(tables)} tables placed: {spread}")
        connecting = asyncio.Semaphore(64)

        async def one(i: int) -> None:
            table = tables[i // SEATS]
            local = (i // SEATS) % 2 == 0
            home = held[table] if local else names[(names.index(held[table]) + 1) % NODES]
            c = Client(nodes[home].url, name=f"p{i}", reconnect=False, request_timeout_s=30)
            async with connecting:
                await seat(c, table, i % SEATS)
            players.append((c, table, local, i % SEATS, home))

        began = time.monotonic()
        await asyncio.gather(*(one(i) for i in range(PLAYERS)))
        log(f"{len(players)} players seated in {time.monotonic() - began:.1f} s")
        version = named(await client.info("server"))
        await bets(nodes, client, players)
        busy = await kill(nodes, held, players)
        held = await settled(client, tables, placed=False)
        await drain(nodes, held, players, busy)
    finally:
        for c, *_ in players:
            with contextlib.suppress(Exception):
                await c.close()
        for node in nodes.values():
            node.stop()
        await client.aclose()
        await embedded.astop()
    print("\nconfiguration:")
    print(
        f"   {platform.python_implementation()} {platform.python_version()}, {os.cpu_count()} CPUs"
    )
    print(f"   {version} (embedded), {NODES} nodes, lease 2,000 ms (the default), no pinning")
    print(f"   {PLAYERS} players at {len(tables)} tables (5 betting, 1 passive each)")
    print("   the driver runs in one process beside them; the machine is shared: expect noise")


def main() -> None:
    """Run the cluster benchmark and print its figures."""
    print(
        f"several nodes on one Redis (bench/scenarios/cluster.py): {NODES} nodes, "
        f"{PLAYERS:,} players, "
        "half of them at tables held by their own node, half at tables held by another"
    )
    asyncio.run(main_async())


if __name__ == "__main__":
    main()
