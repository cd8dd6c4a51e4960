"""The node's one Redis pub/sub connection: what it listens to, and who hears each message.

A node listens to its own channel (replies, hints) always; to the requests channel of
each table it holds; to the events channel of each table held elsewhere that one of
its connections watches; and to the private channel of each player connected to it
(docs/DESIGN.md, "Several nodes on one Redis"). Each channel has one handler, called
with each message in the order Redis delivered them. :meth:`Relay.listen` returns once
Redis confirmed the subscription, so that whatever is published after that is heard.

If the connection drops, redis-py connects again and subscribes again to every
channel; messages published meanwhile are lost, so ``on_reconnect`` is called to let
the node catch up (from the tables' replay buffers).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import Any

import redis.asyncio
from redis.asyncio.client import PubSub
from redis.exceptions import RedisError

from server.store.client.connection import close_client
from server.store.errors import store_call
from server.tasks import cancel_and_wait

log = logging.getLogger(__name__)

Handler = Callable[[bytes], None]
"""What is done with each message of a channel (it must not block: it may start tasks)."""

_RETRY_S = (0.05, 0.1, 0.25, 0.5, 1.0)


class Relay:
    """A pub/sub connection shared by every channel the node listens to."""

    def __init__(self, client: redis.asyncio.Redis, on_reconnect: Callable[[], None]) -> None:
        """``client``: a client of its own (the connection is held for good)."""
        self.client = client
        self.on_reconnect = on_reconnect
        self._pubsub: PubSub | None = None
        self._handlers: dict[str, Handler] = {}
        self._confirmed: dict[str, asyncio.Future[None]] = {}
        self._reader: asyncio.Task[None] | None = None
        self.messages = 0
        """Messages received so far."""

    @property
    def channels(self) -> list[str]:
        """The channels listened to, sorted."""
        return sorted(self._handlers)

    @store_call
    async def start(self, channel: str, handler: Handler) -> None:
        """Connect, listening to ``channel`` (the node's own); :class:`StoreUnavailable`
        if Redis does not answer."""
        self._pubsub = self.client.pubsub()
        await self._pubsub.subscribe(channel)
        self._handlers[channel] = handler
        confirmed = self._confirmation(channel)
        self._reader = asyncio.create_task(self._read(), name="relay")
        async with asyncio.timeout(10):
            await confirmed
        connection = self._pubsub.connection
        assert connection is not None
        # Weakly held by the connection: called each time it connects again.
        connection.register_connect_callback(self._connected_again)

    async def stop(self) -> None:
        """Stop listening and close the connection."""
        reader, self._reader = self._reader, None
        if reader is not None:
            await cancel_and_wait(reader)
        if self._pubsub is not None:
            with contextlib.suppress(Exception):
                await self._pubsub.aclose()
            self._pubsub = None
        for future in self._confirmed.values():
            future.cancel()
        self._confirmed.clear()
        self._handlers.clear()
        await close_client(self.client)

    def listening(self, channel: str) -> bool:
        """Whether ``channel`` is listened to (or about to be)."""
        return channel in self._handlers

    @store_call
    async def listen(self, channel: str, handler: Handler) -> None:
        """Hear ``channel``'s messages with ``handler`` from when this returns;
        :class:`StoreUnavailable` if Redis does not answer."""
        if channel in self._handlers:
            self._handlers[channel] = handler
            future = self._confirmed.get(channel)
            if future is not None:
                await asyncio.shield(future)
            return
        assert self._pubsub is not None, "the relay is not started"
        self._handlers[channel] = handler
        confirmed = self._confirmation(channel)
        try:
            await self._pubsub.subscribe(channel)
            async with asyncio.timeout(10):
                await asyncio.shield(confirmed)
        except BaseException:
            if self._handlers.get(channel) is handler:
                del self._handlers[channel]
            raise

    async def forget(self, channel: str) -> None:
        """Stop hearing ``channel``. A :meth:`listen` to it still waiting for Redis's
        confirmation returns: the channel was forgotten meanwhile. (Cancelling the
        confirmation it waits for raised ``CancelledError`` in the caller: a client's
        connection handler, which websockets then closed with 1011.)"""
        if self._handlers.pop(channel, None) is None or self._pubsub is None:
            return
        future = self._confirmed.pop(channel, None)
        if future is not None and not future.done():
            future.set_result(None)
        with contextlib.suppress(RedisError, OSError):
            await self._pubsub.unsubscribe(channel)

    def _confirmation(self, channel: str) -> asyncio.Future[None]:
        future = self._confirmed.get(channel)
        if future is None or future.done():
            future = asyncio.get_running_loop().create_future()
            self._confirmed[channel] = future
        return future

    async def _connected_again(self, connection: Any) -> None:
        # Called on the first connection too (registered after it): only later ones count.
        log.warning("relay: connected to Redis again; catching up")
        self.on_reconnect()

    async def _read(self) -> None:
        assert self._pubsub is not None
        failures = 0
        while True:
            try:
                message = await self._pubsub.get_message(timeout=None)
            except asyncio.CancelledError:
                raise
            except (RedisError, OSError) as exc:
                pause = _RETRY_S[min(failures, len(_RETRY_S) - 1)]
                failures += 1
                log.warning("relay: %s; listening again in %.2f s", exc, pause)
                await asyncio.sleep(pause)
                continue
            failures = 0
            if message is None:
                continue
            self._dispatch(message)

    def _dispatch(self, message: dict[str, Any]) -> None:
        kind = message["type"]
        channel = message["channel"]
        name = channel.decode() if isinstance(channel, bytes) else str(channel)
        if kind == "subscribe":
            future = self._confirmed.pop(name, None)
            if future is not None and not future.done():
                future.set_result(None)
            return
        if kind != "message":
            return
        handler = self._handlers.get(name)
        if handler is None:
            return  # unsubscribed meanwhile
        self.messages += 1
        try:
            handler(message["data"])
        except Exception:
            log.exception("relay: a message of %s could not be handled", name)
