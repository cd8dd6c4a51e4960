"""What one archiver pass costs: ``python -m bench.scenarios.archive_pass``.

An embedded Redis holds the ledger streams of ``--tables`` tables and ``--players``
accounts (a few entries each, written with XADD in the store's entry format, each
owner's ``n`` counting them: every stream holds all its entries), and a SQLite archive
in a temporary folder takes them. Three passes, each with a probe task that sleeps
5 ms and records how late it wakes (the longest stall of the event loop):

1. the first pass: every stream is new (its first checkpoint, its players noted);
2. a second pass with nothing to do;
3. a pass after every table's stream got new entries.

The retention window is an hour and every entry is fresh, so no pass moves ledger
entries: what is measured is the cost of visiting the streams. Figures, not a test.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import redis.asyncio

from server.archive import Archive
from server.archive.mover import Archiver
from server.store.archiving.source import ArchivingCalls
from server.store.embedded.process import EmbeddedRedis
from server.store.keys import Keys
from server.store.tables.store import StoredTable

HOUR_MS = 3_600_000
CHUNK = 500  # streams written per pipeline


def _table_money(stored: StoredTable) -> tuple[int, int, int]:
    del stored
    return 0, 0, 0  # never read: every stream holds all its entries (a zero checkpoint)


def _entry(key: str, player: str, table_id: str) -> dict[str, str]:
    return {
        "key": key,
        "kind": "bet",
        "player": player,
        "amount": "50",
        "source": "table",
        "dest": "held",
        "table": table_id,
    }


async def _write(
    client: redis.asyncio.Redis, keys: Keys, tables: int, players: int, each: int, tag: str
) -> None:
    """``each`` entries more in every table's stream and, unless ``players`` is 0, in
    every account's; the owners' ``n`` follows."""
    owners = [
        (keys.table_state(f"t{i}"), keys.table_ledger(f"t{i}"), f"t{i}") for i in range(tables)
    ]
    owners += [(keys.account(f"p{i}"), keys.account_ledger(f"p{i}"), "") for i in range(players)]
    for start in range(0, len(owners), CHUNK):
        async with client.pipeline(transaction=False) as pipe:
            for owner, stream, table_id in owners[start : start + CHUNK]:
                for n in range(each):
                    player = f"p{(start + n) % max(players, 1)}"
                    pipe.xadd(stream, _entry(f"{stream}:{tag}:{n}", player, table_id))  # type: ignore[arg-type]
                pipe.hincrby(owner, "n", each)
            await pipe.execute()
    if tag == "a":
        for start in range(0, tables, CHUNK):
            await client.sadd(
                keys.tables(), *[f"t{i}" for i in range(start, min(start + CHUNK, tables))]
            )
        for start in range(0, players, CHUNK):
            await client.sadd(
                keys.accounts(), *[f"p{i}" for i in range(start, min(start + CHUNK, players))]
            )


async def _measured(what: str, work: Callable[[], Awaitable[object]]) -> None:
    """Run ``work`` beside a probe that sleeps 5 ms at a time; print its duration and
    the probe's longest lateness."""
    late: list[float] = [0.0]
    done = asyncio.Event()

    async def probe() -> None:
        while not done.is_set():
            asked = time.perf_counter()
            await asyncio.sleep(0.005)
            late.append(time.perf_counter() - asked - 0.005)

    task = asyncio.create_task(probe())
    started = time.perf_counter()
    await work()
    took = time.perf_counter() - started
    done.set()
    await task
    stalls = sorted(late)
    print(
        f"{what:<44} {took * 1000:9.0f} ms   longest stall {stalls[-1] * 1000:7.1f} ms"
        f"   stalls > 50 ms: {sum(1 for s in stalls if s > 0.05)}",
        flush=True,
    )


async def _run(folder: Path, tables: int, players: int, each: int) -> None:
    keys = Keys()
    with EmbeddedRedis(folder / "redis") as server:
        client = server.client()
        archive = Archive(f"sqlite:{folder / 'archive.sqlite3'}")
        try:
            await _write(client, keys, tables, players, each, "a")
            print(
                f"{tables} table streams and {players} account streams, {each} entries each;"
                " SQLite archive",
                flush=True,
            )
            archiver = Archiver(ArchivingCalls(client), archive, _table_money, after_ms=HOUR_MS)
            await _measured("first pass (every stream new)", archiver.run_once)
            await _measured("second pass (nothing to do)", archiver.run_once)
            await _write(client, keys, tables, 0, each, "b")
            await _measured(f"pass after {tables} table streams grew", archiver.run_once)
        finally:
            await archive.close()
            await client.aclose()


def main() -> None:
    """Print the figures of three passes (see the module docstring)."""
    parser = argparse.ArgumentParser(
        prog="python -m bench.scenarios.archive_pass", description=__doc__
    )
    parser.add_argument("--tables", type=int, default=1667)
    parser.add_argument("--players", type=int, default=10_000)
    parser.add_argument("--entries", type=int, default=3, help="entries per stream")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="archive-pass-") as folder:
        asyncio.run(_run(Path(folder), args.tables, args.players, args.entries))


if __name__ == "__main__":
    main()
