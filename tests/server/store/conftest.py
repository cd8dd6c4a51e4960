"""Fixtures of the store's tests: the stores on the session's Redis, flushed first."""

from __future__ import annotations

import pytest
import redis.asyncio

from server.store.accounts import AccountStore
from server.store.tables import TableStore


@pytest.fixture
def store(redis_client: redis.asyncio.Redis) -> TableStore:
    return TableStore(redis_client, events_cap=5, log_cap=4)


@pytest.fixture
def accounts(redis_client: redis.asyncio.Redis) -> AccountStore:
    return AccountStore(redis_client)
