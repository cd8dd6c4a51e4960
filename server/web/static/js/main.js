// The browser table: the page's one controller. It opens the session, routes between
// the lobby and a table (`#/table/<id>`, so a reload comes back to it), applies each
// table event to the model and redraws, and checks each round's fairness when its
// seed comes.

import { verifyRound } from "./fair.js";
import { TableModel } from "./model.js";
import { onForgotten } from "./guest.js";
import { Session } from "./session.js";
import { $, announce, chips, toast } from "./ui/dom.js";
import { keepFocus } from "./ui/focus.js";
import { Lobby } from "./ui/lobby.js";
import { Occasion } from "./ui/occasion.js";
import { Panels } from "./ui/panels.js";
import { Play } from "./ui/play.js";
import { TableView } from "./ui/tableview.js";

const STATUS = { online: "Connected", connecting: "Connecting…", reconnecting: "Reconnecting…", closed: "Disconnected", offline: "Not signed in" };
/** When the table's events came (performance.now()): motion plays for a moment after. */
const newMoments = () => ({ cards: null, dealing: null, reveal: null, results: null, bets: new Map() });

const PHASE_SAY = { betting: "Betting is open", dealing: "Cards are dealt", setting: "Set your hand", revealing: "Hands revealed", settling: "Results" };

class App {
  constructor() {
    this.session = new Session();
    this.model = null;
    this.infos = new Map(); // table -> table_info
    this.meters = new Map(); // jackpot -> its meter as last told (protocol minor 7)
    this.fairness = new Map(); // round -> {rec, report}, for the table on screen
    this.leaving = null; // the table whose Leave was pressed: its freed seat goes to the lobby
    this.moments = newMoments(); // when things happened at the table on screen, for motion
    this.occasion = new Occasion(this);
    this.lobby = new Lobby(this);
    this.view = new TableView(this);
    this.play = new Play(this);
    this.panels = new Panels(this);
    this.session.addEventListener("status", (e) => this.status(e.detail));
    this.session.addEventListener("welcome", (e) => this.welcomed(e.detail));
    this.session.addEventListener("table", (e) => this.event(e.detail));
    this.session.addEventListener("jackpot", (e) => this.meter(e.detail.name, e.detail.meter));
    this.session.addEventListener("server-error", (e) => toast(e.detail.message));
    window.addEventListener("hashchange", () => this.route());
    $("login-form").addEventListener("submit", (e) => {
      e.preventDefault();
      const withToken = $("login-token-box").open;
      this.login(withToken ? "" : $("login-name").value.trim(), withToken ? $("login-token").value.trim() : "");
    });
    // A token signs in with the account's own name: the name is not asked for then.
    $("login-token-box").addEventListener("toggle", () => this.loginKind());
    $("forget").addEventListener("click", () => this.forget());
    $("play-here").addEventListener("click", () => this.playHere());
    onForgotten(() => {
      if (this.session.welcome?.guest) this.forget(); // forgotten in another tab
    });
    globalThis.paigow = this; // for the browser tests and the curious
  }

  boot() {
    if (this.session.resumable) {
      this.session.start().catch(() => this.showLogin());
    } else {
      this.showLogin();
    }
  }

  showLogin() {
    $("login").hidden = false;
    $("elsewhere").hidden = true;
    $("login-name").value = this.session.saved?.name ?? "";
    this.loginKind();
    ($("login-token-box").open ? $("login-token") : $("login-name")).focus();
  }

  loginKind() {
    const withToken = $("login-token-box").open;
    $("login-name-field").hidden = withToken;
    $("login-name").disabled = withToken;
    $("login-token").required = withToken;
    if (withToken) $("login-token").focus();
  }

  /** Forget this browser's guest (or sign out): back to the sign-in, a new guest next. */
  forget() {
    this.session.forget();
    this.model = null;
    $("table").hidden = true;
    $("forget").hidden = true;
    $("player-name").textContent = "";
    $("account").textContent = "–";
    this.lobby.hide();
    location.hash = "#/";
    this.showLogin();
  }

