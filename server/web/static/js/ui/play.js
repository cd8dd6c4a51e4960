// What a seated player does: build and place a bet with chips, set the hand (click or
// drag two cards into the low hand, with a live preview and a foul warning, or the
// house way), and move chips (rebuy, cash out, leave).

import { byRank, cardElement, cardName, cardText } from "../cards.js";
import { preview } from "../handrank.js";
import { $, act, announce, chips, fill, h, toast } from "./dom.js";
import { keepFocus } from "./focus.js";
import { motion, nameWagers } from "./occasion.js";
import { resultText } from "./tableview.js";

const REFUSED = "Refused: that split fouls (the high hand must beat the low hand). Choose again.";

export class Play {
  constructor(app) {
    this.app = app;
    this.low = []; // the cards picked for the low hand, not sent yet
    this.dealt = ""; // the cards the picks belong to
    this.stake = emptyStake();
    this.stakeRound = null;
    this.setResult = null; // the server's `hand` result once set
    this.refused = ""; // the low hand the table refused as a foul (its answer stays shown)
    this.confirming = ""; // the fouled low hand a press of Set hand asked to confirm (fouls lose)
    this.wire();
  }

  get model() {
    return this.app.model;
  }

  get tableId() {
    return this.model.id;
  }

  req(type, fields = {}) {
    return this.app.session.request(type, { table_id: this.tableId, ...fields });
  }

  /** A bet request; a refusal is said in the table's words, not the server's. */
  async betReq(type, fields = {}) {
    try {
      return await this.req(type, fields);
    } catch (err) {
      throw new Error(this.refusal(err));
    }
  }

  refusal(err) {
    const info = this.app.info(this.tableId);
    const you = this.model.you;
    switch (err.code) {
      case "bet_limits":
        return info
          ? `Bets at this table are ${chips(info.min_bet)}–${chips(info.max_bet)}, in steps of ${chips(info.main_bet_unit || info.bet_unit)}; ${info.max_bonus ? `the bonus bet up to ${chips(info.max_bonus)}` : "no bonus bet here"}${stakedSides(info).map((b) => `; the ${b.label} ${chips(b.min)}–${chips(b.max)}`).join("")}. Change your chips.`
          : "That bet is outside this table's limits. Change your chips.";
      case "insufficient_balance":
        return `Not enough chips at this table (${chips(you?.balance ?? 0)}): lower the bet or rebuy.`;
      case "wrong_phase":
        return "Bets are closed for this round: bet when the next one opens.";
      case "not_seated":
        return "Sit down at the table to bet.";
      case "no_bet":
        return "No earlier bet to repeat: pick your chips.";
      default:
        return err.message || String(err);
    }
  }

  wire() {
    $("set-hand").addEventListener("click", (e) => this.setHand(e.currentTarget));
    $("house-way").addEventListener("click", (e) => act(e.currentTarget, async () => this.handSet(await this.req("house_way", { mode: "set" }))));
    $("suggest").addEventListener("click", (e) => act(e.currentTarget, async () => {
      const hand = await this.req("house_way", { mode: "suggest" });
      this.low = [...hand.low];
      this.renderHand();
      announce(`House way: ${hand.high_name} and ${hand.low_name}`);
    }));
    $("place-bet").addEventListener("click", (e) => act(e.currentTarget, () => this.betReq("bet", withWagers(this.stake))));
    $("clear-bet").addEventListener("click", (e) => act(e.currentTarget, async () => {
      this.stake = emptyStake();
      this.renderBetting();
      const you = this.model.you;
      if (you?.bet || you?.bonus || you?.wagers?.length) await this.req("clear");
    }));
    $("step-up").addEventListener("click", () => this.step(1));
    $("step-down").addEventListener("click", () => this.step(-1));
    $("targets").addEventListener("change", () => this.renderBetting());
    $("rebet").addEventListener("click", (e) => act(e.currentTarget, () => this.betReq("rebet")));
    $("sit-out").addEventListener("click", (e) => act(e.currentTarget, () => this.req("sit_out")));
    $("rebuy-form").addEventListener("submit", (e) => {
      e.preventDefault();
      const amount = Number($("rebuy-amount").value);
      act(e.submitter, async () => {
        this.app.balances(await this.req("rebuy", { amount }));
        $("rebuy-amount").value = ""; // done: the next rebuy starts from an empty field
      });
    });
    $("cashout-form").addEventListener("submit", (e) => {
      e.preventDefault();
      const amount = Number($("cashout-amount").value || 0);
      act(e.submitter, async () => this.app.balances(await this.req("cash_out", { amount })));
    });
    $("leave").addEventListener("click", (e) => act(e.currentTarget, async () => {
      this.app.leaving = this.tableId; // once the seat is freed, back to the lobby
      this.app.balances(await this.req("leave"));
      toast("You leave the table (after this round if you are in it), then go back to the tables.", "info");
    }));
    for (const zone of ["zone-high", "zone-low"]) {
      const el = $(zone);
      el.addEventListener("dragover", (e) => {
        e.preventDefault();
        el.classList.add("drop");
      });
      el.addEventListener("dragleave", () => el.classList.remove("drop"));
      el.addEventListener("drop", (e) => {
        e.preventDefault();
        el.classList.remove("drop");
        const card = Number(e.dataTransfer.getData("text/plain"));
        const inLow = this.low.includes(card);
        if ((zone === "zone-low") !== inLow) this.toggle(card);
      });
    }
  }

