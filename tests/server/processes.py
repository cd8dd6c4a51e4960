"""The server as a process for the tests: ``python -m server`` running (its output in a log
file) or run to completion, its command line, a free port, a plain HTTP GET."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Sequence
from pathlib import Path

from bench.procs import topology
from tests.helpers import until

ROOT = Path(__file__).resolve().parents[2]
"""The checkout: where ``python -m server`` runs."""

_LISTENING = re.compile(r"listening on ws://[^:]+:(\d+)/")


class ServerProcess:
    """``python -m server`` as a child process, its output in a log file."""

    def __init__(
        self,
        args: Sequence[str],
        log: Path,
        env: dict[str, str] | None = None,
        module: str = "server",
    ) -> None:
        """``module``: run as ``python -m module`` (a test's seam around the server)."""
        self.log = log
        self._log_file = log.open("ab")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", module, *args],
            cwd=ROOT,
            stdin=subprocess.DEVNULL,
            stdout=self._log_file,
            stderr=subprocess.STDOUT,
            env={**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})},
        )
        self.port: int | None = None

    @property
    def url(self) -> str:
        assert self.port is not None
        return f"ws://127.0.0.1:{self.port}/"

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    async def started(self, within: float = 20.0) -> int:
        """Wait for the 'listening' line (printed once every table is hosted)."""

        def listening() -> int | None:
            if self.proc.poll() is not None:
                raise AssertionError(f"the server exited early:\n{self.output()[-3000:]}")
            match = _LISTENING.search(self.output())
            return int(match.group(1)) if match else None

        self.port = await until(listening, within, "the server to listen")
        return self.port

    async def serving(self, port: int, within: float = 20.0) -> None:
        """Wait until the server answers ``/healthz`` on ``port`` (given with ``--port``).

        It accepts WebSockets from then on, maybe before its tables are hosted: unlike
        :meth:`started`, this does not wait for the tables.
        """

        async def answers() -> int | None:
            if self.proc.poll() is not None:
                raise AssertionError(f"the server exited early:\n{self.output()[-3000:]}")
            try:
                status, _ = await asyncio.to_thread(http_get, port, "/healthz")
            except OSError:  # not listening yet
                return None
            return port if status == 200 else None

        self.port = await until(answers, within, "the server to answer", every=0.05)

    def kill(self) -> None:
        """SIGKILL, at once."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)

    def terminate(self) -> None:
        """SIGTERM (graceful shutdown)."""
        self.proc.send_signal(signal.SIGTERM)

    async def exited(self, within: float = 20.0) -> int:
        await until(lambda: self.proc.poll() is not None, within, "the server to exit")
        return self.proc.returncode

    def close(self) -> None:
        """Kill if still running, reap, close the log."""
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(10)
        self._log_file.close()


def server_args(
    redis_url: str,
    tables_file: Path,
    data_dir: Path,
    *,
    secret: str,
    lease_ms: int = 1000,
    port: int = 0,
    extra: Sequence[str] = (),
) -> list[str]:
    """The command line of a server on ``redis_url``."""
    return [
        "--redis-url",
        redis_url,
        "--port",
        str(port),
        "--tables-file",
        str(tables_file),
        "--data-dir",
        str(data_dir),
        "--token-secret",
        secret,
        "--lease-ms",
        str(lease_ms),
        # Many guests come from one address here: the limits have tests of their own.
        "--guests-per-minute",
        "0",
        "--guests-per-address",
        "0",
        *extra,
        "serve",
    ]


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now, for a server that must be reached before
    it prints its port (drawn as :func:`bench.procs.topology.free_port` draws them, so
    that parallel workers and outgoing connections do not take it first)."""
    return topology.free_port()


CLI_WITHIN_S = 120.0
"""How long one command may take: about 1 s of CPU (its imports), but on a loaded
two-core machine one took over 30 s, its output complete and its exit 0."""


def run_cli(
    args: Sequence[str],
    within: float = CLI_WITHIN_S,
    env: dict[str, str] | None = None,
    cwd: Path = ROOT,
) -> subprocess.CompletedProcess[str]:
    """``python -m server ARGS`` to completion in ``cwd``, with ``env`` added to the
    environment."""
    return subprocess.run(
        [sys.executable, "-m", "server", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=within,
        check=False,
        env={**os.environ, **(env or {})},
    )


def http_get(port: int, path: str) -> tuple[int, str]:
    """Status and body of a plain HTTP GET (blocking; call it in a thread)."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        with exc:
            return exc.code, exc.read().decode()
