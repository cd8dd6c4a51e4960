// Small page helpers: element lookup and creation, messages for people and screen readers.

import { keepFocus } from "./focus.js";

export const $ = (id) => document.getElementById(id);

/** h("p.muted", {attrs}, children...): an element; strings become text nodes. */
export function h(spec, attrs = {}, ...children) {
  const [tag, ...classes] = spec.split(".");
  const el = document.createElement(tag);
  if (classes.length) el.className = classes.join(" ");
  for (const [k, v] of Object.entries(attrs ?? {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "text") el.textContent = v;
    else if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else if (k === "dataset") Object.assign(el.dataset, v);
    else el.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat()) if (c !== null && c !== undefined && c !== false) el.append(c);
  return el;
}

/** Chips as people read them: 1,250. */
export const chips = (n) => Number(n).toLocaleString("en-US");

let toastTimer = null;

/** A short message at the bottom (errors are also read out: the region is role=alert). */
export function toast(text, kind = "error") {
  const el = $("toast");
  el.textContent = text;
  el.className = `toast show ${kind === "info" ? "info" : ""}`;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => el.classList.remove("show"), 4500);
}

/** Said by screen readers, not shown (phase changes, results). */
export function announce(text) {
  const el = $("announce");
  el.textContent = "";
  requestAnimationFrame(() => {
    el.textContent = text;
  });
}

/** Runs a request from a button: disabled while in flight, errors shown; the keyboard
 * focus, which the browser takes from a disabled button, comes back to it. */
export async function act(button, work) {
  if (button) keepFocus(() => { button.disabled = true; });
  try {
    return await work();
  } catch (err) {
    toast(err.message || String(err));
    return undefined;
  } finally {
    if (button) keepFocus(() => { button.disabled = false; });
  }
}

/** Replaces an element's children. */
export function fill(el, ...children) {
  el.replaceChildren(...children.flat().filter((c) => c !== null && c !== undefined && c !== false));
}
