"""Fixtures of the browser tests: Debian's Chromium driven by Playwright, and servers.

The browser is the system's (``/usr/bin/chromium``, installed by
``tests/web/install_browser.sh`` from ``make test``, or ``PAIGOW_CHROMIUM``), never a
download of Playwright's own. Each test gets a fresh browser, so no state leaks from
one to the next; a server on the session's Redis serves the page and the WebSocket.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
import redis.asyncio
from playwright.async_api import Browser, async_playwright

from server.app import App
from server.config import Settings
from tests.helpers import STEADY_LEASE_MS
from tests.server.processes import free_port

CHROMIUM_ARGS = [
    "--no-sandbox",  # CI runs as root, where Chromium's sandbox cannot start
    "--disable-gpu",
    "--disable-dev-shm-usage",
    # The machine has no network: without these, Chromium's own background
    # connections fail noisily (and slowly).
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
    "--disable-default-apps",
    "--disable-extensions",
]

# Betting and setting end as soon as every player has acted, so long limits cost
# nothing and leave a loaded machine time to click; reveal and settling are short.
WEB_TABLES = """
[[table]]
id = "web"
name = "Web"
min_bet = 10
max_bet = 500
denominations = [5, 10, 25, 100]
bonus_min = 5
bonus_max = 100
min_buy_in = 100
max_buy_in = 5000
betting_ms = 15000
dealing_ms = 200
setting_ms = 20000
revealing_ms = 800
settling_ms = 1500
grace_ms = 20000

[[table]]
id = "lose"
name = "Fouls lose"
foul = "lose"
betting_ms = 15000
setting_ms = 20000
revealing_ms = 800
settling_ms = 1500
"""

StartApp = Callable[..., Awaitable[App]]


@pytest.fixture
def server_settings(server_settings: Settings) -> Settings:
    """The servers the pages play against keep their tables on a loaded machine
    (:data:`~tests.helpers.STEADY_LEASE_MS`)."""
    return dataclasses.replace(server_settings, lease_ms=STEADY_LEASE_MS)


def chromium_path() -> str:
    """The Chromium binary the tests drive."""
    path = os.environ.get("PAIGOW_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
    if not Path(path).exists():
        pytest.fail(f"no Chromium at {path}: run tests/web/install_browser.sh (make test does)")
    return path


@pytest_asyncio.fixture
async def browser(tmp_path: Path) -> AsyncIterator[Browser]:
    """A headless Chromium, closed after the test."""
    async with async_playwright() as pw:
        chromium = await pw.chromium.launch(
            executable_path=chromium_path(), args=CHROMIUM_ARGS, timeout=30_000
        )
        try:
            yield chromium
        finally:
            await chromium.close()


@pytest_asyncio.fixture
async def start_web(
    server_settings: Settings, redis_client: redis.asyncio.Redis, tmp_path: Path
) -> AsyncIterator[StartApp]:
    """Start servers with the web tables on one fixed port (so a page can come back to
    a restarted server): ``await start_web(**settings)``; each is stopped after the test."""
    tables = tmp_path / "web-tables.toml"
    tables.write_text(WEB_TABLES)
    settings = dataclasses.replace(server_settings, tables_file=tables, port=free_port())
    apps: list[App] = []

    async def start(**changes: Any) -> App:
        app = App(dataclasses.replace(settings, **changes))
        apps.append(app)
        await app.start()
        return app

    try:
        yield start
    finally:
        for app in reversed(apps):
            await app.stop()


@pytest_asyncio.fixture
async def web_app(start_web: StartApp) -> App:
    """A running server with the web tables."""
    return await start_web()
