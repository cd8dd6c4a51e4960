"""The door's memory soak: waves of connections that come and go against a real
``paigow-server`` process, its RSS printed after each wave.

Two kinds of waves, each bounded in count and time:

- *silent*: ``--silent`` WebSocket connections that never send ``hello``; the server
  closes each at its handshake time (``--handshake-ms``, 4003);
- *guests*: ``--guests`` connections that say ``hello`` as new guests and close.

After each wave it waits until the server's ``paigow_connections`` is 0 again and
prints the server's RSS (``/proc``), and at the end each series against its level after
the first wave. Connections come from ``--sources`` loopback addresses (127.0.0.1,
127.0.0.2, ...), fewer than the per-address limits each, so that the soak measures the
memory of connections served, not of connections refused.

    python -m bench.scenarios.door_soak --waves 20 --silent 3000 --guests 2000

With ``--server-env PAIGOW_DEBUG_MEMORY=PATH`` the server writes a memory report
(server/gateway/memory.py) to ``PATH`` on SIGUSR2, which ``--report`` sends after each
wave; ``--server-env`` also sets the server's allocator (``PYTHONMALLOC=malloc``,
``MALLOC_ARENA_MAX=2``) for a comparison.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import websockets

from bench.procs.procfs import raise_fd_limit, rss_kib
from bench.procs.topology import free_port
from protocol.codec import decode_server, encode
from protocol.messages import Hello, OkReply
from protocol.version import PROTOCOL_VERSION

ROOT = Path(__file__).resolve().parents[2]
REQUEST = (
    b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
    b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
)


def source(i: int, sources: int) -> str:
    """The loopback address of the ``i``-th connection."""
    return f"127.0.0.{1 + i % sources}"


async def silent(port: int, address: str, held: asyncio.Event) -> bool:
    """One connection that upgrades and then says nothing until the server closes it:
    whether it was upgraded (101)."""
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", port, local_addr=(address, 0))
    except OSError:
        return False
    try:
        head = await reader.readuntil(b"\r\n\r\n") if await _send(writer) else b""
        upgraded = head.startswith(b"HTTP/1.1 101")
        await held.wait()
        with contextlib.suppress(OSError, asyncio.IncompleteReadError):
            while await reader.read(4096):
                pass  # the close frame, then the end
        return upgraded
    except (OSError, asyncio.IncompleteReadError):
        return False
    finally:
        writer.close()
        with contextlib.suppress(OSError):
            await writer.wait_closed()


async def _send(writer: asyncio.StreamWriter) -> bool:
    writer.write(REQUEST)
    await writer.drain()
    return True


async def guest(port: int, address: str, n: int) -> bool:
    """One new guest that says hello and leaves: whether it was welcomed."""
    hello = Hello(
        rid="1",
        min_version=PROTOCOL_VERSION,
        max_version=PROTOCOL_VERSION,
        client="door-soak",
        guest=True,
        name=f"soak{n}",
    )
    try:
        async with websockets.connect(
            f"ws://127.0.0.1:{port}/", compression=None, local_addr=(address, 0)
        ) as ws:
            await ws.send(encode(hello))
            reply = decode_server(await ws.recv(decode=False))
            return isinstance(reply, OkReply)
    except (OSError, websockets.exceptions.WebSocketException):
        return False


def connections(port: int) -> int:
    """The server's ``paigow_connections``."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as reply:
        for line in reply.read().decode().splitlines():
            if line.startswith("paigow_connections "):
                return int(float(line.split()[1]))
    raise RuntimeError("no paigow_connections in /metrics")


async def settle(port: int, within: float = 60) -> None:
    """Wait until the server holds no connection."""
    end = time.monotonic() + within
    while time.monotonic() < end:
        if not await asyncio.to_thread(connections, port):
            return
        await asyncio.sleep(0.2)


async def silent_wave(port: int, count: int, sources: int) -> int:
    held = asyncio.Event()
    tasks = [asyncio.create_task(silent(port, source(i, sources), held)) for i in range(count)]
    await asyncio.sleep(0)
    held.set()
    return sum(await asyncio.gather(*tasks))


