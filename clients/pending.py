"""The request machinery under a session: rids, replies matched to them, and pacing.

:class:`Pending` issues each request's ``rid`` and holds one future per request until
its reply (``ok``, ``error`` or ``pong``) comes; :class:`Pacer` spaces requests so the
server's rate limit never refuses one.
"""

from __future__ import annotations

import asyncio
import itertools
import secrets
import time
from collections.abc import Sequence
from typing import Any

import msgpack

from clients.model import TableModel
from protocol import limits as L
from protocol.codec import UNPACK_OPTIONS
from protocol.messages import ErrorReply, Hello, OkReply, Pong
from protocol.structs import TableSeq
from protocol.version import PROTOCOL_VERSION

Reply = OkReply | ErrorReply | Pong
"""A message that answers a request, matched to it by ``rid``."""


class Pending:
    """The requests waiting for their reply, by ``rid``.

    The server applies a money request once per session and rid for 24 hours
    (protocol/PROTOCOL.md, section 3): a run that resumes a saved session must not repeat the
    rids of the run that saved it, so the counter of rids has a random prefix.
    """

    def __init__(self) -> None:
        self._prefix = secrets.token_hex(8) + "-"
        self._count = itertools.count(1)
        self._futures: dict[str, asyncio.Future[Reply]] = {}

    def new_rid(self) -> str:
        """A rid not used before by this or any other session."""
        return f"{self._prefix}{next(self._count)}"

    def open(self, rid: str) -> asyncio.Future[Reply]:
        """The future of the reply to ``rid``, until :meth:`close`."""
        future: asyncio.Future[Reply] = asyncio.get_running_loop().create_future()
        self._futures[rid] = future
        return future

    def close(self, rid: str) -> None:
        """Forget ``rid``: a reply to it from now on answers nothing."""
        self._futures.pop(rid, None)

    def settle(self, reply: Reply) -> bool:
        """Hand ``reply`` to the request it answers; False if none is waiting for it."""
        future = self._futures.get(reply.rid) if reply.rid is not None else None
        if future is None or future.done():
            return False
        future.set_result(reply)
        return True

    def fail(self, rid: object, exc: Exception) -> None:
        """Fail the request ``rid`` with ``exc``, if one is waiting (any other rid: nothing)."""
        future = self._futures.get(rid) if isinstance(rid, str) else None
        if future is not None and not future.done():
            future.set_exception(exc)

    def fail_all(self, exc: Exception) -> None:
        """Fail every request waiting with ``exc`` (the connection is gone), and forget them."""
        for future in self._futures.values():
            if not future.done():
                future.set_exception(exc)
        self._futures.clear()


class Pacer:
    """A token bucket a little under the server's (protocol/PROTOCOL.md, section 12), so
    we are never refused."""

    def __init__(self, rate: float, burst: float) -> None:
        self.rate, self.burst, self.tokens = rate, burst, burst
        self.stamp = time.monotonic()

    async def take(self) -> None:
        """Wait until a request may be sent, and count it."""
        while True:
            now = time.monotonic()
            self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
            self.stamp = now
            if self.tokens >= 1:
                self.tokens -= 1
                return
            await asyncio.sleep((1 - self.tokens) / self.rate)


def hello_message(
    client: str,
    token: str | None,
    name: str | None,
    resume_token: str | None,
    synced: Sequence[TableModel],
) -> Hello:
    """The ``hello`` of a connection: an account's ``token`` or a guest's ``name``, and
    with a ``resume_token`` the last ``seq`` of each table in ``synced`` (to replay what
    was missed, protocol/PROTOCOL.md, section 5)."""
    last_seq = tuple(TableSeq(table_id=m.table_id, seq=m.seq) for m in synced)
    return Hello(
        rid="hello",
        min_version=PROTOCOL_VERSION,
        max_version=PROTOCOL_VERSION,
        client=client,
        token=token,
        guest=token is None,
        name=name,
        resume_token=resume_token,
        last_seq=last_seq[: L.MAX_TABLES_PER_SESSION] if resume_token is not None else (),
    )


def raw_map(frame: bytes) -> dict[str, Any] | None:
    """The raw map of a frame (same msgpack limits as the decoder), or None: what a reply
    that does not decode, or an event of an unknown type, still tells (its rid, its seq)."""
    try:
        data = msgpack.unpackb(frame, **UNPACK_OPTIONS)
    except Exception:
        return None
    return data if isinstance(data, dict) else None
