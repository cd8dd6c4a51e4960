"""Benchmark of the game server (issues 5 and 16), beside a bare ``websockets`` server.

What runs, in order, each server in a process of its own and the load from another
(``bench/load/driver.py``, through the reference client core ``clients/core.py``):

1. the game server on its embedded Redis with one table of short phases: six bots
   play rounds; Redis ``INFO commandstats`` before and after gives commands per round;
2. the bare server (``bench/procs/bare.py``: same messages, same fan-out to six
   connections a table, msgpack, no Redis, no state machine): the machine's limit;
3. the game server again, with 1,667 tables whose betting phase lasts 10 minutes, so
   ``bet`` can be changed again and again (each change is stored in Redis before its
   ``ok``, then ``bet_placed`` goes to the six players of the table).

For 2 and 3, the same driver run: 1,000 players connect and sit down; latency with
each acting once every 5 to 10 s; throughput with each acting again as soon as it is
acknowledged (closed loop); then up to 10,000 players: server RSS per player and
latency again. 2 and 3 run in turn ``PAIGOW_BENCH_RUNS`` times (3), each pair printed
side by side with the configuration beside each figure; then the goals of issue 16
(``bench/scenarios/goals.py``), each judged on the median of the runs and marked met or not.

Run with ``python -m bench.scenarios.server`` (a few minutes). ``PAIGOW_BENCH_PROFILE=FILE``
also profiles the game server (cProfile, one more throughput window) and prints
where its time goes; ``PAIGOW_BENCH_PYSPY=PREFIX`` samples it with py-spy instead (it
does not slow the server down: two more windows, throughput and 10,000 players, their
stacks in ``PREFIX.<window>.txt``) and prints each stage's share of an action's path
(``bench/procs/flame.py``). ``PAIGOW_BENCH_SERVER_ROOT=DIR`` runs the game server from
another checkout (to measure a change), and ``PAIGOW_BENCH_SMALL`` /
``PAIGOW_BENCH_LARGE`` change the player counts. On two or more CPUs the server under
test runs on one of its own (``PAIGOW_BENCH_NO_PIN=1``: no pinning) with its Redis,
the driver on another (``PAIGOW_BENCH_REDIS_CPU=driver``: Redis beside the driver), where
Redis's append-only-file rewrites also go, at the lowest priority.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import bench.procs.versions
import bench.scenarios.goals
from bench.procs.procfs import children, raise_fd_limit, rss_kib
from bench.procs.servers import CPUS, ROOT, BareServer, GameServer, child_env, pin
from bench.scenarios.plan import (
    LARGE,
    LATENCY_S,
    LOAD_PREFIX,
    ROUND_TABLE,
    ROUNDS,
    RUNS,
    SEATS,
    SMALL,
    THROUGHPUT_S,
    WARMUP_S,
    write_load_tables,
)
from bench.scenarios.report import (
    configuration,
    report_pair,
    report_profile,
    report_rounds,
    report_samples,
)


def _driver(args: list[str]) -> dict[str, Any]:
    with subprocess.Popen(
        [sys.executable, "-m", "bench.load.driver", *args],
        cwd=ROOT,
        env=child_env(ROOT),
        stdout=subprocess.PIPE,
        text=True,
    ) as proc:
        pin(proc.pid, CPUS[1] if CPUS else None)
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


def measure_rounds(root: Path, tmp: Path, rounds: int = ROUNDS) -> dict[str, Any]:
    """Step 1: the game server from ``root`` on its embedded Redis (data under ``tmp``),
    one table of short phases, six bots: the driver's ``rounds`` mode."""
    rounds_file = tmp / "rounds.toml"
    rounds_file.write_text(ROUND_TABLE)
    game = GameServer(root, tmp / "rounds", rounds_file, None)
    try:
        args = ["rounds", "--url", game.url, "--prefix", "r", "--rounds", str(rounds)]
        measured = _driver([*args, "--redis-url", game.redis_url])
        measured["redis"] = bench.procs.versions.running(game.redis_url)
        return measured
    finally:
        game.stop()


# --- main -------------------------------------------------------------------------------


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
    configuration(game_loop, bare_loop, bare_gc, root, fd, rounds["redis"])
    for run, (game_run, bare_run, *_) in enumerate(pairs, 1):
        print(f"\nrun {run} of {RUNS}:", end="")
        report_pair(game_run, bare_run)
    report_rounds(rounds)
    if profile is not None:
        p = played["profiled"]
        print(
            f"profiled window: {p['actions_per_s']:,.0f} actions/s under cProfile "
            f"(server CPU {p['server_cpu']:.2f})"
        )
        report_profile(profile, root)
    if pyspy:
        report_samples(pyspy, played)
    figures = [bench.scenarios.goals.load_figures(g, b, LARGE) for g, b, *_ in pairs]
    for each in figures:
        each.update(bench.scenarios.goals.round_figures(rounds))
    print(
        f"\ngoals of issue 16, the median of {RUNS} run(s) of each server (a run of the bare "
        "server, then one of the game server, in turn); the machine may be shared: see the "
        "CPU figures above"
    )
    for line in bench.scenarios.goals.summary(figures):
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
