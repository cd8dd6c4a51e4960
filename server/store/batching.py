"""One Redis round trip for the script calls of many tables.

Every table commits its own changes, one at a time; with hundreds of tables, their
commits and lease renewals are sent together in one pipeline (not a transaction: each
script is atomic by itself, and fencing inside the scripts keeps each table's writes
correct whatever their order).

One pipeline is in flight at a time (group commit): the calls made while it awaits its
replies go together in the next one, sent as soon as those replies are in. Under load
the pipelines grow instead of multiplying. Measured at 10,000 players acting at a
human pace (``bench/server.py``), letting each loop pass send its own pipeline kept up
to 18 of them in flight, and 5 to 9 % of commits waited over 25 ms; with one in
flight, none did, for the same CPU.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import redis.asyncio
from redis.commands.core import AsyncScript
from redis.exceptions import NoScriptError

_Call = tuple[AsyncScript, list[Any], list[Any], "asyncio.Future[Any]"]

log = logging.getLogger(__name__)


class ScriptBatcher:
    """Queues script calls and sends them in pipelines, at most ``in_flight`` at once.

    A call made while that many pipelines await their replies waits for the next free
    one, with every other call made meanwhile. Each call gets its own reply or error.
    """

    def __init__(self, client: redis.asyncio.Redis, in_flight: int = 1) -> None:
        if in_flight < 1:
            raise ValueError("at least one pipeline in flight")
        self.client = client
        self.in_flight = in_flight
        self._pending: list[_Call] = []
        self._scheduled = False
        self._running: set[asyncio.Task[None]] = set()
        self.pipelines = 0
        """Pipelines sent so far."""

    def call(self, script: AsyncScript, keys: list[Any], args: list[Any]) -> asyncio.Future[Any]:
        """The script's reply (or error), once the pipeline holding this call is answered.

        Cancelling the future before its pipeline is sent drops the call; once sent,
        the script runs in Redis whatever becomes of the future.
        """
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        self._pending.append((script, keys, args, future))
        if not self._scheduled and len(self._running) < self.in_flight:
            self._scheduled = True
            loop.call_soon(self._flush)
        return future

    def _flush(self) -> None:
        self._scheduled = False
        if len(self._running) >= self.in_flight:
            return
        batch = [call for call in self._pending if not call[3].done()]  # not cancelled
        self._pending = []
        if not batch:
            return
        self.pipelines += 1
        task = asyncio.get_running_loop().create_task(self._send(batch))
        self._running.add(task)  # keep a reference until it is done
        task.add_done_callback(self._sent)

    def _sent(self, task: asyncio.Task[None]) -> None:
        # Whatever the outcome of that pipeline, the calls queued meanwhile go next.
        self._running.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("script pipeline failed", exc_info=task.exception())
        if self._pending and not self._scheduled:
            self._scheduled = True
            asyncio.get_running_loop().call_soon(self._flush)

    async def _send(self, batch: list[_Call]) -> None:
        try:
            async with self.client.pipeline(transaction=False) as pipe:
                for script, keys, args, _ in batch:
                    pipe.evalsha(script.sha, len(keys), *keys, *args)
                results = await pipe.execute(raise_on_error=False)
        except BaseException as exc:  # the connection failed: every call in it did
            failure = exc if isinstance(exc, Exception) else RuntimeError("pipeline cancelled")
            for *_, future in batch:
                if not future.done():
                    future.set_exception(failure)
            if not isinstance(exc, Exception):
                raise
            return
        forgotten: list[_Call] = []
        for call, result in zip(batch, results, strict=True):
            future = call[3]
            if future.done():  # the caller was cancelled meanwhile
                continue
            if isinstance(result, NoScriptError):
                forgotten.append(call)
            elif isinstance(result, Exception):
                future.set_exception(result)
            else:
                future.set_result(result)
        if forgotten:
            await self._load_again(forgotten)

    async def _load_again(self, calls: list[_Call]) -> None:
        """A restarted Redis forgot the scripts: load each once, then send ``calls``
        again at the head of the next pipeline (one round trip per script, not per call)."""
        try:
            for source in {call[0].script for call in calls}:
                await self.client.script_load(source)
        except Exception as exc:
            for *_, future in calls:
                if not future.done():
                    future.set_exception(exc)
            return
        self._pending[:0] = calls
