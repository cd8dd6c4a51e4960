"""A table's changes as its host hands them to the store (a ``Change``): the store
writes the parts that differ from those it last loaded or stored, and every part
when it does not know them (a table it never loaded, one stored in an older format,
or after a commit whose outcome it could not tell)."""

from __future__ import annotations

import pytest
import redis.asyncio

from server.store.errors import StoreUnavailable
from server.store.tables.commit_args import CommitResult, CommitStatus, Write
from server.store.tables.parts import (
    CONFIG_PART,
    DEAL_PART,
    HEADER_PART,
    PENDING_CONFIG_PART,
    seat_part,
    to_parts,
)
from server.store.tables.store import Change, TableStore
from server.table.state import Seat, TableConfig, TableState, evolve, new_table
from tests.server.store.helpers import T, lease

pytestmark = pytest.mark.asyncio

EVERY_PART = {HEADER_PART, DEAL_PART, CONFIG_PART, PENDING_CONFIG_PART} | {
    seat_part(i) for i in range(6)
}


def written(store: TableStore) -> list[set[str]]:
    """The names of the parts each commit of ``store`` writes from now on."""
    names: list[set[str]] = []
    write = store.commits.write

    async def recorded(w: Write) -> CommitResult:
        names.append(set(w.parts))
        return await write(w)

    store.commits.write = recorded  # type: ignore[method-assign]
    return names


def seated(state: TableState, index: int, player: str) -> TableState:
    """``state`` one version on, with ``player`` in seat ``index``."""
    seats = list(state.seats)
    seats[index] = Seat(player, player, 100)
    return evolve(state, version=state.version + 1, seats=tuple(seats))


async def test_a_change_writes_the_parts_that_differ_from_those_stored(
    store: TableStore, redis_client: redis.asyncio.Redis
) -> None:
    token = await lease(store)
    names = written(store)
    first = evolve(new_table(TableConfig(table_id=T, name=T)), version=1)
    assert (await store.commit(Change(T, token, 0, first))).ok
    second = seated(first, 2, "ann")
    assert (await store.commit(Change(T, token, 1, second))).ok
    assert names == [EVERY_PART, {HEADER_PART, seat_part(2)}]
    # Another store (a process that takes the table) knows the parts once it loads them.
    other = TableStore(redis_client)
    loaded = await other.load_state(T)
    assert loaded is not None
    assert (loaded.state, loaded.token) == (second, token)
    names = written(other)
    third = seated(loaded.state, 4, "bob")
    assert (await other.commit(Change(T, token, 2, third))).ok
    assert names == [{HEADER_PART, seat_part(4)}]
    stored = await other.load(T)
    assert stored is not None
    assert stored.parts == to_parts(third, None)


async def test_a_store_that_does_not_know_the_parts_writes_every_one(
    store: TableStore, redis_client: redis.asyncio.Redis
) -> None:
    """Not loaded here; or a commit refused; or a commit that failed on its way (stored
    or not, unknown): the next commit writes every part, and the table reads whole."""
    token = await lease(store)
    first = evolve(new_table(TableConfig(table_id=T, name=T)), version=1)
    assert (await store.commit(Change(T, token, 0, first))).ok
    other = TableStore(redis_client)
    names = written(other)
    second = seated(first, 1, "ann")
    assert (await other.commit(Change(T, token, 1, second))).ok
    refused = await other.commit(Change(T, token + 1, 2, seated(second, 2, "bob")))
    assert refused.status is CommitStatus.STALE_LEASE
    third = seated(second, 3, "cy")
    assert (await other.commit(Change(T, token, 2, third))).ok  # refused: still known
    assert names == [EVERY_PART, {HEADER_PART, seat_part(2)}, {HEADER_PART, seat_part(3)}]
    write = other.commits.write

    async def lost(w: Write) -> CommitResult:
        await write(w)
        raise StoreUnavailable("the reply was lost")

    other.commits.write = lost  # type: ignore[method-assign]
    fourth = seated(third, 4, "dee")
    with pytest.raises(StoreUnavailable):
        await other.commit(Change(T, token, 3, fourth))
    other.commits.write = write  # type: ignore[method-assign]
    names.clear()
    names += written(other)
    fifth = seated(fourth, 5, "eve")
    assert (await other.commit(Change(T, token, 4, fifth))).ok
    assert names == [EVERY_PART]
    assert await other.holds(Change(T, token, 4, fifth))
    stored = await other.load(T)
    assert stored is not None
    assert stored.parts == to_parts(fifth, None)
