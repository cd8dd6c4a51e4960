"""A server killed with SIGKILL, restarted on the same data folder: its old embedded
Redis, still exiting, must not take the new one's socket (or append-only file) with it.

Real processes: ``python -m server`` on its embedded Redis. The old ``redis-server`` is
held stopped (SIGSTOP) across the kill, so that it exits only after the new server
got as far as it can; then it is let go. The new server waits for it instead of
starting a second Redis on the same socket and file: the operator's ``audit`` reaches
the new Redis, and SIGTERM stops the server at once.
"""

from __future__ import annotations

import os
import shutil
import signal
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from protocol.messages import GetBalance, Join
from protocol.structs import Balances
from tests.helpers import until
from tests.server.helpers import Client, quick_tables
from tests.server.processes import ServerProcess, run_cli

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="uses /proc")

SECRET = "embedded-restart-secret-0123456789"


def children(pid: int) -> list[int]:
    """The live child processes of ``pid``."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            stat = (proc / "stat").read_text()
        except OSError:
            continue
        state, ppid = stat.rsplit(")", 1)[1].split()[:2]
        if int(ppid) == pid and state not in ("Z", "X"):
            found.append(int(proc.name))
    return found


def gone(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] in ("Z", "X")


@pytest.fixture
def data_dir() -> Iterator[Path]:
    """A short folder: the socket path stays inside it (no temporary socket folder)."""
    folder = Path(tempfile.mkdtemp(prefix="pg-emb-"))
    yield folder / "data"
    shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.asyncio
async def test_the_old_redis_exits_after_the_new_server_started(
    data_dir: Path, tmp_path: Path
) -> None:
    tables = tmp_path / "tables.toml"
    tables.write_text(quick_tables("e"))
    args = [
        "--port",
        "0",
        "--data-dir",
        str(data_dir),
        "--tables-file",
        str(tables),
        "--token-secret",
        SECRET,
        "--lease-ms",
        "1000",
        "serve",
    ]
    first = ServerProcess(args, tmp_path / "first.log")
    second: ServerProcess | None = None
    stopped: int | None = None
    try:
        await first.started()
        player = await Client.hello(first.url)
        await player.ok(Join, table_id="e", buy_in=1000)
        token = player.welcome.resume_token if player.welcome is not None else None
        await player.close()
        [old_redis] = children(first.proc.pid)

        os.kill(old_redis, signal.SIGSTOP)  # it will exit late
        stopped = old_redis
        first.kill()  # the kernel sends the old Redis SIGTERM: pending while stopped

        second = ServerProcess(args, tmp_path / "second.log")

        def as_far_as_it_gets() -> bool:
            assert second is not None
            out = second.output()
            return "listening on" in out or f"redis-server (pid {old_redis})" in out

        await until(as_far_as_it_gets, 30, "the new server to start or to wait")
        os.kill(old_redis, signal.SIGCONT)
        stopped = None
        await until(lambda: gone(old_redis), 20, "the old redis-server to exit")
        await second.started(30)

        # The operator's commands reach the new server's Redis, and nothing was lost.
        done = run_cli(["--data-dir", str(data_dir), "audit"])
        assert done.returncode == 0, done.stdout + done.stderr
        assert "accounts (1)" in done.stdout
        again = await Client.hello(second.url, resume_token=token)
        balances = await again.ok(GetBalance)
        assert isinstance(balances, Balances)
        # Seated, or stood up after the grace period: every chip is there either way.
        assert balances.account + sum(b.balance for b in balances.tables) == 10_000
        await again.close()
        [new_redis] = children(second.proc.pid)

        # SIGTERM stops it promptly (not after a 10 s wait for a Redis it cannot reach).
        began = time.monotonic()
        second.terminate()
        assert await second.exited(20) == 0, second.output()[-3000:]
        assert time.monotonic() - began < 8, second.output()[-3000:]
        assert gone(new_redis)
    finally:
        if stopped is not None:
            os.kill(stopped, signal.SIGCONT)
        first.close()
        if second is not None:
            second.close()
