"""Field types shared by the messages, and the structs nested inside them.

Each alias is a Python type with its wire constraints (see :mod:`protocol.schema`);
each struct is a frozen dataclass encoded as a msgpack map with one key per field.
The meaning of every field is in ``PROTOCOL.md``; the docstrings here are short.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Literal

from protocol import limits as L
from protocol.cards import JOKER
from protocol.schema import UNIQUE, Hex, Int, Len, Str

# Scalars.
RequestId = Annotated[str, Str(1, L.MAX_RID_LEN)]
TableId = Annotated[str, Str(1, L.MAX_TABLE_ID_LEN)]
Id = Annotated[str, Str(1, L.MAX_ID_LEN)]
Name = Annotated[str, Str(1, L.MAX_NAME_LEN)]
Text = Annotated[str, Str(0, L.MAX_TEXT_LEN)]
HandName = Annotated[str, Str(1, L.MAX_HAND_NAME_LEN)]
Code = Annotated[str, Str(1, L.MAX_CODE_LEN)]
Token = Annotated[str, Str(1, L.MAX_TOKEN_LEN)]
Cursor = Annotated[str, Str(1, L.MAX_CURSOR_LEN)]
Hex64 = Annotated[str, Hex(64)]
Chips = Annotated[int, Int(0, L.MAX_CHIPS)]
PositiveChips = Annotated[int, Int(1, L.MAX_CHIPS)]
TimeMs = Annotated[int, Int(0, L.MAX_TIME_MS)]
DurationMs = Annotated[int, Int(0, 86_400_000)]
Seq = Annotated[int, Int(0, L.MAX_SEQ)]
RoundNo = Annotated[int, Int(0, L.MAX_SEQ)]
Count = Annotated[int, Int(0, 1_000_000)]
Version = Annotated[int, Int(1, 65535)]
SeatNo = Annotated[int, Int(0, L.SEATS_PER_TABLE - 1)]
HandIndex = Annotated[int, Int(0, L.HANDS_PER_ROUND - 1)]  # seats 0..5, dealer 6
Card = Annotated[int, Int(0, JOKER)]

# Card arrays: every card at most once.
Cards7 = Annotated[tuple[Card, ...], Len(7, 7), UNIQUE]
Cards5 = Annotated[tuple[Card, ...], Len(5, 5), UNIQUE]
Cards2 = Annotated[tuple[Card, ...], Len(2, 2), UNIQUE]
Cards0or7 = Annotated[tuple[Card, ...], Len(0, 7), UNIQUE]
Cards0or2 = Annotated[tuple[Card, ...], Len(0, 2), UNIQUE]

# Enumerations.
Phase = Literal["idle", "betting", "dealing", "setting", "revealing", "settling"]
PHASES: tuple[Phase, ...] = ("idle", "betting", "dealing", "setting", "revealing", "settling")
SeatStatus = Literal["empty", "playing", "sitting_out", "away"]
Outcome = Literal["win", "push", "lose"]
HalfResult = Literal["win", "lose", "copy"]
HistoryOutcome = Literal["win", "push", "lose", "void"]
FoulRule = Literal["reject", "lose"]
CommissionRounding = Literal["down", "up", "whole"]
CommissionFree = Literal["none", "ez", "nine_low"]
HouseWayMode = Literal["suggest", "set"]


@dataclass(frozen=True, slots=True)
class TableSeq:
    """The last sequence number a client saw at a table (in ``hello.last_seq``)."""

    table_id: TableId
    seq: Seq


@dataclass(frozen=True, slots=True)
class TableSummary:
    """One table in the lobby list."""

    table_id: TableId
    name: Name
    phase: Phase
    seats: Annotated[int, Int(1, L.SEATS_PER_TABLE)]
    players: Annotated[int, Int(0, L.SEATS_PER_TABLE)]
    watchers: Count
    min_bet: PositiveChips
    max_bet: PositiveChips
    max_bonus: Chips
    buy_in_min: PositiveChips
    buy_in_max: PositiveChips
    closing: bool = False  # an operator is closing it: no new seat or bet
    jackpot: Name | None = None  # minor 7: the progressive jackpot it offers (None: none)


@dataclass(frozen=True, slots=True)
class Wager:
    """One side bet of a seat and its stake (minor 6)."""

    kind: Code
    amount: PositiveChips


Wagers = Annotated[tuple[Wager, ...], Len(0, L.MAX_WAGERS)]


@dataclass(frozen=True, slots=True)
class WagerResult:
    """One side bet of a seat settled (minor 6): its stake (0: it rides on another's),
    the chips back, and the pay line paid."""

    kind: Code
    stake: Chips
    payout: Chips
    pay_class: Code | None = None


@dataclass(frozen=True, slots=True)
class SeatView:
    """What everyone at a table sees of one seat."""

    seat: SeatNo
    status: SeatStatus
    balance: Chips
    bet: Chips
    bonus: Chips
    hand_set: bool
    player_id: Id | None = None
    name: Name | None = None
    wagers: Wagers = ()  # minor 6: every side bet held, the bonus bet included


@dataclass(frozen=True, slots=True)
class HandView:
    """A revealed hand, set into its high (5 cards) and low (2 cards) halves."""

    hand: HandIndex
    high: Cards5
    low: Cards2
    high_name: HandName
    low_name: HandName
    house_way: bool
    foul: bool


@dataclass(frozen=True, slots=True)
class SeatResult:
    """The settlement of one seat's round."""

    seat: SeatNo
    outcome: Outcome
    high: HalfResult
    low: HalfResult
    bet: Chips
    payout: Chips
    commission: Chips
    bonus_bet: Chips
    bonus_payout: Chips
    balance: Chips
    bonus_class: Code | None = None
    # Minor 6: every side bet settled, the bonus bet included.
    wagers: Annotated[tuple[WagerResult, ...], Len(0, L.MAX_WAGERS)] = ()


@dataclass(frozen=True, slots=True)
class SeatRefund:
    """The refund of one seat's bets when a round is voided."""

    seat: SeatNo
    refund: Chips
    balance: Chips


@dataclass(frozen=True, slots=True)
class TableBalance:
    """Chips a player holds at one table."""

    table_id: TableId
    balance: Chips


@dataclass(frozen=True, slots=True)
class PayLine:
    """One line of a bonus pay table: a class of seven-card hand and what it pays, to 1."""

    bonus_class: Code
    label: Name
    pays: Annotated[int, Int(0, 1_000_000)]


@dataclass(frozen=True, slots=True)
class SideBetInfo:
    """A side bet a table offers (minor 6): its limits and pay table. A riding bet
    (``rides_on``) has no stake: ``min`` is the stake on ``rides_on`` that qualifies
    and ``max`` is 0; ``fixed``: its pay table's ``pays`` are chips, not odds to 1."""

    kind: Code
    label: Name
    min: Chips
    max: Chips
    paytable: Annotated[tuple[PayLine, ...], Len(0, L.MAX_PAYLINES)]
    rides_on: Code | None = None
    fixed: bool = False


@dataclass(frozen=True, slots=True)
class RoundRecord:
    """One of a player's past rounds (history)."""

    table_id: TableId
    round: RoundNo
    ended_ms: TimeMs
    seat: SeatNo
    outcome: HistoryOutcome
    bet: Chips
    bonus_bet: Chips
    payout: Chips
    commission: Chips
    bonus_payout: Chips
    balance: Chips
    commitment: Hex64
    seed: Hex64 | None = None
    cards: Cards0or7 = ()
    hand: HandView | None = None
    dealer: HandView | None = None
    high: HalfResult | None = None
    low: HalfResult | None = None
    bonus_class: Code | None = None
    void_reason: Code | None = None
    wagers: Annotated[tuple[WagerResult, ...], Len(0, L.MAX_WAGERS)] = ()  # minor 6


@dataclass(frozen=True, slots=True)
class JackpotMeter:
    """A progressive jackpot's meter as it stands (minor 7)."""

    name: Name
    meter: Chips


JackpotMeters = Annotated[tuple[JackpotMeter, ...], Len(0, L.MAX_TABLES_LISTED)]


@dataclass(frozen=True, slots=True)
class JackpotLine:
    """One line of a progressive pay table (minor 7): a share of the meter
    (``meter_bps``, 10,000 is all of it) or a fixed amount per wager (``fixed``)."""

    bonus_class: Code
    label: Name
    meter_bps: Annotated[int, Int(0, 10_000)]
    fixed: Chips


@dataclass(frozen=True, slots=True)
class JackpotInfo:
    """The progressive jackpot a table offers (minor 7): its meter now, its wager and
    its pay table, best hand first."""

    name: Name
    meter: Chips
    wager: PositiveChips
    paytable: Annotated[tuple[JackpotLine, ...], Len(0, L.MAX_PAYLINES)]


# Results carried by `ok` replies, told apart by `kind`.


@dataclass(frozen=True, slots=True)
class Welcome:
    """Result of ``hello``: the session."""

    KIND = "welcome"
    version: Version
    minor: Annotated[int, Int(0, 65535)]
    session_id: Id
    resume_token: Token
    player_id: Id
    name: Name
    guest: bool
    resumed: bool
    server_time_ms: TimeMs
    heartbeat_ms: Annotated[int, Int(1000, 600_000)]


@dataclass(frozen=True, slots=True)
class TableList:
    """Result of ``list_tables``."""

    KIND = "tables"
    tables: Annotated[tuple[TableSummary, ...], Len(0, L.MAX_TABLES_LISTED)]
    jackpots: JackpotMeters = ()  # minor 7: the meter of each jackpot a table offers


@dataclass(frozen=True, slots=True)
class Joined:
    """Result of ``join``: the seat taken and the chips moved to the table."""

    KIND = "joined"
    table_id: TableId
    seat: SeatNo
    table_balance: Chips
    account: Chips


@dataclass(frozen=True, slots=True)
class Balances:
    """Result of ``balance``, ``rebuy``, ``cash_out`` and ``leave``."""

    KIND = "balance"
    account: Chips
    tables: Annotated[tuple[TableBalance, ...], Len(0, L.MAX_TABLES_PER_SESSION)]


@dataclass(frozen=True, slots=True)
class HandChoice:
    """Result of ``set_hand`` and ``house_way``: a split and its hand names."""

    KIND = "hand"
    table_id: TableId
    round: RoundNo
    high: Cards5
    low: Cards2
    high_name: HandName
    low_name: HandName
    applied: bool


@dataclass(frozen=True, slots=True)
class HistoryPage:
    """Result of ``history``: rounds newest first, and the cursor of the next page."""

    KIND = "history"
    rounds: Annotated[tuple[RoundRecord, ...], Len(0, L.MAX_HISTORY_PAGE)]
    next_cursor: Cursor | None = None


@dataclass(frozen=True, slots=True)
class TableInfo:
    """Result of ``table_info``: the rules, options and pay table of a table."""

    KIND = "table_info"
    table_id: TableId
    name: Name
    seats: Annotated[int, Int(1, L.SEATS_PER_TABLE)]
    min_bet: PositiveChips
    max_bet: PositiveChips
    bet_unit: PositiveChips
    denominations: Annotated[tuple[PositiveChips, ...], Len(1, L.MAX_DENOMINATIONS), UNIQUE]
    max_bonus: Chips
    buy_in_min: PositiveChips
    buy_in_max: PositiveChips
    commission_pct: Annotated[int, Int(0, 100)]
    foul: FoulRule
    betting_ms: DurationMs
    setting_ms: DurationMs
    revealing_ms: DurationMs
    settling_ms: DurationMs
    grace_ms: DurationMs
    paytable: Annotated[tuple[PayLine, ...], Len(0, L.MAX_PAYLINES)]
    rules_version: Annotated[int, Int(1, 65535)]
    min_bonus: Chips = 0  # smallest bonus bet; 0 (absent): one bet_unit
    # Minor 4: how the commission is made whole chips, and the main bet's own unit.
    commission_rounding: CommissionRounding = "down"
    main_bet_unit: Chips = 0  # every main bet is a multiple of it; 0 (absent): bet_unit
    # Minor 5: a commission-free main bet, and the dealer's hand that pushes it.
    commission_free: CommissionFree = "none"
    # Minor 6: every side bet the table offers, the bonus bet included.
    side_bets: Annotated[tuple[SideBetInfo, ...], Len(0, L.MAX_WAGERS)] = ()
    # Minor 7: the progressive jackpot the table offers.
    jackpot: JackpotInfo | None = None


@dataclass(frozen=True, slots=True)
class ServerInfo:
    """Result of ``server_info``."""

    KIND = "server_info"
    server_name: Name
    server_version: Name
    protocol_version: Version
    protocol_minor: Annotated[int, Int(0, 65535)]
    protocol_min: Version
    protocol_max: Version


@dataclass(frozen=True, slots=True)
class JackpotList:
    """Result of ``watch_jackpots`` (minor 7): every jackpot's meter now."""

    KIND = "jackpots"
    jackpots: JackpotMeters


Result = (
    Welcome
    | TableList
    | Joined
    | Balances
    | HandChoice
    | HistoryPage
    | TableInfo
    | ServerInfo
    | JackpotList
)
RESULT_CLASSES: tuple[type[Result], ...] = (
    Welcome,
    TableList,
    Joined,
    Balances,
    HandChoice,
    HistoryPage,
    TableInfo,
    ServerInfo,
    JackpotList,
)
