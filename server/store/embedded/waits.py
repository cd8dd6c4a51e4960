"""The two ways :class:`~server.store.embedded.process.EmbeddedRedis` waits for its child:
blocking the calling thread (its sync API, for tests, benchmarks and the exit hook) or
yielding to the event loop (its async API, for the server).

Its start and stop are written once, as coroutines that wait only through a
:class:`Waits`. On :data:`BLOCKING` every such wait is a blocking call, so the coroutine
never suspends, and :func:`run_blocking` runs it to its end on the calling thread with
no event loop (none may be running there, or one may: it is not touched). On
:data:`ON_THE_LOOP` the same coroutine is awaited as any other.
"""

from __future__ import annotations

import asyncio
import subprocess
import time
from collections.abc import Coroutine
from typing import Any, Protocol, TypeVar

import redis
import redis.asyncio
import redis.asyncio.retry
import redis.retry
from redis.backoff import NoBackoff

T = TypeVar("T")


class Probe(Protocol):
    """A connection to the child for its own management: no retries, since a refused
    connection is an answer here (the default policy would back off for seconds against
    a server that is starting or has just exited)."""

    async def ping(self) -> bool:
        """Whether the child answered PING; raises RedisError or OSError if it could not."""
        ...

    async def shutdown(self) -> None:
        """SHUTDOWN: the child fsyncs its append-only file and exits."""
        ...

    async def close(self) -> None:
        """Close the connection."""
        ...


class Waits(Protocol):
    """What the start and stop of the child wait on: its answer, time, its exit."""

    def probe(self, address: dict[str, Any], timeout_s: float) -> Probe:
        """A :class:`Probe` to ``address`` (``connection_kwargs``), each call bounded by
        ``timeout_s``."""
        ...

    async def sleep(self, seconds: float) -> None:
        """Let ``seconds`` pass."""
        ...

    async def wait_or_escalate(self, proc: subprocess.Popen[bytes], timeout_s: float) -> None:
        """:func:`wait_or_escalate`."""
        ...


def wait_or_escalate(proc: subprocess.Popen[bytes], timeout_s: float) -> None:
    """Wait up to ``timeout_s`` for ``proc`` to exit, then SIGTERM it and wait as long
    again, then SIGKILL it and wait as long again."""
    for send in (None, proc.terminate, proc.kill):
        if send is not None:
            send()
        try:
            proc.wait(timeout_s)
        except subprocess.TimeoutExpired:
            continue
        return


def run_blocking(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run to its end, on this thread, a coroutine that waits only on :data:`BLOCKING`
    (so never suspends); its result, or its exception raised."""
    try:
        coroutine.send(None)
    except StopIteration as done:
        result: T = done.value
        return result
    coroutine.close()
    raise RuntimeError("a blocking run suspended: it awaited something not on BLOCKING")


class _BlockingProbe:
    def __init__(self, client: redis.Redis) -> None:
        self._client = client

    async def ping(self) -> bool:
        return bool(self._client.ping())

    async def shutdown(self) -> None:
        self._client.shutdown()

    async def close(self) -> None:
        self._client.close()


class Blocking:
    """Every wait blocks the calling thread (the coroutine awaiting it never suspends)."""

    def probe(self, address: dict[str, Any], timeout_s: float) -> Probe:
        client = redis.Redis(
            **address, socket_timeout=timeout_s, retry=redis.retry.Retry(NoBackoff(), 0)
        )
        return _BlockingProbe(client)

    async def sleep(self, seconds: float) -> None:
        time.sleep(seconds)  # noqa: ASYNC251 -- blocking is this class's job

    async def wait_or_escalate(self, proc: subprocess.Popen[bytes], timeout_s: float) -> None:
        wait_or_escalate(proc, timeout_s)


class _LoopProbe:
    def __init__(self, client: redis.asyncio.Redis) -> None:
        self._client = client

    async def ping(self) -> bool:
        return bool(await self._client.ping())

    async def shutdown(self) -> None:
        await self._client.shutdown()

    async def close(self) -> None:
        await self._client.aclose()


class OnTheLoop:
    """Every wait yields to the running event loop."""

    def probe(self, address: dict[str, Any], timeout_s: float) -> Probe:
        client = redis.asyncio.Redis(
            **address, socket_timeout=timeout_s, retry=redis.asyncio.retry.Retry(NoBackoff(), 0)
        )
        return _LoopProbe(client)

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)

    async def wait_or_escalate(self, proc: subprocess.Popen[bytes], timeout_s: float) -> None:
        # Waiting in a worker thread is harmless (only spawning must not be).
        await asyncio.to_thread(wait_or_escalate, proc, timeout_s)


BLOCKING = Blocking()
ON_THE_LOOP = OnTheLoop()