  render() {
    const m = this.model;
    const seated = m.yourSeat !== null;
    $("betting").hidden = !seated;
    $("money").hidden = !seated;
    // Shown while seated, cards or not: the cards fill places already there, so
    // nothing below them moves when they arrive.
    $("you").hidden = !seated;
    if (!seated) return;
    this.renderBetting();
    this.renderMoney();
    if (m.yourCards.length === 7) this.renderHand();
    else this.renderWaiting();
  }

  renderWaiting() {
    this.dealt = "";
    const slot = () => h("span.card.slot", { "aria-hidden": "true" });
    fill($("your-cards"), Array.from({ length: 7 }, slot));
    fill($("your-low"), slot(), slot());
    $("your-cards").dataset.cards = "";
    $("your-low").dataset.cards = "";
    $("preview").textContent = "\u00a0";
    $("foul").hidden = true;
    this.refused = "";
    this.confirming = "";
    for (const id of ["set-hand", "house-way", "suggest"]) $(id).disabled = true;
    $("set-hint").textContent = this.model.you?.bet ? "Your cards come with the deal." : "Bet to be dealt in.";
  }

  // --- betting ---------------------------------------------------------------------

  renderBetting() {
    const m = this.model;
    const info = this.app.info(m.id);
    const you = m.you;
    this.renderTargets(info);
    if (this.stakeRound !== m.round) {
      this.stakeRound = m.round;
      this.stake = emptyStake();
      // Each round's chips go on the main bet first.
      document.querySelector('input[name="target"][value="amount"]').checked = true;
    }
    // What the table holds is what the panel shows: after a bet, a Rebet or a new round.
    const onSeat = seatSides(you);
    const placed = `${m.round}:${you?.bet ?? 0}:${you?.bonus ?? 0}:${sideText(onSeat)}`;
    if (this.placedSeen !== placed) {
      this.placedSeen = placed;
      if (you?.bet) this.stake = { amount: you.bet, bonus: you.bonus, side: onSeat };
    }
    const open = ["idle", "betting"].includes(m.phase);
    const denoms = info?.denominations ?? [];
    if ($("chips").dataset.for !== m.id) {
      $("chips").dataset.for = m.id;
      fill($("chips"), denoms.map((d, i) => h(`button.chip.c${i % 5}`, {
        type: "button", text: chips(d), dataset: { chip: d, focusKey: `chip-${d}` },
        "aria-label": `Add a ${chips(d)} chip`, onclick: () => this.addChip(d),
      })));
    }
    for (const b of $("chips").querySelectorAll("button")) b.disabled = !open;
    for (const id of ["place-bet", "clear-bet", "rebet", "sit-out"]) $(id).disabled = !open;
    $("place-bet").disabled = !open || this.stake.amount === 0;
    $("stake-main").textContent = chips(this.stake.amount);
    $("stake-bonus").textContent = chips(this.stake.bonus);
    fill($("stake-sides"), ...stakedSides(info).flatMap((b) => [
      ` · ${b.label} `, h("strong", { text: chips(this.stake.side[b.kind] ?? 0), dataset: { stake: b.kind } }),
    ]));
    const onTable = you?.bet && this.stake.amount === you.bet && this.stake.bonus === you.bonus && sideText(this.stake.side) === sideText(onSeat);
    const others = stakedSides(info).filter((b) => onSeat[b.kind]).map((b) => ` + ${b.label} ${chips(onSeat[b.kind])}`).join("");
    $("stake-placed").textContent = !you?.bet ? "" : onTable ? "(on the table)" : `(on the table: ${chips(you.bet)}${you.bonus ? ` + bonus ${chips(you.bonus)}` : ""}${others})`;
    document.querySelector('input[value="bonus"]').disabled = !info?.max_bonus;
    const { label, unit } = this.targetOf(info);
    $("step-size").textContent = `step ${chips(unit)}`;
    $("step-up").setAttribute("aria-label", `Add ${chips(unit)} to the ${label}`);
    $("step-down").setAttribute("aria-label", `Take ${chips(unit)} off the ${label}`);
    $("step-up").disabled = !open;
    $("step-down").disabled = !open || this.amountOf(this.target()) === 0;
  }

