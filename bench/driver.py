"""The load driver of ``bench/server.py``: many players through :class:`clients.core.Client`.

Run as a process of its own (``python -m bench.driver ...``), so the server under test
has its core to itself as far as the machine allows. Every player is one
``Client`` (the reference client core, the one the bots use), seated at a table of
six (seat ``i % 6`` of table ``i // 6``). An *action* is a ``bet`` that changes the
player's bet (10 and 20 chips in turn): the game server stores it in Redis before its
``ok``, then broadcasts ``bet_placed`` to the table. Latency is from the call of
``Client.bet`` to its ``ok``.

Modes (the result is one JSON object on the last line of stdout):

- ``load``: connect 1,000 players; human-pace latency; closed-loop throughput; connect
  up to 10,000; server RSS; human-pace latency again.
- ``rounds``: six bots (:func:`clients.autoplay.play_rounds`) play rounds at one table;
  Redis ``INFO commandstats`` and the append-only file's size before and after N rounds
  (the file's rewrites off meanwhile), and where its bytes went (:mod:`bench.aof`).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import json
import logging
import math
import os
import random
import resource
import signal
import sys
import time
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from prometheus_client.parser import text_string_to_metric_families

from clients.autoplay import play_rounds
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
CLK_TCK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def log(text: str) -> None:
    """A progress line on stderr (stdout carries the result)."""
    print(f"    [driver] {text}", file=sys.stderr, flush=True)


# --- /proc readings ----------------------------------------------------------------------


def rss_kib(pid: int) -> int:
    """VmRSS of ``pid`` in KiB (0 if it cannot be read)."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of ``pid`` so far (0 if it cannot be read)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def kernel_net() -> dict[str, int]:
    """Machine-wide counters that turn into latency on loopback: packets the kernel
    dropped from its per-CPU backlog (``/proc/net/softnet_stat``, 2nd column) and TCP
    segments retransmitted (``/proc/net/snmp``); each drop costs a retransmission
    timeout of 200 ms or more."""
    drops = retrans = 0
    with contextlib.suppress(OSError, ValueError, IndexError), open("/proc/net/softnet_stat") as f:
        drops = sum(int(line.split()[1], 16) for line in f if line.strip())
    with contextlib.suppress(OSError, ValueError, IndexError):
        with open("/proc/net/snmp") as f:
            rows = [line.split() for line in f if line.startswith("Tcp:")]
        retrans = int(rows[1][rows[0].index("RetransSegs")])
    return {"drops": drops, "retrans": retrans}


CORE_FIELDS = ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal")
"""The first columns of a ``cpuN`` line of ``/proc/stat``, in clock ticks."""


def core_ticks(cpus: Sequence[int]) -> dict[str, int]:
    """Clock ticks spent so far by ``cpus`` together, in each of :data:`CORE_FIELDS`
    (``/proc/stat``; empty if it cannot be read). Time a CPU spent in softirqs (the
    loopback's receive path, run on the sending CPU) is counted apart from any
    process's where the kernel accounts interrupt time (``CONFIG_IRQ_TIME_ACCOUNTING``)."""
    wanted = {f"cpu{cpu}" for cpu in cpus}
    total = dict.fromkeys(CORE_FIELDS, 0)
    found = 0
    with contextlib.suppress(OSError, ValueError), open("/proc/stat") as f:
        for line in f:
            name, *values = line.split()
            if name in wanted:
                found += 1
                for field, value in zip(CORE_FIELDS, values, strict=False):
                    total[field] += int(value)
    return total if found == len(wanted) and found else {}


def core_shares(before: dict[str, int], after: dict[str, int]) -> dict[str, float]:
    """Between two :func:`core_ticks` readings: the shares of the time the CPUs were
    busy (not idle or waiting for a disk), in softirqs and stolen by the hypervisor;
    NaN each if either reading is empty or no tick passed between them."""
    spent = {field: after.get(field, 0) - before.get(field, 0) for field in CORE_FIELDS}
    elapsed = sum(spent.values())
    if not before or not after or elapsed <= 0:
        return dict.fromkeys(("busy", "softirq", "steal"), float("nan"))
    return {
        "busy": 1 - (spent["idle"] + spent["iowait"]) / elapsed,
        "softirq": spent["softirq"] / elapsed,
        "steal": spent["steal"] / elapsed,
    }


def server_cpus(pid: int) -> list[int]:
    """The CPUs ``pid`` may run on, [] if unknown. The bench pins the server to one;
    unpinned, a reading of these is the machine's, not the server's core's."""
    try:
        return sorted(os.sched_getaffinity(pid))
    except OSError:
        return []


