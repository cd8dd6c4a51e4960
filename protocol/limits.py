"""Hard limits of the wire protocol, in one place (protocol/PROTOCOL.md, section 12).

Sizes of strings are in characters (Unicode code points) at the schema level; the
msgpack-level limits below are in bytes and bound every string, whatever its field.
"""

from __future__ import annotations

from typing import Final

# Frames. A client's messages are small; server frames carry snapshots and history pages.
MAX_CLIENT_FRAME_BYTES: Final = 8 * 1024
MAX_SERVER_FRAME_BYTES: Final = 256 * 1024
MAX_FRAME_BYTES: Final = MAX_SERVER_FRAME_BYTES

# msgpack-level limits, passed to msgpack's unpacker for every frame.
MAX_STR_BYTES: Final = 4096
MAX_BIN_BYTES: Final = 0  # no message has a binary field
MAX_EXT_BYTES: Final = 0  # ext types (timestamps included) are refused
MAX_ARRAY_LEN: Final = 256
MAX_MAP_LEN: Final = 64
# Depth of nested containers; the top-level map is depth 1. The deepest message
# (a history page: ok > result > rounds > round > hand > cards) is 6 deep.
MAX_DEPTH: Final = 8

# Integers: chips, times and sequence numbers stay exact in a JavaScript double.
MAX_SAFE_INT: Final = 2**53 - 1
MAX_CHIPS: Final = MAX_SAFE_INT
MAX_TIME_MS: Final = MAX_SAFE_INT
MAX_SEQ: Final = MAX_SAFE_INT

# Strings (characters).
MAX_RID_LEN: Final = 64
MAX_ID_LEN: Final = 64
MAX_TABLE_ID_LEN: Final = 32
MAX_NAME_LEN: Final = 32
MAX_CLIENT_LEN: Final = 64
MAX_TOKEN_LEN: Final = 2048
MAX_TEXT_LEN: Final = 256
MAX_HAND_NAME_LEN: Final = 64
MAX_CODE_LEN: Final = 32
MAX_CURSOR_LEN: Final = 256

# Arrays.
SEATS_PER_TABLE: Final = 6
HANDS_PER_ROUND: Final = 7  # six seats and the dealer
MAX_TABLES_LISTED: Final = 200
MAX_TABLES_PER_SESSION: Final = 16  # watched or seated tables, and `last_seq` entries
MAX_HISTORY_PAGE: Final = 50
MAX_PAYLINES: Final = 32
MAX_DENOMINATIONS: Final = 16
MAX_WAGERS: Final = 8  # side bets of one seat (minor 6), and side bets a table offers

# Message rate, per connection (token bucket). Past the rate the server replies
# `rate_limited` and drops the request; at RATE_CLOSE_FACTOR times the rate over one
# window it closes with 4008.
RATE_PER_SECOND: Final = 20
RATE_BURST: Final = 40
RATE_CLOSE_FACTOR: Final = 5
# Consecutive invalid messages (malformed, too_large, bad_message, unknown_type)
# after which the server closes with 4006.
MAX_CONSECUTIVE_ERRORS: Final = 10

# Time.
HANDSHAKE_TIMEOUT_MS: Final = 10_000
DEFAULT_HEARTBEAT_MS: Final = 15_000