  /** One radio per staked side bet the table offers beyond the bonus bet (from
   * `table_info.side_bets`), after the main and bonus bets' radios. */
  renderTargets(info) {
    const fieldset = $("targets");
    const key = `${this.tableId}:${info ? "info" : "none"}:${stakedSides(info).map((b) => b.kind).join(",")}`;
    if (fieldset.dataset.for === key) return;
    fieldset.dataset.for = key;
    nameWagers(info?.side_bets ?? []);
    for (const old of fieldset.querySelectorAll("label.side-target")) old.remove();
    for (const b of stakedSides(info)) {
      fieldset.append(h("label.side-target", {},
        h("input", { type: "radio", name: "target", value: b.kind, dataset: { focusKey: `target-${b.kind}` } }),
        ` ${b.label}`));
    }
  }

  /** The checked target: "amount" (the main bet), "bonus" or a side bet's kind. */
  target() {
    return document.querySelector('input[name="target"]:checked')?.value ?? "amount";
  }

  amountOf(target) {
    return target === "amount" || target === "bonus" ? this.stake[target] : (this.stake.side[target] ?? 0);
  }

  /** The checked target's words, its limit and its step: the main bet steps by the
   * table's main bet unit, every side bet by its chip unit (protocol/PROTOCOL.md,
   * `table_info`). */
  targetOf(info) {
    const target = this.target();
    const unit = info?.bet_unit || 1;
    if (target === "amount") return { label: "main bet", limit: info?.max_bet ?? 0, unit: info?.main_bet_unit || unit };
    if (target === "bonus") return { label: "bonus bet", limit: info?.max_bonus ?? 0, unit };
    const side = stakedSides(info).find((b) => b.kind === target);
    return { label: side ? side.label : target, limit: side?.max ?? 0, unit };
  }

  /** Put `next` chips on the checked target, within its limit. */
  setTarget(next) {
    const info = this.app.info(this.tableId);
    const target = this.target();
    const { label, limit } = this.targetOf(info);
    if (next > limit) {
      toast(`The ${label} is at most ${chips(limit)} here.`);
      return;
    }
    if (target === "amount" || target === "bonus") this.stake = { ...this.stake, [target]: next };
    else this.stake = { ...this.stake, side: { ...this.stake.side, [target]: next } };
    this.renderBetting();
    announce(`${label.charAt(0).toUpperCase() + label.slice(1)}: ${chips(next)}`);
  }

  addChip(value) {
    this.setTarget(this.amountOf(this.target()) + value);
  }

  step(direction) {
    const { unit } = this.targetOf(this.app.info(this.tableId));
    const now = this.amountOf(this.target());
    // Onto the step's grid first: a main bet of chips that is not a multiple of the
    // main bet unit steps to the multiple next to it.
    const next = direction > 0 ? (Math.floor(now / unit) + 1) * unit : Math.max(0, (Math.ceil(now / unit) - 1) * unit);
    this.setTarget(next);
  }

