"""Which stored formats the nodes of a mixed cluster may write (docs/DESIGN.md,
"Releases side by side").

During a rolling upgrade nodes of two releases share one Redis. A node reads what the
releases before it wrote; a node of the previous release does not read what a newer
feature writes. So a newer format is named here (:data:`FORMATS`), and written only
once it is *switched on*:

- Each node announces in its registration (its node hash, renewed at every heartbeat)
  its release (``release``) and the formats it reads (``reads``, comma-separated).
- A node that announces no ``reads`` is taken for the oldest: it reads none of the
  named formats. That is every node of 0.1.0, which announced neither field.
- A node switches a format on when every live node reads it (``FORMATS_SWITCH``): in one
  script, the live nodes by Redis's clock must be the ones it read, each announcing the
  format, or nothing is written. A node starting later registers before it hosts a
  table, so once a format is on, no node that cannot read it is live, unless it is of
  a release that announces nothing (0.1.0: see deploy/README.md, "Upgrade notes").
- A format switched on stays on (``pg:formats``): a node that reads fewer formats than
  the store has on refuses to start (:class:`FormatsAhead`), rather than fail on the
  first record it cannot read. Going back means restoring a backup.

A writer asks :attr:`server.store.ClusterStore.formats_on` (as last read, at most a
heartbeat old: late only in switching on, never early).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from server.store.errors import StoreError

RELEASE_FIELD = "release"
"""The node hash's field of the release a node runs."""

READS_FIELD = "reads"
"""The node hash's field of the formats a node reads, comma-separated."""

TABLE_CONFIG_FIELDS = "table-config-fields"

SIDE_WAGERS = "side-wagers"

FORMATS: Mapping[str, str] = {
    TABLE_CONFIG_FIELDS: (
        "a table's settings (the catalog's and its config part) with a field 0.1.0 "
        "does not have at a value other than its default (at its default it is not "
        "written: server/store/tables/parts.py)"
    ),
    SIDE_WAGERS: (
        "a table offering side bets beyond the bonus bet (TableConfig.side_bets): its "
        "seats' and results' arrays then grow by the other side bets' fields, longer "
        "than 0.1.0 reads (server/store/tables/parts.py)"
    ),
}
"""Every format named since 0.1.0, and what it is. A format is never renamed or
removed: a node of a later release still announces it."""

READS: frozenset[str] = frozenset(FORMATS)
"""The formats this release reads."""

OLDEST: frozenset[str] = frozenset()
"""What a node that announces nothing reads (0.1.0): none of the named formats."""


class FormatsAhead(StoreError):
    """The store has formats switched on that this release does not read: it was run
    by a later release than this one."""

    def __init__(self, unread: Iterable[str]) -> None:
        self.unread = sorted(unread)
        super().__init__(
            "this store was written by a later release: it uses stored formats this "
            f"release does not read ({', '.join(self.unread)}); run that release or a "
            "later one (going back means restoring a backup taken before the upgrade)"
        )


def announcement(release: str, reads: Iterable[str] = READS) -> dict[str, str]:
    """The fields a node adds to its registration: its release and what it reads."""
    return {RELEASE_FIELD: release, READS_FIELD: ",".join(sorted(reads))}


def reads_of(info: Mapping[str, str]) -> frozenset[str]:
    """The formats a node reads, from its registration (:data:`OLDEST` if it says none)."""
    listed = info.get(READS_FIELD)
    if listed is None:
        return OLDEST
    return frozenset(name for name in listed.split(",") if name)


def read_by_all(infos: Iterable[Mapping[str, str]]) -> frozenset[str]:
    """The formats every one of these nodes reads."""
    common: frozenset[str] | None = None
    for info in infos:
        reads = reads_of(info)
        common = reads if common is None else common & reads
    return common or frozenset()
