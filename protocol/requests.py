"""The client's requests: one frozen dataclass per wire ``type`` a client may send.

Every request carries ``rid``, the request id the server echoes in exactly one reply
(``ok``, ``error``, or ``pong`` for a ``ping``: see :mod:`protocol.replies`).
``PROTOCOL.md`` gives the meaning and legal phases of each; the constraints are in the
annotations (see :mod:`protocol.schema`). Fields without a default are required on
the wire; fields with one may be absent and then take the default. Constructing a
request with fields that contradict each other raises
:exc:`protocol.errors.InvalidValue`, so decoding does too.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from protocol import limits as L
from protocol.errors import InvalidValue
from protocol.schema import Int, Len, Str
from protocol.structs import (
    Cards2,
    Chips,
    Cursor,
    HouseWayMode,
    Name,
    PositiveChips,
    RequestId,
    SeatNo,
    TableId,
    TableSeq,
    TimeMs,
    Token,
    Version,
    Wagers,
)


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
    # Minor 6: the side bets, each kind at most once; a kind not listed is none. A
    # bonus bet may be given here or in ``bonus`` (both: the same amount); it is then
    # in both, so that a server of an earlier minor, which reads only ``bonus``, sees it.
    wagers: Wagers = ()

    def __post_init__(self) -> None:
        kinds = [w.kind for w in self.wagers]
        if len(set(kinds)) != len(kinds):
            raise InvalidValue("a side bet is listed once", "wagers")
        listed = next((w.amount for w in self.wagers if w.kind == "bonus"), None)
        if listed is not None:
            if self.bonus and self.bonus != listed:
                raise InvalidValue("bonus and the bonus wager differ", "bonus")
            object.__setattr__(self, "bonus", listed)
        if self.bonus and not self.amount:
            raise InvalidValue("a bonus bet needs a main bet", "bonus")
        if self.wagers and not self.amount:
            raise InvalidValue("a side bet needs a main bet", "wagers")


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
class WatchJackpots:
    """Asks for the jackpots' meters now and their ``jackpot`` events from now on
    (minor 7)."""

    TYPE = "watch_jackpots"
    rid: RequestId


@dataclass(frozen=True, slots=True)
class UnwatchJackpots:
    """Stops the ``jackpot`` events (minor 7)."""

    TYPE = "unwatch_jackpots"
    rid: RequestId


@dataclass(frozen=True, slots=True)
class GetServerInfo:
    """Asks for the server's name and version and the protocol versions it speaks."""

    TYPE = "server_info"
    rid: RequestId


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
    | WatchJackpots
    | UnwatchJackpots
)

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
    WatchJackpots,
    UnwatchJackpots,
)
