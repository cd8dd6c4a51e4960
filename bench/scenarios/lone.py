"""Lone actions at a fixed rate: what one action costs the server and its Redis when it
shares nothing with another (docs/DESIGN.md, "Measuring the hot path").

``python -m bench.scenarios.lone game|bare [--players N] [--rate R] [--seconds S] [--windows W]
[--what bet|ping]`` starts the game server (on its embedded Redis, a table of long
betting phase for every six players, as ``bench/scenarios/server.py`` does) or the bare one,
connects N players, then,
in each of W windows of S seconds, starts R actions a second at an even pace, each by
a player drawn at random (a bet changed by one of the players who act, or a ``ping``
by anyone), without waiting for the one before: the human pace of ``make bench``
without its players' own rhythm. Each window prints one line: the actions a second,
the server's and its Redis's CPU in the window divided by the actions acknowledged
(``/proc``: the idle work of the window, its timers and heartbeats, is in it), how
busy the CPUs the server may run on were (everything on them, softirqs included), and
the p50 and p99 of action to ack. It pins as ``make bench`` does (the server and its
Redis on one CPU, the driver on another; unpinned, the busy share is the machine's);
``PAIGOW_BENCH_SERVER_ROOT=DIR`` runs the game server of another checkout. SIGTERM
stops it as Ctrl-C does, the servers with it.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import random
import signal
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from bench.load.players import Driver, Player
from bench.load.stats import percentile
from bench.procs.procfs import (
    children,
    core_shares,
    core_ticks,
    cpu_seconds,
    raise_fd_limit,
    server_cpus,
)
from bench.procs.servers import CPUS, ROOT, BareServer, GameServer
from bench.scenarios.plan import LOAD_PREFIX, write_load_tables
from clients.core import ClientError
from protocol import limits as L


@dataclass(frozen=True)
class Window:
    """What one window measured."""

    actions: int
    seconds: float
    cpus: tuple[int, ...]
    server_cpu_s: float
    redis_cpu_s: float
    core_busy: float
    core_softirq: float
    p50_ms: float
    p99_ms: float
    errors: int

    def line(self, kind: str, what: str) -> str:
        """The window as one line of text."""
        per = 1e6 / max(1, self.actions)
        return (
            f"{kind} {what}: {self.actions / self.seconds:,.0f} a second; CPU per action: "
            f"server {self.server_cpu_s * per:.0f} us, its Redis {self.redis_cpu_s * per:.0f} "
            f"us; CPU {','.join(map(str, self.cpus)) or '?'} busy {self.core_busy:.2f} "
            f"(softirqs {self.core_softirq:.2f})"
            f"; p50 {self.p50_ms:.2f} ms, p99 {self.p99_ms:.2f} ms; {self.errors} errors"
        )


async def _window(
    driver: Driver, players: list[Player], what: str, rate: float, seconds: float
) -> Window:
    """Start ``rate`` actions a second for ``seconds``, then wait for the last ones."""
    rng = random.Random(1)
    redis_pids = children(driver.server_pid)
    cores = server_cpus(driver.server_pid)
    latencies: list[float] = []
    errors = 0

    async def act(player: Player) -> None:
        nonlocal errors
        started = time.perf_counter()
        try:
            if what == "ping":
                await player.client.ping()
            else:
                await player.act()
        except (ClientError, TimeoutError, OSError):  # a refused or lost action: counted
            errors += 1
            return
        latencies.append(time.perf_counter() - started)

    server0 = cpu_seconds(driver.server_pid)
    redis0 = sum(cpu_seconds(p) for p in redis_pids)
    core0 = core_ticks(cores)
    tasks: set[asyncio.Task[None]] = set()
    start = time.perf_counter()
    for k in range(round(rate * seconds)):
        delay = start + k / rate - time.perf_counter()
        if delay > 0:
            await asyncio.sleep(delay)
        task = asyncio.create_task(act(rng.choice(players)))
        tasks.add(task)
        task.add_done_callback(tasks.discard)
    await asyncio.gather(*tasks)
    elapsed = time.perf_counter() - start
    core = core_shares(core0, core_ticks(cores))
    latencies.sort()
    return Window(
        actions=len(latencies),
        seconds=elapsed,
        cpus=tuple(cores),
        server_cpu_s=cpu_seconds(driver.server_pid) - server0,
        redis_cpu_s=sum(cpu_seconds(p) for p in redis_pids) - redis0,
        core_busy=core["busy"],
        core_softirq=core["softirq"],
        p50_ms=1e3 * percentile(latencies, 0.5),
        p99_ms=1e3 * percentile(latencies, 0.99),
        errors=errors,
    )


async def measure(url: str, server_pid: int, args: argparse.Namespace, tables: int) -> list[Window]:
    """Connect the players, then run the windows (the driver's collector off during each,
    as in ``make bench``)."""
    driver = Driver(url, LOAD_PREFIX, tables, server_pid)
    await driver.connect(args.players)
    await asyncio.sleep(2)  # the last joins' commits and fan-out settle
    players = driver.players if args.what == "ping" else driver.active
    if not players:
        raise SystemExit(f"no player to act: {len(driver.players)} connected")
    windows = []
    for _ in range(args.windows):
        gc.collect()
        gc.disable()
        try:
            windows.append(await _window(driver, players, args.what, args.rate, args.seconds))
        finally:
            gc.enable()
    return windows


def main(argv: list[str] | None = None) -> None:
    """Parse the arguments, start the server, print a line per window."""
    parser = argparse.ArgumentParser(prog="python -m bench.scenarios.lone", description=__doc__)
    parser.add_argument("server", choices=("game", "bare"))
    parser.add_argument("--players", type=int, default=10_000)
    parser.add_argument("--rate", type=float, default=1_333.0, help="actions a second")
    parser.add_argument("--seconds", type=float, default=20.0, help="of each window")
    parser.add_argument("--windows", type=int, default=2)
    parser.add_argument("--what", choices=("bet", "ping"), default="bet")
    args = parser.parse_args(argv)
    if args.players < 2 or args.rate <= 0 or args.seconds <= 0 or args.windows < 1:
        parser.error("at least 2 players, a rate and seconds above 0, and 1 window")

    def terminated(signum: int, frame: object) -> None:
        raise SystemExit(128 + signum)  # the servers are stopped on the way out

    signal.signal(signal.SIGTERM, terminated)
    if CPUS:
        os.sched_setaffinity(0, CPUS[1])  # before any thread or server is started
    root = Path(os.environ.get("PAIGOW_BENCH_SERVER_ROOT", str(ROOT))).resolve()
    tables = -(-args.players // L.SEATS_PER_TABLE)
    with tempfile.TemporaryDirectory(prefix="paigow-lone-") as folder:
        tmp = Path(folder)
        if args.server == "bare":
            server: BareServer | GameServer = BareServer()
        else:
            tables_file = write_load_tables(tmp / "tables.toml", tables)
            server = GameServer(root, tmp / "game", tables_file, None)
        try:
            raise_fd_limit()
            windows = asyncio.run(measure(server.url, server.proc.pid, args, tables))
        finally:
            server.stop()
    for window in windows:
        print(window.line(args.server, args.what), flush=True)


if __name__ == "__main__":
    main()
