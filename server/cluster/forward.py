"""Asking the node that holds a table: a request out on the table's requests channel,
its reply back on this node's channel.

Nobody needs to know where a table is: whoever holds it listens to its requests
channel, and Redis says how many heard each request. None (the table is between two
holders: handed over, or its holder died and its lease has not run out) means ask
again shortly, up to a bound; a node that heard it but no longer holds the table
answers ``nothere`` and is asked again too. A holder that heard it and never answers
(it died meanwhile) makes the request fail with ``unavailable`` after a while: the
client may send it again, and a money request is applied at most once whatever
happened (protocol/PROTOCOL.md, section 3).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from protocol.errors import ErrorCode
from server.cluster import wire
from server.store import ClusterStore
from server.table.errors import TableError

log = logging.getLogger(__name__)

ASK_AGAIN_S = 0.05
"""How long to wait before asking again when nobody holds the table (or a ``held``
notice comes first)."""


class NoHolder(TableError):
    """No node holds the table now (it is moving, or taken over): retry."""

    def __init__(self, table_id: str) -> None:
        super().__init__(ErrorCode.UNAVAILABLE, f"table {table_id} is moving; retry")


@dataclass
class _Waiting:
    reply: asyncio.Future[wire.NodeMessage]
    heard_by: int | None = None  # how many nodes heard the request (once published)
    nacks: int = 0


@dataclass
class _HeldWaiters:
    events: list[asyncio.Event] = field(default_factory=list)


class Forwarder:
    """This node's requests to the holders of other tables, and their replies."""

    def __init__(
        self,
        store: ClusterStore,
        instance: str,
        *,
        wait_s: float,
        reply_s: float,
        on_ask: Callable[[float], None] | None = None,
    ) -> None:
        """``wait_s``: how long a request waits for some node to hold its table;
        ``reply_s``: how long it waits for the holder's reply. ``on_ask`` is told each
        answered request's time, in seconds."""
        self.store = store
        self.instance = instance
        self.wait_s = wait_s
        self.reply_s = reply_s
        self.on_ask = on_ask
        self._ids = itertools.count(1)
        self._waiting: dict[int, _Waiting] = {}
        self._held: dict[str, _HeldWaiters] = {}

    async def ask(
        self, table_id: str, message: Callable[[int], bytes], *, wait: bool = True
    ) -> wire.NodeMessage:
        """Send ``message(request id)`` to the holder of ``table_id``; its reply.

        Raises :class:`NoHolder` when no node holds the table within ``wait_s`` (at
        once unless ``wait``), and ``TableError`` (``unavailable``) when its holder does
        not answer within ``reply_s``.
        """
        loop = asyncio.get_running_loop()
        started = loop.time()
        channel = self.store.keys.table_requests(table_id)
        while True:
            req = next(self._ids)
            waiting = _Waiting(loop.create_future())
            self._waiting[req] = waiting
            try:
                heard_by = int(await self.store.publish(channel, message(req)))
                waiting.heard_by = heard_by
                if heard_by and waiting.nacks >= heard_by and not waiting.reply.done():
                    waiting.reply.set_result(wire.NodeMessage("nothere", req))
                if heard_by:
                    reply = await self._reply_or_new_holder(table_id, waiting.reply)
                    if reply is not None and reply.kind == "reply":
                        if self.on_ask is not None:
                            self.on_ask(loop.time() - started)
                        return reply
                    if reply is None:
                        continue  # another node holds the table now: ask it
            finally:
                self._waiting.pop(req, None)
            if not wait or loop.time() - started >= self.wait_s:
                raise NoHolder(table_id)
            await self._held_or(table_id, ASK_AGAIN_S)

    async def _reply_or_new_holder(
        self, table_id: str, reply: asyncio.Future[wire.NodeMessage]
    ) -> wire.NodeMessage | None:
        """The reply; None if another node says it holds the table first (the node
        that heard the request died, say, just as it was sent: a money request sent
        again is applied once, and another one is the client's own to repeat)."""
        held = asyncio.Event()
        waiters = self._held.setdefault(table_id, _HeldWaiters())
        waiters.events.append(held)
        new_holder = asyncio.ensure_future(held.wait())
        either: set[asyncio.Future[Any]] = {reply, new_holder}
        try:
            done, _ = await asyncio.wait(
                either, timeout=self.reply_s, return_when=asyncio.FIRST_COMPLETED
            )
        finally:
            new_holder.cancel()
            if held in waiters.events:
                waiters.events.remove(held)
            if not waiters.events and self._held.get(table_id) is waiters:
                del self._held[table_id]
        if reply in done:
            return reply.result()
        if new_holder in done:
            return None
        raise TableError(ErrorCode.UNAVAILABLE, f"table {table_id} did not answer in time; retry")

    def heard(self, message: wire.NodeMessage) -> None:
        """A reply (or ``nothere``) came on this node's channel."""
        waiting = self._waiting.get(message.req)
        if waiting is None or waiting.reply.done():
            return  # answered already (by another node that heard it), or given up
        if message.kind == "reply":
            waiting.reply.set_result(message)
            return
        waiting.nacks += 1
        if waiting.heard_by is not None and waiting.nacks >= waiting.heard_by:
            waiting.reply.set_result(message)

    def table_held(self, table_id: str) -> None:
        """A node holds ``table_id`` now: requests waiting for one ask again at once."""
        waiters = self._held.pop(table_id, None)
        for event in waiters.events if waiters is not None else ():
            event.set()

    async def _held_or(self, table_id: str, seconds: float) -> None:
        event = asyncio.Event()
        self._held.setdefault(table_id, _HeldWaiters()).events.append(event)
        try:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(seconds):
                    await event.wait()
        finally:
            waiters = self._held.get(table_id)
            if waiters is not None and event in waiters.events:
                waiters.events.remove(event)
                if not waiters.events:
                    del self._held[table_id]
