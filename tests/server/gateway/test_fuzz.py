"""Random, broken and oversized frames to a live server: it answers with the spec's
errors and close codes only, never a server fault, and every table carries on.

Deterministic: the frames come from seeded ``random.Random`` instances; the amount of
work is fixed (a few thousand frames), not a duration.
"""

from __future__ import annotations

import asyncio
import random
import string
from typing import Any

import msgpack
import pytest
import redis.asyncio
from websockets.exceptions import ConnectionClosed

from protocol.codec import encode
from protocol.errors import ERRORS, CloseCode, ErrorCode
from protocol.messages import (
    Bet,
    CashOut,
    Clear,
    ErrorReply,
    GetBalance,
    GetHistory,
    GetServerInfo,
    GetTableInfo,
    Hello,
    HouseWay,
    Join,
    Leave,
    ListTables,
    OkReply,
    Ping,
    Pong,
    Rebet,
    Rebuy,
    SetHand,
    SitOut,
    Unwatch,
    Watch,
)
from server.app import App
from tests.helpers import url
from tests.server.conftest import StartApp
from tests.server.helpers import Client, Disconnected, audit_report, close_all, quick_tables
from tests.server.processes import http_get

FRAMES = 3000
WORKERS = 4
CLIENT_TYPES = [
    "hello", "ping", "list_tables", "watch", "unwatch", "join", "leave", "balance",
    "rebuy", "cash_out", "bet", "rebet", "clear", "sit_out", "set_hand", "house_way",
    "history", "table_info", "server_info",
]  # fmt: skip
# Close codes a fuzzing client may get: text frame, frame too big, too many invalid
# frames, far over the rate.
ALLOWED_CLOSES = {
    CloseCode.UNSUPPORTED_DATA,
    CloseCode.MESSAGE_TOO_BIG,
    CloseCode.TOO_MANY_ERRORS,
    CloseCode.RATE_LIMITED,
}
KNOWN_CODES = {code.value for code in ERRORS}


def valid_frames() -> list[bytes]:
    """One valid frame of every request, as seeds for mutation."""
    t = "f1"
    return [
        encode(m)
        for m in (
            Hello(rid="1", min_version=1, max_version=1, client="fz", guest=True),
            Ping(rid="2", time_ms=12),
            ListTables(rid="3"),
            Watch(rid="4", table_id=t),
            Unwatch(rid="5", table_id=t),
            Join(rid="6", table_id=t, buy_in=500, seat=1),
            Leave(rid="7", table_id=t),
            GetBalance(rid="8"),
            Rebuy(rid="9", table_id=t, amount=100),
            CashOut(rid="10", table_id=t, amount=50),
            Bet(rid="11", table_id=t, amount=50, bonus=5),
            Rebet(rid="12", table_id=t),
            Clear(rid="13", table_id=t),
            SitOut(rid="14", table_id=t),
            SetHand(rid="15", table_id=t, low=(3, 52)),
            HouseWay(rid="16", table_id=t, mode="suggest"),
            GetHistory(rid="17", cursor="5", limit=3, table_id=t),
            GetTableInfo(rid="18", table_id=t),
            GetServerInfo(rid="19"),
        )
    ]


def random_value(rng: random.Random, depth: int = 0) -> Any:
    choice = rng.randrange(12 if depth < 10 else 8)
    if choice == 0:
        return rng.randrange(-(2**63), 2**64)
    if choice == 1:
        return rng.choice([0, 1, -1, 2**53, 2**53 - 1, 6, 7, 52, 53, 65535, 65536])
    if choice == 2:
        return rng.random() * rng.choice([1, 100, 1e300])
    if choice == 3:
        n = rng.choice([0, 1, 2, 31, 32, 33, 64, 65, 300])
        return "".join(rng.choice(string.printable + "éü漢🂡") for _ in range(n))
    if choice == 4:
        return rng.choice([True, False, None])
    if choice == 5:
        return rng.randbytes(rng.randrange(4))  # bin: never allowed
    if choice == 6:
        return msgpack.ExtType(rng.randrange(0, 5), rng.randbytes(rng.randrange(4)))
    if choice == 7:
        return rng.choice(["f1", "f2", "nope", "", "x" * 40])
    if choice in (8, 9):
        return [random_value(rng, depth + 1) for _ in range(rng.randrange(4))]
    return {random_key(rng): random_value(rng, depth + 1) for _ in range(rng.randrange(4))}


def random_key(rng: random.Random) -> Any:
    if rng.random() < 0.05:
        return rng.choice([1, None, b"k", 2.5])
    return rng.choice(
        ["type", "rid", "table_id", "amount", "bonus", "seat", "low", "mode", "buy_in",
         "cursor", "limit", "time_ms", "token", "guest", "extra", "last_seq"]
    )  # fmt: skip


def random_message(rng: random.Random) -> bytes:
    """A map that looks like a request: a type (mostly known), a rid, random fields."""
    m: dict[Any, Any] = {}
    if rng.random() < 0.95:
        m["type"] = rng.choice([*CLIENT_TYPES, "welcome", "ok", "bet_placed", "nope", 5])
    if rng.random() < 0.9:
        m["rid"] = rng.choice([str(rng.randrange(1000)), "", "r" * 65, 7, None])
    for _ in range(rng.randrange(6)):
        m[random_key(rng)] = random_value(rng)
    if rng.random() < 0.02:  # deeply nested under an unknown key
        nest: Any = 1
        for _ in range(rng.randrange(6, 12)):
            nest = [nest]
        m["deep"] = nest
    try:
        data: bytes = msgpack.packb(m, use_bin_type=True)
    except (OverflowError, TypeError, ValueError):
        data = b"\x80"
    return data