  // --- money -------------------------------------------------------------------------

  renderMoney() {
    const you = this.model.you;
    $("table-balance").textContent = chips(you?.balance ?? 0);
    const between = ["idle", "betting"].includes(this.model.phase) || !you?.bet;
    for (const id of ["rebuy-form", "cashout-form"]) for (const el of $(id).elements) el.disabled = !between;
  }

  // --- setting the hand --------------------------------------------------------------

  toggle(card) {
    if (this.isSet()) return;
    if (this.low.includes(card)) this.low = this.low.filter((c) => c !== card);
    else if (this.low.length < 2) this.low = [...this.low, card];
    else this.low = [this.low[1], card]; // a third pick replaces the older one
    this.renderHand();
  }

  isSet() {
    const m = this.model;
    return m.yourLow.length === 2 || Boolean(m.you?.hand_set);
  }

  renderHand() {
    const m = this.model;
    const key = `${m.round}:${m.yourCards.join(",")}`;
    if (this.dealt !== key) {
      this.dealt = key;
      this.low = [];
      this.setResult = null;
      this.confirming = "";
    }
    const set = this.isSet();
    const low = set && m.yourLow.length === 2 ? m.yourLow : this.low;
    const canSet = m.inRound && !set;
    const button = (card) => {
      const el = cardElement(card, { tag: "button" });
      el.type = "button";
      el.disabled = !canSet;
      el.draggable = canSet;
      el.dataset.focusKey = `card-${card}`;
      el.setAttribute("aria-pressed", String(low.includes(card)));
      el.querySelector(".name").textContent = `${cardName(card)}${low.includes(card) ? ", in the low hand" : ""}`;
      el.addEventListener("click", () => this.toggle(card));
      el.addEventListener("dragstart", (e) => e.dataTransfer.setData("text/plain", String(card)));
      return el;
    };
    // Sorted for reading within each half; which cards are low is the player's choice.
    const high = byRank(m.yourCards).filter((c) => !low.includes(c));
    // The buttons are made anew at each drawing (a pick, the phase after the deal,
    // another seat's event): the card the keyboard was on keeps the focus (its key).
    keepFocus(() => {
      // Seven places in the high zone and two in the low one, filled or not: nothing moves.
      // Just dealt: the seven fly in one after another (CSS, never waited for).
      const since = this.app.moments.cards;
      fill($("your-cards"), high.map((c, i) => motion(button(c), "deal", since, 350, i * 60)), Array.from({ length: 7 - high.length }, () => h("span.card.slot", { "aria-hidden": "true" })));
      fill($("your-low"), byRank(low).map(button), Array.from({ length: 2 - low.length }, () => h("span.card.slot", { "aria-hidden": "true" })));
    });
    $("your-cards").dataset.cards = high.map(cardText).join(" ");
    $("your-low").dataset.cards = byRank(low).map(cardText).join(" ");
    this.renderPreview(low, set);
    $("set-hand").disabled = !canSet || low.length !== 2;
    $("house-way").disabled = !canSet;
    $("suggest").disabled = !canSet;
    const fouled = set && this.fouled(low);
    // Your result where your cards are (on a phone the seat tiles are further down).
    const result = m.results.get(m.yourSeat);
    $("set-hint").dataset.outcome = result ? (fouled ? "foul" : result.outcome) : "";
    $("set-hint").textContent = result
      ? `Your result: ${resultText(result, m.hands.get(m.yourSeat))}.`
      : set
        ? fouled ? "Your hand is set: foul (it loses the bet)." : "Your hand is set."
        : m.inRound ? "Pick two cards for the low hand (click, or drag them to Low); the other five play high." : "";
  }

  /** Whether the split `low` fouls: the reveal says so once it has come. */
  fouled(low) {
    const revealed = this.model.hands.get(this.model.yourSeat);
    return revealed ? revealed.foul : preview(this.model.yourCards, low).foul;
  }

