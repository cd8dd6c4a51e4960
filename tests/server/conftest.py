"""Fixtures of the shell's tests: servers with chosen tables and settings."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest_asyncio
import redis.asyncio

from server.app import App
from server.config import Settings

StartApp = Callable[..., Awaitable[App]]


@pytest_asyncio.fixture
async def start_app(
    server_settings: Settings, redis_client: redis.asyncio.Redis, tmp_path: Path
) -> AsyncIterator[StartApp]:
    """Start in-process servers on the session's (flushed) Redis: ``await start_app(
    tables="...", **settings)``; every one is stopped after the test."""
    apps: list[App] = []

    async def start(tables: str | None = None, **changes: Any) -> App:
        settings = server_settings
        if tables is not None:
            path = tmp_path / f"tables-{len(apps)}.toml"
            path.write_text(tables)
            settings = dataclasses.replace(settings, tables_file=path)
        app = App(dataclasses.replace(settings, **changes))
        apps.append(app)
        await app.start()
        return app

    try:
        yield start
    finally:
        for app in reversed(apps):
            await app.stop()