def children(pid: int) -> list[int]:
    """The child processes of ``pid``."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        if ppid == pid:
            found.append(int(entry))
    return found


def raise_fd_limit() -> tuple[int, int]:
    """Raise the soft limit of open files to the hard limit; (soft, hard) afterwards."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or soft < hard:
        target = hard if hard != resource.RLIM_INFINITY else 1_048_576
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)


def percentile(sorted_values: Sequence[float], q: float) -> float:
    """The ``q`` quantile (0..1) of sorted values, nearest rank; NaN if empty."""
    if not sorted_values:
        return float("nan")
    k = min(len(sorted_values) - 1, max(0, round(q * len(sorted_values) + 0.5) - 1))
    return sorted_values[k]


def first_action(rng: random.Random, pace: tuple[float, float]) -> float:
    """When a player who acts every ``pace`` seconds (uniform between the two) acts
    next, seen from a moment picked at random: the forward recurrence time of that
    renewal process (density ``P(pause > x) / mean pause``).

    Players who start together at this offset act at the same rate from their first
    second on. Each first acting at a uniform point of one mean pause instead, their
    second actions piled onto the last of the first ones: a third more actions than
    the mean in the fifth second of a window, fewer in the next ones, and the ringing
    went on for several pauses.
    """
    low, high = pace
    if rng.random() < low / ((low + high) / 2):
        return rng.uniform(0, low)  # sooner than the shortest pause: evenly
    return high - (high - low) * math.sqrt(rng.random())  # later: ever less likely


def summary(latencies: list[float]) -> dict[str, float | int]:
    """Count, p50, p99 and max of latencies (seconds in, milliseconds out)."""
    values = sorted(latencies)
    return {
        "count": len(values),
        "p50_ms": percentile(values, 0.50) * 1000,
        "p99_ms": percentile(values, 0.99) * 1000,
        "max_ms": (values[-1] * 1000) if values else float("nan"),
    }


def _own_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


async def _lag_probe(lags: list[float], period: float = 0.01) -> None:
    """How late the driver's own event loop wakes up: its share of every latency."""
    while True:
        started = time.perf_counter()
        await asyncio.sleep(period)
        lags.append(time.perf_counter() - started - period)


# --- the game server's own stall metrics ------------------------------------------------------

STALL_HISTOGRAMS = (
    "paigow_loop_lag_seconds",
    "paigow_gc_pause_seconds",
    "paigow_request_seconds",
    "paigow_commit_seconds",
)
SENT_COUNTERS = {"paigow_redis_pipelines": "pipelines", "paigow_redis_script_calls": "calls"}
"""The counters :func:`_scrape` reads beside the histograms, and their series' names."""


def _scrape(url: str) -> dict[str, dict[float, float]]:
    """Cumulative bucket counts of the server's stall histograms, by series.

    Series are ``loop``, ``gc<generation>``, ``bet`` (a bet's time inside the server,
    arrival to reply queued) and ``commit`` (a table event applied and stored, lock
    held); ``{}`` when ``url`` is empty (the bare server has no metrics) or cannot be
    read. The counters of round trips with Redis and of the script calls they carried
    are series ``pipelines`` and ``calls`` of one bucket, ``+Inf``: :func:`stall_delta`
    gives their growth as ``count``.
    """
    if not url:
        return {}
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            body = response.read().decode()
    except OSError:
        return {}
    series: dict[str, dict[float, float]] = {}
    for family in text_string_to_metric_families(body):
        if family.name in SENT_COUNTERS:
            series[SENT_COUNTERS[family.name]] = {math.inf: family.samples[0].value}
            continue
        if family.name not in STALL_HISTOGRAMS:
            continue
        for sample in family.samples:
            if sample.name != family.name + "_bucket":
                continue
            labels = sample.labels
            if "type" in labels and labels["type"] != "Bet":
                continue
            name = "bet" if "type" in labels else "loop"
            if family.name == "paigow_commit_seconds":
                name = "commit"
            if "generation" in labels:
                name = "gc" + labels["generation"]
            series.setdefault(name, {})[float(sample.labels["le"])] = sample.value
    return series


def stall_delta(
    before: dict[str, dict[float, float]], after: dict[str, dict[float, float]]
) -> dict[str, dict[str, float]]:
    """Per series, over a window: ``count``, ``over_25ms``, ``over_100ms``, ``max_le``
    (the smallest bucket bound holding every observation: the longest stall was at most
    that; ``inf`` if some exceeded the largest bound) and ``p99_le`` (the same for 99 %
    of them)."""
    out: dict[str, dict[str, float]] = {}
    for name, buckets in after.items():
        old = before.get(name, {})
        delta = {le: n - old.get(le, 0.0) for le, n in buckets.items()}
        total = delta.get(math.inf, 0.0)
        bounds = sorted(le for le, n in delta.items() if n >= total)
        p99 = sorted(le for le, n in delta.items() if n >= 0.99 * total)
        out[name] = {
            "count": total,
            "over_25ms": total - delta.get(0.025, 0.0),
            "over_100ms": total - delta.get(0.1, 0.0),
            "max_le": bounds[0] if total and bounds else 0.0,
            "p99_le": p99[0] if total and p99 else 0.0,
        }
    return out