  renderPreview(low, set) {
    const foulEl = $("foul");
    if (low.length !== 2) {
      $("preview").textContent = "\u00a0";
      foulEl.hidden = true;
      return;
    }
    // The set hand's names are the server's; whether it fouls is the reveal's, or until
    // then this page's own reckoning (the set_hand reply does not say).
    const server = this.setResult ?? (set ? this.model.hands.get(this.model.yourSeat) : null);
    const mine = preview(this.model.yourCards, low);
    const p = server ? { high: server.high_name, low: server.low_name, foul: this.fouled(low) } : mine;
    $("preview").textContent = `${set ? "Set: " : ""}High: ${p.high} · Low: ${p.low}${set && p.foul ? " · foul" : ""}`;
    $("preview").dataset.foul = String(p.foul);
    $("set-hand").textContent = p.foul && !set && this.confirming === low.join(",") ? "Confirm foul" : "Set hand";
    if (p.foul && set) {
      foulEl.textContent = `Foul: the high hand (${p.high}) does not beat the low hand (${p.low}). It loses the bet.`;
      foulEl.hidden = false;
    } else if (p.foul && this.confirming === low.join(",")) {
      foulEl.textContent = "This split fouls and loses your bet at this table. Press Confirm foul to send it anyway, or pick other cards.";
      foulEl.hidden = false;
    } else if (p.foul && !set && this.refused === low.join(",")) {
      // Kept through later redraws (a countdown, another seat's event) until the
      // player picks other cards: the table's answer must not flash by.
      foulEl.textContent = REFUSED;
      foulEl.hidden = false;
    } else if (p.foul && !set) {
      const rule = this.app.info(this.tableId)?.foul === "lose" ? "A fouled hand loses the bet at this table." : "The table refuses a fouled hand: choose again.";
      foulEl.textContent = `Foul: the high hand (${p.high}) must beat the low hand (${p.low}). ${rule}`;
      foulEl.hidden = false;
    } else {
      foulEl.hidden = true;
    }
  }

  async setHand(button) {
    const low = [...this.low];
    // A foul that loses the bet is sent only on a second, confirming press.
    const fouls = preview(this.model.yourCards, low).foul;
    if (fouls && this.app.info(this.tableId)?.foul === "lose" && this.confirming !== low.join(",")) {
      this.confirming = low.join(",");
      this.renderHand();
      announce("This split fouls and loses your bet. Press Confirm foul to send it.");
      return;
    }
    await act(button, async () => {
      try {
        this.handSet(await this.req("set_hand", { low }));
      } catch (err) {
        if (err.code === "foul") {
          this.refused = low.join(",");
          $("foul").textContent = REFUSED;
          $("foul").hidden = false;
          announce("Refused: foul");
          return;
        }
        throw err;
      }
    });
  }

  handSet(hand) {
    this.setResult = hand;
    this.model.yourLow = hand.low;
    if (this.model.you) this.model.you.hand_set = true;
    this.low = [...hand.low];
    this.app.render();
    announce(`Hand set: ${hand.high_name} and ${hand.low_name}`);
  }
}

/** A bet's fields of protocol minor 6: the bonus bet in `bonus` and in `wagers` too, so
 * that a server of either minor takes it, and every other side bet staked in `wagers`
 * (protocol/PROTOCOL.md, section 6, `bet`). */
function withWagers(stake) {
  const wagers = stake.bonus ? [{ kind: "bonus", amount: stake.bonus }] : [];
  for (const [kind, amount] of Object.entries(stake.side)) if (amount) wagers.push({ kind, amount });
  return { amount: stake.amount, bonus: stake.bonus, wagers };
}

function emptyStake() {
  return { amount: 0, bonus: 0, side: {} };
}

/** The staked side bets a table offers beyond the bonus bet (a riding one, the Envy
 * bonus, has no stake of its own). */
function stakedSides(info) {
  return (info?.side_bets ?? []).filter((b) => b.kind !== "bonus" && !b.rides_on);
}

/** A seat's stakes on side bets other than the bonus, by kind. */
function seatSides(seat) {
  const side = {};
  for (const w of seat?.wagers ?? []) if (w.kind !== "bonus" && w.amount) side[w.kind] = w.amount;
  return side;
}

function sideText(side) {
  return Object.keys(side).filter((k) => side[k]).sort().map((k) => `${k}=${side[k]}`).join(",");
}
