// This browser's guest: who the browser plays as without an account, kept so that every
// tab and every reload on this browser is the same guest, until the player forgets it. A
// guest's identity is its session (protocol/PROTOCOL.md, section 5), so what is kept is
// the session's resume token and the guest's name.
//
// Two tabs share the guest one at a time: a tab that resumes the session closes the
// other tab's connection (4005, which a client does not retry by itself), and that
// tab offers to play there again. Creating the guest is done under a lock across the
// browser's tabs (Web Locks), so two tabs signing in at once make one guest, not two.
//
// The guest is kept twice. IndexedDB is the record read under that lock: a write is
// committed before the lock is let go, and the next holder's read sees it. localStorage
// is not enough for that: each tab's process reads its own copy, brought up to date
// some time after another tab's write, so under load the second tab could read no guest
// and make a second one. localStorage is kept beside it for what must be read at once
// (a new tab's first paint) and for its "storage" event (another tab forgot the guest).

const KEY = "paigow.guest";
const LOCK = "paigow.guest";

/** The guest kept on this browser ({resume_token, name}), or null. */
export function storedGuest() {
  try {
    const guest = JSON.parse(localStorage.getItem(KEY) ?? "null");
    return guest && typeof guest.resume_token === "string" ? guest : null;
  } catch {
    return null;
  }
}

const DB = "paigow";
const VERSION = 1; // the database's schema: a later page that changes it opens a higher one
const STORE = "guest";
// How long an open or a transaction may take before the guest is kept in localStorage
// alone (as where IndexedDB cannot be opened). An open that never settles (an old Safari
// bug, or an open queued behind another tab's upgrade that tab never lets finish) would
// otherwise hold every tab's sign-in inside the Web Lock for good. That fallback is the
// race IndexedDB is here for (two tabs may make two guests): far better than no sign-in.
const IDB_WAIT_MS = 3000;
let opened = null;

/** The browser's database (null where IndexedDB cannot be opened in time). */
function database() {
  opened ??= new Promise((resolve) => {
    let settled = false;
    const settle = (db) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(db);
    };
    const timer = setTimeout(() => settle(null), IDB_WAIT_MS);
    try {
      const request = indexedDB.open(DB, VERSION);
      request.onupgradeneeded = () => request.result.createObjectStore(STORE);
      request.onsuccess = () => {
        const db = request.result;
        // A later page's schema (a higher VERSION) in another tab: let it upgrade rather
        // than block it, and open again (as it now stands) when next needed.
        db.onversionchange = () => {
          db.close();
          opened = null;
        };
        if (settled) opened = Promise.resolve(db); // late, after the fallback: used from now on
        settle(db);
      };
      request.onerror = () => settle(null);
      // This page's VERSION is an upgrade and an older tab still holds the database
      // without closing it: the open waits for that tab, the sign-in does not.
      request.onblocked = () => settle(null);
    } catch {
      settle(null);
    }
  });
  return opened;
}

/** Runs `step(store)` in one transaction; resolves with what it returns once the
 * transaction is committed (undefined where IndexedDB fails or takes too long). */
async function transaction(mode, step) {
  const db = await database();
  if (!db) return undefined;
  return new Promise((resolve) => {
    // A transaction that never ends is given up as a failed one (IDB_WAIT_MS, above).
    const timer = setTimeout(() => resolve(undefined), IDB_WAIT_MS);
    const done = (value) => {
      clearTimeout(timer);
      resolve(value);
    };
    try {
      const tx = db.transaction(STORE, mode);
      let result;
      step(tx.objectStore(STORE), (value) => { result = value; });
      tx.oncomplete = () => done(result);
      tx.onerror = tx.onabort = () => done(undefined);
    } catch {
      done(undefined);
    }
  });
}

/** The guest as committed by the last tab that kept one: read it under the lock
 * (`oneTabAtATime`). Falls back to localStorage where IndexedDB fails. */
export async function sharedGuest() {
  const guest = await transaction("readonly", (store, done) => {
    const request = store.get(KEY);
    request.onsuccess = () => done(request.result ?? null);
  });
  if (guest === undefined) return storedGuest();
  return guest && typeof guest.resume_token === "string" ? guest : null;
}

/** Keep the guest's latest resume token (every welcome brings a new one); resolves once
 * it is committed. */
export function keepGuest(resumeToken, name) {
  const guest = { resume_token: resumeToken, name };
  localStorage.setItem(KEY, JSON.stringify(guest));
  return transaction("readwrite", (store) => store.put(guest, KEY));
}

/** Forget the kept guest; with `resumeToken`, only if it is still that one (another tab
 * may have kept a newer guest meanwhile). Resolves once it is committed. */
export function dropGuest(resumeToken = null) {
  const guest = storedGuest();
  if (guest && (resumeToken === null || guest.resume_token === resumeToken)) localStorage.removeItem(KEY);
  return transaction("readwrite", (store) => {
    const request = store.get(KEY);
    request.onsuccess = () => {
      const kept = request.result;
      if (kept && (resumeToken === null || kept.resume_token === resumeToken)) store.delete(KEY);
    };
  });
}

/** Runs `fn` while no other tab of this browser runs one (where Web Locks exist). */
export function oneTabAtATime(fn) {
  return globalThis.navigator?.locks ? navigator.locks.request(LOCK, fn) : fn();
}

/** Calls `forgotten()` when another tab forgets the guest. */
export function onForgotten(forgotten) {
  window.addEventListener("storage", (e) => {
    if (e.key === KEY && e.newValue === null) forgotten();
  });
}
