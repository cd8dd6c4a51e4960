"""The load driver of ``bench/scenarios/server.py``: many players through
:class:`clients.core.Client`.

Run as a process of its own (``python -m bench.load.driver ...``), so the server under test
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
  (the file's rewrites off meanwhile), and where its bytes went (:mod:`bench.load.aof`).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import json
import logging
import os
import random
import time
from typing import Any

from bench.load.players import BUY_IN, Driver, log
from bench.procs.procfs import children, raise_fd_limit, rss_kib
from bench.procs.sampler import Sampler
from clients.autoplay import play_rounds
from clients.core import Client


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
    file only grows), by command and key (:func:`bench.load.aof.breakdown`)."""
    import redis.asyncio

    from bench.load import aof

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
    """``python -m bench.load.driver MODE --url URL ...``: one JSON line on stdout."""
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
