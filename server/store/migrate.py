"""Moving a Redis from the first key layout to this one, once, at the server's start.

The first layout had no hash tags and one ledger stream for the whole product
(:class:`~server.store.keys.FirstLayout`); this one has every key of a table under
the table's tag, every key of a player under theirs, and a ledger per table and per
account (:mod:`server.store.keys`). :func:`migrate` moves a Redis that holds the first
layout: the ledger split by owner (each entry keeps its stream id, so each new stream
is in the old order), every key of a table and a player renamed, the money totals
spread over the accounts, each request record moved to its table with a claim in its
player's slot. It runs under a lock, so that of several servers starting together one
migrates and the others wait; each step can be done again, so a migration stopped
half-way finishes at the next start. A Redis Cluster never held the first layout (its
scripts could not run there), so it only gets the layout's mark.

Servers of the first layout must all be stopped first: they would write the old names
(deploy/README.md, "Upgrading from the first key layout").
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections import Counter
from dataclasses import dataclass, field

import redis.asyncio
from redis.exceptions import ResponseError

from server.store.chips.ledgers import read_ledger
from server.store.client.connection import is_cluster
from server.store.client.replies import as_int, as_str, stream_entries
from server.store.errors import store_call
from server.store.keys import DEFAULT_KEYS, LAYOUT, FirstLayout, Keys
from server.table.ledger import Pot

log = logging.getLogger(__name__)

LOCK_MS = 600_000
"""How long a migration may hold the lock (a dead migrator's lock runs out after it)."""

WAIT_S = 600.0
"""How long a server waits for another one's migration before giving up."""

TABLE_POTS = frozenset({Pot.TABLE.value, Pot.HELD.value, Pot.HOUSE.value})


class MigrationError(RuntimeError):
    """The layout could not be migrated (or another server's migration did not end)."""


@dataclass(slots=True)
class Migrated:
    """What :func:`migrate` moved."""

    tables: int = 0
    accounts: int = 0
    ledger_entries: int = 0
    requests: int = 0
    logs: int = 0
    credit_keys: int = 0
    notes: list[str] = field(default_factory=list)


@store_call
async def layout(client: redis.asyncio.Redis, keys: Keys = DEFAULT_KEYS) -> str:
    """The key layout of the Redis: :data:`LAYOUT`, ``"1"`` (the first, still to be
    migrated) or ``""`` (empty: nothing of either)."""
    mark = await client.get(keys.layout())
    if mark is not None:
        return as_str(mark)
    old = FirstLayout(keys.prefix)
    if is_cluster(client):
        return ""
    # Every chip that entered the first layout left its ledger and its totals (a store
    # of guests with no chips has nothing to lose: it counts as empty).
    found = await client.exists(old.ledger(), old.money())
    return "1" if found else ""


@store_call
async def migrate(client: redis.asyncio.Redis, keys: Keys = DEFAULT_KEYS) -> Migrated | None:
    """Bring the Redis to :data:`LAYOUT`: migrate it if it holds the first layout (what
    was moved), else mark it (None). Raises :class:`MigrationError` if another
    server's migration does not end within :data:`WAIT_S`."""
    found = await layout(client, keys)
    if found == LAYOUT:
        return None
    if found == "":
        await client.set(keys.layout(), LAYOUT)
        return None
    owner = secrets.token_hex(8)
    waited = 0.0
    while not await client.set(keys.layout_lock(), owner, nx=True, px=LOCK_MS):
        if await client.get(keys.layout()) == LAYOUT.encode():
            return None  # another server did it
        if waited >= WAIT_S:
            raise MigrationError("another server's migration of the key layout did not end")
        await asyncio.sleep(0.5)
        waited += 0.5
    try:
        if await client.get(keys.layout()) == LAYOUT.encode():
            return None
        log.warning("moving this Redis from the first key layout to layout %s", LAYOUT)
        done = await _migrate(client, keys, FirstLayout(keys.prefix))
        await client.set(keys.layout(), LAYOUT)
        log.warning(
            "key layout migrated: %d tables, %d accounts, %d ledger entries, %d requests",
            done.tables,
            done.accounts,
            done.ledger_entries,
            done.requests,
        )
        return done
    finally:
        if await client.get(keys.layout_lock()) == owner.encode():
            await client.delete(keys.layout_lock())


async def _migrate(client: redis.asyncio.Redis, keys: Keys, old: FirstLayout) -> Migrated:
    done = Migrated()
    tables = sorted(as_str(t) for t in await client.smembers(keys.tables()))
    players = sorted(as_str(p) for p in await client.smembers(keys.accounts()))
    money = {as_str(k): as_int(v) for k, v in (await client.hgetall(old.money())).items()}
    complete = await client.xlen(old.ledger()) == money.get("entries", 0)
    split = await _split_ledger(client, keys, old, done)
    for table_id in tables:
        new = [
            keys.table_state(table_id),
            keys.table_fence(table_id),
            keys.table_lease(table_id),
            keys.table_events(table_id),
        ]
        await _rename(client, list(zip(old.table_keys(table_id), new, strict=True)))
        async for name in client.scan_iter(match=old.applied_pattern(table_id)):
            bucket = as_str(name).rsplit(":", 1)[1]
            await _rename(client, [(as_str(name), keys.applied(table_id, int(bucket)))])
        entries = await client.xlen(keys.table_ledger(table_id))
        if await client.exists(keys.table_state(table_id)):
            await client.hset(keys.table_state(table_id), "n", entries)
        done.tables += 1
    for player in sorted(set(players) | split.players):
        await _rename(client, [(old.account(player), keys.account(player))])
        entries = await client.xlen(keys.account_ledger(player))
        fields: dict[str, int] = {"n": entries, "in": split.credited[player] if complete else 0}
        await client.hset(keys.account(player), mapping=fields)  # type: ignore[arg-type]
        await client.sadd(keys.accounts(), player)
        done.accounts += 1
    await _move_credits(client, keys, old, split.credit_ids, done)
    await _move_requests(client, keys, old, done)
    await _move_logs(client, keys, old, done)
    await client.delete(old.ledger())
    if complete:
        await client.delete(old.money())
    else:
        # Credits no account's ledger holds any more: counted apart, for the audit.
        await client.delete(old.money())
        await client.hset(keys.legacy_money(), "in", money.get("in", 0))
        done.notes.append("the first layout's ledger was trimmed: ledgers are not replayed")
    return done


async def _rename(client: redis.asyncio.Redis, names: list[tuple[str, str]]) -> None:
    """RENAME each ``(old, new)`` whose old name exists (done before: nothing)."""
    for source, target in names:
        try:
            await client.renamenx(source, target)
        except ResponseError:  # no such key: renamed already, or never there
            continue


@dataclass(slots=True)
class _Split:
    """What the old ledger said: each account's credited total, the players it names,
    and the player of each credit's entry (stream id -> player)."""

    credited: Counter[str] = field(default_factory=Counter)
    players: set[str] = field(default_factory=set)
    credit_ids: dict[str, str] = field(default_factory=dict)


async def _split_ledger(
    client: redis.asyncio.Redis, keys: Keys, old: FirstLayout, done: Migrated
) -> _Split:
    """Each entry of the old ledger into its table's and its account's streams, with
    its id; entries a stopped migration copied already are not copied again."""
    split = _Split()
    tops: dict[str, str] = {}

    async def top(stream: str) -> str:
        if stream not in tops:
            last = stream_entries(await client.xrevrange(stream, count=1))
            tops[stream] = last[0][0] if last else "0-0"
        return tops[stream]

    async for entry_id, fields in read_ledger(client, old.ledger()):
        text = {k: v.decode() for k, v in fields.items()}
        player = text["player"]
        targets = []
        if Pot.ACCOUNT.value in (text["source"], text["dest"]) or text["source"] == "outside":
            targets.append(keys.account_ledger(player))
            split.players.add(player)
        if TABLE_POTS & {text["source"], text["dest"]} and text.get("table"):
            targets.append(keys.table_ledger(text["table"]))
        if text["source"] == "outside":
            split.credited[player] += int(text["amount"])
            split.credit_ids[entry_id] = player
        for stream in targets:
            if _id(entry_id) > _id(await top(stream)):
                await client.xadd(stream, fields, id=entry_id)  # type: ignore[arg-type]
                tops[stream] = entry_id
        done.ledger_entries += 1
    return split


def _id(entry_id: str) -> tuple[int, int]:
    ms, _, seq = entry_id.partition("-")
    return int(ms), int(seq or 0)


async def _move_credits(
    client: redis.asyncio.Redis,
    keys: Keys,
    old: FirstLayout,
    credit_ids: dict[str, str],
    done: Migrated,
) -> None:
    """Each operator credit key to its account's credits, where the ledger names the
    account; the others stay in the old hash, which the credits still consult."""
    for key, entry_id in (await client.hgetall(old.credits())).items():
        player = credit_ids.get(as_str(entry_id))
        if player is None:
            continue
        await client.hset(keys.credits(player), as_str(key), as_str(entry_id))
        await client.hdel(old.credits(), as_str(key))
        done.credit_keys += 1


async def _move_requests(
    client: redis.asyncio.Redis, keys: Keys, old: FirstLayout, done: Migrated
) -> None:
    """Each request record to its table's slot, with its claim in its player's."""
    prefix = len(old.request_pattern()) - 1
    async for name in client.scan_iter(match=old.request_pattern()):
        player, _, digest = as_str(name)[prefix:].partition(":")
        record = {as_str(k): v for k, v in (await client.hgetall(name)).items()}
        ttl = await client.pttl(name)
        table_id = as_str(record.get("t", b""))
        if not table_id or "f" not in record or ttl <= 0:
            await client.delete(name)
            continue
        target = keys.table_request_by_digest(table_id, player, digest)
        claim = keys.claim_by_digest(player, digest)
        await client.hset(claim, mapping={"f": record["f"], "t": table_id})
        await client.pexpire(claim, ttl)
        await _rename(client, [(as_str(name), target)])
        done.requests += 1


async def _move_logs(
    client: redis.asyncio.Redis, keys: Keys, old: FirstLayout, done: Migrated
) -> None:
    """Each player's game log to the player's slot."""
    prefix = len(old.log_pattern()) - 1
    renames: dict[str, str] = {}
    async for name in client.scan_iter(match=old.log_pattern()):
        text = as_str(name)
        if "{" not in text:
            renames[text] = keys.game_log(text[prefix:])
    for source, target in renames.items():
        await _rename(client, [(source, target)])
        done.logs += 1