async def server_stalls(url: str) -> dict[str, dict[float, float]]:
    """:func:`_scrape` off the event loop."""
    return await asyncio.to_thread(_scrape, url)


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


class Sampler:
    """``py-spy record`` of the server under test over one window (``--pyspy PREFIX``):
    its stacks, sampled without pausing it, to ``PREFIX.<name>.txt`` (collapsed stacks,
    one line per distinct stack with its sample count; ``bench/flame.py`` reads them)."""

    def __init__(self, prefix: str, pid: int) -> None:
        self.prefix = prefix
        self.pid = pid
        self.proc: asyncio.subprocess.Process | None = None

    async def start(self, name: str, seconds: float) -> None:
        if not self.prefix:
            return
        self.proc = await asyncio.create_subprocess_exec(
            _PYSPY,
            "record", "--pid", str(self.pid), "--duration", f"{seconds:.0f}",
            "--rate", "250", "--format", "raw", "--nonblocking",
            "--output", f"{self.prefix}.{name}.txt",
            stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL,
        )  # fmt: skip

    async def stop(self) -> None:
        if self.proc is not None:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(30):
                    await self.proc.wait()
            self.proc = None


_BESIDE = os.path.join(os.path.dirname(sys.executable), "py-spy")
_PYSPY = _BESIDE if os.path.exists(_BESIDE) else "py-spy"
"""The venv's py-spy (the dev extra installs it), else the one on PATH."""


async def run_load(args: argparse.Namespace) -> dict[str, Any]:
    sampler = Sampler(args.pyspy, args.server_pid)
    driver = Driver(args.url, args.prefix, args.tables, args.server_pid, args.metrics_url)
    out: dict[str, Any] = {}
    out["fd_limit"] = list(raise_fd_limit())
    out["loop"] = type(asyncio.get_running_loop()).__module__.split(".")[0]
    out["rss_start_kib"] = rss_kib(args.server_pid)
    out["connect_small"] = await driver.connect(args.small)
    out["mem_small"] = await driver.memory(2.0)
    gc.freeze()  # the driver's own objects: keep its collector out of the figures
    out["latency_small"] = await driver.human_pace(args.latency_s)
    out["throughput"] = await driver.throughput(args.throughput_s, args.warmup_s)
    if args.profile_pid:
        out["profiled"] = await driver.throughput(args.throughput_s, 1.0, args.profile_pid)
    if args.pyspy:
        await sampler.start("throughput", args.throughput_s + 1.0)
        out["sampled"] = await driver.throughput(args.throughput_s, 1.0)
        await sampler.stop()
    out["rss_before_large_kib"] = rss_kib(args.server_pid)
    out["connect_large"] = await driver.connect(args.large)
    gc.freeze()
    out["mem_large"] = await driver.memory(3.0)
    out["latency_large"] = await driver.human_pace(args.latency_s)
    if args.pyspy:
        await sampler.start("large", args.latency_s + 1.0)
        out["sampled_large"] = await driver.human_pace(args.latency_s)
        await sampler.stop()
    redis_pids = children(args.server_pid)
    out["redis_rss_kib"] = sum(rss_kib(p) for p in redis_pids)
    return out


# --- rounds --------------------------------------------------------------------------------


