// The operator's console: one page over the operator's API (/api/v1). The admin token
// is entered once and kept in this tab's sessionStorage; every call sends it as a
// bearer token. Nothing from the server is ever written as HTML (textContent only).
"use strict";

(() => {
  const TOKEN_KEY = "paigow-admin-token";
  const POLL_MS = 2000;
  const $ = (sel) => document.querySelector(sel);
  const state = { tab: "tables", player: null, timer: null, drainArmed: null };

  class ApiError extends Error {
    constructor(status, code, message, detail) {
      super(message);
      this.status = status;
      this.code = code;
      this.detail = detail || {};
    }
  }

  async function api(method, path, body) {
    const token = sessionStorage.getItem(TOKEN_KEY);
    const init = { method, headers: { Authorization: `Bearer ${token}` } };
    if (body !== undefined) {
      init.headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    const response = await fetch(`/api/v1${path}`, init);
    const data = await response.json();
    if (!response.ok) {
      const error = data.error || {};
      if (response.status === 401) signOut(error.message || "signed out");
      throw new ApiError(response.status, error.code, error.message, error);
    }
    return data;
  }

  function el(tag, text, cls) {
    const node = document.createElement(tag);
    if (text !== undefined && text !== null) node.textContent = String(text);
    if (cls) node.className = cls;
    return node;
  }

  function row(cells, numericFrom) {
    const tr = document.createElement("tr");
    cells.forEach((cell, i) => {
      const td = cell instanceof Node ? el("td") : el("td", cell);
      if (cell instanceof Node) td.append(cell);
      if (numericFrom !== undefined && i >= numericFrom) td.className = "num";
      tr.append(td);
    });
    return tr;
  }

  function chips(n) {
    return Number(n).toLocaleString("en-US");
  }

  function when(ms) {
    return ms ? new Date(ms).toISOString().replace("T", " ").slice(0, 19) : "";
  }

  // --- signing in --------------------------------------------------------------------

  async function signIn(token) {
    sessionStorage.setItem(TOKEN_KEY, token);
    try {
      const me = await api("GET", "/whoami");
      $("#who").textContent = `${me.name} (${me.via === "admin_token" ? "admin token" : "operator login"})`;
      $("#login").hidden = true;
      $("#tabs").hidden = false;
      $("#sign-out").hidden = false;
      show(state.tab);
    } catch (error) {
      signOut(error.message);
    }
  }

  function signOut(why) {
    sessionStorage.removeItem(TOKEN_KEY);
    clearInterval(state.timer);
    document.querySelectorAll(".tab").forEach((s) => (s.hidden = true));
    $("#tabs").hidden = true;
    $("#sign-out").hidden = true;
    $("#who").textContent = "";
    $("#login").hidden = false;
    $("#login-error").textContent = why || "";
  }

  // --- tabs --------------------------------------------------------------------------

  function show(tab) {
    state.tab = tab;
    clearInterval(state.timer);
    document.querySelectorAll("#tabs button").forEach((b) => {
      b.classList.toggle("active", b.dataset.tab === tab);
    });
    document.querySelectorAll(".tab").forEach((s) => (s.hidden = s.id !== tab));
    // A poll that fails (a node restarting) is tried again at the next one.
    const load = guard({ tables: loadTables, players: search, audit: () => {}, nodes: loadNodes }[tab]);
    load();
    if (tab === "tables" || tab === "nodes") {
      state.timer = setInterval(load, POLL_MS);
    }
  }

  // --- tables ------------------------------------------------------------------------

  function tableCard(t) {
    const card = el("article", null, "card");
    card.dataset.table = t.table;
    const head = el("header");
    head.append(el("h3", t.name || t.table), el("span", t.phase, `phase ${t.phase}`));
    card.append(head);
    const facts = el("p", null, "facts");
    facts.append(
      el("span", `round ${t.round ?? 0}`),
      el("span", `held by ${t.holder || "nobody"}`),
      el("span", t.limits ? `bets ${t.limits.min_bet}–${t.limits.max_bet}` : ""),
    );
    if (t.deadline_ms) {
      const left = Math.max(0, Math.round((t.deadline_ms - Date.now()) / 1000));
      facts.append(el("span", `${left}s left`, "deadline"));
    }
    card.append(facts);
    const seats = el("table", null, "seats");
    const head2 = row(["Seat", "Player", "Balance", "Bet", "Bonus"]);
    head2.querySelectorAll("td").forEach((td) => td.classList.add("head"));
    seats.append(head2);
    for (const s of t.seats || []) {
      const name = el("span", s.name || s.player);
      if (!s.connected) name.append(el("small", " away"));
      seats.append(row([s.seat + 1, name, chips(s.balance), chips(s.bet), chips(s.bonus)], 2));
    }
    if (!(t.seats || []).length) seats.append(row(["", "no one seated", "", "", ""]));
    card.append(seats);
    if ((t.results || []).length) {
      const list = el("ul", null, "results");
      for (const r of t.results) list.append(el("li", `${r.player}: ${r.outcome} (${r.net >= 0 ? "+" : ""}${r.net})`));
      card.append(list);
    }
    if (t.money) {
      card.append(el("p", `table balances ${chips(t.money.table_balances)} · held ${chips(t.money.held)} · house ${chips(t.money.house)}`, "money"));
    }
    return card;
  }

  async function loadTables() {
    const data = await api("GET", "/tables");
    const list = $("#table-list");
    list.replaceChildren(...data.tables.map(tableCard));
    $("#tables-updated").textContent = `updated ${new Date().toLocaleTimeString("en-GB")}`;
  }

  // --- players -----------------------------------------------------------------------

  async function search() {
    const q = $("#search").value;
    const data = await api("GET", `/players?q=${encodeURIComponent(q)}`);
    const body = $("#player-list tbody");
    body.replaceChildren(
      ...data.players.map((p) => {
        const tr = row([p.player, p.name || "", chips(p.balance)], 2);
        tr.tabIndex = 0;
        tr.dataset.player = p.player;
        tr.addEventListener("click", () => openPlayer(p.player));
        return tr;
      }),
    );
    if (!data.players.length) body.append(row(["no account matches", "", ""]));
  }

  async function openPlayer(player) {
    state.player = player;
    const p = await api("GET", `/players/${encodeURIComponent(player)}`);
    $("#player-detail").hidden = false;
    $("#player-title").textContent = p.name ? `${p.player} (${p.name})` : p.player;
    const facts = $("#player-facts");
    const pairs = [
      ["Balance", chips(p.balance)],
      ["Kind", p.guest ? "guest" : "member"],
      ["Seated at", p.seats.join(", ") || "no table"],
      ["Connected on", p.sessions.connected_on.join(", ") || "no node"],
      ["Sessions last ended", p.sessions.revoked_ms ? when(p.sessions.revoked_ms) : "never"],
    ];
    if (p.closed_ms) pairs.push(["Closed", when(p.closed_ms)]);
    facts.replaceChildren(...pairs.flatMap(([k, v]) => [el("dt", k), el("dd", v)]));
    facts.dataset.balance = p.balance;
    const body = $("#ledger tbody");
    const reversed = new Set(p.ledger.filter((e) => e.extra.reverses).map((e) => e.extra.reverses));
    body.replaceChildren(
      ...p.ledger.map((e) => {
        let action = el("span");
        if (reversed.has(e.entry)) {
          action = el("span", "reversed", "reversed");
        } else if (e.kind === "credit" && e.source === "outside") {
          action = el("button", "Reverse", "small");
          action.addEventListener("click", () => {
            const form = $("#reverse-form");
            form.entry.value = e.entry;
            form.reason.focus();
          });
        }
        const sign = e.dest === "account" ? "+" : "−";
        const tr = row([e.entry, when(e.at_ms), e.kind, e.table || "", e.extra.reason || "", e.extra.by || "", `${sign}${chips(e.amount)}`, action], 6);
        tr.dataset.entry = e.entry;
        tr.dataset.kind = e.kind;
        return tr;
      }),
    );
  }

  function newKey() {
    const bytes = new Uint8Array(12);
    crypto.getRandomValues(bytes);
    return "console-" + Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  }

  // A form keeps its idempotency key until the server answers: a retry after a lost
  // answer is the same request, applied once. Any edit makes it another request.
  function moveForm(form, path, toBody) {
    form.addEventListener("input", () => delete form.dataset.key);
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      if (!form.dataset.key) form.dataset.key = newKey();
      const body = { ...toBody(form), key: form.dataset.key };
      const out = $("#move-result");
      try {
        const done = await api("POST", `/players/${encodeURIComponent(state.player)}/${path}`, body);
        form.reset();
        delete form.dataset.key;
        await openPlayer(state.player);
        out.className = "ok";
        out.textContent = `${done.move} of ${chips(done.amount)}: ${done.applied ? "done" : "already done (same key)"}; balance ${chips(done.balance)}`;
      } catch (error) {
        if (error instanceof ApiError) {
          delete form.dataset.key;
          out.className = "error";
          out.textContent = `${error.code}: ${error.message}`;
        } else {
          out.className = "error";
          out.textContent = `no answer (${error.message}): submit again to retry safely`;
        }
      }
    });
  }

  // --- audit and nodes ---------------------------------------------------------------

  async function runAudit() {
    $("#audit-verdict").textContent = "running…";
    const report = await api("GET", "/audit");
    const verdict = $("#audit-verdict");
    verdict.textContent = report.ok ? "The audit passed: every chip is accounted for." : `The audit FAILED: ${report.problems.length} problem(s).`;
    verdict.className = report.ok ? "ok" : "error";
    $("#audit-text").textContent = report.text;
  }

  async function loadNodes() {
    const data = await api("GET", "/nodes");
    const body = $("#node-list tbody");
    body.replaceChildren(
      ...data.nodes.map((n) => {
        const button = el("button", state.drainArmed === n.name ? "Confirm drain" : "Drain", "danger small");
        button.dataset.node = n.name;
        button.addEventListener("click", () => drain(n.name));
        const tr = row([n.name, n.instance, n.url || "", n.tables_held, button], 3);
        tr.dataset.node = n.name;
        return tr;
      }),
    );
    $("#placement tbody").replaceChildren(...data.tables.map((t) => row([t.table, t.holder || "nobody", t.placed_on || ""])));
  }

  async function drain(name) {
    const out = $("#node-result");
    if (state.drainArmed !== name) {
      state.drainArmed = name;
      out.className = "";
      out.textContent = `Drain ${name}? It hands its tables to the other nodes and stops. Click again to confirm.`;
      await loadNodes();
      return;
    }
    state.drainArmed = null;
    try {
      const done = await api("POST", `/nodes/${encodeURIComponent(name)}/drain`);
      out.className = "ok";
      out.textContent = `${name} is draining (${done.told} process told).`;
    } catch (error) {
      out.className = "error";
      out.textContent = `${error.code || "error"}: ${error.message}`;
    }
    await loadNodes();
  }

  // --- wiring ------------------------------------------------------------------------

  function guard(fn) {
    return (...args) =>
      Promise.resolve(fn(...args)).catch((error) => {
        if (!(error instanceof ApiError && error.status === 401)) console.warn(error);
      });
  }

  document.addEventListener("DOMContentLoaded", () => {
    $("#login-form").addEventListener("submit", (event) => {
      event.preventDefault();
      const token = $("#token").value.trim();
      $("#token").value = "";
      guard(signIn)(token);
    });
    $("#sign-out").addEventListener("click", () => signOut("signed out"));
    document.querySelectorAll("#tabs button").forEach((b) => b.addEventListener("click", () => guard(show)(b.dataset.tab)));
    $("#search-form").addEventListener("submit", (event) => {
      event.preventDefault();
      guard(search)();
    });
    moveForm($("#credit-form"), "credit", (f) => ({ amount: Number(f.amount.value), reason: f.reason.value }));
    moveForm($("#debit-form"), "debit", (f) => ({ amount: Number(f.amount.value), reason: f.reason.value }));
    moveForm($("#reverse-form"), "reverse", (f) => ({ entry: f.entry.value.trim(), reason: f.reason.value }));
    $("#revoke").addEventListener("click", guard(async () => {
      const done = await api("POST", `/players/${encodeURIComponent(state.player)}/sessions/revoke`);
      $("#move-result").className = "ok";
      $("#move-result").textContent = `${done.player}: sessions ended (${done.nodes_told} nodes told)`;
      await openPlayer(state.player);
    }));
    $("#run-audit").addEventListener("click", guard(runAudit));
    const kept = sessionStorage.getItem(TOKEN_KEY);
    if (kept) guard(signIn)(kept);
  });

  window.paigowConsole = { state };
})();
