"""The Lua scripts of several nodes on one Redis (server/cluster): heartbeats,
publications after a commit, a table's events for a node catching up, and the
stored formats switched on once every live node reads them.

The rules of :mod:`server.store.lua` hold: every key in ``KEYS``, checks before the
first write, numbers formatted with ``%d``.
"""

from __future__ import annotations

from server.store.lua import load

NODES_BEAT = load("nodes/beat")
PUBLISH_COMMIT = load("nodes/publish_commit")
PUBLISH_ONE = load("nodes/publish_one")
EVENTS_FOR = load("nodes/events_for")
FORMATS_SWITCH = load("nodes/formats_switch")
