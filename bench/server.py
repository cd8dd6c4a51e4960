"""Benchmark of the game server (issues 5 and 16), beside a bare ``websockets`` server.

What runs, in order, each server in a process of its own and the load from another
(``bench/driver.py``, through the reference client core ``clients/core.py``):

1. the game server on its embedded Redis with one table of short phases: six bots
   play rounds; Redis ``INFO commandstats`` before and after gives commands per round;
2. the bare server (``bench/bare.py``: same messages, same fan-out to six
   connections a table, msgpack, no Redis, no state machine): the machine's limit;
3. the game server again, with 1,667 tables whose betting phase lasts 10 minutes, so
   ``bet`` can be changed again and again (each change is stored in Redis before its
   ``ok``, then ``bet_placed`` goes to the six players of the table).

For 2 and 3, the same driver run: 1,000 players connect and sit down; latency with
each acting once every 5 to 10 s; throughput with each acting again as soon as it is
acknowledged (closed loop); then up to 10,000 players: server RSS per player and
latency again. 2 and 3 run in turn ``PAIGOW_BENCH_RUNS`` times (3), each pair printed
side by side with the configuration beside each figure; then the goals of issue 16
(``bench/goals.py``), each judged on the median of the runs and marked met or not.

Run with ``python -m bench.server`` (a few minutes). ``PAIGOW_BENCH_PROFILE=FILE``
also profiles the game server (cProfile, one more throughput window) and prints
where its time goes; ``PAIGOW_BENCH_PYSPY=PREFIX`` samples it with py-spy instead (it
does not slow the server down: two more windows, throughput and 10,000 players, their
stacks in ``PREFIX.<window>.txt``) and prints each stage's share of an action's path
(``bench/flame.py``). ``PAIGOW_BENCH_SERVER_ROOT=DIR`` runs the game server from
another checkout (to measure a change), and ``PAIGOW_BENCH_SMALL`` /
``PAIGOW_BENCH_LARGE`` change the player counts. On two or more CPUs the server under
test runs on one of its own (``PAIGOW_BENCH_NO_PIN=1``: no pinning) with its Redis,
the driver on another (``PAIGOW_BENCH_REDIS_CPU=driver``: Redis beside the driver), where
Redis's append-only-file rewrites also go, at the lowest priority.
"""

from __future__ import annotations

import contextlib
import gc
import io
import json
import math
import os
import platform
import pstats
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import msgpack

import bench.flame
import bench.goals
import bench.versions
from bench.driver import children, raise_fd_limit, rss_kib
from bench.output import wait_line

ROOT = Path(__file__).resolve().parent.parent
SMALL = int(os.environ.get("PAIGOW_BENCH_SMALL", "1000"))
LARGE = int(os.environ.get("PAIGOW_BENCH_LARGE", "10000"))
SEATS = 6
ROUNDS = 8
LATENCY_S = 15.0
THROUGHPUT_S = 8.0
WARMUP_S = 2.0
GOAL_RATIO = 0.5
GOAL_P99_MS = 25.0
GOAL_KIB_RATIO = 1.15
LONG_BETTING_MS = 600_000
RUNS = int(os.environ.get("PAIGOW_BENCH_RUNS", "3"))
"""Load runs of each server: the goals are judged on the median (the figures are noisy)."""

LOAD_TABLE = """[[table]]
id = "{id}"
name = "Bench {id}"
min_bet = 10
max_bet = 1000
denominations = [5, 10, 25, 100]
min_buy_in = 100
max_buy_in = 10000
betting_ms = {betting_ms}
"""

LOAD_PREFIX = "b"
"""The load runs' table ids: ``b0000``, ``b0001``... (the driver's ``--prefix``)."""


def write_load_tables(path: Path, tables: int) -> Path:
    """``path``, written as the load runs' tables file: ``tables`` tables of
    :data:`LOAD_TABLE`, each betting for :data:`LONG_BETTING_MS`."""
    path.write_text(
        "\n".join(
            LOAD_TABLE.format(id=f"{LOAD_PREFIX}{i:04d}", betting_ms=LONG_BETTING_MS)
            for i in range(tables)
        )
    )
    return path


