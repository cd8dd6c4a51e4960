"""Every message of the protocol: one frozen dataclass per wire ``type``.

Client-to-server messages all carry ``rid``, the request id the server echoes in
exactly one reply (``ok``, ``error``, or ``pong`` for a ``ping``). Table events all
carry ``table_id`` and ``seq``. ``PROTOCOL.md`` gives the meaning, sender and legal
phases of each; the constraints are in the annotations (see :mod:`protocol.schema`).

Fields without a default are required on the wire; fields with one may be absent
and then take the default. Constructing a message with fields that contradict each
other raises :exc:`protocol.errors.InvalidValue`, so decoding does too.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from protocol import limits as L
from protocol.errors import InvalidValue
from protocol.schema import Int, Len, Str
from protocol.structs import (
    Cards0or2,
    Cards0or7,
    Cards2,
    Cards7,
    Chips,
    Code,
    Cursor,
    HandView,
    Hex64,
    HouseWayMode,
    Name,
    Phase,
    PositiveChips,
    RequestId,
    Result,
    RoundNo,
    SeatNo,
    SeatRefund,
    SeatResult,
    SeatView,
    Seq,
    TableId,
    TableSeq,
    Text,
    TimeMs,
    Token,
    Version,
)

# --- client -> server -------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Hello:
    """First message of a connection: versions, client name and credentials."""

    TYPE = "hello"
    rid: RequestId
    min_version: Version
    max_version: Version
    client: Annotated[str, Str(1, L.MAX_CLIENT_LEN)]
    token: Token | None = None
    guest: bool = False
    name: Name | None = None
    resume_token: Token | None = None
    last_seq: Annotated[tuple[TableSeq, ...], Len(0, L.MAX_TABLES_PER_SESSION)] = ()

    def __post_init__(self) -> None:
        if self.min_version > self.max_version:
            raise InvalidValue("min_version is greater than max_version", "min_version")
        if (self.token is None) == (not self.guest):
            raise InvalidValue("give either a token or guest=true, not both or neither", "token")
        if self.last_seq and self.resume_token is None:
            raise InvalidValue("last_seq needs a resume_token", "last_seq")


@dataclass(frozen=True, slots=True)
class Ping:
    """Keeps the connection alive and measures the round trip; answered by ``pong``."""

    TYPE = "ping"
    rid: RequestId
    time_ms: TimeMs | None = None


@dataclass(frozen=True, slots=True)
class ListTables:
    """Asks for the lobby: every table with its limits, seats and players."""

    TYPE = "list_tables"
    rid: RequestId


@dataclass(frozen=True, slots=True)
class Watch:
    """Subscribes to a table's events; a ``snapshot`` follows the ``ok``."""

    TYPE = "watch"
    rid: RequestId
    table_id: TableId


@dataclass(frozen=True, slots=True)
class Unwatch:
    """Stops a table's events (a seated player keeps the seat)."""

    TYPE = "unwatch"
    rid: RequestId
    table_id: TableId


@dataclass(frozen=True, slots=True)
class Join:
    """Takes a seat (a given one, or any free one) with a buy-in from the account."""

    TYPE = "join"
    rid: RequestId
    table_id: TableId
    buy_in: PositiveChips
    seat: SeatNo | None = None


@dataclass(frozen=True, slots=True)
class Leave:
    """Frees the seat and returns the table balance to the account."""

    TYPE = "leave"
    rid: RequestId
    table_id: TableId


@dataclass(frozen=True, slots=True)
class GetBalance:
    """Asks for the account balance and the balance at each table."""

    TYPE = "balance"
    rid: RequestId


@dataclass(frozen=True, slots=True)
class Rebuy:
    """Moves chips from the account to the table balance, between rounds."""

    TYPE = "rebuy"
    rid: RequestId
    table_id: TableId
    amount: PositiveChips


@dataclass(frozen=True, slots=True)
class CashOut:
    """Moves chips from the table balance back to the account (0 = all), keeping the seat."""

    TYPE = "cash_out"
    rid: RequestId
    table_id: TableId
    amount: Chips = 0


@dataclass(frozen=True, slots=True)
class Bet:
    """Places, changes or (with amount 0) removes this round's bet and bonus bet."""

    TYPE = "bet"
    rid: RequestId
    table_id: TableId
    amount: Chips
    bonus: Chips = 0

    def __post_init__(self) -> None:
        if self.bonus and not self.amount:
            raise InvalidValue("a bonus bet needs a main bet", "bonus")


