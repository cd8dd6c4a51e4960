// One player's session with the server (protocol/PROTOCOL.md, sections 3, 5 and 11):
// the WebSocket on this page's origin, hello and resume, the heartbeat, the server's
// clock, requests matched to their replies by rid, and each table's events in
// `seq` order (a duplicate is dropped, a gap asks for a snapshot with `watch`).
//
// What lets a reload resume lives in sessionStorage (this tab only): the resume
// token, the name or token used, and the rid counter, which never starts again
// within a session (section 3: a money request's rid is never reused). A guest is
// kept for the whole browser too (guest.js): a new tab resumes it. Tabs may share a
// session one after the other, so a rid starts with this page's own random prefix.

import { ProtocolError, decodeServer, encode } from "./codec.js";
import { dropGuest, keepGuest, oneTabAtATime, sharedGuest, storedGuest } from "./guest.js";

const CLIENT_NAME = "paigow-web/0.1";
const MONEY = new Set(["join", "rebuy", "cash_out", "leave"]);
const STORE = "paigow.session";
// Section 11: the closes after which a client must not come back by itself.
const FINAL = new Set([1000, 1003, 1008, 1009, 4000, 4001, 4002, 4005, 4006]);
const AT_ONCE = new Set([1001, 1012, 4004]);
const TRY_LATER = 1013; // turned away for now (full, or too many from this address): retried
// A money request answered `unavailable` (its table moving, or taken again: section 5)
// is sent again with its rid, which section 3 makes safe, after these pauses (ms).
const UNAVAILABLE_RETRY_MS = [300, 600, 1200, 2400];

export class ServerError extends Error {
  constructor(reply) {
    super(reply.message || reply.code);
    this.code = reply.code;
    this.retryable = reply.retryable;
    this.reply = reply;
  }
}

function load() {
  let saved = null;
  try {
    saved = JSON.parse(sessionStorage.getItem(STORE) ?? "null");
  } catch {}
  if (saved) return saved;
  const guest = storedGuest(); // this browser's guest: a new tab, or a new visit
  return guest ? { name: guest.name, token: null, resume_token: guest.resume_token, rid: 0 } : null;
}

export class Session extends EventTarget {
  constructor(url = null) {
    super();
    const scheme = location.protocol === "https:" ? "wss:" : "ws:";
    this.url = url ?? `${scheme}//${location.host}/ws`;
    this.saved = load(); // {name, token, resume_token, rid}
    this.ws = null;
    this.welcome = null;
    this.status = "offline"; // offline | connecting | online | closed
    this.pending = new Map(); // rid -> {message, resolve, reject}
    this.lastSeq = new Map(); // table -> last seq applied
    this.clockOffset = 0; // server time - local time, in ms
    this.attempt = 0;
    this.lastSent = 0;
    this.timer = null;
    this.stopped = false;
    this.kept = null; // the last keeping of the guest, until it is committed
    this.tab = Math.random().toString(36).slice(2, 8) || "t"; // this page's rid prefix
  }

  /** Whether a session from an earlier load of this tab can be resumed. */
  get resumable() {
    return Boolean(this.saved?.resume_token);
  }

  /** Server time now, in ms (for deadlines). */
  now() {
    return Date.now() + this.clockOffset;
  }

  /** Starts as a guest named `name`, or with a `token`; resolves with the welcome. */
  start({ name = null, token = null } = {}) {
    this.stopped = false;
    if (name || token) this.saved = { name, token, resume_token: null, rid: this.saved?.rid ?? 0 };
    if (this.saved?.token) return this.connect();
    // A guest: the browser's, if another tab made or renewed it (one tab at a time, so
    // that two tabs signing in at once make one guest).
    return oneTabAtATime(async () => {
      const guest = await sharedGuest();
      if (guest) this.saved = { ...this.saved, resume_token: guest.resume_token };
      const welcome = await this.connect();
      await this.kept; // committed before the next tab reads it
      return welcome;
    });
  }

  /** Ends the session for good (the resume token is forgotten; a guest, on the whole
   * browser: the next sign-in is a new guest). */
  forget() {
    this.stopped = true;
    if (this.saved && !this.saved.token) dropGuest();
    this.saved = { name: this.saved?.name ?? null, token: null, resume_token: null, rid: this.saved?.rid ?? 0 };
    this.welcome = null;
    sessionStorage.removeItem(STORE);
    this.ws?.close(1000, "bye");
  }