ROUND_TABLE = """[[table]]
id = "r0000"
name = "Bench rounds"
min_bet = 10
max_bet = 1000
denominations = [5, 10, 25, 100]
min_buy_in = 100
max_buy_in = 10000
betting_ms = 1000
dealing_ms = 100
setting_ms = 5000
revealing_ms = 200
settling_ms = 200
"""


def _split_cpus() -> tuple[set[int], set[int]] | None:
    """(the server's CPU, the others): the goals are for one server core, so the
    server under test (game or bare) gets one CPU to itself, and the driver and the
    game server's Redis share the rest. None (no pinning) on one CPU, where
    ``sched_setaffinity`` is missing, or with ``PAIGOW_BENCH_NO_PIN=1``."""
    if not hasattr(os, "sched_getaffinity") or os.environ.get("PAIGOW_BENCH_NO_PIN"):
        return None
    usable = sorted(os.sched_getaffinity(0))
    if len(usable) < 2:
        return None
    return {usable[0]}, set(usable[1:])


CPUS = _split_cpus()
REDIS_BESIDE_SERVER = os.environ.get("PAIGOW_BENCH_REDIS_CPU", "server") == "server"
"""Where the game server's Redis runs when pinning. By default on the server's core: the
server and its database share one core, and the driver has the other to itself, as it
has against the bare server, so that both runs load the driver alike (a driver sharing
its core with Redis spends far more CPU per action: measured 281 against 157 µs). With
``PAIGOW_BENCH_REDIS_CPU=driver``, beside the driver: the server has its core alone."""


def _pin(pid: int, cpus: set[int] | None) -> None:
    """Pin every thread of process ``pid`` to ``cpus`` (affinity is per thread: Redis
    runs its AOF fsync and other background work in threads of their own)."""
    if cpus is None:
        return
    try:
        threads = [int(t) for t in os.listdir(f"/proc/{pid}/task")]
    except OSError:
        threads = [pid]
    for tid in threads:
        with contextlib.suppress(OSError):
            os.sched_setaffinity(tid, cpus)


