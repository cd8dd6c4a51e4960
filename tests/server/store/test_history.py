"""Players' game logs: capped, and paged newest first with cursors that stay valid."""

from __future__ import annotations

import pytest

from server.store.tables.store import TableStore
from tests.server.store.helpers import lease, next_commit


@pytest.mark.asyncio
async def test_game_logs_are_capped_and_paged(store: TableStore) -> None:
    token = await lease(store)
    for version in range(1, 7):  # six rounds; the cap is 4
        logs = [("ann", b"round%d" % version), ("bob", b"b%d" % version)]
        await next_commit(store, token, after=version - 1, logs=logs)
    await store.drain()  # game logs reach their players beside the table's next steps
    page = await store.history.page("ann", None, 2)
    assert page.items == [(6, b"round6"), (5, b"round5")]
    assert page.next_cursor == 5
    # A new round between two pages does not shift the next page (it trims round 3).
    await next_commit(store, token, after=6, logs=[("ann", b"round7")])
    await store.drain()
    rest = await store.history.page("ann", page.next_cursor, 2)
    assert rest.items == [(4, b"round4")]
    assert rest.next_cursor is None
    assert (await store.history.page("ann", 1, 3)).items == []
    assert (await store.history.page("nobody")).items == []
    exact = await store.history.page("bob", None, 4)
    assert [o for o, _ in exact.items] == [6, 5, 4, 3]
    assert exact.next_cursor is None
