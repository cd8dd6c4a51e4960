// The dialogs: sitting down (buy-in), the history of your rounds, the rules and pay
// table, and the provably fair checks done in this page.

import { byRank, cardElement } from "../cards.js";
import { verifyRound } from "../fair.js";
import { RANKING } from "../handrank.js";
import { $, act, chips, fill, h } from "./dom.js";
import { resultText } from "./tableview.js";
import { GLOSSARY, commissionText } from "./words.js";

const row = (cards) => h("div.hand-row", {}, cards.map((c) => cardElement(c, { small: true })));
const seconds = (ms) => `${Math.round(ms / 100) / 10} s`;

function checksList(report) {
  return h("ul", {}, report.checks.map((c) => h(`li.${c.ok ? "check-ok" : "check-bad"}`, { text: `${c.ok ? "✓" : "✗"} ${c.what}` })));
}

export class Panels {
  constructor(app) {
    this.app = app;
    this.cursor = null;
    this.joinSeat = null;
    for (const b of document.querySelectorAll("[data-open]")) {
      b.addEventListener("click", () => this.open(b.dataset.open));
    }
    for (const b of document.querySelectorAll("dialog [data-close]")) {
      b.addEventListener("click", () => b.closest("dialog").close());
    }
    $("join-form").addEventListener("submit", (e) => {
      e.preventDefault();
      this.join(e.submitter);
    });
    $("history-more").addEventListener("click", (e) => act(e.currentTarget, () => this.history(true)));
  }

  open(id) {
    $(id).showModal();
    if (id === "history-dialog") act(null, () => this.history(false));
    if (id === "rules-dialog") act(null, () => this.rules());
    if (id === "fair-dialog") this.fair();
  }

  // --- sitting down ------------------------------------------------------------------

  askJoin(tableId, seat, info) {
    this.joinTable = tableId;
    this.joinSeat = seat;
    $("join-title").textContent = seat === null ? `Sit down at ${info.name}` : `Sit at seat ${seat + 1}, ${info.name}`;
    $("join-limits").textContent = `Buy-in ${chips(info.buy_in_min)}–${chips(info.buy_in_max)}; bets ${chips(info.min_bet)}–${chips(info.max_bet)}.`;
    const input = $("join-buyin");
    input.min = info.buy_in_min;
    input.max = info.buy_in_max;
    input.step = info.bet_unit;
    input.value = Math.min(info.buy_in_max, Math.max(info.buy_in_min, 20 * info.min_bet));
    $("join-dialog").showModal();
    input.focus();
  }

  async join(button) {
    const buyIn = Number($("join-buyin").value);
    const fields = { table_id: this.joinTable, buy_in: buyIn, seat: this.joinSeat };
    const joined = await act(button, () => this.app.session.request("join", fields));
    if (joined) {
      $("join-dialog").close();
      this.app.setAccount(joined.account);
    }
  }

  // --- history -----------------------------------------------------------------------

  async history(more) {
    if (!more) {
      this.cursor = null;
      fill($("history-list"), h("p.muted", { text: "Loading…" }));
    }
    const page = await this.app.session.request("history", { cursor: more ? this.cursor : null, limit: 10 });
    this.cursor = page.next_cursor;
    $("history-more").hidden = !page.next_cursor;
    const rows = page.rounds.map((r) => this.historyRow(r));
    if (more) $("history-list").append(...rows);
    else fill($("history-list"), rows.length ? rows : h("p.muted", { text: "No rounds played yet." }));
  }

  historyRow(r) {
    const when = new Date(r.ended_ms).toLocaleTimeString();
    const outcome = r.outcome === "void" ? `Void (${r.void_reason ?? "voided"}): bets returned` : resultText(r, r.hand);
    const result = h("div.fair-result");
    const check = r.seed ? h("button", {
      type: "button", text: "Check fairness",
      onclick: (e) => act(e.currentTarget, async () => {
        const hands = [r.hand, r.dealer].filter(Boolean);
        const report = await verifyRound({ seed: r.seed, commitment: r.commitment, seat: r.seat, cards: r.cards, hands });
        fill(result, h("p", { text: report.ok ? "Fair: every check passes." : "A check FAILED." }), checksList(report));
      }),
    }) : null;
    return h("div.history-row", { dataset: { round: r.round } },
      h("div", {}, h("strong", { text: `${r.table_id} · round ${r.round}` }), ` · seat ${r.seat + 1} · ${when}`),
      h("div", { text: `Bet ${chips(r.bet)}${r.bonus_bet ? ` + bonus ${chips(r.bonus_bet)}` : ""} · ${outcome} · balance ${chips(r.balance)}` }),
      r.hand ? h("div", {}, `You: ${r.hand.high_name} / ${r.hand.low_name}`, row([...byRank(r.hand.high), ...byRank(r.hand.low)])) : null,
      r.dealer ? h("div", {}, `Dealer: ${r.dealer.high_name} / ${r.dealer.low_name}`, row([...byRank(r.dealer.high), ...byRank(r.dealer.low)])) : null,
      check, result);
  }

  // --- rules -------------------------------------------------------------------------

