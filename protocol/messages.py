"""Every message of the protocol: one frozen dataclass per wire ``type``.

The classes live by direction: the client's requests in :mod:`protocol.requests`
(each carries ``rid``), the server's replies in :mod:`protocol.replies` (one per
request, by ``rid``) and its table events in :mod:`protocol.events` (each carries
``table_id`` and ``seq``). This module is their one public face, with the unions and
tables the codec and its users need: import messages from here (or from
:mod:`protocol`).

``PROTOCOL.md`` gives the meaning, sender and legal phases of each; the constraints
are in the annotations (see :mod:`protocol.schema`). Fields without a default are
required on the wire; fields with one may be absent and then take the default.
Constructing a message with fields that contradict each other raises
:exc:`protocol.errors.InvalidValue`, so decoding does too.
"""

from __future__ import annotations

from protocol.events import (
    TABLE_EVENTS,
    BetPlaced,
    Cards,
    Commitment,
    HandSet,
    Hidden,
    PhaseChange,
    Results,
    Reveal,
    RoundVoid,
    SeatChange,
    SeedReveal,
    Snapshot,
    TableEvent,
)
from protocol.notices import NOTICES, JackpotChange, Notice
from protocol.replies import (
    ErrorReply,
    OkReply,
    Pong,
)
from protocol.requests import (
    CLIENT_MESSAGES,
    Bet,
    CashOut,
    Clear,
    ClientMessage,
    GetBalance,
    GetHistory,
    GetServerInfo,
    GetTableInfo,
    Hello,
    HouseWay,
    Join,
    Leave,
    ListTables,
    Ping,
    Rebet,
    Rebuy,
    SetHand,
    SitOut,
    Unwatch,
    UnwatchJackpots,
    Watch,
    WatchJackpots,
)

ServerMessage = OkReply | ErrorReply | Pong | TableEvent | Notice
Message = ClientMessage | ServerMessage

SERVER_MESSAGES: tuple[type[ServerMessage], ...] = (
    OkReply,
    ErrorReply,
    Pong,
    *TABLE_EVENTS,
    *NOTICES,
)

__all__ = [
    "CLIENT_MESSAGES",
    "NOTICES",
    "SERVER_MESSAGES",
    "TABLE_EVENTS",
    "Bet",
    "BetPlaced",
    "Cards",
    "CashOut",
    "Clear",
    "ClientMessage",
    "Commitment",
    "ErrorReply",
    "GetBalance",
    "GetHistory",
    "GetServerInfo",
    "GetTableInfo",
    "HandSet",
    "Hello",
    "Hidden",
    "HouseWay",
    "JackpotChange",
    "Join",
    "Leave",
    "ListTables",
    "Message",
    "Notice",
    "OkReply",
    "PhaseChange",
    "Ping",
    "Pong",
    "Rebet",
    "Rebuy",
    "Results",
    "Reveal",
    "RoundVoid",
    "SeatChange",
    "SeedReveal",
    "ServerMessage",
    "SetHand",
    "SitOut",
    "Snapshot",
    "TableEvent",
    "Unwatch",
    "UnwatchJackpots",
    "Watch",
    "WatchJackpots",
]
