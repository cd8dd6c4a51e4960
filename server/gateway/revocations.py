"""Sessions ended by an operator, heard from Redis: each node closes the player's
connections it holds.

``paigow-server session revoke PLAYER`` records the time (a session opened before it
is refused at its next resume) and publishes the player on the revocations channel
(:meth:`~server.store.keys.Keys.revocations`); every server process listens on it
with this listener and closes that player's connections with ``unauthorized`` (4001,
protocol/PROTOCOL.md, section 5). A process that was not listening at that moment
(restarting, or cut from Redis) still refuses the resumes.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from server.store import SessionStore

log = logging.getLogger(__name__)


class RevocationListener:
    """Calls ``close(player)`` for each player whose sessions an operator ends (heard
    through ``sessions``, subscribing again after any failure)."""

    def __init__(self, sessions: SessionStore, close: Callable[[str], int]) -> None:
        self.close = close
        self._listener = sessions.revocations(self._heard)

    def start(self) -> None:
        """Listen in a task of its own."""
        self._listener.start()

    async def stop(self) -> None:
        """Stop listening."""
        await self._listener.stop()

    def _heard(self, player: str) -> None:
        closed = self.close(player)
        log.info("sessions of %s ended: %d connections closed", player, closed)
