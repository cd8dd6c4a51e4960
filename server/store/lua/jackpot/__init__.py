"""The Lua scripts of a progressive jackpot, every key in the jackpot's slot (the rules
of :mod:`server.store.lua`). ``CONTRIBUTE`` and ``HIT`` are each applied once by their
ledger key (a marker key remembers what each did, so a retry does it again for
nothing); both start the meter at its seed first if it never started (the fragment
``jackpot/_start``, its Lua function ``start``). ``FORGET`` drops a hit delivered to its
player's account; ``JACKPOT_SNAPSHOT`` is the audit's reading of one jackpot.
"""

from __future__ import annotations

from server.store.lua import load

CONTRIBUTE = load("jackpot/contribute")
HIT = load("jackpot/hit")
FORGET = load("jackpot/forget")
JACKPOT_SNAPSHOT = load("jackpot/snapshot")
