"""Who may open a connection: the house's size, and what one client address may hold.

Counted per real client address (server/gateway/address.py): the connections open, and
those of them that have not said ``hello`` yet. The second limit is far below the first:
a casino's players behind one NAT address say ``hello`` within a round trip, so they
hardly ever wait for it together, while sockets that never speak are held until the
handshake time; without it one address could fill the house with them. A refusal is
close 1013 (try again later, with backoff) whose reason names the limit
(protocol/PROTOCOL.md, sections 11 and 12).

An address is in the counts only while it has a connection: after a wave of closes
they are empty again.
"""

from __future__ import annotations

from dataclasses import dataclass

from protocol.errors import CloseCode
from server.gateway.session import Close

UNKNOWN = "local"
"""The address counted for a connection with none (a unix socket)."""

FULL = Close(CloseCode.TRY_AGAIN_LATER, "server full")
ADDRESS_FULL = Close(CloseCode.TRY_AGAIN_LATER, "too many connections from your address")
ADDRESS_WAITING = Close(
    CloseCode.TRY_AGAIN_LATER, "too many connections from your address before hello"
)


@dataclass(frozen=True, slots=True)
class DoorLimits:
    """The limits (0: none)."""

    connections: int = 0
    """Open connections in all."""
    per_address: int = 0
    """Open connections from one address."""
    waiting_per_address: int = 0
    """Connections from one address that have not said ``hello`` yet."""


class Door:
    """The counts the limits are checked against. Each :meth:`enter` that returns None
    is followed by one :meth:`left`, and by at most one :meth:`greeted` before it."""

    __slots__ = ("limits", "open", "total", "waiting")

    def __init__(self, limits: DoorLimits) -> None:
        self.limits = limits
        self.total = 0
        self.open: dict[str, int] = {}
        """Open connections by address (present only while nonzero)."""
        self.waiting: dict[str, int] = {}
        """Connections by address that have not said ``hello`` (present while nonzero)."""

    def enter(self, address: str | None) -> Close | None:
        """Count a new connection from ``address``, or the limit that refuses it."""
        key = address or UNKNOWN
        limits = self.limits
        if limits.connections and self.total >= limits.connections:
            return FULL
        if limits.per_address and self.open.get(key, 0) >= limits.per_address:
            return ADDRESS_FULL
        if limits.waiting_per_address and self.waiting.get(key, 0) >= limits.waiting_per_address:
            return ADDRESS_WAITING
        self.total += 1
        self.open[key] = self.open.get(key, 0) + 1
        self.waiting[key] = self.waiting.get(key, 0) + 1
        return None

    def greeted(self, address: str | None) -> None:
        """The connection from ``address`` said ``hello`` (welcomed or not)."""
        _down(self.waiting, address or UNKNOWN)

    def left(self, address: str | None, *, greeted: bool) -> None:
        """The connection from ``address`` closed; ``greeted``: :meth:`greeted` was called."""
        key = address or UNKNOWN
        self.total -= 1
        _down(self.open, key)
        if not greeted:
            _down(self.waiting, key)


def _down(counts: dict[str, int], key: str) -> None:
    left = counts[key] - 1
    if left:
        counts[key] = left
    else:
        del counts[key]
