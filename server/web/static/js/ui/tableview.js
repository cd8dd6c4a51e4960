// The table as everyone sees it: its phase and countdown, the dealer, the six seats
// with names, balances, bets, set hands, revealed hands and results.

import { byRank, cardElement } from "../cards.js";
import { $, chips, fill, h } from "./dom.js";
import { motion, otherWagers, payNote, wagerName } from "./occasion.js";
import { shortName } from "./words.js";

const PHASE_TEXT = {
  idle: "Waiting for a bet", betting: "Place your bets", dealing: "Dealing", setting: "Set your hands",
  revealing: "Reveal", settling: "Settling",
};
const STATUS_TEXT = { playing: "", sitting_out: "sitting out", away: "away (reconnecting)", empty: "" };

const DEAL_MS = 350; // one card's flight; each next card leaves DEAL_GAP later
const DEAL_GAP = 60;
const TURN_MS = 400;
const CHIP_MS = 450;

const backs = (n, small = true) => Array.from({ length: n }, () => cardElement(null, { small }));
/** Cards just dealt fly in one after another; cards just revealed turn over. */
const dealt = (els, since) => els.map((el, i) => motion(el, "deal", since, DEAL_MS, i * DEAL_GAP));
const turned = (root, since) => {
  for (const el of root.querySelectorAll(".card")) motion(el, "turn", since, TURN_MS);
  return root;
};
const slots = (n, small = true) => Array.from({ length: n }, () => h(small ? "span.card.small.slot" : "span.card.slot", { "aria-hidden": "true" }));
const row = (cards, small = true) => h("div.hand-row", {}, byRank(cards).map((c) => cardElement(c, { small })));
/** One of the dealer's two hands, labelled. */
const labelled = (half, cards) => h(`div.hand-group.${half}`, {}, h("span.hand-label", { text: half === "high" ? "High" : "Low" }), row(cards, false));

/** "Win +95 (commission 5)", "Push", "Lose −100", with the bonus. */
export function resultText(r, hand) {
  const parts = [];
  if (hand?.foul) parts.push(`Foul: lose ${chips(r.bet)}`);
  else if (r.outcome === "win") parts.push(`Win +${chips(r.payout - r.bet)}${r.commission ? ` (commission ${chips(r.commission)})` : ""}`);
  else if (r.outcome === "push") parts.push("Push");
  else parts.push(`Lose −${chips(r.bet)}`);
  if (r.bonus_bet) {
    parts.push(r.bonus_payout ? `Bonus +${chips(r.bonus_payout - r.bonus_bet)}${r.bonus_class ? ` (${r.bonus_class.replaceAll("_", " ")})` : ""}` : `Bonus −${chips(r.bonus_bet)}`);
  }
  for (const w of otherWagers(r)) {
    const gain = w.payout - w.stake;
    parts.push(`${wagerName(w.kind)} ${gain >= 0 ? "+" : "−"}${chips(Math.abs(gain))}${payNote(w)}`);
  }
  return parts.join(" · ");
}

export class TableView {
  constructor(app) {
    this.app = app;
    this.phaseSeen = null;
    this.phaseTotal = 1;
    setInterval(() => this.tick(), 250);
  }

  get model() {
    return this.app.model;
  }

  render() {
    const m = this.model;
    if (!m) return;
    const info = this.app.info(m.id);
    const name = info?.name ?? this.app.lobby.summary(m.id)?.name ?? m.id;
    $("table-title").textContent = shortName(name);
    $("table-title").title = name;
    $("round").textContent = m.round ? `Round ${m.round}` : "";
    $("watching").hidden = m.yourSeat !== null || !m.ready;
    this.renderJackpot();
    // The phase, for the layout: a phone puts the bet panel first while betting is open.
    $("table").dataset.phase = m.phase;
    this.renderPhase();
    this.renderDealer();
    fill($("seats"), m.seats.slice(0, m.seatCount).map((s) => this.seat(s)));
  }

  /** The table's progressive jackpot and its live meter (minor 7); hidden without one. */
  renderJackpot() {
    const jackpot = this.model ? this.app.info(this.model.id)?.jackpot : null;
    $("jackpot").hidden = !jackpot;
    if (!jackpot) return;
    $("jackpot").textContent = `Jackpot ${chips(this.app.meterOf(jackpot.name, jackpot.meter))}`;
    $("jackpot").title = `${jackpot.name}: progressive wager ${chips(jackpot.wager)}`;
  }

  renderPhase() {
    const m = this.model;
    const key = `${m.round}:${m.phase}:${m.deadline}`;
    $("phase").textContent = PHASE_TEXT[m.phase] ?? m.phase;
    $("phase").dataset.phase = m.phase;
    if (key !== this.phaseSeen) {
      this.phaseSeen = key;
      const info = this.app.info(m.id);
      const planned = info?.[`${m.phase}_ms`] ?? 0;
      const left = m.deadline === null ? 0 : m.deadline - this.app.session.now();
      this.phaseTotal = Math.max(planned, left, 1);
    }
    this.tick();
  }

