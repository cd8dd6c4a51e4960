"""The driver's players: one seated :class:`clients.core.Client` each, and the
:class:`Driver` that connects them and measures their actions' latency and rate."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import os
import random
import resource
import signal
import sys
import time
from dataclasses import dataclass
from typing import Any

from bench.load.scrape import server_stalls, stall_delta
from bench.load.stats import first_action, summary
from bench.procs.procfs import (
    children,
    core_shares,
    core_ticks,
    cpu_seconds,
    kernel_net,
    rss_kib,
    server_cpus,
)
from clients.core import Client, ClientError, ServerError
from protocol import limits as L

BET_LOW = 10
BET_HIGH = 20
BUY_IN = 1_000
PASSIVE_SEAT = L.SEATS_PER_TABLE - 1
"""The seat of each table whose player never bets: the table deals as soon as every
seated player has bet, so one seat without a bet keeps it betting."""
ACTIVE_SHARE = PASSIVE_SEAT / L.SEATS_PER_TABLE
CONNECT_CONCURRENCY = 64
START_LEAD_S = 1.0
"""How long before its first action every player's task of a latency window is running."""
JOIN_ATTEMPTS = 5
MAX_FAILURES = 50


def log(text: str) -> None:
    """A progress line on stderr (stdout carries the result)."""
    print(f"    [driver] {text}", file=sys.stderr, flush=True)


def _own_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


async def _lag_probe(lags: list[float], period: float = 0.01) -> None:
    """How late the driver's own event loop wakes up: its share of every latency."""
    while True:
        started = time.perf_counter()
        await asyncio.sleep(period)
        lags.append(time.perf_counter() - started - period)


# --- players -----------------------------------------------------------------------------


@dataclass
class Player:
    """One connected, seated player."""

    client: Client
    table_id: str
    seat: int
    amount: int = BET_LOW

    async def act(self) -> float:
        """One action (a bet change); its latency in seconds."""
        self.amount = BET_HIGH if self.amount == BET_LOW else BET_LOW
        started = time.perf_counter()
        await self.client.bet(self.table_id, self.amount)
        return time.perf_counter() - started


