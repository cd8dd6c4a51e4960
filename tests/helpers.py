"""Helpers shared by every test package: waiting for a condition, a server's URL.

Nothing in the suite sleeps for a fixed time: a test that needs something to happen
waits for it with :func:`until`, which polls a condition and fails after a bound.
"""

from __future__ import annotations

import asyncio
import inspect
import os
import shutil
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, TypeVar, overload

from server.app import App

T = TypeVar("T")

TIMEOUT = 10.0
"""The default bound of every wait, in seconds."""

STEADY_LEASE_MS = 10_000
"""The lease of an in-process server that only serves the test (the clients' and the
browser's tests). It shares its event loop with the app driven by the test, and on a
loaded machine a stall of a second lost the 1.5 s lease of ``server_settings``: the
table went away for a moment, and a bet or a set hand got ``unavailable``."""


def url(app: App) -> str:
    """The WebSocket URL of an in-process server (it listens on the loopback address)."""
    return f"ws://127.0.0.1:{app.port}/"


# The overloads let mypy read T off an async function's result too (the union alone
# solves T from both forms at once, and a coroutine spoils it).
@overload
async def until(
    check: Callable[[], Coroutine[Any, Any, T | None]],
    within: float = ...,
    what: str = ...,
    every: float = ...,
    pause: Callable[[float], Awaitable[None]] = ...,
    detail: Callable[[], str] | None = ...,
) -> T: ...
@overload
async def until(
    check: Callable[[], T | None] | Callable[[], Awaitable[T | None]],
    within: float = ...,
    what: str = ...,
    every: float = ...,
    pause: Callable[[float], Awaitable[None]] = ...,
    detail: Callable[[], str] | None = ...,
) -> T: ...
async def until(
    check: Callable[[], T | None] | Callable[[], Awaitable[T | None]],
    within: float = TIMEOUT,
    what: str = "condition",
    every: float = 0.02,
    pause: Callable[[float], Awaitable[None]] = asyncio.sleep,
    detail: Callable[[], str] | None = None,
) -> T:
    """The first truthy value of ``check()``, called again after each ``pause(every)``.

    ``check`` may be a plain function or return an awaitable (a coroutine that waits
    for the next frame, say: ``every=0`` then reads frames back to back). ``pause`` is
    what runs between two checks (``asyncio.sleep``; a Textual test passes
    ``pilot.pause``, which also lets the app draw).

    The whole wait, checks and pauses included, is bounded: after ``within`` seconds
    whatever is running is cancelled and an :exc:`AssertionError` names ``what``, with
    ``detail()`` (the screen, a log) if given. An exception from ``check`` propagates
    as it is, ``TimeoutError`` included.
    """
    bound = asyncio.timeout(within)
    try:
        async with bound:
            while True:
                value = check()
                if inspect.isawaitable(value):
                    value = await value
                if value:
                    return value
                await pause(every)
    except TimeoutError:
        if not bound.expired():
            raise  # the check's own TimeoutError, not the end of the wait
        message = f"timed out after {within} s waiting for {what}"
        if detail is not None:
            message += f"; {detail()}"
        raise AssertionError(message) from None


SYSTEM_FOLDERS = ("/usr/sbin", "/sbin")
"""Where Debian puts daemons and root's tools (``haproxy``, ``runuser``): not on a user's
``PATH``, nor on the ``PATH`` of a bare environment (``env -i``, cron)."""


def system_command(name: str) -> str | None:
    """The path of the command ``name``: on ``PATH`` first, else in :data:`SYSTEM_FOLDERS`;
    None if in neither."""
    # An empty entry would mean the current folder: skipped, as a shell's empty PATH.
    folders = [f for f in os.environ.get("PATH", os.defpath).split(os.pathsep) if f]
    return shutil.which(name, path=os.pathsep.join([*folders, *SYSTEM_FOLDERS]))
