"""One channel heard for good: a task of its own subscribes to it, hands each message
on, and subscribes again after any failure (messages published meanwhile are lost:
the listener's user must not depend on hearing every one)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable

import redis.asyncio
from redis.exceptions import RedisError

from server.tasks import cancel_and_wait

log = logging.getLogger(__name__)

RETRY_S = (0.5, 5.0)
"""The pause after a lost subscription, doubling from the first to the second."""


class ChannelListener:
    """Calls ``heard(data)`` for each message published on ``channel``, from
    :meth:`start` to :meth:`stop`; ``name`` names the task and the log lines.
    ``subscribed`` (optional) is called each time Redis confirmed the subscription, the
    first and every later one: what was published before it was not heard, so a user
    that keeps a value up to date reads it again then."""

    def __init__(
        self,
        client: redis.asyncio.Redis,
        channel: str,
        heard: Callable[[bytes], None],
        name: str,
        subscribed: Callable[[], None] | None = None,
    ) -> None:
        self.redis = client
        self.subscribed = subscribed
        self.channel = channel
        self.heard = heard
        self.name = name
        self._task: asyncio.Task[None] | None = None
        self._stopping = asyncio.Event()

    def start(self) -> None:
        """Listen in a task of its own, subscribing again after any failure."""
        self._task = asyncio.get_running_loop().create_task(self._listen(), name=self.name)

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
                await pubsub.subscribe(self.channel)
                pause = RETRY_S[0]
                if self.subscribed is not None:
                    # subscribe() sent the command; its confirmation is the first reply.
                    await pubsub.get_message(timeout=10.0)
                    self.subscribed()
                async for message in pubsub.listen():
                    if message.get("type") == "message":
                        self.heard(message["data"])
            except (RedisError, OSError) as exc:
                log.warning("%s: %s; subscribing again in %.1fs", self.name, exc, pause)
            finally:
                with contextlib.suppress(Exception):
                    await pubsub.aclose()
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(pause):
                    await self._stopping.wait()
            pause = min(RETRY_S[1], pause * 2)
