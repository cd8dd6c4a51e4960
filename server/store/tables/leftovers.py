"""The tables whose transfers a failed step left under way, for their holders.

A commit's steps after the script, or its undoing, may fail (Redis out of reach); the
table's slot still says what is under way, and the table's holder finishes it
(:meth:`~server.store.chips.transfers.Transfers.recover`, run by
:mod:`server.host.recovery`). The commit path says so here, and the holder is told at
once: with thousands of tables, each holder asking the store every few seconds was a
timer a table.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable


class Leftovers:
    """The tables a failed step left with transfers under way (``store.leftovers`` of
    a :class:`~server.store.tables.store.TableStore`), and who to wake for each."""

    def __init__(self) -> None:
        self._tables: set[str] = set()
        self._hooks: dict[str, list[Callable[[], None]]] = {}

    def left(self, table_id: str) -> None:
        """A step of ``table_id``'s transfers failed: its holder recovers them (told at
        once if it asked to be, see :meth:`watch`)."""
        self._tables.add(table_id)
        for wake in self._hooks.get(table_id, ()):
            wake()

    def watch(self, table_id: str, wake: Callable[[], None], on: bool = True) -> None:
        """Call ``wake`` each time a step of ``table_id``'s transfers fails (``on``), or
        no longer (``on=False``): a holder waits for that instead of asking
        :meth:`take` again and again."""
        hooks = self._hooks.setdefault(table_id, [])
        if on:
            hooks.append(wake)
        else:
            with contextlib.suppress(ValueError):
                hooks.remove(wake)
            if not hooks:
                del self._hooks[table_id]

    def take(self, table_id: str) -> bool:
        """Whether a step of the table's transfers failed since the last call (then its
        holder recovers them): the answer is True once per failure."""
        if table_id in self._tables:
            self._tables.discard(table_id)
            return True
        return False
