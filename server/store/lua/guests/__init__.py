"""The Lua scripts of guests (the rules of :mod:`server.store.lua`: every key in
``KEYS``, every check before the first write, numbers formatted with ``%d``).

Each touches one key, or the keys of one player (one hash tag), so that each runs on
one node of a Redis Cluster; what spans players (the guests' list, the display names)
is changed by single-key commands beside them (docs/DESIGN.md, "Keys ready for Redis
Cluster", "Guests").
"""

from __future__ import annotations

from server.store.lua import load

GUEST_ADMIT = load("guests/admit")
GUEST_TOUCH = load("guests/touch")
CLOSE_GUEST = load("guests/close")
