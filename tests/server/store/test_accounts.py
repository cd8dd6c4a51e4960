"""Accounts: guests, operator credits, balances, listing."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
import redis.asyncio
from redis.asyncio.cluster import RedisCluster

from bench.procs.topology import LocalCluster
from server.store.client.replies import stream_entries
from server.store.errors import StoreError
from server.store.keys import Keys
from server.store.players.accounts import AccountStore


@pytest.fixture
def accounts(redis_client: redis.asyncio.Redis) -> AccountStore:
    return AccountStore(redis_client)


@pytest.mark.asyncio
async def test_guest_is_created_once(accounts: AccountStore) -> None:
    first = await accounts.ensure_guest("ann", 500)
    assert (first.applied, first.balance) == (True, 500)
    again = await accounts.ensure_guest("ann", 900)
    assert (again.applied, again.balance) == (False, 500)
    assert await accounts.balance("ann") == 500
    zero = await accounts.ensure_guest("bob", 0)
    assert (zero.applied, zero.balance) == (True, 0)
    assert await accounts.exists("bob")
    assert await accounts.balance("nobody") is None


@pytest.mark.asyncio
async def test_credit_is_idempotent_by_key(
    accounts: AccountStore, redis_client: redis.asyncio.Redis
) -> None:
    results = await asyncio.gather(*(accounts.credit("ann", 100, "op-1") for _ in range(5)))
    assert sum(r.applied for r in results) == 1
    assert (await accounts.credit("ann", 50, "op-2")).balance == 150
    assert await accounts.balance("ann") == 150
    keys = Keys()
    assert await redis_client.hget(keys.account("ann"), "in") == b"150"
    entries = stream_entries(await redis_client.xrange(keys.account_ledger("ann")))
    assert [fields["key"] for _, fields in entries] == [b"op-1", b"op-2"]
    assert {fields["source"] for _, fields in entries} == {b"outside"}
    assert {fields["kind"] for _, fields in entries} == {b"credit"}


@pytest.mark.asyncio
async def test_list_accounts(accounts: AccountStore) -> None:
    assert await accounts.list_accounts() == []
    await accounts.ensure_guest("zed", 5)
    await accounts.credit("ann", 7, "k")
    assert await accounts.list_accounts() == [("ann", 7), ("zed", 5)]


@pytest.mark.asyncio
async def test_bad_arguments(accounts: AccountStore) -> None:
    with pytest.raises(ValueError, match="positive"):
        await accounts.credit("ann", 0, "k")
    with pytest.raises(ValueError, match="key"):
        await accounts.credit("ann", 1, "")
    with pytest.raises(ValueError, match="player name"):
        await accounts.credit("a:b", 1, "k")
    with pytest.raises(ValueError, match="negative"):
        await accounts.ensure_guest("ann", -1)


@pytest.mark.asyncio
async def test_a_credit_key_is_the_accounts_own(accounts: AccountStore) -> None:
    """Each account keeps its credit keys in its own slot: a key is applied once per
    account (two accounts credited with one key are two credits)."""
    assert (await accounts.credit("ann", 10, "op-1")).applied
    assert not (await accounts.credit("ann", 10, "op-1")).applied
    assert (await accounts.credit("bob", 10, "op-1")).applied
    assert await accounts.list_accounts() == [("ann", 10), ("bob", 10)]


@pytest.mark.asyncio
async def test_refuses_a_decoding_client(
    redis_client: redis.asyncio.Redis, redis_cluster: LocalCluster | None
) -> None:
    if redis_cluster is not None:
        node = redis_cluster.nodes[0]
        text_client: Any = RedisCluster(host="127.0.0.1", port=node.port, decode_responses=True)
    else:
        kwargs = redis_client.connection_pool.connection_kwargs
        text_client = redis.asyncio.Redis(unix_socket_path=kwargs["path"], decode_responses=True)
    try:
        with pytest.raises(StoreError, match="decode_responses"):
            AccountStore(text_client)
    finally:
        await text_client.aclose()
