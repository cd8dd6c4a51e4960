"""The archive: settled rounds and ledger entries moved out of Redis into a database.

:class:`Archive` (SQLite in the data folder, or PostgreSQL by URL) stores them;
:class:`~server.archive.mover.Archiver` moves what is older than the retention window,
exactly once; :class:`~server.archive.service.ArchiveService` runs it in the server, one
process at a time; :func:`~server.archive.history.history_page` reads a player's game
logs across Redis and the archive (docs/DESIGN.md, "The archive").
"""

from server.archive.database import Archive, ArchiveStats
from server.archive.dialects import DATABASE_ERRORS, ArchiveError

__all__ = ["DATABASE_ERRORS", "Archive", "ArchiveError", "ArchiveStats"]