@dataclass(frozen=True, slots=True)
class Rebet:
    """Places the same bet and bonus as in the player's previous round."""

    TYPE = "rebet"
    rid: RequestId
    table_id: TableId


@dataclass(frozen=True, slots=True)
class Clear:
    """Removes this round's bet and bonus bet."""

    TYPE = "clear"
    rid: RequestId
    table_id: TableId


@dataclass(frozen=True, slots=True)
class SitOut:
    """Skips this round: removes any bet; the seat is kept and plays again next round."""

    TYPE = "sit_out"
    rid: RequestId
    table_id: TableId


@dataclass(frozen=True, slots=True)
class SetHand:
    """Sets the hand by naming the two cards of the low hand; the other five are high."""

    TYPE = "set_hand"
    rid: RequestId
    table_id: TableId
    low: Cards2


@dataclass(frozen=True, slots=True)
class HouseWay:
    """Asks the house way split: as a suggestion only, or to set the hand by it."""

    TYPE = "house_way"
    rid: RequestId
    table_id: TableId
    mode: HouseWayMode


@dataclass(frozen=True, slots=True)
class GetHistory:
    """Asks for a page of the player's past rounds, newest first."""

    TYPE = "history"
    rid: RequestId
    cursor: Cursor | None = None
    limit: Annotated[int, Int(1, L.MAX_HISTORY_PAGE)] = 20
    table_id: TableId | None = None


@dataclass(frozen=True, slots=True)
class GetTableInfo:
    """Asks for a table's rules, options and bonus pay table."""

    TYPE = "table_info"
    rid: RequestId
    table_id: TableId


@dataclass(frozen=True, slots=True)
class GetServerInfo:
    """Asks for the server's name and version and the protocol versions it speaks."""

    TYPE = "server_info"
    rid: RequestId


# --- server -> client: replies ------------------------------------------------------


@dataclass(frozen=True, slots=True)
class OkReply:
    """Success of the request ``rid``, with its result (``None`` for plain acks)."""

    TYPE = "ok"
    rid: RequestId
    result: Result | None = None


@dataclass(frozen=True, slots=True)
class ErrorReply:
    """Failure of the request ``rid`` (``None`` when the request id was unreadable)."""

    TYPE = "error"
    code: Code
    message: Text
    retryable: bool
    rid: RequestId | None = None
    retry_after_ms: Annotated[int, Int(0, 3_600_000)] | None = None
    table_id: TableId | None = None


@dataclass(frozen=True, slots=True)
class Pong:
    """Reply to ``ping``: the client's time echoed and the server's clock."""

    TYPE = "pong"
    rid: RequestId
    server_time_ms: TimeMs
    time_ms: TimeMs | None = None


# --- server -> client: table events (table_id + seq) --------------------------------


@dataclass(frozen=True, slots=True)
class Snapshot:
    """The whole table as the recipient may see it, as of event ``seq``."""

    TYPE = "snapshot"
    table_id: TableId
    seq: Seq
    round: RoundNo
    phase: Phase
    server_time_ms: TimeMs
    seats: Annotated[tuple[SeatView, ...], Len(1, L.SEATS_PER_TABLE)]
    deadline_ms: TimeMs | None = None
    commitment: Hex64 | None = None
    your_seat: SeatNo | None = None
    your_cards: Cards0or7 = ()
    your_low: Cards0or2 = ()
    hands: Annotated[tuple[HandView, ...], Len(0, L.HANDS_PER_ROUND)] = ()
    results: Annotated[tuple[SeatResult, ...], Len(0, L.SEATS_PER_TABLE)] = ()


@dataclass(frozen=True, slots=True)
class PhaseChange:
    """The table entered ``phase``; it ends at ``deadline_ms`` (``None``: no deadline)."""

    TYPE = "phase"
    table_id: TableId
    seq: Seq
    round: RoundNo
    phase: Phase
    deadline_ms: TimeMs | None = None


@dataclass(frozen=True, slots=True)
class SeatChange:
    """A seat was taken, freed, or changed status or balance."""

    TYPE = "seat"
    table_id: TableId
    seq: Seq
    seat: SeatView


