"""One Redis round trip for the script calls of many tables.

Every table commits its own changes, one at a time; with hundreds of tables, their
commits and lease renewals made during one pass of the event loop are sent together
in one pipeline (not a transaction: each script is atomic by itself, and fencing
inside the scripts keeps each table's writes correct whatever their order).
"""

from __future__ import annotations

import asyncio
from typing import Any

import redis.asyncio
from redis.commands.core import AsyncScript
from redis.exceptions import NoScriptError

_Call = tuple[AsyncScript, list[Any], list[Any], "asyncio.Future[Any]"]


class ScriptBatcher:
    """Queues script calls and sends those of one loop pass in one pipeline."""

    def __init__(self, client: redis.asyncio.Redis) -> None:
        self.client = client
        self._pending: list[_Call] = []
        self._scheduled = False
        self._running: set[asyncio.Task[None]] = set()

    def call(self, script: AsyncScript, keys: list[Any], args: list[Any]) -> asyncio.Future[Any]:
        """The script's reply, once the batch holding this call has been answered."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        self._pending.append((script, keys, args, future))
        if not self._scheduled:
            self._scheduled = True
            loop.call_soon(self._flush)
        return future

    def _flush(self) -> None:
        batch, self._pending = self._pending, []
        self._scheduled = False
        task = asyncio.get_running_loop().create_task(self._send(batch))
        self._running.add(task)  # keep a reference until it is done
        task.add_done_callback(self._running.discard)

    async def _send(self, batch: list[_Call]) -> None:
        try:
            async with self.client.pipeline(transaction=False) as pipe:
                for script, keys, args, _ in batch:
                    pipe.evalsha(script.sha, len(keys), *keys, *args)
                results = await pipe.execute(raise_on_error=False)
        except BaseException as exc:  # the connection failed: every call in it did
            for *_, future in batch:
                if not future.done():
                    future.set_exception(exc if isinstance(exc, Exception) else RuntimeError())
            if not isinstance(exc, Exception):
                raise
            return
        for (script, keys, args, future), result in zip(batch, results, strict=True):
            if future.done():  # the caller was cancelled
                continue
            if isinstance(result, NoScriptError):
                # A restarted Redis forgot the scripts: this call loads it again.
                try:
                    future.set_result(await script(keys=keys, args=args))
                except Exception as exc:
                    future.set_exception(exc)
            elif isinstance(result, Exception):
                future.set_exception(result)
            else:
                future.set_result(result)
