"""The store's own errors, and the one thing every store asks of its Redis client.

The rest of the server handles these, never Redis's own (``redis`` is imported only
inside :mod:`server.store`)::

    StoreFailure                 anything the store raises on purpose
     ├── StoreUnavailable        Redis did not answer or failed the command (a lost
     │    │                      connection, a timeout, an error reply): a write may or
     │    │                      may not have happened, unless the method says otherwise
     │    └── WritesRefused      the primary refused the writes (too few replicas in
     │                           reach): nothing was written
     ├── Unreplicated            written on the primary, acknowledged by no replica
     └── StoreError              a call that breaks the store's contract (a bug)

:func:`store_call` (a method's decorator) and :func:`translated` (a block's context)
turn Redis's errors and socket errors into :class:`StoreUnavailable` at the store's
edge, the original kept as its ``__cause__``.
"""

from __future__ import annotations

import contextlib
import functools
import re
from collections.abc import Awaitable, Callable, Coroutine, Iterator
from typing import Any, ParamSpec, TypeVar

import redis.asyncio
from redis.exceptions import RedisError, ResponseError

_NOREPLICAS = re.compile(r"(?:^|-)NOREPLICAS ")
"""Redis's refusal, at the start of the reply (Redis 7, Valkey) or after the script's
name (Redis 6.2: ``@user_script: 1: -NOREPLICAS ...``)."""


class StoreFailure(Exception):
    """Anything the store raises on purpose (the tree in the module docstring)."""


class StoreError(StoreFailure, RuntimeError):
    """A call that breaks the store's contract (a programming error, not a race)."""


class StoreUnavailable(StoreFailure):
    """Redis did not answer, or failed the command: a connection lost or refused, a
    timeout, an error reply, a failover in progress. Whether a write happened is not
    known unless the method says so; retrying later is the caller's choice. The error
    Redis or the socket raised is the ``__cause__``."""


class Unreplicated(StoreFailure):
    """A write the primary applied but no replica acknowledged within the wait, while
    the primary has replicas: a failover now could lose it, so it is not acknowledged
    (docs/DESIGN.md, "Redis failures"). ``reply`` is what the primary answered."""

    def __init__(self, reply: object) -> None:
        super().__init__("no replica acknowledged the write in time")
        self.reply = reply


class WritesRefused(StoreUnavailable, ResponseError):
    """The primary refused a script's writes: it has fewer replicas in reach than its
    ``min-replicas-to-write`` (Redis's ``NOREPLICAS``). A script does its checks before
    its first write, and that write is the one refused, so nothing was written. A
    :class:`StoreUnavailable`, so that whatever handles the store's failures handles it
    as any other (and a ``ResponseError`` for the store's own Redis-level code)."""

    @staticmethod
    def of(reply: object) -> WritesRefused | None:
        """The error for a script's ``reply``, if it is Redis's ``NOREPLICAS``."""
        if isinstance(reply, ResponseError) and _NOREPLICAS.search(str(reply)):
            return WritesRefused(str(reply))
        return None


def require_bytes_client(client: redis.asyncio.Redis) -> None:
    """Raise :class:`StoreError` if ``client`` decodes responses to ``str``: the stores
    keep opaque bytes (state parts, events, records)."""
    if isinstance(client, redis.asyncio.RedisCluster):
        kwargs = client.get_connection_kwargs()
    else:
        kwargs = client.connection_pool.connection_kwargs
    if kwargs.get("decode_responses"):
        raise StoreError("the store needs a Redis client with decode_responses=False")


_P = ParamSpec("_P")
_R = TypeVar("_R")


@contextlib.contextmanager
def translated() -> Iterator[None]:
    """Raise Redis's errors and socket errors inside the block as
    :class:`StoreUnavailable` (the store's own errors pass as they are)."""
    try:
        yield
    except StoreFailure:
        raise
    except (RedisError, OSError) as exc:
        raise unavailable(exc) from exc


def unavailable(exc: RedisError | OSError) -> StoreUnavailable:
    """The store's error for ``exc``, raised by Redis or the socket (raise it ``from``
    ``exc``)."""
    return StoreUnavailable(f"{type(exc).__name__}: {exc}")


def store_call(
    method: Callable[_P, Awaitable[_R]],
) -> Callable[_P, Coroutine[Any, Any, _R]]:
    """Decorate a store's async method so that it raises :class:`StoreUnavailable`
    where Redis or the socket failed (:func:`translated`)."""

    @functools.wraps(method)
    async def call(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        with translated():
            return await method(*args, **kwargs)

    return call