async def run_rounds(args: argparse.Namespace) -> dict[str, Any]:
    """Six bots at one table: the Redis commands between the results of round 1 and those
    of round 1 + N, as sent by the server (MONITOR, scripts' inner calls apart) and as
    executed (INFO commandstats, inner calls included), and the bytes appended to the
    append-only file meanwhile (its automatic rewrites off until the end, so that the
    file only grows), by command and key (:func:`bench.aof.breakdown`)."""
    import redis.asyncio

    from bench import aof

    table = f"{args.prefix}0000"
    clients = [Client(args.url, name=f"r{i}", reconnect=False) for i in range(6)]
    for seat, client in enumerate(clients):
        await client.connect()
        await client.join(table, BUY_IN, seat)  # all seated before the first bet
    info = redis.asyncio.Redis.from_url(args.redis_url)
    await info.ping()
    rewrite = "auto-aof-rewrite-percentage"
    was = (await info.config_get(rewrite))[rewrite] or "100"
    await info.config_set(rewrite, 0)
    appended = await aof.appended_file(info)
    seen: list[tuple[float, bool, str]] = []  # (Redis time, from a script, command)

    async def monitor() -> None:
        async with redis.asyncio.Redis.from_url(args.redis_url).monitor() as m:
            while True:
                c = await m.next_command()
                name = c["command"].split(" ", 1)[0].lower()
                seen.append((c["time"], c["client_type"] == "lua", name))

    watcher = asyncio.create_task(monitor())
    await asyncio.sleep(0.2)
    marks: list[asyncio.Task[tuple[dict[str, int], float, aof.Reading]]] = []
    settled = 0

    async def mark() -> tuple[dict[str, int], float, aof.Reading]:
        at = time.time()
        stats = await info.info("commandstats")
        size = await aof.reading(info, appended)
        calls = {
            name.removeprefix("cmdstat_"): int(value["calls"])
            for name, value in stats.items()
            if isinstance(value, dict)
        }
        return calls, at, size

    def note(kind: str, data: dict[str, object]) -> None:
        nonlocal settled
        if kind == "round":  # bot 0's round settled: after round 1 and after round 1 + N
            settled += 1
            if settled in (1, 1 + args.rounds):
                marks.append(asyncio.ensure_future(mark()))

    outcome = await asyncio.gather(
        *(
            play_rounds(
                c,
                table,
                bet=10,
                rounds=1 + args.rounds,
                rng=random.Random(i),
                on_note=note if i == 0 else None,
                round_timeout_s=30,
            )
            for i, c in enumerate(clients)
        )
    )
    errors = [e for stats in outcome for e in stats.errors]
    if errors:
        log(f"bot errors: {errors[:3]}")
    if len(marks) != 2:
        raise RuntimeError(f"expected two marks, got {len(marks)}")
    (calls0, t0, aof0), (calls1, t1, aof1) = [await m for m in marks]
    await asyncio.sleep(0.5)  # MONITOR catches up
    watcher.cancel()
    await info.config_set(rewrite, was)
    if aof1.base != aof0.base:
        raise RuntimeError("the append-only file was rewritten during the measurement")
    delta = {k: v - calls0.get(k, 0) for k, v in calls1.items()}
    executed = {k: v for k, v in delta.items() if v and k not in ("info", "monitor")}
    sent: dict[str, int] = {}
    inner = 0
    for at, lua, name in seen:
        if t0 <= at < t1 and name not in ("info", "monitor"):
            if lua:
                inner += 1
            else:
                sent[name] = sent.get(name, 0) + 1
    detail: dict[str, tuple[int, int]] = {}
    if appended is not None and aof1.file_size > aof0.file_size:
        with appended.open("rb") as f:
            f.seek(aof0.file_size)
            detail = aof.breakdown(f.read(aof1.file_size - aof0.file_size))
    for client in clients:
        with contextlib.suppress(Exception):
            await client.close()
    log(f"{args.rounds} rounds in {t1 - t0:.1f}s")
    return {
        "rounds": args.rounds,
        "seconds": t1 - t0,
        "executed": executed,
        "sent": sent,
        "inner": inner,
        "aof_bytes": aof1.current - aof0.current,
        "aof_detail": detail,
    }


def main(argv: list[str] | None = None) -> None:
    """``python -m bench.driver MODE --url URL ...``: one JSON line on stdout."""
    parser = argparse.ArgumentParser(description="load driver (benchmark)")
    parser.add_argument("mode", choices=("load", "rounds"))
    parser.add_argument("--url", required=True)
    parser.add_argument("--prefix", default="b")
    parser.add_argument("--tables", type=int, default=1)
    parser.add_argument("--server-pid", type=int, default=0)
    parser.add_argument("--small", type=int, default=1_000)
    parser.add_argument("--large", type=int, default=10_000)
    parser.add_argument("--latency-s", type=float, default=15.0)
    parser.add_argument("--throughput-s", type=float, default=8.0)
    parser.add_argument("--warmup-s", type=float, default=2.0)
    parser.add_argument("--profile-pid", type=int, default=0)
    parser.add_argument("--pyspy", default="", help="sample the server with py-spy: file prefix")
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--redis-url", default="")
    parser.add_argument("--metrics-url", default="", help="the game server's /metrics")
    args = parser.parse_args(argv)
    logging.getLogger("clients").setLevel(logging.ERROR)  # the server's known 33-char class id
    raise_fd_limit()
    gc.set_threshold(50_000, 20, 100)
    runner = run_load if args.mode == "load" else run_rounds

    async def run_and_exit() -> None:
        result = await runner(args)
        print(json.dumps(result), flush=True)
        # Thousands of open clients: leave at once, without closing each one or waiting
        # for the event loop to cancel their tasks (the server sees resets).
        os._exit(0)

    try:
        import uvloop
    except ImportError:
        asyncio.run(run_and_exit())
    else:
        uvloop.run(run_and_exit())


if __name__ == "__main__":
    main()
