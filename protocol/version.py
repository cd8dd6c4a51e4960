"""Protocol versions and their negotiation (protocol/PROTOCOL.md, section 14).

A protocol version is one integer, the *major* version: two peers speaking the same
major version understand each other. ``PROTOCOL_MINOR`` counts additive changes
within a major version (new optional fields, new message types, new error codes);
it is informational and never negotiated.
"""

from __future__ import annotations

from typing import Final

PROTOCOL_VERSION: Final = 1
PROTOCOL_MINOR: Final = 7  # 1: money requests applied once per rid; rid_reused
# 2: table_info.min_bonus; 3: guests_limited; sessions end with the credential that opened them
# 4: table_info.commission_rounding and main_bet_unit; commission_not_whole
# 5: table_info.commission_free (the commission-free tables, merged beside this)
# 6: wagers (bet, bet_placed, SeatView, SeatResult, RoundRecord), table_info.side_bets
# 7: jackpot meters: tables.jackpots, TableSummary.jackpot, table_info.jackpot,
#    watch_jackpots / unwatch_jackpots and the jackpot event
MIN_SUPPORTED_VERSION: Final = 1
MAX_SUPPORTED_VERSION: Final = 1
MAX_VERSION: Final = 65535


def negotiate(
    client_min: int,
    client_max: int,
    server_min: int = MIN_SUPPORTED_VERSION,
    server_max: int = MAX_SUPPORTED_VERSION,
) -> int | None:
    """The highest version both ranges contain, or ``None`` when they do not overlap."""
    best = min(client_max, server_max)
    return best if best >= max(client_min, server_min) else None
