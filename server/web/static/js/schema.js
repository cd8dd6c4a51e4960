// Every message (protocol/PROTOCOL.md, sections 6 to 9), as tables: the field names in the
// order the document lists them (the order an encoder writes them), each with its
// type, range and default. codec.js checks each decoded frame against these tables
// and writes outgoing messages from them. Nothing here is specific to this page.

export const MAX_SAFE = Number.MAX_SAFE_INTEGER; // 2^53 - 1: chips, times, seqs

const int = (lo, hi) => ({ t: "int", lo, hi });
const str = (lo, hi) => ({ t: "str", lo, hi });
const HASH = { t: "hex", len: 64 };
const BOOL = { t: "bool" };
const oneOf = (...values) => ({ t: "enum", values });
const arr = (item, lo, hi, unique = false, lens = null) => ({ t: "arr", item, lo, hi, unique, lens });
const nil = (inner) => ({ t: "nil", inner });
const struct = (name) => ({ t: "struct", name });
const result = { t: "result" };

// Named types of section 2.
const RID = str(1, 64);
const TABLE = str(1, 32);
const ID = str(1, 64);
const NAME = str(1, 32);
const TEXT = str(0, 256);
const HAND_NAME = str(1, 64);
const CODE = str(1, 32);
const TOKEN = str(1, 2048);
const CURSOR = str(1, 256);
const CHIPS = int(0, MAX_SAFE);
const CHIPS1 = int(1, MAX_SAFE);
const TIME = int(0, MAX_SAFE);
const DURATION = int(0, 86_400_000);
const SEQ = int(0, MAX_SAFE);
const ROUND = int(0, MAX_SAFE);
const VERSION = int(1, 65535);
const SEAT = int(0, 5);
const CARD = int(0, 52);
const cards = (n) => arr(CARD, n, n, true);
const CARDS_0_OR_7 = arr(CARD, 0, 7, true, [0, 7]);
const CARDS_0_OR_2 = arr(CARD, 0, 2, true, [0, 2]);
const PHASE = oneOf("idle", "betting", "dealing", "setting", "revealing", "settling");
const HALF = oneOf("win", "lose", "copy");

// A field: [name, spec] is required; [name, spec, default] may be absent.
const R = (name, spec) => [name, spec];
const O = (name, spec, dflt) => [name, spec, dflt];

export const STRUCTS = {
  TableSeq: [R("table_id", TABLE), R("seq", SEQ)],
  TableSummary: [
    R("table_id", TABLE), R("name", NAME), R("phase", PHASE), R("seats", int(1, 6)),
    R("players", int(0, 6)), R("watchers", int(0, 1_000_000)), R("min_bet", CHIPS1),
    R("max_bet", CHIPS1), R("max_bonus", CHIPS), R("buy_in_min", CHIPS1), R("buy_in_max", CHIPS1),
  ],
  SeatView: [
    R("seat", SEAT), R("status", oneOf("empty", "playing", "sitting_out", "away")),
    R("balance", CHIPS), R("bet", CHIPS), R("bonus", CHIPS), R("hand_set", BOOL),
    O("player_id", nil(ID), null), O("name", nil(NAME), null),
  ],
  HandView: [
    R("hand", int(0, 6)), R("high", cards(5)), R("low", cards(2)), R("high_name", HAND_NAME),
    R("low_name", HAND_NAME), R("house_way", BOOL), R("foul", BOOL),
  ],
  SeatResult: [
    R("seat", SEAT), R("outcome", oneOf("win", "push", "lose")), R("high", HALF), R("low", HALF),
    R("bet", CHIPS), R("payout", CHIPS), R("commission", CHIPS), R("bonus_bet", CHIPS),
    R("bonus_payout", CHIPS), R("balance", CHIPS), O("bonus_class", nil(CODE), null),
  ],
  SeatRefund: [R("seat", SEAT), R("refund", CHIPS), R("balance", CHIPS)],
  TableBalance: [R("table_id", TABLE), R("balance", CHIPS)],
  PayLine: [R("bonus_class", CODE), R("label", NAME), R("pays", int(0, 1_000_000))],
  RoundRecord: [
    R("table_id", TABLE), R("round", ROUND), R("ended_ms", TIME), R("seat", SEAT),
    R("outcome", oneOf("win", "push", "lose", "void")), R("bet", CHIPS), R("bonus_bet", CHIPS),
    R("payout", CHIPS), R("commission", CHIPS), R("bonus_payout", CHIPS), R("balance", CHIPS),
    R("commitment", HASH), O("seed", nil(HASH), null), O("cards", CARDS_0_OR_7, []),
    O("hand", nil(struct("HandView")), null), O("dealer", nil(struct("HandView")), null),
    O("high", nil(HALF), null), O("low", nil(HALF), null), O("bonus_class", nil(CODE), null),
    O("void_reason", nil(CODE), null),
  ],
};

