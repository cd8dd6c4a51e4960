"""Soak benchmark: does the server stay flat under a steady load for a long time?

``python -m bench.scenarios.soak`` starts ``paigow-server`` on its embedded Redis (in a temporary
data folder) with ``--tables`` tables of short rounds, and ``--bots`` bot players (six
to a table, the reference client's autoplay) play for ``--minutes`` (10 by default).
Every ``--every`` seconds it samples the server's RSS, Redis's used memory
(``INFO memory``) and the size of Redis's append-only file, and prints each at the
start and the end, with its slope per hour: a least-squares line through the samples
taken after the retention window (``--archive-after-s``: Redis holds that much history
before the archive takes it, so it grows until then). ``--archive off`` runs the same
load with nothing archived, to compare.

Figures depend on the machine and what else runs on it: they are printed with the
configuration they were measured on.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import platform
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import redis

from bench.procs.output import wait_line
from bench.procs.procfs import rss_kib
from bench.procs.servers import LOAD_FROM_LOOPBACK
from clients.bots import run_bots

ROOT = Path(__file__).resolve().parents[2]

TABLE = """[[table]]
id = "soak{n}"
name = "Soak {n}"
min_bet = 10
max_bet = 500
min_buy_in = 100
max_buy_in = 100000
betting_ms = 1500
dealing_ms = 200
setting_ms = 2000
revealing_ms = 300
settling_ms = 300
"""


_WORDS = frozenset(
    [
        "pg",
        "table",
        "applied",
        "events",
        "lease",
        "fence",
        "log",
        "session",
        "request",
        "account",
        "accounts",
        "ledger",
        "money",
        "credits",
        "guests",
        "new",
        "names",
        "tables",
        "archiver",
        "archive",
        "revoked",
        "player",
        "seats",
        "nodes",
        "node",
        "in",
        "out",
        "logs",
        "summary",
        "watchers",
        "transfer",
        "layout",
    ]
)
"""The fixed words of key names (server/store/keys.py); the other parts are ids."""


@dataclass
class Sample:
    """One measurement, ``t`` seconds after the load started."""

    t: float
    rss_kib: int
    redis_used: int
    aof_bytes: int
    rounds: int


@dataclass
class Soak:
    """The samples of one run, and Redis's memory by kind of key at its end."""

    samples: list[Sample] = field(default_factory=list)
    breakdown: dict[str, int] = field(default_factory=dict)

    def slope_per_hour(self, name: str, after_s: float) -> float | None:
        """The least-squares slope of ``name`` per hour over the samples after ``after_s``."""
        points = [(s.t, float(getattr(s, name))) for s in self.samples if s.t >= after_s]
        if len(points) < 3:
            return None
        n = len(points)
        mean_t = sum(t for t, _ in points) / n
        mean_v = sum(v for _, v in points) / n
        var = sum((t - mean_t) ** 2 for t, _ in points)
        if var == 0:
            return None
        cov = sum((t - mean_t) * (v - mean_v) for t, v in points)
        return cov / var * 3600


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _aof_bytes(redis_dir: Path) -> int:
    """The append-only file's size: the folder of Redis 7 and Valkey, or Redis 6.2's file."""
    folder = redis_dir / "appendonlydir"
    if folder.is_dir():
        return sum(f.stat().st_size for f in folder.iterdir() if f.is_file())
    single = redis_dir / "appendonly.aof"
    return single.stat().st_size if single.exists() else 0


def _rounds(port: int) -> int:
    """Rounds settled, from the server's /metrics."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as r:
        text = r.read().decode()
    match = re.search(r"^paigow_rounds_settled_total (\S+)$", text, re.MULTILINE)
    return int(float(match.group(1))) if match else 0


class Server:
    """``python -m server`` on its embedded Redis in ``data_dir``."""

    def __init__(self, data_dir: Path, tables: Path, archive: bool, after_s: float) -> None:
        self.port = _free_port()
        self.data_dir = data_dir
        args = [
            "--port",
            str(self.port),
            "--data-dir",
            str(data_dir),
            "--tables-file",
            str(tables),
            "--guests-per-minute",
            "0",  # every bot is a guest from the loopback address
            "--guests-per-address",
            "0",
            "--archive-after-ms",
            str(int(after_s * 1000)),
            "--archive-every-ms",
            "5000",
        ]
        if not archive:
            args += ["--archive-url", "off"]
        self.log = (data_dir.parent / "server.log").open("w")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "server", *args, "serve"],
            cwd=ROOT,
            env={**os.environ, **LOAD_FROM_LOOPBACK},
            stdout=subprocess.PIPE,
            stderr=self.log,
            text=True,
        )
        try:
            wait_line(self.proc, "listening on", 120)
        except RuntimeError as exc:
            self.stop()
            raise RuntimeError(f"the server did not start: see {self.log.name}") from exc
        url = (data_dir / "redis.url").read_text().strip()
        self.redis = redis.Redis.from_url(url)

    def sample(self, t: float) -> Sample:
        used = int(self.redis.info("memory")["used_memory"])
        return Sample(
            t=t,
            rss_kib=rss_kib(self.proc.pid),
            redis_used=used,
            aof_bytes=_aof_bytes(self.data_dir / "redis"),
            rounds=_rounds(self.port),
        )

    def breakdown(self) -> dict[str, int]:
        """Redis's memory by kind of key (``MEMORY USAGE``, bytes), ids folded away."""
        sizes: dict[str, int] = {}
        for raw in self.redis.scan_iter(count=1000):
            parts = raw.decode().split(":")
            kind = ":".join(p if p in _WORDS else "*" for p in parts)
            sizes[kind] = sizes.get(kind, 0) + int(self.redis.memory_usage(raw) or 0)
        return dict(sorted(sizes.items(), key=lambda kv: -kv[1]))

    def stop(self) -> None:
        with contextlib.suppress(Exception):
            self.redis.close()
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()


