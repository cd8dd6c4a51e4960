"""Table names shown whole: the protocol carries names of at most 32 characters
(protocol/limits.py), so the shipped tables are named within it (Lotus was 37 and came
cut) and the lobby and the table's title show each name as the tables file has it."""

from __future__ import annotations

import pytest
from playwright.async_api import Browser

from protocol import limits as L
from server.tables_file import load_tables
from tests.web.conftest import StartApp
from tests.web.helpers import PHONE, Player


def test_every_shipped_table_name_fits_the_protocol() -> None:
    for table in load_tables(None):
        assert len(table.name) <= L.MAX_NAME_LEN, table.name


@pytest.mark.asyncio
@pytest.mark.timeout(120)
async def test_the_lobby_and_the_table_show_the_shipped_names_whole(
    browser: Browser, start_web: StartApp
) -> None:
    app = await start_web(tables_file=None)  # the shipped tables
    names = {t.table_id: t.name for t in load_tables(None)}
    assert names["lotus"] == "Lotus (20-100, pair-classes)"
    alice = await Player.open(browser, app, "Alice", PHONE)
    shown = await alice.page.eval_on_selector_all(
        "#lobby-rows th.name",
        "ths => Object.fromEntries(ths.map((th) => [th.closest('tr').dataset.table,"
        " th.textContent]))",
    )
    assert shown == names
    # The jargon in the name is still explained in its tooltip.
    title = await alice.page.get_attribute("tr[data-table='lotus'] th", "title")
    assert title is not None
    assert "Pair-classes house way:" in title
    await alice.page.click("tr[data-table='lotus'] button:not(.primary)")
    await alice.until(
        "document.getElementById('table-title').textContent === arg", names["lotus"], "the title"
    )
    assert alice.errors == []