async def guest_wave(port: int, count: int, sources: int, base: int) -> int:
    limit = asyncio.Semaphore(200)

    async def one(i: int) -> bool:
        async with limit:
            return await guest(port, source(i, sources), base + i)

    return sum(await asyncio.gather(*(one(i) for i in range(count))))


def start_server(
    folder: Path, port: int, handshake_ms: int, extra: list[str], environ: list[str]
) -> subprocess.Popen[bytes]:
    command = [
        sys.executable,
        "-m",
        "server",
        "--port",
        str(port),
        "--data-dir",
        str(folder),
        "--handshake-ms",
        str(handshake_ms),
        "--max-connections",
        "20000",
        "--guests-per-minute",
        "0",
        "--guests-per-address",
        "0",
        "--archive-url",
        "off",
        "--log-level",
        "warning",
        *extra,
        "serve",
    ]
    log = open(folder / "server.log", "wb")  # noqa: SIM115 (the process's, closed with it)
    env = {**os.environ, **dict(e.split("=", 1) for e in environ)}
    proc = subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    end = time.monotonic() + 60
    while time.monotonic() < end:
        with contextlib.suppress(OSError):
            urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=2)
            return proc
        if proc.poll() is not None:
            break
        time.sleep(0.2)
    proc.kill()
    raise RuntimeError("the server did not start:\n" + (folder / "server.log").read_text()[-3000:])


def percent(series: list[int]) -> str:
    first = series[0]
    return ", ".join(f"{(v - first) / first * 100:+.1f}%" for v in series)


async def soak(args: argparse.Namespace) -> None:
    raise_fd_limit()
    with tempfile.TemporaryDirectory(prefix="door-soak-") as tmp:
        folder = Path(tmp)
        port = free_port()
        proc = start_server(folder, port, args.handshake_ms, args.server_arg, args.server_env)
        try:
            start_mb = rss_kib(proc.pid) / 1024
            print(f"server pid {proc.pid} on port {port}; RSS at start: {start_mb:.1f} MB")
            series: dict[str, list[int]] = {}
            for kind in args.kinds:
                rss = series[kind] = []
                for wave in range(args.waves):
                    started = time.monotonic()
                    if kind == "silent":
                        done = await silent_wave(port, args.silent, args.sources)
                        asked = args.silent
                    else:
                        done = await guest_wave(port, args.guests, args.sources, wave * args.guests)
                        asked = args.guests
                    await settle(port)
                    await asyncio.sleep(args.pause)
                    rss.append(rss_kib(proc.pid))
                    print(
                        f"{kind} wave {wave + 1:2d}: {done}/{asked} served in "
                        f"{time.monotonic() - started:5.1f} s; RSS {rss[-1] / 1024:6.1f} MB",
                        flush=True,
                    )
                    if args.report:
                        proc.send_signal(signal.SIGUSR2)
                        await asyncio.sleep(2)
            for kind, rss in series.items():
                print(f"{kind}: RSS MB " + ", ".join(f"{v / 1024:.1f}" for v in rss))
                print(f"{kind}: against wave 1: {percent(rss)}")
                print(f"{kind}: last against first: {(rss[-1] - rss[0]) / rss[0] * 100:+.1f}%")
        finally:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(60)
            except subprocess.TimeoutExpired:
                proc.kill()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--waves", type=int, default=20)
    parser.add_argument("--silent", type=int, default=3000, help="silent sockets a wave")
    parser.add_argument("--guests", type=int, default=2000, help="guests a wave")
    parser.add_argument("--sources", type=int, default=40, help="loopback source addresses")
    parser.add_argument("--handshake-ms", type=int, default=3000)
    parser.add_argument("--pause", type=float, default=1.0, help="seconds after a wave")
    parser.add_argument("--kinds", nargs="+", default=["silent", "guests"])
    parser.add_argument("--report", action="store_true", help="SIGUSR2 after each wave")
    parser.add_argument(
        "--server-arg", action="append", default=[], help="one more server argument"
    )
    parser.add_argument(
        "--server-env", action="append", default=[], help="KEY=VALUE in the server's environment"
    )
    args = parser.parse_args(argv)
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    asyncio.run(soak(args))


if __name__ == "__main__":
    main()
