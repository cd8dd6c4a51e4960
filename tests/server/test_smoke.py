"""A whole round through a real server, real sockets and a real Redis."""

from __future__ import annotations

import asyncio

import pytest
from websockets.asyncio.client import connect

from protocol.codec import decode_server, encode
from protocol.messages import Bet, Hello, Join, OkReply, Results, SeedReveal, ServerMessage
from server.app import App


async def _until(ws: object, kind: type, within: float = 10) -> ServerMessage:
    async def loop() -> ServerMessage:
        while True:
            m = decode_server(await ws.recv())  # type: ignore[attr-defined]
            if isinstance(m, kind):
                return m

    return await asyncio.wait_for(loop(), within)


@pytest.mark.asyncio
async def test_one_guest_plays_a_round(app: App) -> None:
    async with connect(f"ws://127.0.0.1:{app.port}/") as ws:
        await ws.send(encode(Hello(rid="h", min_version=1, max_version=1, client="t", guest=True)))
        assert isinstance(await _until(ws, OkReply), OkReply)
        await ws.send(encode(Join(rid="j", table_id="fast", buy_in=500)))
        await _until(ws, OkReply)
        await ws.send(encode(Bet(rid="b", table_id="fast", amount=50)))
        results = await _until(ws, Results)
        assert isinstance(results, Results)
        assert len(results.results) == 1
        seed = await _until(ws, SeedReveal)
        assert isinstance(seed, SeedReveal)
