"""One worked round as protocol messages: the examples of ``PROTOCOL.md``.

Table ``t1``, round 42, six seated players, seed ``00 01 02 ... 1f`` (the worked
example of provable fairness: :func:`protocol.fairness.deal` gives the hands below).
Every seat bets 100; seats 0, 1 and 5 also bet a bonus of 10. The dealer holds a
pair of jacks with the joker as an ace in the low hand.

:func:`examples` lists at least one message of every type; the test vectors, the
benchmark and the spec are generated from it, so they agree with each other.
"""

from __future__ import annotations

from dataclasses import replace

from protocol import messages as M
from protocol import structs as S
from protocol.fairness import commitment

SEED = bytes(range(32))
SEED_HEX = SEED.hex()
COMMITMENT = commitment(SEED)
TABLE = "t1"
ROUND = 42
NOW_MS = 1_767_225_600_000  # 2026-01-01T00:00:00Z

# (high, low, high name, low name) of each hand of the deal: seats 0..5, dealer 6.
SPLITS: tuple[tuple[tuple[int, ...], tuple[int, ...], str, str], ...] = (
    ((2, 4, 11, 12, 18), (51, 34), "Straight, six high", "Ace-ten"),
    ((26, 27, 25, 17, 5), (50, 23), "Three eights", "Ace-seven"),
    ((46, 47, 39, 16, 15), (48, 43), "Pair of kings", "Ace-queen"),
    ((31, 30, 45, 36, 33), (21, 22), "Pair of nines", "Pair of sevens"),
    ((41, 42, 32, 35, 7), (49, 29), "Two pair, queens and tens", "Ace-nine"),
    ((9, 10, 6, 0, 28), (44, 40), "Pair of fours", "King-queen"),
    ((38, 37, 14, 8, 3), (52, 24), "Pair of jacks", "Ace-eight"),
)
SEAT0_CARDS = (4, 51, 34, 2, 12, 18, 11)
NAMES = ("ana", "bo", "chen", "dee", "eli", "fay")

HANDS = tuple(
    S.HandView(hand=k, high=hi, low=lo, high_name=hn, low_name=ln, house_way=k == 6, foul=False)
    for k, (hi, lo, hn, ln) in enumerate(SPLITS)
)
RESULTS = (
    S.SeatResult(
        0, "win", "win", "win", 100, 195, 5, 10, 30, 1115, "straight",
        (S.WagerResult("bonus", 10, 30, "straight"),),
    ),
    S.SeatResult(
        1, "push", "win", "lose", 100, 100, 0, 10, 40, 1030, "three_of_a_kind",
        (S.WagerResult("bonus", 10, 40, "three_of_a_kind"),),
    ),
    S.SeatResult(2, "win", "win", "win", 100, 195, 5, 0, 0, 1095),
    S.SeatResult(3, "push", "lose", "win", 100, 100, 0, 0, 0, 1000),
    S.SeatResult(4, "win", "win", "win", 100, 195, 5, 0, 0, 1095),
    S.SeatResult(
        5, "lose", "lose", "lose", 100, 0, 0, 10, 0, 890, None, (S.WagerResult("bonus", 10, 0),)
    ),
)  # fmt: skip
SEATS = tuple(
    S.SeatView(
        seat=i,
        status="playing",
        balance=r.balance,
        bet=100,
        bonus=r.bonus_bet,
        hand_set=True,
        player_id=f"p-{NAMES[i]}",
        name=NAMES[i],
        wagers=tuple(S.Wager(w.kind, w.stake) for w in r.wagers),
    )
    for i, r in enumerate(RESULTS)
)

# The message the benchmark calls "a full 6-seat table snapshot": the table as seat 0
# sees it during settlement, with every hand and result.
SNAPSHOT = M.Snapshot(
    table_id=TABLE,
    seq=1187,
    round=ROUND,
    phase="settling",
    server_time_ms=NOW_MS + 41_000,
    seats=SEATS,
    deadline_ms=NOW_MS + 44_000,
    commitment=COMMITMENT,
    your_seat=0,
    your_cards=SEAT0_CARDS,
    your_low=(51, 34),
    hands=HANDS,
    results=RESULTS,
)
BET = M.Bet(rid="17", table_id=TABLE, amount=100, bonus=10)
# Minor 6: the side bets as a list; the bonus bet is in ``bonus`` too.
BET_WAGERS = M.Bet(rid="17", table_id=TABLE, amount=100, bonus=10, wagers=(S.Wager("bonus", 10),))

