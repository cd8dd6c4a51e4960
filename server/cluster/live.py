"""The tables catalog as this node follows it: tables created, changed and closed while
it runs (docs/DESIGN.md, "The tables catalog").

Every node reads the catalog (:class:`~server.store.TableCatalog`) when it hears a
change on the catalog's channel, and reads its revision every :data:`READ_EVERY_S`
besides, so that a notice it missed (pub/sub is at most once: a reconnection, a node
cut off for a moment) is only late. From each reading it brings its hosts in line:

- a table it does not host yet: a host is made and started (``add``), and the
  placement places it among the live nodes as it places every table; its node takes
  it, the others forward to it;
- a table whose settings changed: its host takes them, and the holder applies them
  between rounds (:meth:`~server.host.TableHost.reconcile`, a ``ChangeConfig``);
- a table closing: its host is told, and the holder closes it (a ``CloseTable``: no
  new seat or bet, the round in play finishes, every seat stands up with its chips to
  its player's account); once nothing is left on it (no seat, no transfer under way)
  the holder says so to the catalog, which makes it ``closed``;
- a closed table: its host is stopped and forgotten (``remove``): it leaves the lobby.

The holder's part is repeated at every reading (each step is safe to repeat), so a
holder that dies mid-close leaves it to the table's next holder, which finds the
catalog saying ``closing`` and carries on: a ``CloseTable`` stored before the failover
is in the state it loads, one not stored yet is stepped again.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Mapping

from server.host import TableHost
from server.store import (
    Catalog,
    CatalogRefused,
    StoreUnavailable,
    TableCatalog,
    TableStatus,
    TableStore,
)
from server.table.state import TableConfig
from server.tasks import cancel_and_wait

log = logging.getLogger(__name__)

READ_EVERY_S = 1.0
"""How often the catalog's revision is read even with no notice heard: the longest a
missed notice delays a change."""


class LiveTables:
    """This node's hosts kept in line with the catalog; see the module docstring."""

    def __init__(
        self,
        catalog: TableCatalog,
        tables: TableStore,
        hosts: Mapping[str, TableHost],
        *,
        add: Callable[[TableConfig], None],
        remove: Callable[[str], Awaitable[None]],
        read_every_s: float = READ_EVERY_S,
    ) -> None:
        """``add(config)`` makes, places and starts a host for a new table (in
        ``hosts`` when it returns); ``remove(table_id)`` stops a closed table's host and
        forgets it."""
        self.catalog = catalog
        self.tables = tables
        self.hosts = hosts
        self.add = add
        self.remove = remove
        self.read_every_s = read_every_s
        self.rev = 0
        """The catalog's revision as last applied here."""
        self.applied = 0
        """Readings of the catalog applied so far (for the tests)."""
        self._heard = asyncio.Event()
        self._listener = catalog.notices(self._notice)
        self._task: asyncio.Task[None] | None = None

    def start(self, known: Catalog) -> None:
        """Follow the catalog from ``known`` (the reading the hosts were made from)."""
        self.rev = known.rev
        self._listener.start()
        self._task = asyncio.create_task(self._run(), name="live-tables")

    async def stop(self) -> None:
        """Stop following the catalog."""
        task, self._task = self._task, None
        if task is not None:
            await cancel_and_wait(task)
        await self._listener.stop()

    def _notice(self, table_id: str) -> None:
        self._heard.set()

    def table_ready(self) -> None:
        """A table was just taken here: its catalog's word is brought in at once (a
        table closing taken over from a node that died mid-close)."""
        self._heard.set()

    async def _run(self) -> None:
        while True:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self.read_every_s):
                    await self._heard.wait()
            heard = self._heard.is_set()
            self._heard.clear()
            try:
                await self.step(force=heard)
            except StoreUnavailable as exc:
                log.warning("tables catalog not read (%s): tried again", exc)
            except Exception:
                log.exception("tables catalog: applying it failed; tried again")

    async def step(self, *, force: bool = False) -> None:
        """Read the catalog if it changed (or ``force``), apply it, and do the holder's
        part for the tables held here."""
        if force or await self.catalog.rev() != self.rev:
            await self.apply(await self.catalog.read())
        await self.reconcile()

    async def apply(self, catalog: Catalog) -> None:
        """Bring the hosts in line with ``catalog`` (see the module docstring)."""
        for table_id, entry in sorted(catalog.tables.items()):
            host = self.hosts.get(table_id)
            if entry.status is TableStatus.CLOSED:
                if host is not None:
                    log.info("table %s: closed, no longer hosted", table_id)
                    await self.remove(table_id)
                continue
            if host is None:
                log.info("table %s: created, hosted from now", table_id)
                self.add(entry.config)
                host = self.hosts[table_id]
            elif host.config != entry.config and not host.closing:
                log.info("table %s: settings changed", table_id)
                host.reconfigure(entry.config)
            if entry.status is TableStatus.CLOSING and not host.closing:
                log.info("table %s: closing", table_id)
                host.close()
        self.rev = catalog.rev
        self.applied += 1

    async def reconcile(self) -> None:
        """The holder's part, for each table held here whose catalog entry is not what
        the table holds: its settings applied, its closing begun, and a closed one
        said to the catalog once no transfer of it is under way."""
        for table_id, host in list(self.hosts.items()):
            if not host.ready or host.in_line():
                continue
            if await host.reconcile():
                await self._closed(table_id, host)

    async def _closed(self, table_id: str, host: TableHost) -> None:
        """``table_id`` has nobody seated and no round in play: once its chips have
        reached the accounts (its transfers finished, here if need be), it is closed."""
        await host.recovery.now()
        if await self.tables.transfers.has_pending(table_id):
            return  # the next reading tries again
        try:
            await self.catalog.closed(table_id)
        except CatalogRefused as exc:
            log.warning("table %s: not closed in the catalog: %s", table_id, exc)
            return
        log.info("table %s: every seat stood up, its chips returned: closed", table_id)
