"""A bare ``websockets`` server doing the game server's traffic, with no Redis: the limit.

It speaks just enough of PROTOCOL.md for :class:`clients.core.Client` (``hello``,
``watch``, ``join``, ``ping``, ``bet``), so the load driver runs the very same client
code against it as against the game server. Each ``bet`` is one msgpack message in,
one ``ok`` reply out, and one ``bet_placed`` event broadcast to every connection at
its table (six for a full table), with a per-table ``seq``: the game server's traffic
for a bet, minus the state machine, the store and Redis. What it measures is what
Python, the event loop and ``websockets`` cost on this machine for that traffic.

Run by ``bench/scenarios/server.py``: ``python -m bench.procs.bare --port 0`` prints
``bare listening on PORT`` once it accepts connections, and runs until SIGTERM.
The event loop is uvloop when installed (as ``paigow-server``'s), and the collector
runs as the game server's (``server/collector.py``), so the two compare like for like.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import itertools
import signal
import sys
import time
from dataclasses import dataclass, field
from typing import Any

import msgpack
from websockets.asyncio.server import ServerConnection, broadcast, serve
from websockets.exceptions import ConnectionClosed

from protocol import limits as L
from protocol.codec import encode
from protocol.messages import OkReply, Pong, Snapshot
from protocol.structs import Joined, SeatView, Welcome
from server.collector import THRESHOLDS, collect_on_a_timer

HEARTBEAT_MS = 20_000
BALANCE = 1_000_000


@dataclass
class BareTable:
    """A table as the bare server knows it: its seq and the connections at each seat."""

    table_id: str
    seq: int = 0
    seats: dict[int, ServerConnection] = field(default_factory=dict)
    watchers: dict[ServerConnection, None] = field(default_factory=dict)

    def snapshot(self, seat: int | None) -> bytes:
        views = tuple(
            SeatView(
                seat=i,
                status="playing" if i in self.seats else "empty",
                balance=BALANCE if i in self.seats else 0,
                bet=0,
                bonus=0,
                hand_set=False,
                player_id=f"seat-{i}" if i in self.seats else None,
                name=f"seat-{i}" if i in self.seats else None,
            )
            for i in range(L.SEATS_PER_TABLE)
        )
        return encode(
            Snapshot(
                table_id=self.table_id,
                seq=self.seq,
                round=1,
                phase="betting",
                server_time_ms=time.time_ns() // 1_000_000,
                seats=views,
                your_seat=seat,
            )
        )


class Bare:
    """The bare server's state: tables by id, and a player counter for ids."""

    def __init__(self) -> None:
        self.tables: dict[str, BareTable] = {}
        self.ids = itertools.count(1)
        self.packb = msgpack.Packer(use_bin_type=True).pack
        self.unpackb = msgpack.unpackb

    def table(self, table_id: str) -> BareTable:
        table = self.tables.get(table_id)
        if table is None:
            table = self.tables[table_id] = BareTable(table_id)
        return table

    async def handle(self, ws: ServerConnection) -> None:
        n = next(self.ids)
        mine: list[tuple[BareTable, int | None]] = []
        packb, unpackb = self.packb, self.unpackb
        try:
            hello = unpackb(await ws.recv(decode=False))
            welcome = Welcome(
                version=1,
                minor=0,
                session_id=f"s{n}",
                resume_token=f"r{n}",
                player_id=f"bare-{n}",
                name=f"bare-{n}",
                guest=True,
                resumed=False,
                server_time_ms=time.time_ns() // 1_000_000,
                heartbeat_ms=HEARTBEAT_MS,
            )
            await ws.send(encode(OkReply(rid=hello["rid"], result=welcome)))
            async for frame in ws:
                m: dict[str, Any] = unpackb(frame)  # type: ignore[arg-type]
                kind = m["type"]
                rid = m["rid"]
                if kind == "bet":
                    table = self.tables[m["table_id"]]
                    table.seq += 1
                    at = next((s for s, c in table.seats.items() if c is ws), 0)
                    await ws.send(packb({"type": "ok", "rid": rid, "result": None}))
                    event = {
                        "type": "bet_placed",
                        "table_id": table.table_id,
                        "seq": table.seq,
                        "round": 1,
                        "seat": at,
                        "amount": m["amount"],
                        "bonus": m.get("bonus", 0),
                        "balance": BALANCE - m["amount"],
                    }
                    broadcast(table.watchers, packb(event))
                elif kind == "ping":
                    now = time.time_ns() // 1_000_000
                    await ws.send(encode(Pong(rid=rid, server_time_ms=now, time_ms=m["time_ms"])))
                elif kind in ("watch", "join"):
                    table = self.table(m["table_id"])
                    seat: int | None = None
                    if kind == "join":
                        seat = m.get("seat")
                        if seat is None:
                            seat = min(set(range(L.SEATS_PER_TABLE)) - set(table.seats))
                        table.seats[seat] = ws
                        joined = Joined(
                            table_id=table.table_id,
                            seat=seat,
                            table_balance=m["buy_in"],
                            account=BALANCE,
                        )
                        await ws.send(table.snapshot(seat))
                        await ws.send(encode(OkReply(rid=rid, result=joined)))
                    else:
                        await ws.send(encode(OkReply(rid=rid)))
                        await ws.send(table.snapshot(None))
                    table.watchers[ws] = None
                    mine.append((table, seat))
                else:
                    await ws.send(packb({"type": "ok", "rid": rid, "result": None}))
        except ConnectionClosed:
            pass
        finally:
            for table, seat in mine:
                table.watchers.pop(ws, None)
                if seat is not None and table.seats.get(seat) is ws:
                    del table.seats[seat]


async def serve_bare(host: str, port: int) -> None:
    """Serve until SIGTERM or SIGINT; print the port once listening."""
    bare = Bare()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    async with serve(
        bare.handle,
        host,
        port,
        compression=None,
        max_size=L.MAX_CLIENT_FRAME_BYTES,
        max_queue=16,
        ping_interval=None,  # as the game server: the protocol's heartbeat, no WebSocket pings
        ping_timeout=None,
        backlog=1024,
    ) as server:
        actual = next(iter(server.sockets)).getsockname()[1]
        loop_name = type(loop).__module__.split(".")[0]
        # As the game server does (server/app/process.py): what start-up built leaves the
        # collector, and the young generations are collected on its timer, so both
        # servers are measured alike.
        gc.collect()
        gc.freeze()
        gc.set_threshold(*THRESHOLDS)
        collector = asyncio.create_task(collect_on_a_timer(), name="gc")
        print(
            f"bare listening on {actual} loop={loop_name} gc={gc.get_threshold()}",
            flush=True,
        )
        await stop.wait()
        collector.cancel()


def main(argv: list[str] | None = None) -> None:
    """``python -m bench.procs.bare --port P``."""
    parser = argparse.ArgumentParser(description="bare websockets server (benchmark)")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args(argv)
    try:
        import uvloop
    except ImportError:
        asyncio.run(serve_bare(args.host, args.port))
    else:
        uvloop.run(serve_bare(args.host, args.port))
    with contextlib.suppress(Exception):
        sys.stdout.flush()


if __name__ == "__main__":
    main()
