"""A whole round through a real server, real sockets and a real Redis."""

from __future__ import annotations

import pytest
from websockets.asyncio.client import ClientConnection, connect

from protocol.codec import decode_server, encode
from protocol.messages import Bet, Hello, Join, OkReply, Results, SeedReveal, ServerMessage
from server.app import App
from tests.helpers import until, url


async def _until(ws: ClientConnection, kind: type) -> ServerMessage:
    """The next message of type ``kind`` (those before it are skipped)."""

    async def next_of_kind() -> ServerMessage | None:
        message = decode_server(await ws.recv(decode=False))
        return message if isinstance(message, kind) else None

    return await until(next_of_kind, what=kind.__name__, every=0)


@pytest.mark.asyncio
async def test_one_guest_plays_a_round(app: App) -> None:
    async with connect(url(app)) as ws:
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