@dataclass(frozen=True, slots=True)
class BetPlaced:
    """A seat's bet for the round is now ``amount`` (0: removed) and ``bonus``."""

    TYPE = "bet_placed"
    table_id: TableId
    seq: Seq
    round: RoundNo
    seat: SeatNo
    amount: Chips
    bonus: Chips
    balance: Chips


@dataclass(frozen=True, slots=True)
class Cards:
    """Your seven cards (sent only to the seat's player; others get ``hidden``)."""

    TYPE = "cards"
    table_id: TableId
    seq: Seq
    round: RoundNo
    seat: SeatNo
    cards: Cards7


@dataclass(frozen=True, slots=True)
class Hidden:
    """Stands in for an event this recipient may not see, so ``seq`` has no gaps."""

    TYPE = "hidden"
    table_id: TableId
    seq: Seq


@dataclass(frozen=True, slots=True)
class Commitment:
    """The shuffle commitment (SHA-256 of the seed) of the round, at start of betting."""

    TYPE = "commitment"
    table_id: TableId
    seq: Seq
    round: RoundNo
    commitment: Hex64
    shuffle: Annotated[int, Int(1, 65535)] = 1


@dataclass(frozen=True, slots=True)
class HandSet:
    """A seat's hand is set (cards stay hidden until the reveal)."""

    TYPE = "hand_set"
    table_id: TableId
    seq: Seq
    round: RoundNo
    seat: SeatNo
    house_way: bool


@dataclass(frozen=True, slots=True)
class Reveal:
    """Every dealt hand in play, set, with both halves named; the dealer is hand 6."""

    TYPE = "reveal"
    table_id: TableId
    seq: Seq
    round: RoundNo
    hands: Annotated[tuple[HandView, ...], Len(1, L.HANDS_PER_ROUND)]


@dataclass(frozen=True, slots=True)
class Results:
    """The settlement of every seat that played the round."""

    TYPE = "results"
    table_id: TableId
    seq: Seq
    round: RoundNo
    results: Annotated[tuple[SeatResult, ...], Len(0, L.SEATS_PER_TABLE)]


@dataclass(frozen=True, slots=True)
class SeedReveal:
    """The round's shuffle seed, after settlement, so anyone can re-derive the deal."""

    TYPE = "seed"
    table_id: TableId
    seq: Seq
    round: RoundNo
    seed: Hex64
    commitment: Hex64


@dataclass(frozen=True, slots=True)
class RoundVoid:
    """The round could not complete: every bet is returned (``refunds``)."""

    TYPE = "void"
    table_id: TableId
    seq: Seq
    round: RoundNo
    reason: Code
    message: Text
    refunds: Annotated[tuple[SeatRefund, ...], Len(0, L.SEATS_PER_TABLE)]


ClientMessage = (
    Hello
    | Ping
    | ListTables
    | Watch
    | Unwatch
    | Join
    | Leave
    | GetBalance
    | Rebuy
    | CashOut
    | Bet
    | Rebet
    | Clear
    | SitOut
    | SetHand
    | HouseWay
    | GetHistory
    | GetTableInfo
    | GetServerInfo
)
TableEvent = (
    Snapshot
    | PhaseChange
    | SeatChange
    | BetPlaced
    | Cards
    | Hidden
    | Commitment
    | HandSet
    | Reveal
    | Results
    | SeedReveal
    | RoundVoid
)
ServerMessage = OkReply | ErrorReply | Pong | TableEvent
Message = ClientMessage | ServerMessage

CLIENT_MESSAGES: tuple[type[ClientMessage], ...] = (
    Hello,
    Ping,
    ListTables,
    Watch,
    Unwatch,
    Join,
    Leave,
    GetBalance,
    Rebuy,
    CashOut,
    Bet,
    Rebet,
    Clear,
    SitOut,
    SetHand,
    HouseWay,
    GetHistory,
    GetTableInfo,
    GetServerInfo,
)
TABLE_EVENTS: tuple[type[TableEvent], ...] = (
    Snapshot,
    PhaseChange,
    SeatChange,
    BetPlaced,
    Cards,
    Hidden,
    Commitment,
    HandSet,
    Reveal,
    Results,
    SeedReveal,
    RoundVoid,
)
SERVER_MESSAGES: tuple[type[ServerMessage], ...] = (OkReply, ErrorReply, Pong, *TABLE_EVENTS)

__all__ = [
    "CLIENT_MESSAGES",
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
    "Join",
    "Leave",
    "ListTables",
    "Message",
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
    "Watch",
]
