"""The holder's side of a request another node sent: answered by this node's own
handlers, as if the connection were here.

The request runs with a :class:`RemoteConnection`, a stand-in for the connection on
the other node: it speaks for the same player and session (so a money request keeps
its (session, rid) and is applied once, wherever it came from), it counts as watching
the table (the other node attached its connection already), and what it is sent is
collected and sent back as the reply. The events the request causes are not sent to
it: they reach the other node with everybody's (``server/cluster/feed.py``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Mapping

from protocol.codec import decode_client, decode_server, encode
from protocol.errors import ErrorCode, ProtocolError
from protocol.messages import ErrorReply
from server.cluster import wire
from server.gateway import Gateway
from server.gateway.connection import Connection
from server.gateway.presence import Settled
from server.gateway.session import Session, error_reply
from server.host import TableHost, now_ms
from server.store import ClusterStore, StoreUnavailable
from server.table.views import snapshot
from server.tasks import cancel_and_wait

log = logging.getLogger(__name__)


class RemoteConnection(Connection):
    """A connection of another node, as this node's request handlers see it (see the
    module docstring): no socket, and every frame sent to it kept in :attr:`frames`."""

    def __init__(self, player: str, session: Session, table_id: str) -> None:
        # Not Connection.__init__: there is no socket here, no queue and no writer.
        self.player_id = player
        self.session = session
        self.tables = {table_id}
        self.wanted = {}
        self.frames: list[bytes] = []

    def send_bytes(self, data: bytes) -> None:
        """Keep ``data`` for the reply."""
        self.frames.append(data)


def _unavailable(frames: list[bytes]) -> bool:
    for frame in frames:
        message = decode_server(frame)
        if isinstance(message, ErrorReply) and message.code == ErrorCode.UNAVAILABLE:
            return True
    return False


class RequestServer:
    """Answers the requests for the tables held here."""

    def __init__(
        self,
        store: ClusterStore,
        instance: str,
        hosts: Mapping[str, TableHost],
        gateway: Gateway,
    ) -> None:
        self.store = store
        self.instance = instance
        self.hosts = hosts
        self.gateway = gateway
        self._tasks: set[asyncio.Task[None]] = set()
        self.served = 0
        """Requests answered so far."""

    async def stop(self) -> None:
        """Stop answering (the requests in progress are cancelled)."""
        await cancel_and_wait(*self._tasks)

    def heard(self, table_id: str, data: bytes) -> None:
        """A request came on ``table_id``'s requests channel."""
        request = wire.read_request(data)
        host = self.hosts.get(table_id)
        if host is None or not host.ready:
            self._answer(request, wire.not_here(request.req))
            return
        task = asyncio.create_task(self._serve(host, request), name=f"serve-{table_id}")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _answer(self, request: wire.Request, message: bytes) -> None:
        future = self.store.publish(self.store.keys.node_channel(request.sender), message)
        future.add_done_callback(_logged)

    async def _serve(self, host: TableHost, request: wire.Request) -> None:
        try:
            if request.kind == "call":
                answer = await self._call(host, request)
            elif request.kind == "attach":
                answer = await self._attach(host, request)
            else:
                answer = await self._presence(host, request)
        except StoreUnavailable as exc:
            # Redis is away: the asking node's client gets `unavailable`, the outage is
            # logged once (server/gateway/outage.py), not a traceback a request.
            self.gateway.outage.failed(exc)
            answer = wire.reply(request.req, [encode(self.gateway.unavailable(None, None))])
        except Exception:
            log.exception("table %s: a forwarded %s failed", host.table_id, request.kind)
            reply = error_reply(ErrorCode.INTERNAL, "server fault; try again", None)
            answer = wire.reply(request.req, [encode(reply)])
        self.served += 1
        self._answer(request, answer)

    async def _call(self, host: TableHost, request: wire.Request) -> bytes:
        try:
            message = decode_client(request.frame)
        except ProtocolError as exc:  # the other node decoded it: a version mismatch
            reply = error_reply(exc.code, str(exc), exc.rid, host.table_id)
            return wire.reply(request.req, [encode(reply)])
        session = Session(self.gateway.options, request.session_id, 0.0)
        session.name = request.name
        conn = RemoteConnection(request.player, session, host.table_id)
        await self.gateway.answer(conn, message, here=True)
        if not host.ready and _unavailable(conn.frames):
            # Lost (or handed over) while it was being answered, nothing stored: the
            # other node asks the next holder.
            return wire.not_here(request.req)
        return wire.reply(request.req, conn.frames)

    async def _attach(self, host: TableHost, request: wire.Request) -> bytes:
        conn = RemoteConnection(request.player, Session(self.gateway.options, "-", 0.0), "")
        async with host.lock:
            state = host.state
            if not host.ready or state is None:
                return wire.not_here(request.req)
            frames = None
            if request.last_seq is not None:
                # The replay buffer out of reach: a snapshot (from memory) is always a
                # valid answer, as for a connection here (Presence.attach).
                with contextlib.suppress(StoreUnavailable):
                    frames = await host.missed(conn, request.last_seq)
            if frames is None:
                frames = [encode(snapshot(state, request.player, now_ms()))]
            return wire.reply(request.req, frames, state.seq)

    async def _presence(self, host: TableHost, request: wire.Request) -> bytes:
        if await self.gateway.presence.settle(host, request.player) is Settled.NOT_HERE:
            return wire.not_here(request.req)
        return wire.reply(request.req, [])


def _logged(future: asyncio.Future[object]) -> None:
    if not future.cancelled() and future.exception() is not None:
        log.warning("a reply to another node was not sent: %s", future.exception())
