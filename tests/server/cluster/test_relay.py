"""The node's pub/sub connection (``server/store/pubsub/relay.py``), on the test's Redis."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest
import redis.asyncio

from server.store.pubsub.relay import Relay


@pytest.mark.asyncio
async def test_a_listen_forgotten_before_redis_confirms_it_returns(
    new_client: Callable[[], redis.asyncio.Redis],
) -> None:
    """A table is held here while a connection starts to follow it from its holder: the
    table's channel is forgotten while the listen to it waits for Redis's confirmation.
    The listen returns, as if forgotten just after; it used to raise ``CancelledError``
    in the connection's handler, which websockets then closed with 1011."""
    relay = Relay(new_client(), lambda: None)
    heard: list[bytes] = []
    await relay.start("test:node", heard.append)
    try:
        listening = asyncio.create_task(relay.listen("test:table", heard.append))
        await asyncio.sleep(0)  # the listen runs up to its SUBSCRIBE, unconfirmed
        assert relay.listening("test:table")
        await relay.forget("test:table")
        await asyncio.wait_for(listening, 5)
        assert not relay.listening("test:table")
        # The connection goes on: what it listens to next is heard.
        await relay.listen("test:other", heard.append)
        assert relay.listening("test:other")
    finally:
        await relay.stop()
