"""A money request answered ``unavailable`` is sent again by the page, with its rid
(protocol/PROTOCOL.md, sections 3 and 5: the table may move, or be taken again, and
retrying such a request is safe): sitting down at a table that is taken again at that
moment seats the player, with no second click and no error on screen."""

from __future__ import annotations

import pytest
import redis.asyncio
from playwright.async_api import Browser

from server.app import App
from server.store import TableStore
from tests.web.helpers import Player

pytestmark = [pytest.mark.asyncio, pytest.mark.timeout(90)]


async def test_a_join_answered_unavailable_is_sent_again(
    browser: Browser, web_app: App, redis_client: redis.asyncio.Redis
) -> None:
    alice = await Player.open(browser, web_app, "Alice")
    page = alice.page
    # Count the join frames the page sends: a second one is the same request again.
    await alice.js(
        "window.joins = []; const s = app.session; const send = s.sendFrame.bind(s);"
        " s.sendFrame = (m) => { if (m.type === 'join') window.joins.push(m.rid); send(m); };"
    )
    await page.click("tr[data-table='web'] button.primary")
    await page.wait_for_selector("#join-dialog[open]")
    # Another taking of the table, as a process's after this one paused longer than its
    # lease: a new fencing token. The join's commit is refused as stale (nothing is
    # stored), the table answers `unavailable`, and this process takes the table again.
    keys = TableStore(redis_client).keys
    await redis_client.delete(keys.table_lease("web"))
    token = await redis_client.incr(keys.table_fence("web"))
    await redis_client.hset(keys.table_state("web"), "f", token)
    await page.click("#join-form button[type=submit]")
    await page.wait_for_selector("#betting:not([hidden])")
    await alice.until("app.model.yourSeat !== null", what="a seat")
    joins = await page.evaluate("window.joins")
    assert len(joins) >= 2, joins  # answered `unavailable` first, then sent again
    assert len(set(joins)) == 1, joins  # with its rid
    assert await page.locator("#join-dialog[open]").count() == 0
    assert "not available" not in (await page.locator("#toast").text_content() or "")
    assert alice.errors == []