  save() {
    sessionStorage.setItem(STORE, JSON.stringify(this.saved));
  }

  nextRid() {
    this.saved.rid = (this.saved.rid ?? 0) + 1;
    this.save();
    return `${this.tab}.${this.saved.rid}`;
  }

  setStatus(status, detail = "") {
    this.status = status;
    this.dispatchEvent(new CustomEvent("status", { detail: { status, detail, attempt: this.attempt } }));
  }

  connect() {
    return new Promise((resolve, reject) => {
      this.setStatus("connecting");
      const ws = new WebSocket(this.url);
      ws.binaryType = "arraybuffer";
      this.ws = ws;
      let welcomed = false;
      ws.onopen = () => {
        const hello = {
          type: "hello", rid: this.nextRid(), min_version: 1, max_version: 1, client: CLIENT_NAME,
          token: this.saved.token ?? null, guest: !this.saved.token, name: this.saved.token ? null : this.saved.name,
          resume_token: this.saved.resume_token ?? null,
          last_seq: this.saved.resume_token ? [...this.lastSeq].map(([table_id, seq]) => ({ table_id, seq })) : [],
        };
        this.pending.set(hello.rid, {
          message: hello,
          resolve: (welcome) => {
            welcomed = true;
            this.welcomed(welcome);
            resolve(welcome);
          },
          reject: (err) => reject(err),
        });
        this.sendFrame(hello);
      };
      ws.onmessage = (e) => this.receive(new Uint8Array(e.data));
      ws.onclose = (e) => {
        this.closed(ws, e.code, e.reason);
        // A 1013 is retried with backoff (closed): this start ends with the retry's welcome.
        if (!welcomed && e.code === TRY_LATER && !this.stopped) this.addEventListener("welcome", (w) => resolve(w.detail.welcome), { once: true });
        else if (!welcomed) reject(new Error(`connection closed (${e.code}) before the welcome`));
      };
    });
  }

  welcomed(welcome) {
    const previous = this.welcome;
    this.welcome = welcome;
    this.attempt = 0;
    this.saved.resume_token = welcome.resume_token;
    this.save();
    if (welcome.guest) this.kept = keepGuest(welcome.resume_token, welcome.name);
    this.clockOffset = welcome.server_time_ms - Date.now();
    this.setStatus("online");
    if (!welcome.resumed) this.lastSeq.clear(); // a fresh session: snapshots will follow
    // Money requests sent before the drop: the same rid again is applied at most once.
    for (const [rid, p] of this.pending) {
      if (p.message.type === "hello") continue;
      // A retry still waiting is the resume's to send: sent twice, the second answer
      // would find nothing pending and show an error after the first succeeded.
      clearTimeout(p.retry);
      if (welcome.resumed && MONEY.has(p.message.type)) this.sendFrame(p.message);
      else {
        this.pending.delete(rid);
        p.reject(new ServerError({ code: "disconnected", message: "the connection dropped; try again", retryable: true }));
      }
    }
    clearInterval(this.timer);
    this.timer = setInterval(() => this.heartbeat(), 1000);
    this.dispatchEvent(new CustomEvent("welcome", { detail: { welcome, previous } }));
  }

  heartbeat() {
    if (this.status === "online" && Date.now() - this.lastSent >= this.welcome.heartbeat_ms * 0.8) {
      const sent = Date.now();
      this.request("ping", { time_ms: null }).then((pong) => {
        const now = Date.now();
        this.clockOffset = pong.server_time_ms - (sent + now) / 2;
      }, () => {});
    }
  }

