// Keyboard focus through redraws. The page redraws on every table event, on its
// timers and at each phase: seats, cards and lobby rows are made anew, and a button
// disabled while a request is in flight or a phase is closed drops the focus (the
// browser blurs it). A keyboard player then had to Tab again from the top of the page.
//
// A control is known across redraws by its key: `data-focus-key` on the ones made
// anew, else its id. Around a redraw (`keepFocus`) the control that had the focus
// keeps it, or its new equivalent takes it; one that cannot take it yet (disabled,
// hidden, gone) takes it back once it can, unless the person moved on meanwhile
// (focused something else, or used the mouse).

let lost = null; // {key, el}: the control whose focus a redraw took and has not given back

/** The stable key of a control, or null for one without. */
export function focusKey(el) {
  if (!el || el === document.body || el === document.documentElement) return null;
  return el.dataset?.focusKey ?? (el.id ? `#${el.id}` : null);
}

function find({ key, el }) {
  if (key?.startsWith("#")) return document.getElementById(key.slice(1));
  if (key) return document.querySelector(`[data-focus-key="${CSS.escape(key)}"]`);
  return el;
}

function focusable(el) {
  return Boolean(el?.isConnected && !el.disabled && visible(el));
}

// Safari before 17.4 has no checkVisibility: a box drawn is the test there (none for
// display: none, itself or an ancestor's).
function visible(el) {
  return el.checkVisibility?.() ?? el.getClientRects().length > 0;
}

function nowhere() {
  const active = document.activeElement;
  return !active || active === document.body || active === document.documentElement;
}

/** Runs `draw()` (a redraw, or a change that may disable the focused control) and
 * returns its value; the keyboard focus is kept, given to the equivalent control, or
 * remembered to be given back (see above). */
export function keepFocus(draw) {
  const before = document.activeElement;
  const had = nowhere() ? null : { key: focusKey(before), el: before };
  try {
    return draw();
  } finally {
    settle(had);
  }
}

function settle(had) {
  const active = document.activeElement;
  if (!nowhere() && focusable(active)) {
    lost = null; // kept, or moved by the draw itself (a dialog opened)
    return;
  }
  // Still on a control the draw disabled or hid: the browser drops its focus at the
  // next frame, so it is remembered now.
  const want = nowhere() ? had ?? lost : { key: focusKey(active), el: active };
  if (!want) return;
  const el = find(want);
  if (focusable(el)) {
    el.focus({ preventScroll: true });
    lost = null;
  } else {
    lost = want;
  }
}

// The person moves on: what a redraw took is no longer theirs to get back. The
// focus given back by `settle` is the same control, so forgetting is harmless there.
document.addEventListener("focusin", () => {
  lost = null;
});
document.addEventListener("pointerdown", () => {
  lost = null;
});
