"""What a request handler is given (:class:`Context`) and what it returns (:data:`Outcome`)."""

from __future__ import annotations

import enum
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from protocol.structs import Result
from server.archive import Archive
from server.gateway.connection import Connection
from server.gateway.jackpots import JackpotRelay
from server.gateway.presence import Presence
from server.store import AccountStore, TableStore
from server.wallet import Funding


@dataclass(frozen=True, slots=True)
class Context:
    """The gateway's parts a handler uses: who is where, the stores, the server's name,
    the archive (None: none), the operator's wallet (None: the built-in accounts), the
    jackpots' meters (None: the tables offer none)."""

    presence: Presence
    tables: TableStore
    accounts: AccountStore
    server_name: str
    archive: Archive | None = None
    wallet: Funding | None = None
    jackpots: JackpotRelay | None = None


class Replied(enum.Enum):
    """What a handler returns when it has sent its ``ok`` itself (to order it first)."""

    REPLIED = "replied"


REPLIED = Replied.REPLIED
Outcome = Result | None | Replied
"""A handler's answer: the ``ok``'s result (None: an ``ok`` with none), or :data:`REPLIED`."""
Handler = Callable[[Context, Connection, Any], Awaitable[Outcome]]
"""A request handler: it answers, or raises ``TableError`` (the gateway sends the error)."""
