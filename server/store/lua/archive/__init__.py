"""The Lua scripts of the archive's Redis side (the rules of :mod:`server.store.lua`:
every key in ``KEYS``, every check before the first write, numbers formatted with
``%d``).

Each touches one key, or the keys of one player or one table (one hash tag), so that
each runs on one node of a Redis Cluster (but ``STREAM_ENDS``, which only reads, and
reads any streams: on a cluster it is sent the streams of one slot at a time)
(docs/DESIGN.md, "Keys ready for Redis Cluster", "The archive").
"""

from __future__ import annotations

from server.store.lua import load

STREAM_ENDS = load("archive/stream_ends")
LEDGER_START = load("archive/ledger_start")
TRIM_LOG = load("archive/trim_log")
DROP_CLOSED_LEDGER = load("archive/drop_closed_ledger")