class BackgroundMover(threading.Thread):
    """Moves the children of the game server's Redis (its AOF rewrites: a fork that
    writes the whole data set out again, for a second or more of CPU) to ``cpus`` at
    the lowest priority, as they appear.

    That work is the database's housekeeping, not the server's: left on the server's
    core, one rewrite during a latency window delayed every action for its duration.
    At nice 19 beside the driver it takes the idle time of that core.
    """

    def __init__(self, redis_pids: list[int], cpus: set[int]) -> None:
        super().__init__(name="redis-background", daemon=True)
        self.redis_pids = redis_pids
        self.cpus = cpus
        self.moved: set[int] = set()
        self._interval = 0.01
        self._done = threading.Event()

    def _children(self, pid: int) -> list[int]:
        try:
            with open(f"/proc/{pid}/task/{pid}/children") as f:
                return [int(c) for c in f.read().split()]
        except FileNotFoundError:
            # A kernel without CONFIG_PROC_CHILDREN: scan /proc, less often.
            self._interval = 0.1
            return children(pid)
        except OSError:
            return []

    def run(self) -> None:
        while not self._done.wait(self._interval):
            for pid in self.redis_pids:
                for child in self._children(pid):
                    if child not in self.moved:
                        self.moved.add(child)
                        _pin(child, self.cpus)
                        with contextlib.suppress(OSError):
                            os.setpriority(os.PRIO_PROCESS, child, 19)

    def stop(self) -> None:
        self._done.set()
        self.join()


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _stop(proc: subprocess.Popen[str], seconds: float = 30.0) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(seconds)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _env(root: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(root)
    return env


class GameServer:
    """``python -m server`` on its embedded Redis, in ``data_dir``."""

    def __init__(self, root: Path, data_dir: Path, tables: Path, profile: Path | None) -> None:
        self.port = _free_port()
        self.data_dir = data_dir
        self.background: BackgroundMover | None = None
        args = [
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--data-dir",
            str(data_dir),
            "--tables-file",
            str(tables),
            # Every player is a guest from the loopback address: no limit on new guests.
            "--guests-per-minute",
            "0",
            "--guests-per-address",
            "0",
        ]
        if profile is not None:
            command = [sys.executable, "-m", "bench.profiled", str(profile), *args]
        else:
            command = [sys.executable, "-m", "server", *args]
        self.log_path = data_dir.parent / f"{data_dir.name}.log"
        self.log = self.log_path.open("w")
        self.proc = subprocess.Popen(
            command,
            cwd=root,
            env=_env(root) if profile is None else {**_env(root), "PYTHONPATH": f"{root}:{ROOT}"},
            stdout=subprocess.PIPE,
            stderr=self.log,
            text=True,
        )
        _pin(self.proc.pid, CPUS[0] if CPUS else None)
        try:
            wait_line(self.proc, r"paigow-server listening", 180)
        except RuntimeError:
            self.stop()
            raise
        redis_pids = children(self.proc.pid)
        for pid in redis_pids:  # its Redis: see REDIS_BESIDE_SERVER
            _pin(pid, (CPUS[0] if REDIS_BESIDE_SERVER else CPUS[1]) if CPUS else None)
        if CPUS:
            self.background = BackgroundMover(redis_pids, CPUS[1])
            self.background.start()

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/"

    @property
    def redis_url(self) -> str:
        return (self.data_dir / "redis.url").read_text().strip()

    def loop(self) -> str:
        """uvloop or asyncio, from the shared objects the process has mapped."""
        try:
            maps = Path(f"/proc/{self.proc.pid}/maps").read_text()
        except OSError:
            return "unknown"
        return "uvloop" if "uvloop" in maps else "asyncio"

    def stop(self) -> None:
        if self.background is not None:
            self.background.stop()
        _stop(self.proc)
        self.log.close()

    def lost(self) -> dict[str, int]:
        """How often, by its log, the server lost table leases or its node's registration:
        a server starved of CPU (a loaded machine) takes its tables again and again, and
        its figures then measure that, not the hot path."""
        text = self.log_path.read_text(errors="replace")
        return {"leases": text.count("lease lost"), "registration": text.count("taken for dead")}

    @property
    def rewrites_moved(self) -> int:
        """How many background children of Redis (AOF rewrites) were moved."""
        return len(self.background.moved) if self.background is not None else 0


class BareServer:
    """``python -m bench.bare``."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "bench.bare", "--port", "0"],
            cwd=ROOT,
            env=_env(ROOT),
            stdout=subprocess.PIPE,
            text=True,
        )
        _pin(self.proc.pid, CPUS[0] if CPUS else None)
        try:
            line = wait_line(self.proc, r"bare listening on", 30)
        except RuntimeError:
            self.stop()
            raise
        match = re.search(r"on (\d+) loop=(\S+) gc=(.*)$", line)
        assert match is not None
        self.port = int(match.group(1))
        self.loop = match.group(2)
        self.gc = match.group(3)

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/"

    def stop(self) -> None:
        _stop(self.proc, 10)


def _driver(args: list[str]) -> dict[str, Any]:
    with subprocess.Popen(
        [sys.executable, "-m", "bench.driver", *args],
        cwd=ROOT,
        env=_env(ROOT),
        stdout=subprocess.PIPE,
        text=True,
    ) as proc:
        _pin(proc.pid, CPUS[1] if CPUS else None)
        try:
            out, _ = proc.communicate(timeout=900)  # a loaded machine connects slowly
        except subprocess.TimeoutExpired:
            proc.kill()
            raise
    lines = out.strip().splitlines()
    if proc.returncode != 0 or not lines:
        raise RuntimeError(f"driver failed (exit code {proc.returncode})")
    result: dict[str, Any] = json.loads(lines[-1])
    return result


def _load_args(
    url: str, pid: int, tables: int, profile_pid: int = 0, metrics_url: str = "", pyspy: str = ""
) -> list[str]:
    return [
        "--metrics-url",
        metrics_url,
        "--pyspy",
        pyspy,
        "load",
        "--url",
        url,
        "--prefix",
        LOAD_PREFIX,
        "--tables",
        str(tables),
        "--server-pid",
        str(pid),
        "--small",
        str(SMALL),
        "--large",
        str(LARGE),
        "--latency-s",
        str(LATENCY_S),
        "--throughput-s",
        str(THROUGHPUT_S),
        "--warmup-s",
        str(WARMUP_S),
        "--profile-pid",
        str(profile_pid),
    ]


def _server_gc(root: Path) -> str:
    """What the game server does to its collector, from its source."""
    calls = []
    for path in (root / "server").rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        calls += re.findall(r"gc\.(?:set_threshold|freeze|disable)\([^)]*\)", text)
        timer = re.search(r"^YOUNG_EVERY_S = ([\d.]+)", text, re.MULTILINE)
        full = re.search(r"^FULL_EVERY_S = ([\d.]+)", text, re.MULTILINE)
        if timer and full:
            calls.append(
                f"gc.collect(1) every {timer.group(1)} s, gc.collect() every {full.group(1)} s"
            )
        thresholds = re.search(r"^THRESHOLDS = \(([^)]*)\)", text, re.MULTILINE)
        if thresholds:
            calls.append(f"thresholds ({thresholds.group(1)})")
    if not calls:
        return f"Python default {gc.get_threshold()} (server/ calls no gc.*)"
    return ", ".join(sorted(set(calls)))


def _versions() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        uv = version("uvloop")
    except PackageNotFoundError:
        uv = "not installed"
    return (
        f"websockets {version('websockets')}, redis-py {version('redis')}, "
        f"msgpack {'.'.join(map(str, msgpack.version))}, uvloop {uv}"
    )


# --- printing ---------------------------------------------------------------------------


def _fmt(value: float, spec: str = ",.0f") -> str:
    return "n/a" if math.isnan(value) else format(value, spec)  # NaN: nothing measured


def _ratio(game: float, bare: float) -> str:
    if not bare or math.isnan(game) or math.isnan(bare):
        return "n/a"
    return f"{game / bare:.2f}"


def _row(label: str, game: str, bare: str, ratio: str = "", note: str = "") -> None:
    print(f"  {label:<44} {game:>14} {bare:>14} {ratio:>7}  {note}")


def _stalls(stalls: dict[str, dict[str, float]]) -> str:
    """The game server's own stall metrics over a window, on one line."""
    if not stalls:
        return "game server stalls: not measured (no /metrics)"

    def bound(le: float) -> str:
        return "over 5 s" if math.isinf(le) else f"<= {le * 1000:g} ms"

    loop = stalls.get("loop", {})
    bet = stalls.get("bet", {})
    commit = stalls.get("commit", {})
    parts = [
        f"bets inside the game server: {bet.get('count', 0):,.0f}, p99 "
        f"{bound(bet.get('p99_le', 0.0))}, {bet.get('over_25ms', 0):,.0f} > 25 ms, longest "
        f"{bound(bet.get('max_le', 0.0))}",
        f"commits: {commit.get('count', 0):,.0f}, {commit.get('over_25ms', 0):,.0f} > 25 ms, "
        f"longest {bound(commit.get('max_le', 0.0))}",
        f"game server's loop: {loop.get('count', 0):,.0f} probes, "
        f"{loop.get('over_25ms', 0):,.0f} late > 25 ms, {loop.get('over_100ms', 0):,.0f} "
        f"> 100 ms, longest {bound(loop.get('max_le', 0.0))}",
    ]
    pipelines = stalls.get("pipelines", {}).get("count", 0.0)
    if pipelines:
        calls = stalls.get("calls", {}).get("count", 0.0)
        parts.append(
            f"round trips with Redis: {pipelines:,.0f}, {calls / pipelines:.2f} script calls each"
        )
    for gen in ("gc0", "gc1", "gc2"):
        g = stalls.get(gen)
        if g and g["count"]:
            parts.append(
                f"{gen}: {g['count']:,.0f} collections, {g['over_25ms']:,.0f} > 25 ms, "
                f"longest {bound(g['max_le'])}"
            )
    return "; ".join(parts)


def _core_line(game: dict[str, Any], bare: dict[str, Any]) -> str:
    """How busy the server's core was in a latency window, everything on it counted
    (the server, its Redis unless it runs beside the driver, the kernel's softirqs):
    near 1, actions wait for the core."""
    cores = ",".join(str(c) for c in game["server_cores"]) or "unknown"
    return (
        f"the server's core (CPU {cores}), game / bare window: busy "
        f"{game['core_busy']:.2f} / {bare['core_busy']:.2f} of the time, softirqs "
        f"{game['core_softirq']:.2f} / {bare['core_softirq']:.2f} of it and stolen by the "
        f"hypervisor {game['core_steal']:.2f} / {bare['core_steal']:.2f}"
    )


def _report(game: dict[str, Any], bare: dict[str, Any]) -> None:
    gt, bt = game["throughput"], bare["throughput"]
    print()
    _row("", "game server", "bare server", "ratio")
    conns = f"{gt['acting']:,} of {gt['players']:,} players in closed loop"
    _row(
        "actions acknowledged per second",
        _fmt(gt["actions_per_s"]),
        _fmt(bt["actions_per_s"]),
        _ratio(gt["actions_per_s"], bt["actions_per_s"]),
        f"goal >= {GOAL_RATIO} ({conns}, {THROUGHPUT_S:g} s)",
    )
    if gt["errors"] or bt["errors"]:
        print(
            f"    refused or failed actions in that window: game {gt['errors']:,} "
            f"{gt['error_kinds']}, bare {bt['errors']:,} {bt['error_kinds']}"
        )
    _row(
        "table events delivered per second",
        _fmt(gt["events_per_s"]),
        _fmt(bt["events_per_s"]),
        _ratio(gt["events_per_s"], bt["events_per_s"]),
        "bet_placed to 6 players a table",
    )
    _row(
        "  server process CPU (cores busy)",
        _fmt(gt["server_cpu"], ".2f"),
        _fmt(bt["server_cpu"], ".2f"),
        "",
        f"Redis {gt['redis_cpu']:.2f}; driver {gt['driver_cpu']:.2f} / {bt['driver_cpu']:.2f}",
    )
    g_per_cpu = gt["actions_per_s"] / gt["server_cpu"] if gt["server_cpu"] else float("nan")
    b_per_cpu = bt["actions_per_s"] / bt["server_cpu"] if bt["server_cpu"] else float("nan")
    g_total = gt["server_cpu"] + gt["redis_cpu"]
    g_per_all = gt["actions_per_s"] / g_total if g_total else float("nan")
    _row(
        "  actions per server CPU-second",
        _fmt(g_per_cpu),
        _fmt(b_per_cpu),
        _ratio(g_per_cpu, b_per_cpu),
        f"(game incl. Redis CPU: {_fmt(g_per_all)}, ratio {_ratio(g_per_all, b_per_cpu)})",
    )
    _row(
        "  p50 / p99 ack latency under that load",
        f"{_fmt(gt['p50_ms'], '.1f')} / {_fmt(gt['p99_ms'], '.1f')} ms",
        f"{_fmt(bt['p50_ms'], '.1f')} / {_fmt(bt['p99_ms'], '.1f')} ms",
    )
    for key in ("latency_small", "latency_large"):
        g, b = game[key], bare[key]
        goal = f"goal p99 <= {GOAL_P99_MS:g} ms" if key == "latency_large" else ""
        _row(
            f"p50 / p99 ack latency, {g['players']:,} / {b['players']:,} players",
            f"{_fmt(g['p50_ms'], '.1f')} / {_fmt(g['p99_ms'], '.1f')} ms",
            f"{_fmt(b['p50_ms'], '.1f')} / {_fmt(b['p99_ms'], '.1f')} ms",
            "",
            f"{goal} ({g['acting']:,} acting, 1 action / 4.2-8.3 s each)".replace("( ", "("),
        )
        print(
            f"    game / bare: {g['count']:,} / {b['count']:,} actions in {LATENCY_S:g} s, "
            f"{g['errors']} / {b['errors']} errors; CPU busy: server {g['server_cpu']:.2f} / "
            f"{b['server_cpu']:.2f} (the game server's Redis {g['redis_cpu']:.2f}), driver "
            f"{g['driver_cpu']:.2f} / {b['driver_cpu']:.2f}; "
            f"driver's own loop lag p99 {g['driver_lag_p99_ms']:.0f} / "
            f"{b['driver_lag_p99_ms']:.0f} ms, max {g['driver_lag_max_ms']:.0f} / "
            f"{b['driver_lag_max_ms']:.0f} ms"
        )
        print("    " + _core_line(g, b))
        print("    " + _stalls(g["server_stalls"]))
        print(
            f"    kernel, game / bare window: {g['net_drops']:,} / {b['net_drops']:,} packets "
            f"dropped from the backlog, {g['tcp_retrans']:,} / {b['tcp_retrans']:,} TCP "
            "segments retransmitted (a lost packet costs a timeout of 200 ms or more)"
        )
    for label, d in (("game", game), ("bare", bare)):
        for key in ("latency_small", "latency_large"):
            if d[key]["errors"]:
                print(f"    {label}, {d[key]['players']:,} players: errors {d[key]['error_kinds']}")
        c = d["connect_large"]
        if c["retries"]:
            print(
                f"    {label}: {c['retries']:,} joins were refused with a retryable error "
                f"(e.g. 'server fault; try again') and tried again"
            )
        if c["connected"] < c["target"]:
            print(
                f"  NOTE {label}: only {c['connected']:,} of {c['target']:,} players could "
                f"connect ({c['failures']} failures, first: {c['first_error']}); the largest "
                f"that worked is reported"
            )

    def per_player(d: dict[str, Any]) -> tuple[float, float]:
        total = (d["mem_large"]["rss_kib"] - d["rss_start_kib"]) / max(1, d["mem_large"]["players"])
        added = d["mem_large"]["players"] - d["connect_small"]["connected"]
        marginal = (d["mem_large"]["rss_kib"] - d["rss_before_large_kib"]) / max(1, added)
        return total, marginal

    g_total_kib, g_marg = per_player(game)
    b_total_kib, b_marg = per_player(bare)
    players = game["mem_large"]["players"]
    _row(
        f"server RSS per connected player, {players:,} idle",
        f"{g_total_kib:.1f} KiB",
        f"{b_total_kib:.1f} KiB",
        _ratio(g_total_kib, b_total_kib),
        f"goal <= {GOAL_KIB_RATIO:g} x bare (RSS delta from start / players)",
    )
    _row(
        f"  marginal, from {game['connect_small']['connected']:,} to {players:,} players",
        f"{g_marg:.1f} KiB",
        f"{b_marg:.1f} KiB",
        _ratio(g_marg, b_marg),
        f"(game RSS {game['mem_large']['rss_kib'] / 1024:,.0f} MiB, its Redis "
        f"{game['redis_rss_kib'] / 1024:,.0f} MiB)",
    )


def measure_rounds(root: Path, tmp: Path, rounds: int = ROUNDS) -> dict[str, Any]:
    """Step 1: the game server from ``root`` on its embedded Redis (data under ``tmp``),
    one table of short phases, six bots: the driver's ``rounds`` mode."""
    rounds_file = tmp / "rounds.toml"
    rounds_file.write_text(ROUND_TABLE)
    game = GameServer(root, tmp / "rounds", rounds_file, None)
    try:
        args = ["rounds", "--url", game.url, "--prefix", "r", "--rounds", str(rounds)]
        measured = _driver([*args, "--redis-url", game.redis_url])
        measured["redis"] = bench.versions.running(game.redis_url)
        return measured
    finally:
        game.stop()


def report_rounds(rounds: dict[str, Any], detail: bool = False) -> None:
    """Print the figures per round of :func:`measure_rounds`; ``detail``: also where the
    bytes appended to the append-only file went, by command and key."""
    n = rounds["rounds"]
    executed: dict[str, int] = rounds["executed"]
    sent: dict[str, int] = rounds["sent"]

    def top(calls: dict[str, int]) -> str:
        ordered = sorted(calls.items(), key=lambda kv: -kv[1])
        return ", ".join(f"{k} {v / n:.1f}" for k, v in ordered[: None if detail else 10])

    print(
        f"Redis per round (6 players at 1 table, {n} rounds in {rounds['seconds']:.1f} s, "
        f"game server alone on its embedded {rounds['redis']}):"
    )
    print(
        f"  commands sent by the server (MONITOR; pipelined, so at most as many round trips): "
        f"{sum(sent.values()) / n:.1f} ({top(sent)})"
    )
    print(
        f"  commands executed, scripts' inner calls included (INFO commandstats): "
        f"{sum(executed.values()) / n:.1f} ({top(executed)})"
    )
    print(f"  bytes appended to the append-only file: {rounds['aof_bytes'] / n:,.0f}")
    if detail:
        lines: dict[str, list[int]] = rounds["aof_detail"]
        for label, (count, size) in sorted(lines.items(), key=lambda kv: -kv[1][1]):
            if size / n >= 10:
                print(f"    {label:<60} {count / n:6.1f} x {size / n:8,.0f} B")


def _report_profile(path: Path, root: Path) -> None:
    if not path.exists():
        print(f"profile: {path} was not written")
        return
    for sort, count in (("tottime", 25), ("cumulative", 30)):
        buf = io.StringIO()
        stats = pstats.Stats(str(path), stream=buf)
        stats.sort_stats(sort).print_stats(count)
        text = buf.getvalue().replace(str(root) + "/", "").replace(sys.prefix, "<venv>")
        lines = text.splitlines()
        start = next((i for i, line in enumerate(lines) if "ncalls" in line), 0)
        print(f"profile of the game server, by {sort} (cProfile, throughput window):")
        for line in lines[start:]:
            if line.strip():
                print("  " + line[:160])


def _report_samples(prefix: str, played: dict[str, Any]) -> None:
    """Where the game server's time went in the windows py-spy sampled (bench/flame.py)."""
    for name, key in (("throughput", "sampled"), ("large", "sampled_large")):
        path = Path(f"{prefix}.{name}.txt")
        window = played.get(key, {})
        rate = window.get("actions_per_s", window.get("rate", float("nan")))
        print(
            f"py-spy samples of the game server, {name} window ({_fmt(rate)} actions/s, "
            f"server CPU {window.get('server_cpu', float('nan')):.2f}): {path}"
        )
        if not path.exists():
            print("  not written: is py-spy installed, and may it read the server (ptrace)?")
            continue
        bench.flame.report([path])


# --- main -------------------------------------------------------------------------------


def _config(
    game_loop: str, bare_loop: str, bare_gc: str, root: Path, fd: tuple[int, int], redis_name: str
) -> None:
    cores = os.cpu_count()
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else cores
    if CPUS and REDIS_BESIDE_SERVER:
        placement = (
            f"the server under test and the game server's Redis pinned to CPU "
            f"{sorted(CPUS[0])[0]}, the driver (and Redis's AOF rewrites, at nice 19) to CPU "
            f"{', '.join(map(str, sorted(CPUS[1])))}"
        )
    elif CPUS:
        placement = (
            f"the server under test pinned to CPU {sorted(CPUS[0])[0]}, the driver and the "
            f"game server's Redis to CPU {', '.join(map(str, sorted(CPUS[1])))}"
        )
    else:
        placement = "shared by server, its Redis and the driver (not pinned)"
    print(
        f"configuration: Python {platform.python_version()} ({platform.python_implementation()}) "
        f"on {platform.machine()}, {cores} cores ({usable} usable): {placement}; "
        f"{_versions()}; {redis_name} (embedded, appendonly)"
    )
    print(
        f"  game server: loop {game_loop}, gc {_server_gc(root)}, one process; "
        f"bare server: loop {bare_loop}, gc {bare_gc}; driver: uvloop, gc (50000, 20, 100) + "
        f"freeze, off in latency windows, clients/core.py Client per player; "
        f"open files limit {fd[0]} (hard {fd[1]})"
    )


def _load_pair(
    root: Path, data_dir: Path, load_file: Path, run: str, profile: Path | None, pyspy: str
) -> tuple[dict[str, Any], dict[str, Any], str, str, str]:
    """One load run of the bare server, then one of the game server: (game's results,
    bare's, the game server's loop, the bare server's loop and collector)."""
    tables = -(-LARGE // SEATS)
    print(f"2/3 {run}bare websockets server ...", flush=True)
    bare_server = BareServer()
    try:
        bare = _driver(_load_args(bare_server.url, bare_server.proc.pid, tables))
    finally:
        bare_server.stop()

    print(f"3/3 {run}game server, {tables:,} tables, embedded Redis ...", flush=True)
    t0 = time.monotonic()
    game = GameServer(root, data_dir, load_file, profile)
    print(f"    started in {time.monotonic() - t0:.1f} s", flush=True)
    game_loop = game.loop()
    try:
        pid = game.proc.pid
        metrics = f"http://127.0.0.1:{game.port}/metrics"
        played = _driver(_load_args(game.url, pid, tables, pid if profile else 0, metrics, pyspy))
        redis_pids = children(pid)
        played["redis_rss_end_kib"] = sum(rss_kib(p) for p in redis_pids)
    finally:
        game.stop()
    played["lost"] = game.lost()
    if CPUS:
        print(
            f"    its Redis rewrote its append-only file {game.rewrites_moved} time(s), each "
            f"moved to CPU {', '.join(map(str, sorted(CPUS[1])))} at nice 19 "
            "(see BackgroundMover)"
        )
    return played, bare, game_loop, bare_server.loop, bare_server.gc


def main() -> None:
    """Run everything (a few minutes) and print the figures side by side."""
    started = time.monotonic()
    fd = raise_fd_limit()
    root = Path(os.environ.get("PAIGOW_BENCH_SERVER_ROOT", str(ROOT))).resolve()
    profile_env = os.environ.get("PAIGOW_BENCH_PROFILE")
    profile = Path(profile_env).resolve() if profile_env else None
    pyspy_env = os.environ.get("PAIGOW_BENCH_PYSPY", "")
    pyspy = str(Path(pyspy_env).resolve()) if pyspy_env else ""
    tables = -(-LARGE // SEATS)
    print(
        f"game server benchmark (issues 5, 16): server from {root}; {SMALL:,} then {LARGE:,} "
        f"players over {tables:,} tables of {SEATS}; {RUNS} run(s) of each server"
    )
    print(
        "  an action: a bet change (10 <-> 20 chips) by seats 1-5 of a table; seat 6 only "
        "watches (a table deals once all its players have bet); each action gets its ok and "
        "a bet_placed to all 6"
    )
    if fd[0] < LARGE + 100:
        print(f"  NOTE: open files limit {fd[0]} < {LARGE:,} connections: expect fewer players")
    with tempfile.TemporaryDirectory(prefix="paigow-bench-") as tmp_name:
        tmp = Path(tmp_name)
        load_file = write_load_tables(tmp / "tables.toml", tables)

        print("1/3 rounds: game server, 1 table, 6 bots ...", flush=True)
        rounds = measure_rounds(root, tmp)

        # Only the first game server run is profiled or sampled: the others measure.
        pairs = [
            _load_pair(
                root,
                tmp / f"game{run}",
                load_file,
                f"run {run} of {RUNS}: ",
                profile if run == 1 else None,
                pyspy if run == 1 else "",
            )
            for run in range(1, RUNS + 1)
        ]

    played, _, game_loop, bare_loop, bare_gc = pairs[0]
    _config(game_loop, bare_loop, bare_gc, root, fd, rounds["redis"])
    for run, (game_run, bare_run, *_) in enumerate(pairs, 1):
        print(f"\nrun {run} of {RUNS}:", end="")
        _report(game_run, bare_run)
    report_rounds(rounds)
    if profile is not None:
        p = played["profiled"]
        print(
            f"profiled window: {p['actions_per_s']:,.0f} actions/s under cProfile "
            f"(server CPU {p['server_cpu']:.2f})"
        )
        _report_profile(profile, root)
    if pyspy:
        _report_samples(pyspy, played)
    figures = [bench.goals.load_figures(g, b, LARGE) for g, b, *_ in pairs]
    for each in figures:
        each.update(bench.goals.round_figures(rounds))
    print(
        f"\ngoals of issue 16, the median of {RUNS} run(s) of each server (a run of the bare "
        "server, then one of the game server, in turn); the machine may be shared: see the "
        "CPU figures above"
    )
    for line in bench.goals.summary(figures):
        print(line)
    for run, (game_run, *_) in enumerate(pairs, 1):
        lost = game_run["lost"]
        if lost["leases"] or lost["registration"]:
            print(
                f"  NOTE run {run}: the game server lost {lost['leases']:,} table leases and its "
                f"registration {lost['registration']} time(s) (starved of CPU: the machine was "
                "loaded); its figures measure tables taken again and again, not the hot path"
            )
    print(f"(whole run: {time.monotonic() - started:.0f} s)")


if __name__ == "__main__":
    main()
