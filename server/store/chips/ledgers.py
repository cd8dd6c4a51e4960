"""The ledgers: one stream per table and one per account, each read in order.

Every chip movement is an entry of the ledger of the table or the account it happens
in (a movement between an account and a table has an entry in each, joined by its
transfer id, ``xfer``). Each stream holds its source's movements in the order they
happened (stream ids grow) and may be trimmed from its start once archived; the names
of them all come from :meth:`server.store.keys.Keys.ledger_streams`, and
:func:`ledger_streams` lists the ones in Redis.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import NamedTuple

import redis.asyncio

from server.store.client.replies import StreamEntry, as_str, stream_entries
from server.store.keys import DEFAULT_KEYS, Keys

PAGE = 5000
"""Entries read per call."""


async def sources(
    client: redis.asyncio.Redis, keys: Keys = DEFAULT_KEYS
) -> tuple[list[str], list[str]]:
    """``(table ids, players)`` of every table that took a lease and every account, sorted."""
    tables = sorted(as_str(m) for m in await client.smembers(keys.tables()))
    players = sorted(as_str(m) for m in await client.smembers(keys.accounts()))
    return tables, players


async def ledger_streams(client: redis.asyncio.Redis, keys: Keys = DEFAULT_KEYS) -> list[str]:
    """The name of every ledger stream (the tables', then the accounts')."""
    tables, players = await sources(client, keys)
    return keys.ledger_streams(tables, players)


class LedgerSource(NamedTuple):
    """A ledger stream and whose it is: table ``owner``'s (``table``) or account
    ``owner``'s. A named tuple: an archive pass makes one for every stream (10,000 or
    more at once), and a frozen dataclass took three times as long to make, a stall of
    its own for a loaded node's event loop."""

    stream: str
    owner: str
    table: bool


async def ledger_sources(
    client: redis.asyncio.Redis, keys: Keys = DEFAULT_KEYS
) -> list[LedgerSource]:
    """Every ledger stream, as :func:`ledger_streams` names them, with its owner."""
    tables, players = await sources(client, keys)
    owners = [(t, True) for t in tables] + [(p, False) for p in players]
    names = keys.ledger_streams(tables, players)
    return [LedgerSource(s, o, t) for s, (o, t) in zip(names, owners, strict=True)]


async def read_ledger(
    client: redis.asyncio.Redis, stream: str, start: str = "-", end: str = "+"
) -> AsyncIterator[StreamEntry]:
    """The entries of ``stream`` from ``start`` to ``end`` (ids, inclusive), in order,
    read a page at a time."""
    low = start
    while True:
        page = stream_entries(await client.xrange(stream, min=low, max=end, count=PAGE))
        for entry in page:
            yield entry
        if len(page) < PAGE:
            return
        low = "(" + page[-1][0]
