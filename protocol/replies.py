"""The server's replies: exactly one per request, matched to it by ``rid``.

``ok`` (with the request's result, if any), ``error``, or ``pong`` for a ``ping``.
``PROTOCOL.md`` gives their meaning; the constraints are in the annotations (see
:mod:`protocol.schema`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from protocol.schema import Int
from protocol.structs import (
    Code,
    RequestId,
    Result,
    TableId,
    Text,
    TimeMs,
)


@dataclass(frozen=True, slots=True)
class OkReply:
    """Success of the request ``rid``, with its result (``None`` for plain acks)."""

    TYPE = "ok"
    rid: RequestId
    result: Result | None = None


@dataclass(frozen=True, slots=True)
class ErrorReply:
    """Failure of the request ``rid`` (``None`` when the request id was unreadable)."""

    TYPE = "error"
    code: Code
    message: Text
    retryable: bool
    rid: RequestId | None = None
    retry_after_ms: Annotated[int, Int(0, 3_600_000)] | None = None
    table_id: TableId | None = None


@dataclass(frozen=True, slots=True)
class Pong:
    """Reply to ``ping``: the client's time echoed and the server's clock."""

    TYPE = "pong"
    rid: RequestId
    server_time_ms: TimeMs
    time_ms: TimeMs | None = None
