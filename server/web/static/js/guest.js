// This browser's guest: who the browser plays as without an account, kept in
// localStorage so that every tab and every reload on this browser is the same guest,
// until the player forgets it. A guest's identity is its session (protocol/PROTOCOL.md,
// section 5), so what is kept is the session's resume token and the guest's name.
//
// Two tabs share the guest one at a time: a tab that resumes the session closes the
// other tab's connection (4005, which a client does not retry by itself), and that
// tab offers to play there again. Creating the guest is done under a lock across the
// browser's tabs (Web Locks), so two tabs signing in at once make one guest, not two.

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

/** Keep the guest's latest resume token (every welcome brings a new one). */
export function keepGuest(resumeToken, name) {
  localStorage.setItem(KEY, JSON.stringify({ resume_token: resumeToken, name }));
}

/** Forget the kept guest; with `resumeToken`, only if it is still that one (another tab
 * may have kept a newer guest meanwhile). */
export function dropGuest(resumeToken = null) {
  const guest = storedGuest();
  if (guest && (resumeToken === null || guest.resume_token === resumeToken)) localStorage.removeItem(KEY);
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