// Results (section 8), told apart by `kind`.
export const RESULTS = {
  welcome: [
    R("version", VERSION), R("minor", int(0, 65535)), R("session_id", ID), R("resume_token", TOKEN),
    R("player_id", ID), R("name", NAME), R("guest", BOOL), R("resumed", BOOL),
    R("server_time_ms", TIME), R("heartbeat_ms", int(1000, 600_000)),
  ],
  tables: [R("tables", arr(struct("TableSummary"), 0, 200))],
  joined: [R("table_id", TABLE), R("seat", SEAT), R("table_balance", CHIPS), R("account", CHIPS)],
  balance: [R("account", CHIPS), R("tables", arr(struct("TableBalance"), 0, 16))],
  hand: [
    R("table_id", TABLE), R("round", ROUND), R("high", cards(5)), R("low", cards(2)),
    R("high_name", HAND_NAME), R("low_name", HAND_NAME), R("applied", BOOL),
  ],
  history: [R("rounds", arr(struct("RoundRecord"), 0, 50)), O("next_cursor", nil(CURSOR), null)],
  table_info: [
    R("table_id", TABLE), R("name", NAME), R("seats", int(1, 6)), R("min_bet", CHIPS1),
    R("max_bet", CHIPS1), R("bet_unit", CHIPS1), R("denominations", arr(CHIPS1, 1, 16, true)),
    R("max_bonus", CHIPS), R("buy_in_min", CHIPS1), R("buy_in_max", CHIPS1),
    R("commission_pct", int(0, 100)), R("foul", oneOf("reject", "lose")), R("betting_ms", DURATION),
    R("setting_ms", DURATION), R("revealing_ms", DURATION), R("settling_ms", DURATION),
    R("grace_ms", DURATION), R("paytable", arr(struct("PayLine"), 0, 32)),
    R("rules_version", VERSION), O("min_bonus", CHIPS, 0),
  ],
  server_info: [
    R("server_name", NAME), R("server_version", str(1, 32)), R("protocol_version", VERSION),
    R("protocol_minor", int(0, 65535)), R("protocol_min", VERSION), R("protocol_max", VERSION),
  ],
};

const T = [R("table_id", TABLE)];
const REQ = [R("rid", RID)];

