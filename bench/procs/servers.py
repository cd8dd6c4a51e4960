"""The servers under test as processes: the game server on its embedded Redis and the
bare ``websockets`` server, each pinned to a CPU of its own where the machine has two or
more, with its Redis's background rewrites moved off that CPU."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path

from bench.procs.output import wait_line
from bench.procs.procfs import children

ROOT = Path(__file__).resolve().parents[2]
"""The checkout the benchmarks run from."""


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


def pin(pid: int, cpus: set[int] | None) -> None:
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
                        pin(child, self.cpus)
                        with contextlib.suppress(OSError):
                            os.setpriority(os.PRIO_PROCESS, child, 19)

    def stop(self) -> None:
        self._done.set()
        self.join()


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def stop_process(proc: subprocess.Popen[str], seconds: float = 30.0) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(seconds)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


LOAD_FROM_LOOPBACK = {
    "PAIGOW_CONNECTIONS_PER_ADDRESS": "0",
    "PAIGOW_HANDSHAKES_PER_ADDRESS": "0",
}
"""The door's limits off for a benchmark's servers: every player of the load comes from
127.0.0.1, and one address may otherwise hold 1,000 connections and 100 handshakes
(server/gateway/admission.py). Variables, not flags: an older checkout measured beside
this one (``PAIGOW_BENCH_SERVER_ROOT``) ignores them instead of refusing to start."""


def child_env(root: Path) -> dict[str, str]:
    env = {**os.environ, **LOAD_FROM_LOOPBACK}
    env["PYTHONPATH"] = str(root)
    return env


class GameServer:
    """``python -m server`` on its embedded Redis, in ``data_dir``."""

    def __init__(self, root: Path, data_dir: Path, tables: Path, profile: Path | None) -> None:
        self.port = free_port()
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
            command = [sys.executable, "-m", "bench.procs.profiled", str(profile), *args]
        else:
            command = [sys.executable, "-m", "server", *args]
        self.log_path = data_dir.parent / f"{data_dir.name}.log"
        self.log = self.log_path.open("w")
        self.proc = subprocess.Popen(
            command,
            cwd=root,
            env=child_env(root)
            if profile is None
            else {**child_env(root), "PYTHONPATH": f"{root}:{ROOT}"},
            stdout=subprocess.PIPE,
            stderr=self.log,
            text=True,
        )
        pin(self.proc.pid, CPUS[0] if CPUS else None)
        try:
            wait_line(self.proc, r"paigow-server listening", 180)
        except RuntimeError:
            self.stop()
            raise
        redis_pids = children(self.proc.pid)
        for pid in redis_pids:  # its Redis: see REDIS_BESIDE_SERVER
            pin(pid, (CPUS[0] if REDIS_BESIDE_SERVER else CPUS[1]) if CPUS else None)
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
        stop_process(self.proc)
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
    """``python -m bench.procs.bare``."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "bench.procs.bare", "--port", "0"],
            cwd=ROOT,
            env=child_env(ROOT),
            stdout=subprocess.PIPE,
            text=True,
        )
        pin(self.proc.pid, CPUS[0] if CPUS else None)
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
        stop_process(self.proc, 10)