class Driver:
    """Players of one run against one server."""

    def __init__(
        self, url: str, prefix: str, tables: int, server_pid: int, metrics_url: str = ""
    ) -> None:
        self.url = url
        self.metrics_url = metrics_url
        self.prefix = prefix
        self.tables = tables
        self.server_pid = server_pid
        self.players: list[Player] = []
        self.failures = 0
        self.retries = 0  # joins refused with a retryable error, then tried again
        self.first_error: str | None = None

    def table_id(self, i: int) -> str:
        return f"{self.prefix}{i // L.SEATS_PER_TABLE:04d}"

    async def _one(self, i: int) -> Player | None:
        client = Client(self.url, name=f"p{i}", reconnect=False, request_timeout_s=30)
        table_id, seat = self.table_id(i), i % L.SEATS_PER_TABLE
        try:
            await client.connect()
            for attempt in range(JOIN_ATTEMPTS):
                try:
                    await client.join(table_id, BUY_IN, seat)
                    break
                except ServerError as exc:
                    # "server fault; try again" is retryable: count it and try again.
                    if not exc.retryable or attempt == JOIN_ATTEMPTS - 1:
                        raise
                    self.retries += 1
                    await asyncio.sleep(0.2 * (attempt + 1))
        except (ClientError, OSError, TimeoutError) as exc:
            self.failures += 1
            if self.first_error is None:
                self.first_error = f"{type(exc).__name__}: {exc}"
            with contextlib.suppress(Exception):
                await client.close()
            return None
        return Player(client, table_id, seat)

    async def connect(self, target: int) -> dict[str, Any]:
        """Connect and seat players until ``target`` are connected or connecting fails."""
        target = min(target, self.tables * L.SEATS_PER_TABLE)
        started = time.perf_counter()
        before = len(self.players)
        next_index = before
        stop = False

        async def worker() -> None:
            nonlocal next_index, stop
            while not stop and next_index < target:
                i = next_index
                next_index += 1
                player = await self._one(i)
                if player is None:
                    if self.failures >= MAX_FAILURES:
                        stop = True
                    continue
                self.players.append(player)

        await asyncio.gather(*(worker() for _ in range(CONNECT_CONCURRENCY)))
        # Players are appended in completion order; keep them in seat order.
        self.players.sort(key=lambda p: (p.table_id, p.seat))
        seconds = time.perf_counter() - started
        log(
            f"{len(self.players)} players connected ({self.failures} failures, "
            f"{self.retries} joins retried) in {seconds:.1f}s"
        )
        return {
            "target": target,
            "connected": len(self.players),
            "new": len(self.players) - before,
            "failures": self.failures,
            "retries": self.retries,
            "first_error": self.first_error,
            "seconds": seconds,
        }

    @property
    def active(self) -> list[Player]:
        """The players who act: all but the highest seat taken at each table (seat
        :data:`PASSIVE_SEAT` at a full table, also at the last, partly filled one)."""
        top: dict[str, int] = {}
        for p in self.players:
            top[p.table_id] = max(top.get(p.table_id, -1), p.seat)
        return [p for p in self.players if p.seat != top[p.table_id]]

    def alive(self) -> int:
        return sum(1 for p in self.players if p.client.connected)

    def events_seen(self) -> int:
        """Table events applied by every player's model so far."""
        return sum(m.version for p in self.players for m in p.client.tables.values())

    async def human_pace(
        self, seconds: float, pace: tuple[float, float] = (5.0, 10.0)
    ) -> dict[str, Any]:
        """The active players act once every ``pace`` seconds (uniform, shortened by
        :data:`ACTIVE_SHARE` so a table sees as many actions as six players acting at
        ``pace``), each first at :func:`first_action` after a common start, so that the
        rate is steady from the start; the latencies of the actions started in
        ``seconds``."""
        rng = random.Random(5)
        pace = (pace[0] * ACTIVE_SHARE, pace[1] * ACTIVE_SHARE)
        latencies: list[float] = []
        errors = 0
        kinds: dict[str, int] = {}
        active = self.active
        # The driver's cyclic collector is off for the window: at 10,000 players its young
        # collections took 60 to 200 ms, every reply that came meanwhile was timed that
        # much late, and those seconds made the p99 (the driver's, not the server's).
        gc.collect()
        gc.disable()
        # Every player's task is created and waiting before the first action: creating
        # thousands of tasks holds the driver's loop for a while, and actions started
        # meanwhile measured the driver's start-up (all of the p99 at 10,000 players).
        start = time.perf_counter() + START_LEAD_S
        deadline = start + seconds

        async def one(player: Player, offset: float) -> None:
            nonlocal errors
            await asyncio.sleep(max(0.0, start + offset - time.perf_counter()))
            while time.perf_counter() < deadline:
                try:
                    latencies.append(await player.act())
                except (ClientError, TimeoutError) as exc:
                    errors += 1
                    kind = getattr(exc, "code", type(exc).__name__)
                    kinds[kind] = kinds.get(kind, 0) + 1
                pause = rng.uniform(*pace)
                await asyncio.sleep(min(pause, max(0.0, deadline - time.perf_counter())))

        try:
            tasks = [asyncio.create_task(one(p, first_action(rng, pace))) for p in active]
            await asyncio.sleep(max(0.0, start - time.perf_counter()))
            started = time.perf_counter()
            s0, d0 = cpu_seconds(self.server_pid), _own_cpu()
            redis_pids = children(self.server_pid)
            r0 = sum(cpu_seconds(p) for p in redis_pids)
            cores = server_cpus(self.server_pid)
            core0 = core_ticks(cores)
            net0 = kernel_net()
            stalls0 = await server_stalls(self.metrics_url)
            lags: list[float] = []
            probe = asyncio.create_task(_lag_probe(lags))
            await asyncio.gather(*tasks)
            probe.cancel()
        finally:
            gc.enable()
        elapsed = time.perf_counter() - started
        s1, d1 = cpu_seconds(self.server_pid), _own_cpu()
        r1 = sum(cpu_seconds(p) for p in redis_pids)
        core = core_shares(core0, core_ticks(cores))
        net1 = kernel_net()
        stalls = stall_delta(stalls0, await server_stalls(self.metrics_url))
        lag = summary(lags)
        result: dict[str, Any] = summary(latencies)
        result.update(
            players=len(self.players),
            acting=len(active),
            errors=errors,
            error_kinds=kinds,
            seconds=seconds,
            driver_lag_p99_ms=lag["p99_ms"],
            driver_lag_max_ms=lag["max_ms"],
            server_cpu=(s1 - s0) / elapsed,
            redis_cpu=(r1 - r0) / elapsed,
            driver_cpu=(d1 - d0) / elapsed,
            server_cores=cores,
            core_busy=core["busy"],
            core_softirq=core["softirq"],
            core_steal=core["steal"],
            rate=len(latencies) / seconds,
            server_stalls=stalls,
            net_drops=net1["drops"] - net0["drops"],
            tcp_retrans=net1["retrans"] - net0["retrans"],
            alive=self.alive(),
            elapsed=elapsed,
        )
        log(
            f"human pace, {len(self.players)} players: p50 {result['p50_ms']:.1f} ms, "
            f"p99 {result['p99_ms']:.1f} ms over {result['count']} actions"
        )
        return result

    async def throughput(
        self, seconds: float, warmup: float, profile_pid: int | None = None
    ) -> dict[str, Any]:
        """Every player acts again as soon as its previous action is acknowledged (its
        client core's pacer allows 18 a second); acknowledgements and table events
        received per second over ``seconds`` after ``warmup``."""
        players = self.active
        stop = False
        acks: list[float] = []  # completion times
        latencies: list[float] = []
        errors = 0
        kinds: dict[str, int] = {}

        async def loop(player: Player) -> None:
            nonlocal errors
            while not stop:
                try:
                    latency = await player.act()
                except (ClientError, TimeoutError) as exc:
                    errors += 1
                    kind = getattr(exc, "code", type(exc).__name__)
                    kinds[kind] = kinds.get(kind, 0) + 1
                    await asyncio.sleep(0.1)
                    continue
                acks.append(time.perf_counter())
                latencies.append(latency)

        tasks = [asyncio.create_task(loop(p)) for p in players]
        await asyncio.sleep(warmup)
        redis_pids = children(self.server_pid)
        if profile_pid is not None:
            os.kill(profile_pid, signal.SIGUSR1)  # start profiling
        t0 = time.perf_counter()
        n0, e0 = len(acks), self.events_seen()
        s0 = cpu_seconds(self.server_pid)
        r0 = sum(cpu_seconds(p) for p in redis_pids)
        d0 = resource.getrusage(resource.RUSAGE_SELF)
        await asyncio.sleep(seconds)
        t1 = time.perf_counter()
        n1, e1 = len(acks), self.events_seen()
        s1 = cpu_seconds(self.server_pid)
        r1 = sum(cpu_seconds(p) for p in redis_pids)
        d1 = resource.getrusage(resource.RUSAGE_SELF)
        if profile_pid is not None:
            os.kill(profile_pid, signal.SIGUSR1)  # stop and write the profile
        stop = True
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(30):
                await asyncio.gather(*tasks, return_exceptions=True)
        window = t1 - t0
        in_window = latencies[n0:n1]
        result: dict[str, Any] = summary(in_window)
        driver_cpu = (d1.ru_utime + d1.ru_stime) - (d0.ru_utime + d0.ru_stime)
        result.update(
            players=len(self.players),
            acting=len(players),
            seconds=window,
            actions_per_s=(n1 - n0) / window,
            events_per_s=(e1 - e0) / window,
            errors=errors,
            error_kinds=kinds,
            server_cpu=(s1 - s0) / window,
            redis_cpu=(r1 - r0) / window,
            driver_cpu=driver_cpu / window,
            alive=self.alive(),
        )
        log(
            f"throughput, {len(players)} players: {result['actions_per_s']:,.0f} actions/s, "
            f"{result['events_per_s']:,.0f} events/s received"
        )
        return result

    async def memory(self, settle: float) -> dict[str, Any]:
        await asyncio.sleep(settle)
        return {"rss_kib": rss_kib(self.server_pid), "players": len(self.players)}