def fuzz_frame(rng: random.Random, seeds: list[bytes]) -> bytes | str:
    kind = rng.random()
    if kind < 0.25:
        return random_message(rng)
    if kind < 0.5:  # a valid frame with a few bytes changed
        changed = bytearray(rng.choice(seeds))
        for _ in range(rng.randrange(1, 4)):
            changed[rng.randrange(len(changed))] = rng.randrange(256)
        return bytes(changed)
    if kind < 0.6:  # truncated, or with trailing bytes
        frame = rng.choice(seeds)
        return frame[: rng.randrange(len(frame))] if rng.random() < 0.5 else frame + b"\x00"
    if kind < 0.75:  # raw bytes
        return rng.randbytes(rng.randrange(0, 80))
    if kind < 0.85:  # one large string: over the string limit, under the frame limit
        size = rng.choice([4000, 4097, 6000])
        return msgpack.packb({"type": "ping", "rid": "big", "time_ms": "x" * size})
    if kind < 0.9:  # a map with too many pairs, or an array too long
        if rng.random() < 0.5:
            return msgpack.packb({f"k{i}": i for i in range(70)} | {"type": "ping", "rid": "m"})
        return msgpack.packb({"type": "set_hand", "rid": "a", "table_id": "f1",
                              "low": list(range(300))})  # fmt: skip
    if kind < 0.995:  # a valid request, so the connection also does real work
        return rng.choice(seeds[1:])
    if rng.random() < 0.5:
        return "text frame"  # closes with 1003
    return rng.randbytes(9000)  # over the frame limit: 1009


async def fuzz_worker(app: App, seed: int, frames: int) -> dict[str, int]:
    rng = random.Random(seed)
    seeds = valid_frames()
    stats = {"frames": 0, "connections": 0, "errors": 0, "oks": 0}
    while stats["frames"] < frames:
        stats["connections"] += 1
        client = await Client.hello(url(app), label=f"fz{seed}-{stats['connections']}-")
        try:
            while stats["frames"] < frames and client.closed is None:
                batch = [fuzz_frame(rng, seeds) for _ in range(rng.randrange(1, 12))]
                try:
                    for frame in batch:
                        await client.send(frame)
                        stats["frames"] += 1
                    await client.call(Ping)  # answered in order: every reply is in
                except (ConnectionClosed, Disconnected):
                    closed = await client.wait_closed()
                    assert closed.code in ALLOWED_CLOSES, (closed, batch)
                    break
        finally:
            await client.close()
        for replies in client.replies.values():
            for reply in replies:
                if isinstance(reply, ErrorReply):
                    stats["errors"] += 1
                    assert reply.code in KNOWN_CODES, reply
                    assert reply.code != ErrorCode.INTERNAL.value, reply
                else:
                    assert isinstance(reply, OkReply | Pong)
                    stats["oks"] += 1
    return stats


@pytest.mark.asyncio
async def test_random_frames(start_app: StartApp, redis_client: redis.asyncio.Redis) -> None:
    # A high rate limit, so that the frames reach the decoder rather than the limiter.
    app = await start_app(quick_tables("f1", "f2"), rate_per_s=100_000)
    stats = await asyncio.gather(
        *(fuzz_worker(app, seed, FRAMES // WORKERS) for seed in range(WORKERS))
    )
    total = {k: sum(s[k] for s in stats) for k in stats[0]}
    assert total["frames"] >= FRAMES
    assert total["errors"] > FRAMES // 2  # most frames are invalid
    assert total["connections"] > WORKERS  # some were closed (1003, 1009, 4006)

    # The server and every table carry on: a normal client plays a round at each.
    assert all(h.ready for h in app.hosts.values())
    players = [await Client.hello(url(app), label=f"n{i}") for i in range(2)]
    try:
        for table_id, p in zip(("f1", "f2"), players, strict=True):
            await p.ok(Join, table_id=table_id, buy_in=1000, seat=5)
            await p.ok(Bet, table_id=table_id, amount=50)
            await p.phase(table_id, "setting")
            await p.ok(HouseWay, table_id=table_id, mode="set")
            await p.phase(table_id, "settling", within=15)
    finally:
        await close_all(players)
    status, body = await asyncio.to_thread(http_get, app.port, "/metrics")
    assert status == 200
    assert 'code="internal"' not in body
    report = await audit_report(redis_client)
    assert report.ok, report.explain()


@pytest.mark.asyncio
async def test_rate_limit(start_app: StartApp) -> None:
    """Past the burst: ``rate_limited`` with the request's rid and a wait; far past
    it: closed with 4008."""
    app = await start_app()
    client = await Client.hello(url(app))
    try:
        frames = [encode(Ping(rid=f"p{i}")) for i in range(60)]
        for frame in frames:
            await client.send(frame)
        replies = await client.wait(
            lambda: (
                [client.replies[f"p{i}"][0] for i in range(60) if f"p{i}" in client.replies]
                if all(f"p{i}" in client.replies for i in range(60))
                else None
            )
        )
        limited = [r for r in replies if isinstance(r, ErrorReply)]
        pongs = [r for r in replies if isinstance(r, Pong)]
        assert len(pongs) >= 40, replies
        assert limited, replies
        for r in limited:
            assert r.code == "rate_limited"
            assert r.retryable
            assert r.retry_after_ms is not None
            assert 0 < r.retry_after_ms <= 1000
        await asyncio.sleep(limited[0].retry_after_ms / 1000)  # type: ignore[operator]
        assert isinstance(await client.call(Ping), Pong)
        # A flood far over the rate ends the session.
        for _ in range(400):
            try:
                await client.send(frames[0])
            except ConnectionClosed:
                break
        closed = await client.wait_closed()
        assert closed.code == CloseCode.RATE_LIMITED
    finally:
        await client.close()