  closed(ws, code, reason) {
    if (ws !== this.ws) return;
    clearInterval(this.timer);
    this.ws = null;
    if (code === 4001 && this.saved.resume_token && !this.stopped) {
      // The resume token was refused (expired, or signed by another secret): the same
      // credentials again, for a fresh session (a guest's seats went with the old one).
      if (!this.saved.token) dropGuest(this.saved.resume_token);
      this.saved.resume_token = null;
      this.save();
      this.lastSeq.clear();
      this.start().catch(() => {});
      return;
    }
    if (this.stopped || FINAL.has(code)) {
      if (code === 4001 || code === 4000) {
        // Credentials refused (a guest session that expired with its token): start afresh.
        this.saved.resume_token = null;
        this.save();
      }
      this.setStatus("closed", `${code} ${reason}`);
      this.rejectAll("closed");
      return;
    }
    // Section 11: now, or with backoff from 0.5 s doubling to 30 s, with +-50 % jitter.
    const base = AT_ONCE.has(code) && this.attempt === 0 ? 0 : Math.min(30_000, 500 * 2 ** this.attempt);
    const wait = base * (0.5 + Math.random());
    this.attempt += 1;
    if (code === TRY_LATER) this.setStatus("busy", `${reason || "server busy"}; retrying in ${Math.ceil(wait / 1000)} s`);
    else this.setStatus("reconnecting", `${code} ${reason}`.trim());
    setTimeout(() => this.connect().catch(() => {}), wait);
  }

  rejectAll(why) {
    for (const p of this.pending.values()) p.reject(new ServerError({ code: why, message: why, retryable: false }));
    this.pending.clear();
  }

  sendFrame(message) {
    this.lastSent = Date.now();
    this.ws.send(encode(message));
  }

  /** Sends a request; resolves with the `ok` result (or the pong), rejects with ServerError. */
  request(type, fields = {}) {
    const message = { type, rid: this.nextRid(), ...fields };
    return new Promise((resolve, reject) => {
      this.pending.set(message.rid, { message, resolve, reject });
      if (this.status === "online") this.sendFrame(message);
      else if (!MONEY.has(type)) {
        this.pending.delete(message.rid);
        reject(new ServerError({ code: "offline", message: "not connected; reconnecting", retryable: true }));
      } // a money request waits for the resume, then goes with its rid
    });
  }

  receive(bytes) {
    let m;
    try {
      m = decodeServer(bytes);
    } catch (exc) {
      // A frame that breaks the protocol: a bug on one side; say so and go on.
      console.error("bad frame from the server", exc instanceof ProtocolError ? exc.code : "", exc);
      this.dispatchEvent(new CustomEvent("protocol-error", { detail: exc }));
      return;
    }
    if (m.type === "ok" || m.type === "error" || m.type === "pong") {
      const p = this.pending.get(m.rid);
      if (!p) {
        if (m.type === "error") this.dispatchEvent(new CustomEvent("server-error", { detail: m }));
        return;
      }
      if (m.type === "error" && m.code === "unavailable" && MONEY.has(p.message.type) && (p.tries ?? 0) < UNAVAILABLE_RETRY_MS.length) {
        const wait = UNAVAILABLE_RETRY_MS[p.tries ?? 0];
        p.tries = (p.tries ?? 0) + 1;
        // Offline by then: the resume sends it (welcomed), with the same rid.
        p.retry = setTimeout(() => {
          if (this.pending.get(m.rid) === p && this.status === "online") this.sendFrame(p.message);
        }, wait);
        return;
      }
      this.pending.delete(m.rid);
      if (m.type === "error") p.reject(new ServerError(m));
      else p.resolve(m.type === "pong" ? m : m.result);
      return;
    }
    if (m.type === "jackpot") {
      // A meter changed (minor 7): no table's message, so no seq to count.
      this.dispatchEvent(new CustomEvent("jackpot", { detail: m }));
      return;
    }
    this.tableEvent(m);
  }

  tableEvent(m) {
    const last = this.lastSeq.get(m.table_id);
    if (m.type === "snapshot") {
      this.lastSeq.set(m.table_id, m.seq);
    } else if (last === undefined) {
      return; // events before the table's snapshot: it will reflect them
    } else if (m.seq <= last) {
      return; // a duplicate (section 3)
    } else if (m.seq !== last + 1) {
      this.lastSeq.delete(m.table_id);
      this.request("watch", { table_id: m.table_id }).catch(() => {}); // a gap: resync
      return;
    } else {
      this.lastSeq.set(m.table_id, m.seq);
    }
    this.dispatchEvent(new CustomEvent("table", { detail: m }));
  }

  /** Forget a table's events (after unwatch). */
  dropTable(tableId) {
    this.lastSeq.delete(tableId);
  }
}
