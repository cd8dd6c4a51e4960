"""Failover through Sentinel: what ``WAIT`` costs per commit, and how long commits stop
when the primary dies.

A primary, a replica and three sentinels on this machine
(:class:`~bench.procs.topology.LocalSentinel`, failure detected after 1 s), the
store's real ``COMMIT`` script through a ``redis+sentinel://`` client:

1. one table committing one change after another, without and with ``WAIT 1`` (one
   ``WAIT`` per commit: its whole cost);
2. many tables at once, through the group commit (one ``WAIT`` per pipeline);
3. one table committing in a loop while the primary is killed with SIGKILL: the pause
   between the last commit acknowledged by the old primary and the first by the new.

Run with ``python -m bench.scenarios.redis_failover``.
"""

from __future__ import annotations

import asyncio
import sys
import time

from redis.exceptions import RedisError

from bench.procs.topology import LocalSentinel
from server.store.client.batching import Replication
from server.store.client.connection import close_client, redis_client
from server.store.errors import Unreplicated
from server.store.tables.commit_args import Write
from server.store.tables.store import TableStore

SEQUENTIAL = 400
TABLES = 100
PER_TABLE = 20
PART = b"x" * 300


async def _commits(store: TableStore, table: str, count: int) -> float:
    """Seconds for ``count`` commits of ``table``, one after another."""
    token = await store.leases.acquire(table, "bench", 600_000)
    assert token is not None
    start = time.perf_counter()
    for v in range(count):
        result = await store.commits.write(
            Write(
                table,
                token=token,
                expected_version=v,
                new_version=v + 1,
                parts={"h": PART},
                events=[(v + 1, b"e" * 120)],
            )
        )
        assert result.ok, result
    return time.perf_counter() - start


async def _cost(url: str) -> None:
    client = redis_client(url, 64, 30)
    try:
        plain = TableStore(client)
        waiting = TableStore(client, replication=Replication(1, 1000))
        await _commits(plain, "warm-plain", 50)  # connections made, scripts loaded
        await _commits(waiting, "warm-wait", 50)
        alone = waited = 0.0
        for round_no in range(4):  # in turns, so that a busy moment hits both alike
            alone += await _commits(plain, f"seq-plain-{round_no}", SEQUENTIAL // 4)
            waited += await _commits(waiting, f"seq-wait-{round_no}", SEQUENTIAL // 4)
        alone /= SEQUENTIAL
        waited /= SEQUENTIAL
        print(
            f"  one table, one commit after another: {alone * 1e6:.0f} us without WAIT, "
            f"{waited * 1e6:.0f} us with WAIT 1: WAIT costs {(waited - alone) * 1e6:.0f} us "
            "per commit",
            flush=True,
        )
        for name, store in (("without", plain), ("with", waiting)):
            before = store._batch.waits
            start = time.perf_counter()
            await asyncio.gather(
                *(_commits(store, f"many-{name}-{n}", PER_TABLE) for n in range(TABLES))
            )
            seconds = time.perf_counter() - start
            commits = TABLES * PER_TABLE
            waits = store._batch.waits - before  # a lease taking each, then the commits
            print(
                f"  {TABLES} tables at once, {name} WAIT: {commits / seconds:.0f} commits/s, "
                f"{seconds / commits * 1e6:.0f} us per commit"
                + (
                    f", {waits} WAITs ({(commits + TABLES) / waits:.1f} calls each)"
                    if waits
                    else ""
                ),
                flush=True,
            )
    finally:
        await close_client(client)


async def _pause(topology: LocalSentinel) -> None:
    client = redis_client(topology.url, 8, 30, socket_timeout=3.0)
    try:
        store = TableStore(client, replication=Replication(1, 1000))
        table = "failover"
        token = await store.leases.acquire(table, "bench", 600_000)
        assert token is not None
        version = 0
        last_ok = time.monotonic()
        killed: float | None = None
        errors = 0
        while True:
            try:
                result = await store.commits.write(
                    Write(
                        table,
                        token=token,
                        expected_version=version,
                        new_version=version + 1,
                        parts={"h": PART},
                    )
                )
            except (RedisError, OSError, Unreplicated):
                errors += 1
                await asyncio.sleep(0.01)
                stored = await _stored_version(store, table)
                version = stored if stored is not None else version
                continue
            if not result.ok:  # stored by an attempt whose reply was lost
                version = result.stored_version or version
                continue
            version += 1
            now = time.monotonic()
            if killed is not None:
                print(
                    f"  primary killed: commits stopped for {now - last_ok:.2f} s "
                    f"({now - killed:.2f} s after the kill; {errors} failed attempts), "
                    f"version {version} on the new primary",
                    flush=True,
                )
                return
            last_ok = now
            if version == 200:
                killed = time.monotonic()
                await asyncio.to_thread(topology.primary.kill)
    finally:
        await close_client(client)


async def _stored_version(store: TableStore, table: str) -> int | None:
    try:
        stored = await store.load(table)
    except (RedisError, OSError):
        return None
    return None if stored is None else stored.version


def main() -> None:
    """Print the figures."""
    print(
        "Failover through Sentinel (a primary, a replica, three sentinels on this machine; "
        f"down after 1 s), Python {sys.version.split()[0]}:",
        flush=True,
    )
    with LocalSentinel() as topology:
        asyncio.run(_cost(topology.url))
        asyncio.run(_pause(topology))


if __name__ == "__main__":
    main()
