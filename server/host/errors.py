"""The errors the table host raises itself, besides the table's own refusals
(:class:`~server.table.errors.TableError`, of which these are two)."""

from __future__ import annotations

from protocol.errors import ErrorCode
from server.table.errors import TableError


class TableUnavailable(TableError):
    """The table is not hosted here right now (starting, or owned by another process)."""

    def __init__(self, table_id: str) -> None:
        super().__init__(ErrorCode.UNAVAILABLE, f"table {table_id} is not available; retry")


class TableNotWritable(TableError):
    """Redis refused the table's writes (its primary has too few replicas in reach:
    :class:`~server.store.errors.WritesRefused`): nothing changed, and the table is
    still hosted here. Not a :class:`TableUnavailable`, which says it is not."""

    def __init__(self, table_id: str) -> None:
        super().__init__(ErrorCode.UNAVAILABLE, f"table {table_id} cannot be written now; retry")