PAYTABLE = (
    S.PayLine("five_aces", "five aces", 400),
    S.PayLine("royal_flush", "royal flush", 150),
    S.PayLine("straight_flush", "straight flush", 50),
    S.PayLine("four_of_a_kind", "four of a kind", 25),
    S.PayLine("full_house", "full house", 5),
    S.PayLine("flush", "flush", 4),
    S.PayLine("three_of_a_kind", "three of a kind", 3),
    S.PayLine("straight", "straight", 2),
)
TABLE_INFO = S.TableInfo(
    table_id=TABLE,
    name="Jade",
    seats=6,
    min_bet=10,
    max_bet=1000,
    bet_unit=5,
    denominations=(5, 25, 100, 500),
    max_bonus=100,
    buy_in_min=100,
    buy_in_max=10_000,
    commission_pct=5,
    foul="reject",
    betting_ms=15_000,
    setting_ms=30_000,
    revealing_ms=3_000,
    settling_ms=3_000,
    grace_ms=60_000,
    paytable=PAYTABLE,
    rules_version=1,
    min_bonus=5,
    side_bets=(
        S.SideBetInfo("bonus", "Bonus", 5, 100, PAYTABLE),
        S.SideBetInfo(
            "envy",
            "Envy bonus",
            5,
            0,
            (
                S.PayLine("five_aces", "five aces", 250),
                S.PayLine("royal_flush", "royal flush", 100),
                S.PayLine("straight_flush", "straight flush", 75),
                S.PayLine("four_of_a_kind", "four of a kind", 50),
            ),
            rides_on="bonus",
            fixed=True,
        ),
    ),
)
RECORD = S.RoundRecord(
    table_id=TABLE,
    round=ROUND,
    ended_ms=NOW_MS + 44_000,
    seat=0,
    outcome="win",
    bet=100,
    bonus_bet=10,
    payout=195,
    commission=5,
    bonus_payout=30,
    balance=1115,
    commitment=COMMITMENT,
    seed=SEED_HEX,
    cards=SEAT0_CARDS,
    hand=HANDS[0],
    dealer=HANDS[6],
    high="win",
    low="win",
    bonus_class="straight",
    wagers=(S.WagerResult("bonus", 10, 30, "straight"),),
)


