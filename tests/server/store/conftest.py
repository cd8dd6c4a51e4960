"""Fixtures of the store's tests: the stores on the session's Redis, flushed first."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
import redis.asyncio

from server.store.players.accounts import AccountStore
from server.store.tables.store import TableStore


@pytest_asyncio.fixture
async def store(redis_client: redis.asyncio.Redis) -> AsyncIterator[TableStore]:
    """A table store; its steps still running in the background are awaited after
    the test, before its client closes."""
    tables = TableStore(redis_client, events_cap=5, log_cap=4)
    yield tables
    await tables.drain()


@pytest.fixture
def accounts(redis_client: redis.asyncio.Redis) -> AccountStore:
    return AccountStore(redis_client)
