"""The Lua scripts of the tables catalog (:mod:`server.store.catalog`): its seeding from
a tables file, once, and each change of one table.

The rules of :mod:`server.store.lua` hold: every key in ``KEYS``, checks before the
first write, numbers formatted with ``%d``.
"""

from __future__ import annotations

from server.store.lua import load

CATALOG_SEED = load("catalog/seed")
CATALOG_WRITE = load("catalog/write")
