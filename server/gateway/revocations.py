"""Sessions ended by an operator, heard from Redis: each node closes the player's
connections it holds.

``paigow-server session revoke PLAYER`` records the time (a session opened before it
is refused at its next resume) and publishes the player on the revocations channel
(:meth:`~server.store.keys.Keys.revocations`); every server process listens on it
with this task and closes that player's connections with ``unauthorized`` (4001,
protocol/PROTOCOL.md, section 5). A process that was not listening at that moment
(restarting, or cut from Redis) still refuses the resumes.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable

import redis.asyncio
from redis.exceptions import RedisError

from server.store.client.replies import as_str
from server.store.keys import DEFAULT_KEYS, Keys
from server.tasks import cancel_and_wait

log = logging.getLogger(__name__)

RETRY_S = (0.5, 5.0)
"""The pause after a lost subscription, doubling from the first to the second."""


class RevocationListener:
    """Calls ``close(player)`` for each player whose sessions an operator ends."""

    def __init__(
        self,
        client: redis.asyncio.Redis,
        close: Callable[[str], int],
        *,
        keys: Keys = DEFAULT_KEYS,
    ) -> None:
        self.redis = client
        self.close = close
        self.keys = keys
        self._task: asyncio.Task[None] | None = None
        self._stopping = asyncio.Event()

    def start(self) -> None:
        """Listen in a task of its own, subscribing again after any failure."""
        self._task = asyncio.get_running_loop().create_task(self._listen(), name="revocations")

    async def stop(self) -> None:
        """Stop listening."""
        # A flag besides the cancellation: redis-py may absorb a cancellation
        # (server/tasks.py), and the loop must not start a new wait after it.
        self._stopping.set()
        if self._task is not None:
            await cancel_and_wait(self._task)
            self._task = None

    async def _listen(self) -> None:
        pause = RETRY_S[0]
        while not self._stopping.is_set():
            pubsub = self.redis.pubsub(ignore_subscribe_messages=True)
            try:
                await pubsub.subscribe(self.keys.revocations())
                pause = RETRY_S[0]
                async for message in pubsub.listen():
                    if message.get("type") == "message":
                        player = as_str(message["data"])
                        closed = self.close(player)
                        log.info("sessions of %s ended: %d connections closed", player, closed)
            except (RedisError, OSError) as exc:
                log.warning("revocations: %s; subscribing again in %.1fs", exc, pause)
            finally:
                with contextlib.suppress(Exception):
                    await pubsub.aclose()
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(pause):
                    await self._stopping.wait()
            pause = min(RETRY_S[1], pause * 2)