def _bots(url: str, tables: list[str], bots: int) -> subprocess.Popen[bytes]:
    """Bots playing without end, in a process of their own (killed when the soak ends:
    a bot's client reconnects and plays on, whatever happens to its task)."""
    return subprocess.Popen(
        [
            *(sys.executable, "-m", "bench.scenarios.soak", "--play", url),
            *("--bots", str(bots), "--table-ids", ",".join(tables)),
        ],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


async def _sample_every(server: Server, soak: Soak, every: float, seconds: float) -> None:
    started = time.monotonic()
    while True:
        t = time.monotonic() - started
        soak.samples.append(await asyncio.to_thread(server.sample, t))
        if t >= seconds:
            return
        await asyncio.sleep(min(every, max(0.0, seconds - t)))


def run(args: argparse.Namespace) -> Soak:
    """One soak run (see the module docstring)."""
    root = Path(tempfile.mkdtemp(prefix="paigow-soak-"))
    try:
        tables = root / "tables.toml"
        tables.write_text("".join(TABLE.format(n=i) for i in range(args.tables)))
        server = Server(root / "data", tables, args.archive == "on", args.archive_after_s)
        soak = Soak()
        seconds = args.minutes * 60
        url = f"ws://127.0.0.1:{server.port}/"
        ids = [f"soak{i}" for i in range(args.tables)]

        bots = _bots(url, ids, args.bots)
        try:
            asyncio.run(_sample_every(server, soak, args.every, seconds))
            soak.breakdown = server.breakdown()
        finally:
            bots.kill()
            bots.wait()
            server.stop()
        return soak
    finally:
        shutil.rmtree(root, ignore_errors=True)


def report(args: argparse.Namespace, soak: Soak) -> dict[str, object]:
    """Print the figures; return them as a dict (``--json``)."""
    first, last = soak.samples[0], soak.samples[-1]
    after = args.archive_after_s + args.warmup_s
    rows: dict[str, object] = {
        "minutes": args.minutes,
        "tables": args.tables,
        "bots": args.bots,
        "archive": args.archive,
        "archive_after_s": args.archive_after_s,
        "slopes_after_s": after,
        "rounds": last.rounds - first.rounds,
        "python": platform.python_version(),
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs (shared with other work)",
    }
    print(
        f"soak: {args.minutes} min, {args.tables} tables, {args.bots} bots, archive "
        f"{args.archive} (after {args.archive_after_s:g}s), Python {platform.python_version()}"
        f", {os.cpu_count()} CPUs shared with other work; {last.rounds - first.rounds} rounds"
    )
    print(f"{'':18}{'start':>12}{'end':>12}{'slope/hour (after ' + str(int(after)) + 's)':>30}")
    for name, label, unit in (
        ("rss_kib", "server RSS", 1024),
        ("redis_used", "Redis used memory", 1),
        ("aof_bytes", "Redis AOF size", 1),
    ):
        slope = soak.slope_per_hour(name, after)
        scale = unit / 1e6  # MB
        start, end = getattr(first, name) * scale, getattr(last, name) * scale
        per_hour = None if slope is None else slope * scale
        shown = "n/a" if per_hour is None else f"{per_hour:+.2f} MB"
        print(f"{label:18}{start:>10.2f}MB{end:>10.2f}MB{shown:>30}")
        rows[name] = {"start_mb": start, "end_mb": end, "slope_mb_per_hour": per_hour}
    print("Redis's memory at the end, by kind of key (MEMORY USAGE):")
    for kind, size in list(soak.breakdown.items())[:8]:
        print(f"  {kind:40}{size / 1e6:>10.2f}MB")
    rows["breakdown_bytes"] = soak.breakdown
    return rows


def main(argv: list[str] | None = None) -> None:
    """``python -m bench.scenarios.soak``."""
    parser = argparse.ArgumentParser(prog="python -m bench.scenarios.soak", description=__doc__)
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--tables", type=int, default=10)
    parser.add_argument("--bots", type=int, default=60)
    parser.add_argument("--every", type=float, default=10.0, help="seconds between samples")
    parser.add_argument("--archive", choices=("on", "off"), default="on")
    parser.add_argument("--archive-after-s", type=float, default=60.0)
    parser.add_argument("--warmup-s", type=float, default=30.0, help="also left out of the slopes")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--play", metavar="URL", help=argparse.SUPPRESS)  # the bots' process
    parser.add_argument("--table-ids", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.play:
        asyncio.run(
            run_bots(args.play, args.table_ids.split(","), count=args.bots, rounds=10**9, bet=10)
        )
        return
    soak = run(args)
    rows = report(args, soak)
    if args.json:
        print(json.dumps(rows))


if __name__ == "__main__":
    main()
