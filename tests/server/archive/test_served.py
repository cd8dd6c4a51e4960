"""The archive in a running server: its archiver moves what is old while tables play,
history and verification read the rounds from both places, and the audit adds up."""

from __future__ import annotations

import pytest
import redis.asyncio

from clients.autoplay import play_rounds
from clients.core import Client
from clients.model import verify_record
from protocol.structs import RoundRecord
from server.app import table_money
from server.store.audit.check import audit
from server.store.keys import DEFAULT_KEYS
from tests.helpers import until, url
from tests.server.conftest import StartApp


@pytest.mark.asyncio
@pytest.mark.slow
async def test_rounds_played_move_to_the_archive_and_history_still_has_them(
    start_app: StartApp, redis_client: redis.asyncio.Redis, archive_url: str
) -> None:
    app = await start_app(archive_url=archive_url, archive_after_ms=0, archive_every_ms=200)
    archive = app.archive
    assert archive is not None
    async with Client(url(app), name="Arc") as client:
        stats = await play_rounds(client, "fast", bet=10, rounds=3)
        assert stats.rounds == 3
        await client.leave("fast")

        async def archived() -> bool:
            return (await archive.stats()).game_logs >= 2

        await until(archived, within=30, what="two rounds archived")
        records: list[RoundRecord] = []
        cursor: str | None = None
        while True:
            page = await client.history(cursor=cursor, limit=1)
            records += page.rounds
            cursor = page.next_cursor
            if cursor is None:
                break
        assert [r.round for r in records] == sorted((r.round for r in records), reverse=True)
        assert len(records) == 3
        assert all(verify_record(r).ok for r in records)
    assert await redis_client.llen(DEFAULT_KEYS.game_log(client.player_id or "")) == 1
    report = await audit(redis_client, table_money, archive=archive)
    assert report.ok, report.explain()
    assert report.ledger_complete
    assert report.checkpoint_entries > 0
