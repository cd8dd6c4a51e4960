"""``python -m bench.scenarios.wallet_latency``: what wallet mode adds to a buy-in.

A buy-in in wallet mode does, before the table's commit, what the built-in accounts do
not: the intent written in Redis, the wallet's debit over HTTP (the reference wallet,
SQLite with a synchronous commit, on loopback), the intent applied. This measures that
step (``Funding.debit``), one buy-in after another, and prints its p50 and p99, beside
the HTTP round trip alone (a status query) for scale. The release after the reply, and
the credit that sends the chips back, are not in the reply's path and not measured.
Figures are printed, never asserted.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import redis.asyncio

from bench.procs.topology import RedisProcess
from server.store import WalletStore
from server.wallet import Funding, WalletClient

SECRET = "bench-wallet-secret-0123456789"
BUY_INS = 400
PLAYERS = 20


def _percentile(samples: list[float], p: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(p / 100 * len(ordered)))]


def _start_wallet(folder: Path) -> tuple[subprocess.Popen[bytes], str]:
    out = folder / "wallet.out"
    with out.open("wb") as stdout, (folder / "wallet.log").open("ab") as stderr:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "server.wallet.reference",
                "--port",
                "0",
                "--secret",
                SECRET,
                "--db",
                str(folder / "wallet.sqlite3"),
                "--opening-balance",
                str(10**12),
            ],
            stdout=stdout,
            stderr=stderr,
            stdin=subprocess.DEVNULL,
        )
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        line, newline, _ = out.read_bytes().partition(b"\n")
        if newline:
            return proc, f"http://127.0.0.1:{json.loads(line)['listening']}/"
        time.sleep(0.05)
    proc.kill()
    raise RuntimeError("the reference wallet did not start")


async def _measure(redis_port: int, url: str) -> tuple[list[float], list[float]]:
    client = redis.asyncio.Redis(host="127.0.0.1", port=redis_port)
    funding = Funding(WalletStore(client), WalletClient(url, SECRET))
    debits: list[float] = []
    trips: list[float] = []
    try:
        for i in range(BUY_INS + 20):  # the first 20 warm up (connections, scripts)
            player = f"p{i % PLAYERS}"
            started = time.perf_counter()
            hold = await funding.debit(player, f"bench:{i}", 100, "buy_in")
            elapsed = time.perf_counter() - started
            assert hold is not None
            await funding.store.release(player, hold.base, hold.txid, taken=True)
            started = time.perf_counter()
            await funding.client.status(hold.txid)
            trip = time.perf_counter() - started
            if i >= 20:
                debits.append(elapsed)
                trips.append(trip)
    finally:
        await funding.stop()
        await client.aclose()
    return debits, trips


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="wallet-bench-") as tmp:
        folder = Path(tmp)
        store = RedisProcess(folder / "redis", {"appendonly": "no", "save": '""'})
        store.start()
        wallet, url = _start_wallet(folder)
        try:
            debits, trips = asyncio.run(_measure(store.port, url))
        finally:
            wallet.terminate()
            wallet.wait(10)
            store.stop()
    ms = 1000.0
    print(f"wallet mode: a buy-in's debit through the reference wallet, {len(debits)} buy-ins")
    print(
        f"  added before the table's commit: p50 {_percentile(debits, 50) * ms:.2f} ms, "
        f"p99 {_percentile(debits, 99) * ms:.2f} ms, mean {statistics.mean(debits) * ms:.2f} ms"
    )
    print(
        f"  of which one HTTP round trip (a status query): p50 "
        f"{_percentile(trips, 50) * ms:.2f} ms, p99 {_percentile(trips, 99) * ms:.2f} ms"
    )


if __name__ == "__main__":
    main()