  /** Take the session back from the tab that took it (4005). */
  async playHere() {
    $("elsewhere").hidden = true;
    try {
      await this.session.start();
    } catch (err) {
      toast(`Could not resume: ${err.message}`);
    }
  }

  async login(name, token) {
    try {
      await this.session.start(token ? { token } : { name });
    } catch (err) {
      toast(`Could not sign in: ${err.message}`);
    }
  }

  status({ status, detail }) {
    $("conn").dataset.status = status;
    $("conn").textContent = status === "busy" ? `Server busy (${detail})` : STATUS[status] ?? status;
    if (status === "closed") {
      if (detail.startsWith("4005") && this.session.resumable) {
        $("elsewhere").hidden = false; // another tab resumed this session
        $("play-here").focus();
        return;
      }
      if (!this.session.stopped) toast(`Disconnected (${detail}).`);
      if (!this.session.resumable) this.showLogin();
    }
  }

  welcomed({ welcome, previous }) {
    $("login").hidden = true;
    $("elsewhere").hidden = true;
    $("player-name").textContent = welcome.name;
    $("forget").hidden = false;
    $("forget").textContent = welcome.guest ? "Forget this guest" : "Sign out";
    this.session.request("balance").then((b) => this.balances(b), () => {});
    this.watchJackpots(); // a connection's own subscription: asked on each one
    if (!previous) return this.route(); // this page's first welcome
    if (!welcome.resumed || welcome.player_id !== previous.player_id) {
      // A new session: the table on screen is watched again from a snapshot.
      if (this.model) this.model.playerId = welcome.player_id;
      if (this.model) this.watch(this.model.id);
    }
    return undefined;
  }