  tick() {
    const m = this.model;
    if (!m || $("table").hidden) return;
    if (m.deadline === null) {
      $("countdown").textContent = "";
      $("bar").style.width = "0";
      this.app.occasion.countdown(this.phaseSeen, m.phase, 0);
      return;
    }
    const left = Math.max(0, m.deadline - this.app.session.now());
    this.app.occasion.countdown(this.phaseSeen, m.phase, left);
    $("countdown").textContent = `${Math.ceil(left / 1000)} s`;
    $("bar").style.width = `${Math.min(100, (100 * left) / this.phaseTotal)}%`;
    $("phase-box").setAttribute("aria-label", `${$("phase").textContent}, ${Math.ceil(left / 1000)} seconds left`);
  }

  renderDealer() {
    const m = this.model;
    const dealer = m.hands.get(6);
    const t = this.app.moments;
    if (dealer) {
      fill($("dealer-hand"), turned(labelled("high", dealer.high), t.reveal), turned(labelled("low", dealer.low), t.reveal));
      $("dealer-hand").setAttribute("aria-label", `Dealer: ${dealer.high_name}, ${dealer.low_name}`);
      $("dealer-names").textContent = `${dealer.high_name} / ${dealer.low_name}`;
    } else {
      const dealt = ["dealing", "setting"].includes(m.phase) && m.seats.some((s) => s.bet > 0);
      fill($("dealer-hand"), dealt ? backs(7, false).map((el, i) => motion(el, "deal", t.dealing, DEAL_MS, i * DEAL_GAP)) : slots(7, false));
      $("dealer-hand").setAttribute("aria-label", dealt ? "Dealer: seven cards face down" : "Dealer: no cards");
      $("dealer-names").textContent = "\u00a0";
    }
  }

  /** The chips of a result moving: won chips come to the seat, lost ones go to the
   * dealer (drawn only while they move), a push's stay. */
  payChip(result, since) {
    if (result.payout + result.bonus_payout + otherWagers(result).reduce((n, w) => n + w.payout - w.stake, 0) > result.bet + result.bonus_bet) return motion(h("span.bet-chip.won", { "aria-hidden": "true" }), "chip-pay", since, CHIP_MS);
    if (result.outcome === "push") return h("span.bet-chip", { "aria-hidden": "true" });
    if (since === null || performance.now() - since >= CHIP_MS) return "";
    return motion(h("span.bet-chip.lost", { "aria-hidden": "true" }), "chip-take", since, CHIP_MS);
  }

  seat(s) {
    const m = this.model;
    const mine = m.yourSeat === s.seat;
    const hand = m.hands.get(s.seat);
    const result = m.results.get(s.seat);
    const empty = s.status === "empty";
    const label = empty ? `Seat ${s.seat + 1}, empty` : `Seat ${s.seat + 1}, ${s.name ?? s.player_id}${mine ? " (you)" : ""}`;
    const others = (s.wagers ?? []).filter((w) => w.kind !== "bonus").map((w) => ` · ${wagerName(w.kind).toLowerCase()} ${chips(w.amount)}`).join("");
    const bet = s.bet ? `Bet ${chips(s.bet)}${s.bonus ? ` · bonus ${chips(s.bonus)}` : ""}${others}` : "";
    const t = this.app.moments;
    const sides = Boolean(s.bonus) || others !== "";
    const chip = () => motion(h("span.bet-chip", { "aria-hidden": "true" }), "chip-in", t.bets.get(s.seat), CHIP_MS);
    let cards;
    if (hand) cards = turned(h("div.split-mini", {}, row(hand.high), row(hand.low)), t.reveal);
    else if (s.bet && ["dealing", "setting"].includes(m.phase)) cards = h("div.split-mini", {}, h("div.hand-row", {}, dealt(backs(7), t.dealing)));
    else cards = h("div.split-mini", { "aria-hidden": "true" }, h("div.hand-row", {}, slots(7)));
    const sitHere = empty && m.yourSeat === null && m.ready
      ? h("button", {
        type: "button", text: "Sit here", "aria-label": `Sit here, seat ${s.seat + 1}`, dataset: { focusKey: `sit-seat-${s.seat}` },
        onclick: () => this.app.askJoin(m.id, s.seat),
      })
      : null;
    return h(`li.seat${mine ? ".mine" : ""}${empty ? ".empty" : ""}`, { "aria-label": label, dataset: { seat: s.seat, status: s.status } },
      h("header", {},
        h("span.pname", { text: empty ? `Seat ${s.seat + 1}` : `${s.seat + 1}. ${s.name ?? s.player_id}${mine ? " (you)" : ""}` }),
        h("span.status", { text: STATUS_TEXT[s.status] ?? s.status })),
      h("div.line", {}, h("span", { text: empty ? "Empty" : `Balance ${chips(s.balance)}`, dataset: { testid: "seat-balance" } }),
        bet && !sides ? " · " : "", bet && !sides ? chip() : "", bet && !sides ? bet : "",
        s.hand_set && !hand ? " · set ✓" : ""),
      // Bets with a side bet beyond the main one go on a line of their own, read whole (they
      // did not fit beside the balance); a main bet alone stays there, so a desktop table
      // still fits its first screen.
      bet && sides ? h("div.line.wrap.bets", {}, chip(), bet) : null,
      cards,
      h("div.line.wrap", { text: hand ? `${hand.high_name} / ${hand.low_name}${hand.house_way ? " (house way)" : ""}` : "" }),
      h(`div.result${result ? `.${hand?.foul ? "foul" : result.outcome}` : ""}`, { dataset: { testid: "result" } },
        result ? this.payChip(result, t.results) : "", result ? resultText(result, hand) : ""),
      sitHere);
  }
}
