// A sense of occasion that never slows play: the result banner, the low-time warning,
// motion for cards and chips, and optional sound. All motion is CSS started here and
// never awaited (nothing waits for an animation to end); `prefers-reduced-motion` turns
// it off in the stylesheet. Sound is off until the player turns it on (remembered in
// localStorage) and is made by WebAudio tones, no audio files.

import { $, announce, chips } from "./dom.js";

/** The seconds left at which a countdown warns. */
export const WARN_MS = 5000;
const BANNER_MS = 7000; // how long a result stays in the banner
const SOUND_KEY = "paigow.sound";

/** Starts (or continues) a CSS animation on an element drawn anew: the class `name`
 * for `ms` after `since` (a performance.now() time), its delay set back by the time
 * already gone, so an element redrawn mid-way goes on where the old one was. */
export function motion(el, name, since, ms, delay = 0) {
  if (since === null || since === undefined) return el;
  const gone = performance.now() - since;
  if (gone >= ms + delay) return el;
  el.classList.add(name);
  el.style.animationDelay = `${delay - gone}ms`;
  return el;
}

/** The chips a round brought or took, and what the banner says of it. */
export function outcome(r, hand) {
  const main = r.payout - r.bet;
  const bonus = r.bonus_payout - r.bonus_bet;
  const kind = hand?.foul ? "foul" : r.outcome;
  const signed = (n) => (n > 0 ? `+${chips(n)}` : n < 0 ? `−${chips(-n)}` : "0");
  const head = { win: "You win", lose: "You lose", push: "Push", foul: "Foul: you lose" }[kind] ?? kind;
  const parts = [`Main bet ${chips(r.bet)}: ${signed(main)}${r.commission ? ` (commission ${chips(r.commission)})` : ""}`];
  if (r.bonus_bet) parts.push(`Bonus ${chips(r.bonus_bet)}: ${signed(bonus)}${r.bonus_payout && r.bonus_class ? ` (${r.bonus_class.replaceAll("_", " ")})` : ""}`);
  // The side bets beyond the bonus (protocol minor 6): the Envy bonus has no stake.
  let others = 0;
  for (const w of otherWagers(r)) {
    others += w.payout - w.stake;
    parts.push(`${wagerName(w.kind)}${w.stake ? ` ${chips(w.stake)}` : ""}: ${signed(w.payout - w.stake)}${payNote(w)}`);
  }
  const jackpot = otherWagers(r).some(hitMeter);
  return { kind, net: main + bonus + others, head: jackpot ? `Jackpot! ${head}` : head, detail: parts.join(" · "), signed };
}

/** A side bet's result took a share of a progressive's meter (minor 7): its class with a
 * payout of 0, the share paid into the account rather than to the seat. */
export function hitMeter(w) {
  return Boolean(w.pay_class) && !w.payout;
}

/** The words after a side bet's result: the pay line it won, or the jackpot it hit. */
export function payNote(w) {
  if (!w.pay_class) return "";
  if (hitMeter(w)) return ` (JACKPOT: ${payWords(w.pay_class)}, its share paid to your account)`;
  return ` (${payWords(w.pay_class)})`;
}

/** A result's side bets other than the bonus bet (its own fields tell that one). */
export function otherWagers(r) {
  return (r.wagers ?? []).filter((w) => w.kind !== "bonus");
}

const wagerLabels = new Map();

/** Remember the labels of a table's side bets (`table_info.side_bets`), for the words
 * of their results. */
export function nameWagers(sideBets) {
  for (const b of sideBets) if (b.label) wagerLabels.set(b.kind, b.label);
}

/** A side bet's kind as words: its label where the table said it ("Queen's Dragon"),
 * else its code in words ("envy" is "Envy"). */
