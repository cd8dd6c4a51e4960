"""Redis topologies on one machine, from the one ``redis-server`` binary: a primary with
a replica and three sentinels (:class:`LocalSentinel`), a cluster of three primaries
(:class:`LocalCluster`). For the tests, the benches and an operator's failover drill;
loopback only, each process in a folder of its own, every one stopped on exit.

These are real processes, configured as ``deploy/`` configures them for production
(append-only file, no snapshots), with short failure-detection times.
"""

from __future__ import annotations

import contextlib
import random
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Any, Self

import redis
from redis.exceptions import RedisError

from server.store.embedded.child import parent_death_signal
from server.store.embedded.process import find_redis_server

SERVICE = "pg"
"""The service name the sentinels monitor."""


# Ports for the processes started here are drawn below Linux's ephemeral range (32768 and
# up by default), with their cluster bus ports (+10000) too: an outgoing connection is never
# given one between the check and the server's bind, and processes side by side (the test
# suite's parallel workers, another run) draw at random from 12,000, so they almost never
# try the same one at once. One process never hands out a port twice.
_PORTS = range(10_000, 22_000)
_handed_out: set[int] = set()


def _bindable(port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


def free_ports(count: int) -> int:
    """The first of ``count`` consecutive TCP ports free on 127.0.0.1 now, each with its
    cluster bus port (+10000) free too, none handed out before by this process."""
    for _ in range(1000):
        first = random.randrange(_PORTS.start, _PORTS.stop - count)
        ports = range(first, first + count)
        if _handed_out.isdisjoint(ports) and all(
            _bindable(p) and _bindable(p + 10_000) for p in ports
        ):
            _handed_out.update(ports)
            return first
    raise RuntimeError(f"no {count} consecutive free ports in {_PORTS}")


def free_port() -> int:
    """A TCP port free on 127.0.0.1 now (and its cluster bus port, +10000, too)."""
    return free_ports(1)


def command(client: redis.Redis, *args: Any) -> Any:
    """``client.execute_command(*args)`` (typed)."""
    return client.execute_command(*args)  # type: ignore[no-untyped-call]


def wait_for(check: Callable[[], bool], within: float, what: str) -> None:
    """Poll ``check`` until true; ``TimeoutError`` naming ``what`` after ``within`` s."""
    deadline = time.monotonic() + within
    while True:
        with contextlib.suppress(RedisError, OSError):
            if check():
                return
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {within} s waiting for {what}")
        time.sleep(0.02)


PORT_ATTEMPTS = 5
LOG_TAIL = 10
"""How many of its last log lines the error of a ``redis-server`` that exited quotes."""


class RedisExited(RuntimeError):
    """A started ``redis-server`` exited at once; the error quotes the tail of its log."""


class PortTaken(RedisExited):
    """A started ``redis-server`` exited at once as its port was taken meanwhile (its
    log says the address is in use)."""


class RedisProcess:
    """One ``redis-server`` (or sentinel) on a loopback port, its files in ``folder``."""

    def __init__(self, folder: Path, directives: dict[str, str], sentinel: bool = False):
        self.folder = folder
        self.port = free_port()
        self.sentinel = sentinel
        self.directives = {
            "port": str(self.port),
            "bind": "127.0.0.1",
            "daemonize": "no",
            "dir": f'"{folder}"',
            "logfile": '"redis.log"',
            **directives,
        }
        self.proc: subprocess.Popen[bytes] | None = None
        self._log_from = 0  # where this launch's lines begin in redis.log

    def start(self) -> None:
        """Start it (again, on the same port and files) and wait until it answers.

        The port is only free when chosen: another process (another test session's
        Redis, say) may take it before this one binds it. Then this one exits, and a
        ping would be answered by the other: so it waits for this process's own
        answer, and a first start takes another port (a restart keeps its port, which
        the other processes know). Any other early exit (a bad directive, a folder it
        cannot use) raises :class:`RedisExited` at once, with the log's reason."""
        first = self.proc is None
        for _ in range(PORT_ATTEMPTS if first else 1):
            self._launch(fresh=first)
            try:
                wait_for(self._answers, 10, f"redis-server on port {self.port}")
                return
            except PortTaken:
                if not first:
                    raise
                self.port = free_port()
                self.directives["port"] = str(self.port)
        raise PortTaken(f"no free port after {PORT_ATTEMPTS} attempts")

    def _launch(self, *, fresh: bool) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        conf = self.folder / "redis.conf"
        if fresh or not self.sentinel:  # a sentinel rewrites its own file: kept on a restart
            conf.write_text("".join(f"{k} {v}\n" for k, v in self.directives.items()))
        args = [find_redis_server(), str(conf), *(["--sentinel"] if self.sentinel else [])]
        log = self.folder / "redis.log"
        self._log_from = log.stat().st_size if log.exists() else 0
        # Errors in the configuration are printed, not logged: kept beside the log.
        with (self.folder / "redis.out").open("wb") as out:
            self.proc = subprocess.Popen(
                args,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                preexec_fn=parent_death_signal(),  # noqa: PLW1509 -- from the caller's thread
            )

    def _output(self) -> str:
        """What the last launch printed, then what it logged."""
        printed = (self.folder / "redis.out").read_bytes()
        logged = b""
        with contextlib.suppress(FileNotFoundError), (self.folder / "redis.log").open("rb") as f:
            f.seek(self._log_from)
            logged = f.read()
        return (printed + logged).decode(errors="replace")

    def _answers(self) -> bool:
        """Whether this process (not another on its port) answers; :class:`PortTaken`
        if it exited as its port was taken, :class:`RedisExited` if for another reason."""
        assert self.proc is not None
        if self.proc.poll() is not None:
            output = self._output()
            tail = "\n".join(output.strip().splitlines()[-LOG_TAIL:])
            what = f"redis-server on port {self.port} exited ({self.proc.returncode})"
            if "Address already in use" in output:
                raise PortTaken(f"{what}: its port is taken")
            raise RedisExited(f"{what}; its output ends:\n{tail}")
        with contextlib.closing(self.client()) as client:
            return int(client.info("server")["process_id"]) == self.proc.pid

    def client(self) -> redis.Redis:
        """A new client of this process (close it yourself)."""
        return redis.Redis(port=self.port, socket_timeout=2, decode_responses=True)

    def info(self, section: str) -> dict[str, object]:
        with contextlib.closing(self.client()) as client:
            found: dict[str, object] = client.info(section)
            return found

    def kill(self) -> None:
        """SIGKILL, as a crash would."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(10)

    def stop(self) -> None:
        """SIGTERM (SIGKILL after 10 s), reaped."""
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)


class _Topology:
    """Processes in one temporary folder, all stopped (and the folder removed) on exit."""

    def __init__(self) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="pg-topo-"))
        self.processes: list[RedisProcess] = []

    def _add(self, name: str, directives: dict[str, str], sentinel: bool = False) -> RedisProcess:
        process = RedisProcess(self.folder / name, directives, sentinel)
        self.processes.append(process)
        return process

    def close(self) -> None:
        """Stop every process and remove the folder."""
        for process in self.processes:
            with contextlib.suppress(Exception):
                process.stop()
        shutil.rmtree(self.folder, ignore_errors=True)

    def __enter__(self) -> Self:
        try:
            self.start()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def start(self) -> None:
        raise NotImplementedError


PERSISTENT = {"appendonly": "yes", "appendfsync": "everysec", "save": '""'}


class LocalSentinel(_Topology):
    """A primary, one replica and three sentinels watching them (quorum 2), with a
    failure detected after ``down_after_ms``."""

    def __init__(self, down_after_ms: int = 1000) -> None:
        super().__init__()
        self.down_after_ms = down_after_ms
        self.primary = self._add("primary", dict(PERSISTENT))
        self.replica = self._add("replica", dict(PERSISTENT))
        self.sentinels: list[RedisProcess] = []

    def start(self) -> None:
        self.primary.start()
        self.replica.directives["replicaof"] = f"127.0.0.1 {self.primary.port}"
        self.replica.start()
        wait_for(
            lambda: self.replica.info("replication").get("master_link_status") == "up",
            20,
            "the replica to sync",
        )
        for i in range(3):
            sentinel = self._add(
                f"sentinel{i}",
                {
                    "sentinel monitor": f"{SERVICE} 127.0.0.1 {self.primary.port} 2",
                    "sentinel down-after-milliseconds": f"{SERVICE} {self.down_after_ms}",
                    "sentinel failover-timeout": f"{SERVICE} 10000",
                    "sentinel parallel-syncs": f"{SERVICE} 1",
                },
                sentinel=True,
            )
            self.sentinels.append(sentinel)
            sentinel.start()
        wait_for(self._watching, 30, "the sentinels to know each other and the replica")

    def _watching(self) -> bool:
        for sentinel in self.sentinels:
            with contextlib.closing(sentinel.client()) as client:
                state: Any = client.sentinel_master(SERVICE)
                if int(state["num-other-sentinels"]) < 2 or int(state["num-slaves"]) < 1:
                    return False
        return True

    @property
    def url(self) -> str:
        """The server's ``redis+sentinel://`` URL for this topology."""
        hosts = ",".join(f"127.0.0.1:{s.port}" for s in self.sentinels)
        return f"redis+sentinel://{hosts}/{SERVICE}"

    def primary_port(self) -> int:
        """The port of the primary the sentinels name now."""
        with contextlib.closing(self.sentinels[0].client()) as client:
            address: Any = client.sentinel_get_master_addr_by_name(SERVICE)
            return int(address[1])

    def wait_promoted(self, within: float = 30) -> None:
        """Wait until the replica is the primary (after the primary died)."""
        wait_for(
            lambda: (
                self.replica.info("replication").get("role") == "master"
                and self.primary_port() == self.replica.port
            ),
            within,
            "the replica's promotion",
        )


class LocalCluster(_Topology):
    """A Redis Cluster of ``primaries`` primaries (no replicas), every slot covered."""

    def __init__(self, primaries: int = 3) -> None:
        super().__init__()
        self.nodes = [
            self._add(
                f"node{i}",
                {
                    **PERSISTENT,
                    "cluster-enabled": "yes",
                    "cluster-config-file": "nodes.conf",
                    "cluster-node-timeout": "2000",
                },
            )
            for i in range(primaries)
        ]

    def start(self) -> None:
        for node in self.nodes:
            node.start()
        # The slots split evenly (CLUSTER ADDSLOTS), then every node meets the first.
        share = 16384 // len(self.nodes)
        for i, node in enumerate(self.nodes):
            first = i * share
            last = 16383 if i == len(self.nodes) - 1 else first + share - 1
            with contextlib.closing(node.client()) as client:
                command(client, "CLUSTER", "ADDSLOTS", *range(first, last + 1))
                if i > 0:
                    command(client, "CLUSTER", "MEET", "127.0.0.1", self.nodes[0].port)
        wait_for(self._ok, 30, "the cluster to agree")

    def _ok(self) -> bool:
        for node in self.nodes:
            with contextlib.closing(node.client()) as client:
                text = command(client, "CLUSTER", "INFO")
                info = dict(line.split(":", 1) for line in str(text).split() if ":" in line)
                if info["cluster_state"] != "ok" or int(info["cluster_known_nodes"]) < len(
                    self.nodes
                ):
                    return False
        return True

    @property
    def url(self) -> str:
        """A ``redis+cluster://`` URL naming every node."""
        hosts = ",".join(f"127.0.0.1:{n.port}" for n in self.nodes)
        return f"redis+cluster://{hosts}"