  async rules() {
    const tableId = this.app.model?.id ?? this.app.lobby.tables[0]?.table_id;
    const info = tableId ? await this.app.loadInfo(tableId) : null;
    const how = h("div", {},
      h("h3", { text: "How to play" }),
      h("p", { text: "You and the dealer each get seven cards from a 53-card deck (with one joker). Split yours into a five-card high hand and a two-card low hand; the high hand must beat the low hand, or the split fouls. Win both halves against the dealer's to win; win one for a push; a tie (copy) goes to the dealer." }),
      h("p", { text: "The joker is an ace, or completes a straight, a flush or a straight flush. In the low hand it is an ace. A-2-3-4-5 is the second-best straight." }),
      h("h3", { text: "High hands, best first" }),
      h("table.plain", {}, h("tbody", {}, RANKING.map(([n, d]) => h("tr", {}, h("th", { scope: "row", text: n }), h("td", { text: d }))))),
      h("p", { text: "Low hands: a pair beats any two different cards; otherwise the higher card, then the other." }),
      h("h3", { text: "Words used here" }),
      h("dl.glossary", {}, GLOSSARY.flatMap(([term, meaning]) => [h("dt", { id: `term-${term.toLowerCase().replaceAll(" ", "-")}`, text: term }), h("dd", { text: meaning })])));
    if (!info) return fill($("rules-body"), how);
    const limits = h("div", {},
      h("h3", { text: info.name }),
      h("table.plain", {}, h("tbody", {},
        [["Bets", `${chips(info.min_bet)}–${chips(info.max_bet)} in steps of ${chips(info.main_bet_unit || info.bet_unit)}`],
          ["Bonus bet", info.max_bonus ? `up to ${chips(info.max_bonus)}` : "none at this table"],
          ["Buy-in", `${chips(info.buy_in_min)}–${chips(info.buy_in_max)}`],
          ["Commission", commissionText(info.commission_pct, info.commission_rounding, info.main_bet_unit, info.commission_free)],
          ["A fouled split", info.foul === "reject" ? "is refused: set again" : "loses the bet"],
          ["Betting / setting", `${seconds(info.betting_ms)} / ${seconds(info.setting_ms)}`],
          ["Seat kept after a disconnect", seconds(info.grace_ms)]]
          .map(([k, v]) => h("tr", {}, h("th", { scope: "row", text: k }), h("td", { text: v })))),
      ),
      h("h3", { text: "Bonus pay table" }),
      info.paytable.length
        ? h("table.plain", {}, h("tbody", {}, info.paytable.map((p) => h("tr", {}, h("th", { scope: "row", text: p.label }), h("td", { text: `${p.pays} to 1` })))))
        : h("p", { text: "No bonus at this table." }),
      // The side bets beyond the bonus (protocol minor 6), each with its pay table; the
      // progressive's lines are the jackpot's, shown once there where it has one.
      ...(info.side_bets ?? []).filter((b) => b.kind !== "bonus" && !(b.kind === "progressive" && info.jackpot)).flatMap((b) => [
        h("h3", { text: b.label }),
        h("p", { text: b.rides_on ? `Paid when your ${b.rides_on} bet is at least ${chips(b.min)}, for every other player's hand below (never your own or the dealer's).` : `Bets ${chips(b.min)}–${chips(b.max)}.` }),
        h("table.plain", {}, h("tbody", {}, b.paytable.map((p) => h("tr", {}, h("th", { scope: "row", text: p.label }), h("td", { text: b.fixed ? `${chips(p.pays)} chips` : `${p.pays} to 1` }))))),
      ]),
      // The progressive jackpot (protocol minor 7): its live meter and what its wager wins.
      ...(info.jackpot ? [
        h("h3", { text: "Progressive jackpot" }),
        h("p", {}, `A wager of ${chips(info.jackpot.wager)} on your seven cards. Meter now: `,
          h("strong", { id: "rules-jackpot", dataset: { meter: info.jackpot.name }, text: chips(this.app.meterOf(info.jackpot.name, info.jackpot.meter)) }), "."),
        h("table.plain", {}, h("tbody", {}, info.jackpot.paytable.map((p) => h("tr", {}, h("th", { scope: "row", text: p.label }),
          h("td", { text: p.meter_bps ? `${p.meter_bps / 100}% of the meter` : `${chips(p.fixed)} for 1` }))))),
      ] : []));
    fill($("rules-body"), limits, how);
    return undefined;
  }

  // --- fairness ----------------------------------------------------------------------

  fair() {
    const checked = [...this.app.fairness.values()].reverse();
    fill($("fair-list"), checked.length ? checked.map(({ rec, report }) => h("div.fair-row", { dataset: { round: rec.round, verdict: report.ok ? "ok" : "bad" } },
      h("strong", { text: `${this.app.model?.id ?? ""} round ${rec.round}: ${report.ok ? "fair" : "CHECK FAILED"}` }),
      h("div", {}, "Commitment ", h("code.hash", { text: rec.commitment })),
      h("div", {}, "Seed ", h("code.hash", { text: rec.seed })),
      checksList(report))) : h("p.muted", { text: "No round finished at this table since you opened it. Past rounds can be checked from History." }));
  }
}
