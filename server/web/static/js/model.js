// What the page knows of one table: the snapshot, then each event applied in order
// (protocol/PROTOCOL.md, section 9). Pure data: the views read it, nothing here touches the page.

const emptySeat = (seat) => ({ seat, status: "empty", balance: 0, bet: 0, bonus: 0, hand_set: false, player_id: null, name: null, wagers: [] });

export class TableModel {
  constructor(tableId, playerId) {
    this.id = tableId;
    this.playerId = playerId;
    this.ready = false; // a snapshot has come
    this.round = 0;
    this.phase = "idle";
    this.deadline = null;
    this.seats = Array.from({ length: 6 }, (_, i) => emptySeat(i));
    this.seatCount = 6;
    this.commitment = null;
    this.yourSeat = null;
    this.yourCards = [];
    this.yourLow = [];
    this.hands = new Map(); // hand index -> HandView (revealed)
    this.results = new Map(); // seat -> SeatResult
    this.voided = null; // the void event of this round, if any
    this.rounds = new Map(); // round -> {round, commitment, seat, cards, hands, seed}: for the fairness check
  }

  record(round = this.round) {
    if (!this.rounds.has(round)) this.rounds.set(round, { round, commitment: null, seat: null, cards: [], hands: [], seed: null });
    return this.rounds.get(round);
  }

  /** A fresh round: its number, no cards, hands, results, bets or set hands; a seat
   * sitting out plays again (sitting out lasts until the next betting phase). */
  newRound(round) {
    this.round = round;
    this.yourCards = [];
    this.yourLow = [];
    this.hands = new Map();
    this.results = new Map();
    this.voided = null;
    for (const s of this.seats) {
      Object.assign(s, { bet: 0, bonus: 0, hand_set: false, wagers: [] });
      if (s.status === "sitting_out") s.status = "playing";
    }
    // Keep the fairness records of the last few rounds only.
    for (const r of [...this.rounds.keys()]) if (r < round - 20) this.rounds.delete(r);
  }

  /** Applies one table event; returns true if the model changed. */
  apply(m) {
    const handler = this[`on_${m.type}`];
    if (!handler) return false; // an event type this page does not know: counted, ignored
    handler.call(this, m);
    return true;
  }

  on_snapshot(m) {
    this.ready = true;
    this.newRound(m.round);
    this.phase = m.phase;
    this.deadline = m.deadline_ms;
    this.seatCount = m.seats.length;
    this.seats = Array.from({ length: 6 }, (_, i) => ({ ...(m.seats[i] ?? emptySeat(i)) }));
    this.commitment = m.commitment;
    this.yourSeat = m.your_seat;
    this.yourCards = m.your_cards;
    this.yourLow = m.your_low;
    for (const h of m.hands) this.hands.set(h.hand, h);
    for (const r of m.results) this.results.set(r.seat, r);
    const rec = this.record();
    if (m.commitment) rec.commitment = m.commitment;
    if (m.your_cards.length) Object.assign(rec, { seat: m.your_seat, cards: m.your_cards });
    if (m.hands.length) rec.hands = m.hands;
  }

  // The terminal client's rule (clients/model.py): only a betting phase with a new
  // round number opens a fresh round. The same number again is a round an idle table
  // reuses (its commitment and any bet placed in idle stay: bet_placed may precede
  // this event); `idle` itself carries the next round's number and clears nothing.
  on_phase(m) {
    if (m.phase === "betting" && m.round !== this.round) this.newRound(m.round);
    else if (m.phase === "betting") this.voided = null;
    this.round = m.round;
    this.phase = m.phase;
    this.deadline = m.deadline_ms;
  }

  on_seat(m) {
    const view = { ...m.seat };
    this.seats[view.seat] = view;
    if (view.player_id === this.playerId) this.yourSeat = view.seat;
    else if (this.yourSeat === view.seat) this.yourSeat = null;
  }

  on_bet_placed(m) {
    const seat = this.seats[m.seat];
    Object.assign(seat, { bet: m.amount, bonus: m.bonus, balance: m.balance, wagers: m.wagers ?? [] });
    // Betting again cancels sitting out (protocol/PROTOCOL.md, section 6): no seat event says so.
    if (m.amount && seat.status === "sitting_out") seat.status = "playing";
  }

  on_commitment(m) {
    this.round = m.round;
    this.commitment = m.commitment;
    this.record().commitment = m.commitment;
  }

  on_cards(m) {
    if (this.yourSeat === null) this.yourSeat = m.seat;
    this.yourCards = m.cards;
    this.yourLow = [];
    Object.assign(this.record(), { seat: m.seat, cards: m.cards });
  }

  on_hidden() {}

  on_hand_set(m) {
    this.seats[m.seat].hand_set = true;
  }

  on_reveal(m) {
    for (const h of m.hands) this.hands.set(h.hand, h);
    this.record(m.round).hands = m.hands;
    const mine = this.yourSeat === null ? null : this.hands.get(this.yourSeat);
    if (mine) this.yourLow = mine.low;
  }

  on_results(m) {
    for (const r of m.results) {
      this.results.set(r.seat, r);
      this.seats[r.seat].balance = r.balance;
    }
  }

  on_seed(m) {
    Object.assign(this.record(m.round), { seed: m.seed, commitment: m.commitment });
  }

  on_void(m) {
    this.voided = m;
    for (const r of m.refunds) Object.assign(this.seats[r.seat], { balance: r.balance, bet: 0, bonus: 0, wagers: [] });
    this.rounds.delete(m.round);
  }

  get you() {
    return this.yourSeat === null ? null : this.seats[this.yourSeat];
  }

  /** Whether you have a bet in a dealt round (so you may set your hand). */
  get inRound() {
    return this.yourCards.length === 7 && ["dealing", "setting"].includes(this.phase);
  }
}