  route() {
    if (this.session.status !== "online" && this.session.status !== "reconnecting") return;
    const match = location.hash.match(/^#\/table\/([^/]+)$/);
    if (match) this.showTable(decodeURIComponent(match[1]));
    else this.showLobby();
  }

  showLobby() {
    if (this.model && this.model.yourSeat === null) {
      this.session.request("unwatch", { table_id: this.model.id }).catch(() => {});
      this.session.dropTable(this.model.id);
    }
    this.model = null;
    this.occasion.reset(null);
    $("table").hidden = true;
    this.lobby.show();
  }

  /** Opens a table's view (watching it); `join` asks for the buy-in too. */
  async openTable(tableId, { join = false } = {}) {
    location.hash = `#/table/${encodeURIComponent(tableId)}`;
    if (join) this.askJoin(tableId, null);
  }

  async showTable(tableId) {
    this.lobby.hide();
    $("table").hidden = false;
    if (this.model?.id !== tableId) {
      this.model = new TableModel(tableId, this.session.welcome.player_id);
      this.fairness = new Map();
      this.moments = newMoments();
      this.occasion.reset(null);
    }
    this.render();
    await this.loadInfo(tableId).catch(() => {});
    await this.watch(tableId);
    this.render();
  }

  async watch(tableId) {
    try {
      await this.session.request("watch", { table_id: tableId });
    } catch (err) {
      toast(err.message);
      if (err.code === "no_such_table") location.hash = "#/";
    }
  }

  async loadInfo(tableId) {
    if (!this.infos.has(tableId)) this.infos.set(tableId, await this.session.request("table_info", { table_id: tableId }));
    return this.infos.get(tableId);
  }

  info(tableId) {
    return this.infos.get(tableId) ?? null;
  }

  async askJoin(tableId, seat) {
    const info = await this.loadInfo(tableId).catch((err) => toast(err.message));
    if (info) this.panels.askJoin(tableId, seat, info);
  }

  /** The jackpots' meters, live: changes come as `jackpot` messages from now on. A
   * server of an earlier minor refuses: the lobby's and table_info's meters remain. */
  async watchJackpots() {
    try {
      const result = await this.session.request("watch_jackpots");
      for (const j of result.jackpots) this.meters.set(j.name, j.meter);
    } catch {
      return;
    }
    this.showMeters();
  }

  meter(name, meter) {
    this.meters.set(name, meter);
    this.showMeters();
  }

  /** A jackpot's meter as last told (`fallback` when none was). */
  meterOf(name, fallback) {
    return this.meters.get(name) ?? fallback;
  }

  showMeters() {
    this.lobby.showMeters();
    if (this.model) this.view.renderJackpot();
    const rules = $("rules-jackpot"); // the rules page, if open on a jackpot's table
    if (rules) rules.textContent = chips(this.meterOf(rules.dataset.meter, 0));
  }

  setAccount(account) {
    $("account").textContent = chips(account);
  }

  balances(result) {
    if (result) this.setAccount(result.account);
  }

  event(m) {
    const model = this.model;
    if (!model || m.table_id !== model.id) return;
    const was = { phase: model.phase, seat: model.yourSeat, round: model.round };
    model.apply(m);
    this.moment(m, was);
    if (m.type === "phase" && m.phase !== was.phase && PHASE_SAY[m.phase]) announce(PHASE_SAY[m.phase]);
    if (m.type === "cards") announce("Your seven cards are dealt");
    if (m.type === "results" && model.yourSeat !== null) {
      const r = model.results.get(model.yourSeat);
      if (r) {
        announce(`You ${r.outcome}. Balance ${chips(r.balance)}.`);
        this.occasion.result(model.round, r, model.hands.get(model.yourSeat));
      }
    }
    if (m.type === "void") toast(`Round ${m.round} void: ${m.message || m.reason}. Bets returned.`, "info");
    if (m.type === "seat" && was.seat !== model.yourSeat) this.session.request("balance").then((b) => this.balances(b), () => {});
    if (m.type === "seat" && was.seat !== null && model.yourSeat === null && this.leaving === model.id) {
      this.leaving = null;
      location.hash = "#/"; // left, as asked: the lobby rather than watching on
    }
    if (m.type === "seed") this.verify(model, m.round);
    this.render();
    if (m.type === "snapshot" && !performance.getEntriesByName("paigow:table").length) {
      performance.mark("paigow:table"); // the first table view, for the load-time figure
    }
  }

  /** Notes when an event came, for the motion it starts (never waited for), and
   * plays its sound. */
  moment(m, was) {
    const now = performance.now();
    const t = this.moments;
    const model = this.model;
    if (m.type === "snapshot") {
      this.moments = newMoments(); // a table come back to is drawn still
      return;
    }
    // Last round's banner stays into the next betting (read while betting again) and
    // goes, if its time has not run out, when the next round's cards come.
    if (m.type === "phase" && m.phase === "dealing") this.occasion.reset(model.round);
    if (m.type === "phase" && m.phase === "dealing" && was.phase !== "dealing") t.dealing = now;
    if (m.type === "cards") {
      t.cards = now;
      this.occasion.sound.play("deal");
    }
    if (m.type === "reveal") t.reveal = now;
    if (m.type === "results") t.results = now;
    if (m.type === "bet_placed" && m.amount) {
      t.bets.set(m.seat, now);
      if (m.seat === model.yourSeat) this.occasion.sound.play("chip");
    }
  }

  async verify(model, round) {
    const rec = model.rounds.get(round);
    if (!rec?.seed || !rec.commitment) return;
    let report;
    try {
      report = await verifyRound(rec);
    } catch (err) {
      report = { ok: false, checks: [{ what: err.message, ok: false }] };
    }
    if (model !== this.model) return;
    this.fairness.set(round, { rec, report });
    const badge = $("fair-badge");
    badge.className = `fair-badge ${report.ok ? "ok" : "bad"}`;
    badge.dataset.round = round;
    badge.dataset.verdict = report.ok ? "ok" : "bad";
    badge.textContent = report.ok ? `Round ${round}: fair ✓` : `Round ${round}: check failed ✗`;
  }

  render() {
    if (!this.model) return;
    // Seats and cards are made anew, controls disabled by the phase: the keyboard
    // player's place survives it (ui/focus.js).
    keepFocus(() => {
      this.view.render();
      this.play.render();
    });
  }
}

new App().boot();