def examples() -> list[tuple[str, M.Message]]:
    """Named example messages: at least one of every message type and result kind."""
    return [
        (
            "hello_token",
            M.Hello(rid="1", min_version=1, max_version=1, client="paigow-cli/0.1", token="eyJ0"),
        ),
        (
            "hello_guest_resume",
            M.Hello(
                rid="1",
                min_version=1,
                max_version=2,
                client="bot/1",
                guest=True,
                name="guest7",
                resume_token="r-5f2a",
                last_seq=(S.TableSeq(TABLE, 1180),),
            ),
        ),
        ("ping", M.Ping(rid="2", time_ms=NOW_MS)),
        ("list_tables", M.ListTables(rid="3")),
        ("watch", M.Watch(rid="4", table_id=TABLE)),
        ("unwatch", M.Unwatch(rid="5", table_id=TABLE)),
        ("join_any_seat", M.Join(rid="6", table_id=TABLE, buy_in=1000)),
        ("join_seat_3", M.Join(rid="6", table_id=TABLE, buy_in=1000, seat=3)),
        ("leave", M.Leave(rid="7", table_id=TABLE)),
        ("balance", M.GetBalance(rid="8")),
        ("rebuy", M.Rebuy(rid="9", table_id=TABLE, amount=500)),
        ("cash_out_all", M.CashOut(rid="10", table_id=TABLE)),
        ("bet_with_bonus", BET),
        ("bet_with_wagers", BET_WAGERS),
        ("bet_remove", M.Bet(rid="18", table_id=TABLE, amount=0)),
        ("rebet", M.Rebet(rid="19", table_id=TABLE)),
        ("clear", M.Clear(rid="20", table_id=TABLE)),
        ("sit_out", M.SitOut(rid="21", table_id=TABLE)),
        ("set_hand", M.SetHand(rid="22", table_id=TABLE, low=(51, 34))),
        ("house_way_suggest", M.HouseWay(rid="23", table_id=TABLE, mode="suggest")),
        ("house_way_set", M.HouseWay(rid="24", table_id=TABLE, mode="set")),
        ("history_first_page", M.GetHistory(rid="25", limit=10)),
        ("history_next_page", M.GetHistory(rid="26", cursor="c-41", limit=10, table_id=TABLE)),
        ("table_info", M.GetTableInfo(rid="27", table_id=TABLE)),
        ("server_info", M.GetServerInfo(rid="28")),
        ("watch_jackpots", M.WatchJackpots(rid="29")),
        ("unwatch_jackpots", M.UnwatchJackpots(rid="30")),
        ("ok_plain", M.OkReply(rid="4")),
        (
            "ok_welcome",
            M.OkReply(
                rid="1",
                result=S.Welcome(
                    version=1,
                    minor=0,
                    session_id="s-9c1e",
                    resume_token="r-5f2a",
                    player_id="p-ana",
                    name="ana",
                    guest=False,
                    resumed=False,
                    server_time_ms=NOW_MS,
                    heartbeat_ms=15_000,
                ),
            ),
        ),
        (
            "ok_tables",
            M.OkReply(
                rid="3",
                result=S.TableList(
                    (
                        S.TableSummary(
                            TABLE, "Jade", "betting", 6, 6, 2, 10, 1000, 100, 100, 10_000
                        ),
                        S.TableSummary("t2", "Pearl", "idle", 6, 0, 0, 5, 500, 50, 50, 5000),
                    )
                ),
            ),
        ),
        (
            "ok_joined",
            M.OkReply(rid="6", result=S.Joined(TABLE, seat=3, table_balance=1000, account=4000)),
        ),
        (
            "ok_balance",
            M.OkReply(rid="8", result=S.Balances(4000, (S.TableBalance(TABLE, 1115),))),
        ),
        (
            "ok_hand_suggested",
            M.OkReply(
                rid="23",
                result=S.HandChoice(TABLE, ROUND, *SPLITS[0][:2], *SPLITS[0][2:], applied=False),
            ),
        ),
        (
            "ok_history",
            M.OkReply(rid="25", result=S.HistoryPage((RECORD,), next_cursor="c-41")),
        ),
        ("ok_table_info", M.OkReply(rid="27", result=TABLE_INFO)),
        (
            "ok_table_info_jackpot",
            M.OkReply(
                rid="27",
                result=replace(
                    TABLE_INFO,
                    jackpot=S.JackpotInfo(
                        "fortune",
                        12_345,
                        5,
                        (
                            S.JackpotLine(
                                "natural_7_card_straight_flush", "Natural 7-card SF", 10_000, 0
                            ),
                            S.JackpotLine("four_of_a_kind", "Four of a kind", 0, 75),
                        ),
                    ),
                ),
            ),
        ),
        (
            "ok_tables_jackpot",
            M.OkReply(
                rid="3",
                result=S.TableList(
                    (
                        S.TableSummary(
                            TABLE,
                            "Jade",
                            "betting",
                            6,
                            6,
                            2,
                            10,
                            1000,
                            100,
                            100,
                            10_000,
                            jackpot="fortune",
                        ),
                    ),
                    jackpots=(S.JackpotMeter("fortune", 12_345),),
                ),
            ),
        ),
        (
            "ok_jackpots",
            M.OkReply(rid="29", result=S.JackpotList((S.JackpotMeter("fortune", 12_345),))),
        ),
        ("jackpot", M.JackpotChange(name="fortune", meter=12_346)),
        (
            "ok_server_info",
            M.OkReply(rid="28", result=S.ServerInfo("paigow-server", "0.1.0", 1, 0, 1, 1)),
        ),
        (
            "error_bet_limits",
            M.ErrorReply(
                code="bet_limits",
                message="bet 5 is below the table minimum 10",
                retryable=False,
                rid="17",
                table_id=TABLE,
            ),
        ),
        (
            "error_rate_limited",
            M.ErrorReply(
                code="rate_limited",
                message="too many messages: slow down",
                retryable=True,
                rid="17",
                retry_after_ms=500,
            ),
        ),
        ("pong", M.Pong(rid="2", server_time_ms=NOW_MS + 12, time_ms=NOW_MS)),
        ("snapshot_settling", SNAPSHOT),
        (
            "snapshot_idle_watcher",
            M.Snapshot(
                table_id="t2",
                seq=0,
                round=0,
                phase="idle",
                server_time_ms=NOW_MS,
                seats=tuple(S.SeatView(i, "empty", 0, 0, 0, False) for i in range(6)),
            ),
        ),
        (
            "phase_betting",
            M.PhaseChange(TABLE, 1150, ROUND, "betting", deadline_ms=NOW_MS + 15_000),
        ),
        ("phase_idle", M.PhaseChange(TABLE, 1149, ROUND - 1, "idle")),
        ("seat_taken", M.SeatChange(TABLE, 1148, SEATS[3])),
        ("seat_freed", M.SeatChange(TABLE, 1190, S.SeatView(3, "empty", 0, 0, 0, False))),
        (
            "bet_placed",
            M.BetPlaced(TABLE, 1152, ROUND, 0, 100, 10, 890, (S.Wager("bonus", 10),)),
        ),
        ("cards_private", M.Cards(TABLE, 1160, ROUND, 0, SEAT0_CARDS)),
        ("hidden", M.Hidden(TABLE, 1161)),
        ("commitment", M.Commitment(TABLE, 1151, ROUND, COMMITMENT)),
        ("hand_set", M.HandSet(TABLE, 1170, ROUND, 0, house_way=False)),
        ("reveal", M.Reveal(TABLE, 1180, ROUND, HANDS)),
        ("results", M.Results(TABLE, 1182, ROUND, RESULTS)),
        ("seed", M.SeedReveal(TABLE, 1183, ROUND, SEED_HEX, COMMITMENT)),
        (
            "void",
            M.RoundVoid(
                TABLE,
                1184,
                ROUND + 1,
                "malfunction",
                "the shuffle service failed; all bets returned",
                (S.SeatRefund(0, 110, 1115), S.SeatRefund(2, 100, 1095)),
            ),
        ),
    ]
