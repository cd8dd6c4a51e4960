// The lobby: every table with its phase, occupancy, watchers and limits (list_tables).

import { $, chips, fill, h } from "./dom.js";
import { keepFocus } from "./focus.js";
import { GLOSSARY, PHASE_NAMES, shortName } from "./words.js";

// Words in table names that the glossary explains, and its entry for each.
const NAME_TERMS = [["pair-classes", "Pair-classes house way"], ["foul", "Foul"]];

/** The name, with what its jargon means (its tooltip). */
function explained(name) {
  const lower = name.toLowerCase();
  const meanings = NAME_TERMS.filter(([word]) => lower.includes(word))
    .map(([, term]) => `${term}: ${GLOSSARY.find(([t]) => t === term)[1]}`);
  return [name, ...meanings].join("\n");
}

export class Lobby {
  constructor(app) {
    this.app = app;
    this.tables = [];
    this.timer = null;
  }

  async show() {
    $("lobby").hidden = false;
    await this.refresh();
    clearInterval(this.timer);
    // Occupancy changes with other players: the list is asked again while on screen.
    this.timer = setInterval(() => this.refresh(), 5000);
  }

  hide() {
    $("lobby").hidden = true;
    clearInterval(this.timer);
  }

  async refresh() {
    if (this.app.session.status !== "online") return;
    try {
      const result = await this.app.session.request("list_tables");
      this.tables = result.tables;
      for (const j of result.jackpots ?? []) this.app.meters.set(j.name, j.meter);
    } catch {
      return;
    }
    // Every few seconds: the row's button the keyboard is on keeps the focus.
    // The Jackpot column is there only while a table listed offers one.
    $("lobby-jackpot").hidden = !this.tables.some((t) => t.jackpot);
    keepFocus(() => fill($("lobby-rows"), this.tables.map((t) => this.row(t))));
  }

  row(t) {
    const full = t.players >= t.seats;
    return h("tr", { dataset: { table: t.table_id } },
      h("th.name", { scope: "row", text: shortName(t.name), title: explained(t.name) }),
      // data-label: a phone shows each row as a card, each value with its column's name.
      h("td", { text: PHASE_NAMES[t.phase] ?? t.phase, dataset: { phase: t.phase, label: "Phase" } }),
      h("td", { text: `${t.players} / ${t.seats}`, "aria-label": `${t.players} of ${t.seats} seats taken`, dataset: { label: "Seats" } }),
      h("td", { text: String(t.watchers), dataset: { label: "Watching" } }),
      h("td", { text: `${chips(t.min_bet)}–${chips(t.max_bet)}`, dataset: { label: "Bets" } }),
      h("td", { text: t.max_bonus ? `up to ${chips(t.max_bonus)}` : "none", dataset: { label: "Bonus" } }),
      // The progressive jackpot it offers (minor 7), its meter kept live (showMeters);
      // a cell of its own, so the name's cell holds the name alone.
      h("td.jackpot-cell", { hidden: !this.tables.some((s) => s.jackpot), dataset: { label: "Jackpot" } },
        t.jackpot ? h("span.jackpot", { dataset: { jackpot: t.jackpot }, title: `${t.jackpot}: a progressive jackpot, its meter live`, text: this.meterText(t.jackpot) }) : "none"),
      h("td", { text: `${chips(t.buy_in_min)}–${chips(t.buy_in_max)}`, dataset: { label: "Buy-in" } }),
      h("td", {}, h("div.act", {},
        h("button", {
          type: "button", text: "Watch", "aria-label": `Watch ${t.name}`, dataset: { focusKey: `watch-${t.table_id}` },
          onclick: () => this.app.openTable(t.table_id),
        }),
        h("button.primary", {
          type: "button", text: "Sit down", disabled: full, "aria-label": `Sit down at ${t.name}`, dataset: { focusKey: `sit-${t.table_id}` },
          onclick: () => this.app.openTable(t.table_id, { join: true }),
        }))));
  }

  /** The meter as last told; "…" until one is (a server of an earlier minor). */
  meterText(name) {
    const meter = this.app.meterOf(name, null);
    return meter === null ? "…" : chips(meter);
  }

  /** Each row's meter redrawn in place (the rows themselves stay). */
  showMeters() {
    for (const el of $("lobby-rows").querySelectorAll("[data-jackpot]")) el.textContent = this.meterText(el.dataset.jackpot);
  }

  summary(tableId) {
    return this.tables.find((t) => t.table_id === tableId) ?? null;
  }
}
