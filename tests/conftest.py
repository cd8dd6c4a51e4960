"""Shared fixtures: one real Redis for the whole session, a clean database per test."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest
import pytest_asyncio
import redis.asyncio

from server.store.embedded import EmbeddedRedis


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedRedis]:
    """One private redis-server (unix socket, append-only file) for the session."""
    with EmbeddedRedis(tmp_path_factory.mktemp("redis")) as server:
        yield server


@pytest_asyncio.fixture
async def redis_client(redis_server: EmbeddedRedis) -> AsyncIterator[redis.asyncio.Redis]:
    """A bytes client on database 0, flushed before the test."""
    client = redis_server.client()
    await client.flushdb()
    try:
        yield client
    finally:
        await client.aclose()