// Client-to-server requests (section 6).
export const CLIENT = {
  hello: [
    ...REQ, R("min_version", VERSION), R("max_version", VERSION), R("client", str(1, 64)),
    O("token", nil(TOKEN), null), O("guest", BOOL, false), O("name", nil(NAME), null),
    O("resume_token", nil(TOKEN), null), O("last_seq", arr(struct("TableSeq"), 0, 16), []),
  ],
  ping: [...REQ, O("time_ms", nil(TIME), null)],
  list_tables: [...REQ],
  watch: [...REQ, ...T],
  unwatch: [...REQ, ...T],
  join: [...REQ, ...T, R("buy_in", CHIPS1), O("seat", nil(SEAT), null)],
  leave: [...REQ, ...T],
  balance: [...REQ],
  rebuy: [...REQ, ...T, R("amount", CHIPS1)],
  cash_out: [...REQ, ...T, O("amount", CHIPS, 0)],
  bet: [...REQ, ...T, R("amount", CHIPS), O("bonus", CHIPS, 0)],
  rebet: [...REQ, ...T],
  clear: [...REQ, ...T],
  sit_out: [...REQ, ...T],
  set_hand: [...REQ, ...T, R("low", cards(2))],
  house_way: [...REQ, ...T, R("mode", oneOf("suggest", "set"))],
  history: [
    ...REQ, O("cursor", nil(CURSOR), null), O("limit", int(1, 50), 20), O("table_id", nil(TABLE), null),
  ],
  table_info: [...REQ, ...T],
  server_info: [...REQ],
};

const EV = [R("table_id", TABLE), R("seq", SEQ)];

// Server-to-client replies (section 7) and table events (section 9).
export const SERVER = {
  ok: [R("rid", RID), O("result", nil(result), null)],
  error: [
    R("code", CODE), R("message", TEXT), R("retryable", BOOL), O("rid", nil(RID), null),
    O("retry_after_ms", nil(int(0, 3_600_000)), null), O("table_id", nil(TABLE), null),
  ],
  pong: [R("rid", RID), R("server_time_ms", TIME), O("time_ms", nil(TIME), null)],
  snapshot: [
    ...EV, R("round", ROUND), R("phase", PHASE), R("server_time_ms", TIME),
    R("seats", arr(struct("SeatView"), 1, 6)), O("deadline_ms", nil(TIME), null),
    O("commitment", nil(HASH), null), O("your_seat", nil(SEAT), null),
    O("your_cards", CARDS_0_OR_7, []), O("your_low", CARDS_0_OR_2, []),
    O("hands", arr(struct("HandView"), 0, 7), []), O("results", arr(struct("SeatResult"), 0, 6), []),
  ],
  phase: [...EV, R("round", ROUND), R("phase", PHASE), O("deadline_ms", nil(TIME), null)],
  seat: [...EV, R("seat", struct("SeatView"))],
  bet_placed: [
    ...EV, R("round", ROUND), R("seat", SEAT), R("amount", CHIPS), R("bonus", CHIPS), R("balance", CHIPS),
  ],
  cards: [...EV, R("round", ROUND), R("seat", SEAT), R("cards", cards(7))],
  hidden: [...EV],
  commitment: [...EV, R("round", ROUND), R("commitment", HASH), O("shuffle", VERSION, 1)],
  hand_set: [...EV, R("round", ROUND), R("seat", SEAT), R("house_way", BOOL)],
  reveal: [...EV, R("round", ROUND), R("hands", arr(struct("HandView"), 1, 7))],
  results: [...EV, R("round", ROUND), R("results", arr(struct("SeatResult"), 0, 6))],
  seed: [...EV, R("round", ROUND), R("seed", HASH), R("commitment", HASH)],
  void: [
    ...EV, R("round", ROUND), R("reason", CODE), R("message", TEXT),
    R("refunds", arr(struct("SeatRefund"), 0, 6)),
  ],
};

// Cross-field rules the tables cannot say (section 6: hello, bet).
export const CHECKS = {
  hello(m) {
    if (m.min_version > m.max_version) return ["min_version", "min_version is greater than max_version"];
    if ((m.token === null) === !m.guest) return ["token", "give either a token or guest=true"];
    if (m.last_seq.length && m.resume_token === null) return ["last_seq", "last_seq needs a resume_token"];
    return null;
  },
  bet(m) {
    return m.bonus && !m.amount ? ["bonus", "a bonus bet needs a main bet"] : null;
  },
};

export const LIMITS = {
  clientFrame: 8192, serverFrame: 262_144, strBytes: 4096, array: 256, map: 64, depth: 8,
};