export function wagerName(kind) {
  const label = wagerLabels.get(kind);
  if (label) return label;
  const words = kind.replaceAll("_", " ");
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/** A pay line's code in words: "four_of_a_kind" is "four of a kind". */
export function payWords(code) {
  return code.replaceAll(/[_-]/g, " ");
}

/** The remembered sound choice; none where the browser refuses storage. */
function stored() {
  try {
    return localStorage.getItem(SOUND_KEY);
  } catch {
    return null;
  }
}

/** Tones from WebAudio: made on demand, only while sound is on. */
export class Sound {
  constructor() {
    this.on = stored() === "on";
    this.ctx = null;
    this.played = 0; // tones started, for the tests
    const button = $("sound");
    this.button = button;
    button.addEventListener("click", () => this.set(!this.on));
    this.show();
  }

  set(on) {
    this.on = on;
    try {
      if (on) localStorage.setItem(SOUND_KEY, "on");
      else localStorage.removeItem(SOUND_KEY);
    } catch {
      // A browser that keeps nothing: the choice lasts this page only.
    }
    this.show();
    if (on) this.play("chip"); // the click is the gesture a browser wants before audio
  }

  show() {
    // The name stays "Sound"; whether it is on is the toggle's pressed state.
    this.button.setAttribute("aria-pressed", String(this.on));
    this.button.querySelector(".state").textContent = this.on ? "on" : "off";
  }

  /** A short named cue; nothing when sound is off or the browser has no WebAudio. */
  play(cue) {
    if (!this.on) return;
    const Ctx = globalThis.AudioContext ?? globalThis.webkitAudioContext;
    if (!Ctx) return;
    try {
      this.ctx ??= new Ctx();
      const notes = {
        chip: [[880, 0, 0.05]], deal: [[520, 0, 0.04]], warn: [[660, 0, 0.12]],
        win: [[523, 0, 0.12], [659, 0.12, 0.12], [784, 0.24, 0.2]], push: [[523, 0, 0.15]],
        lose: [[330, 0, 0.15], [262, 0.15, 0.25]],
      }[cue] ?? [];
      const t0 = this.ctx.currentTime;
      for (const [freq, at, len] of notes) {
        const osc = this.ctx.createOscillator();
        const gain = this.ctx.createGain();
        osc.frequency.value = freq;
        gain.gain.setValueAtTime(0.08, t0 + at);
        gain.gain.exponentialRampToValueAtTime(0.0001, t0 + at + len);
        osc.connect(gain).connect(this.ctx.destination);
        osc.start(t0 + at);
        osc.stop(t0 + at + len + 0.02);
        this.played += 1;
      }
    } catch {
      // Sound is a nicety: a browser that refuses it plays on in silence.
    }
  }
}

/** The banner over the table with your result, and the countdown's warning. */
export class Occasion {
  constructor(app) {
    this.app = app;
    this.sound = new Sound();
    this.bannerFor = null; // the round the banner shows
    this.bannerTimer = null;
    this.warned = null; // the phase (round:phase:deadline) whose warning was given
  }

  /** Shows the banner for your result of `round` (once per round). */
  result(round, r, hand) {
    if (this.bannerFor === round) return;
    this.bannerFor = round;
    const o = outcome(r, hand);
    const el = $("banner");
    el.dataset.outcome = o.kind;
    el.dataset.net = String(o.net);
    el.dataset.round = String(round);
    $("banner-head").textContent = o.head;
    $("banner-net").textContent = `Net ${o.signed(o.net)}`;
    $("banner-detail").textContent = o.detail;
    el.hidden = false;
    el.classList.remove("enter");
    void el.offsetWidth; // restart the entrance animation for this result
    el.classList.add("enter");
    clearTimeout(this.bannerTimer);
    this.bannerTimer = setTimeout(() => this.hideBanner(), BANNER_MS);
    this.sound.play(o.kind === "win" ? "win" : o.kind === "push" ? "push" : "lose");
  }

  hideBanner() {
    clearTimeout(this.bannerTimer);
    $("banner").hidden = true;
  }

  /** A new round (or another table): last round's banner goes. */
  reset(round) {
    if (this.bannerFor !== null && this.bannerFor !== round) {
      this.bannerFor = null;
      this.hideBanner();
    }
  }

  /** The countdown's look for `left` ms of the phase `key`; in the last seconds of
   * betting or setting it warns, and says so once (politely) to a screen reader. */
  countdown(key, phase, left) {
    const warn = ["betting", "setting"].includes(phase) && left > 0 && left <= WARN_MS;
    $("phase-box").classList.toggle("warn", warn);
    if (warn && this.warned !== key) {
      this.warned = key;
      const seated = this.app.model?.yourSeat !== null;
      if (seated) {
        announce(`${Math.ceil(left / 1000)} seconds left to ${phase === "betting" ? "bet" : "set your hand"}`);
        this.sound.play("warn");
      }
    }
  }
}
