"""What ``make bench``'s server benchmark prints: the configuration, each run's figures of
the game server beside the bare one, the rounds' Redis work, the profile and the samples."""

from __future__ import annotations

import gc
import io
import math
import os
import platform
import pstats
import re
import sys
from pathlib import Path
from typing import Any

import msgpack

import bench.procs.flame
from bench.procs.servers import CPUS, REDIS_BESIDE_SERVER
from bench.scenarios.plan import GOAL_KIB_RATIO, GOAL_P99_MS, GOAL_RATIO, LATENCY_S, THROUGHPUT_S


def server_gc(root: Path) -> str:
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


def versions() -> str:
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


def report_pair(game: dict[str, Any], bare: dict[str, Any]) -> None:
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


def report_profile(path: Path, root: Path) -> None:
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


def report_samples(prefix: str, played: dict[str, Any]) -> None:
    """Where the game server's time went in the windows py-spy sampled (bench/procs/flame.py)."""
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
        bench.procs.flame.report([path])


def configuration(
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
        f"{versions()}; {redis_name} (embedded, appendonly)"
    )
    print(
        f"  game server: loop {game_loop}, gc {server_gc(root)}, one process; "
        f"bare server: loop {bare_loop}, gc {bare_gc}; driver: uvloop, gc (50000, 20, 100) + "
        f"freeze, off in latency windows, clients/core.py Client per player; "
        f"open files limit {fd[0]} (hard {fd[1]})"
    )
