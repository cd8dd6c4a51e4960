"""What the gateway asks of the other nodes on the same Redis: :class:`Remote`.

The gateway serves its connections at every table, wherever the table is held
(docs/DESIGN.md, "Several nodes on one Redis"). For a table held here it talks to the
host; for the others, to a ``Remote`` (``server/cluster``, which imports the gateway:
the gateway never imports it). Without one, every table is this process's alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from protocol.messages import ClientMessage
from server.gateway.connection import Connection
from server.table.state import Phase


class Remote(Protocol):
    """The other nodes, as the gateway and presence need them."""

    async def route(self, conn: Connection, message: ClientMessage) -> bool:
        """Answer ``message`` (its ``ok`` or ``error`` sent to ``conn``) through the node
        holding its table, when that is not this one: True if it did."""

    async def arrived(self, conn: Connection) -> None:
        """``conn`` is its player's first connection here: say so (before anything is
        asked of their tables), and hear their private frames."""

    def resumed(self, session_id: str) -> None:
        """A connection here resumed ``session_id``: the other nodes close theirs."""

    async def left(self, player: str) -> None:
        """``player``'s last connection here closed: say so (a store error is tried
        again in the background, then their seats elsewhere settled)."""

    async def connected_elsewhere(self, player: str) -> bool:
        """Whether ``player`` has a connection on another live node."""

    async def attach(self, conn: Connection, table_id: str, last_seq: int | None) -> bool:
        """Attach ``conn`` to ``table_id``, held elsewhere (the events it missed after
        ``last_seq``, else a snapshot); False if no node holds the table now (the
        connection stays in ``wanted`` and is attached when one does)."""

    async def seated_elsewhere(self, player: str) -> list[str]:
        """The tables held elsewhere where ``player`` sits."""

    async def settle(self, table_id: str, player: str) -> None:
        """Have ``table_id``'s holder bring ``player``'s seat in line with where they
        are connected (away, or back); nothing if no node holds the table (its next
        holder does it on taking it). A store error or a holder that does not answer
        is tried again in the background, not raised."""

    async def table_balances(self, player: str, table_ids: Sequence[str]) -> dict[str, int]:
        """``player``'s balance at each of ``table_ids`` (held elsewhere) where they sit."""

    async def lobby(self, table_ids: Sequence[str]) -> dict[str, tuple[Phase, int]]:
        """For each of ``table_ids`` held elsewhere: its phase and how many sit there."""

    def watchers_elsewhere(self, table_id: str) -> int:
        """Connections watching ``table_id`` on the other nodes, as last read."""
