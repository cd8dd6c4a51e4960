// A local hand ranking for the live preview while the player picks the low hand
// (the server is the authority: it names every hand it sets or reveals). The joker
// is an ace, or completes a straight or a flush; A-2-3-4-5 is the second-best
// straight; in the two-card hand the joker is an ace. A value is an array
// [category, ...ranks]; a greater one is a better hand, and the low hand uses the
// same layout, so a split is legal exactly when high beats low.

import { JOKER, RANK_NAMES, RANK_PLURALS, rankOf, suitOf } from "./cards.js";

const [HIGH_CARD, PAIR, TWO_PAIR, TRIPS, STRAIGHT, FLUSH, FULL_HOUSE, QUADS] = [0, 1, 2, 3, 4, 5, 6, 7];
const [STRAIGHT_FLUSH, ROYAL_FLUSH, FIVE_ACES] = [8, 9, 10];
const ACE = 14;
const BROADWAY = 15; // straight key of A-K-Q-J-10
const WHEEL = 14; // straight key of A-2-3-4-5: second best

const name = (rank) => RANK_NAMES[rank - 2];
const plural = (rank) => RANK_PLURALS[rank - 2];

/** a > b for two values. */
export function beats(a, b) {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const x = a[i] ?? -1;
    const y = b[i] ?? -1;
    if (x !== y) return x > y;
  }
  return false;
}

function straightKey(ranks) {
  const distinct = [...new Set(ranks)].sort((a, b) => a - b);
  if (distinct.length !== 5) return null;
  if (distinct.join() === [2, 3, 4, 5, ACE].join()) return WHEEL;
  if (distinct[4] - distinct[0] === 4) return distinct[4] === ACE ? BROADWAY : distinct[4];
  return null;
}

// Five [rank, suit] cards; suit -1 never makes a flush.
function naturalValue(cards) {
  const ranks = cards.map(([r]) => r);
  const flush = new Set(cards.map(([, s]) => s)).size === 1 && cards[0][1] >= 0;
  const straight = straightKey(ranks);
  if (straight !== null && flush) return [straight === BROADWAY ? ROYAL_FLUSH : STRAIGHT_FLUSH, straight];
  const counts = new Map();
  for (const r of ranks) counts.set(r, (counts.get(r) ?? 0) + 1);
  const groups = [...counts].sort((a, b) => b[1] - a[1] || b[0] - a[0]);
  const shape = groups.map(([, c]) => c);
  const order = groups.map(([r]) => r);
  if (shape[0] === 5) return [FIVE_ACES, ACE];
  if (shape[0] === 4) return [QUADS, ...order];
  if (shape[0] === 3 && shape[1] === 2) return [FULL_HOUSE, ...order];
  if (flush) return [FLUSH, ...[...ranks].sort((a, b) => b - a)];
  if (straight !== null) return [STRAIGHT, straight];
  if (shape[0] === 3) return [TRIPS, ...order];
  if (shape[0] === 2 && shape[1] === 2) return [TWO_PAIR, ...order];
  if (shape[0] === 2) return [PAIR, ...order];
  return [HIGH_CARD, ...order];
}

/** The value of a five-card high hand, the joker taking its best legal use. */
export function highValue(cards) {
  const natural = cards.filter((c) => c !== JOKER).map((c) => [rankOf(c), suitOf(c)]);
  if (natural.length === cards.length) return naturalValue(natural);
  let best = naturalValue([...natural, [ACE, -1]]);
  for (let rank = 2; rank <= ACE; rank++) {
    for (let suit = 0; suit < 4; suit++) {
      if (natural.some(([r, s]) => r === rank && s === suit)) continue;
      const value = naturalValue([...natural, [rank, suit]]);
      if ([STRAIGHT, FLUSH, STRAIGHT_FLUSH, ROYAL_FLUSH].includes(value[0]) && beats(value, best)) best = value;
    }
  }
  return best;
}

/** The value of a two-card low hand (the joker is an ace). */
export function lowValue(cards) {
  const [a, b] = cards.map((c) => (c === JOKER ? ACE : rankOf(c))).sort((x, y) => y - x);
  return a === b ? [PAIR, a] : [HIGH_CARD, a, b];
}

function straightName(key) {
  if (key === BROADWAY) return "ace high";
  return key === WHEEL ? "five high" : `${name(key)} high`;
}

/** `Straight, seven high`, in the server's style. */
export function highName(value) {
  const [category, r1, r2] = value;
  const text = {
    [FIVE_ACES]: () => "five aces",
    [ROYAL_FLUSH]: () => "royal flush",
    [STRAIGHT_FLUSH]: () => `straight flush, ${straightName(r1)}`,
    [QUADS]: () => `four ${plural(r1)}`,
    [FULL_HOUSE]: () => `full house, ${plural(r1)} over ${plural(r2)}`,
    [FLUSH]: () => `flush, ${name(r1)} high`,
    [STRAIGHT]: () => `straight, ${straightName(r1)}`,
    [TRIPS]: () => `three ${plural(r1)}`,
    [TWO_PAIR]: () => `two pair, ${plural(r1)} and ${plural(r2)}`,
    [PAIR]: () => `pair of ${plural(r1)}`,
    [HIGH_CARD]: () => `${name(r1)} high`,
  }[category]();
  return text[0].toUpperCase() + text.slice(1);
}

/** `Pair of aces`, `Ace-queen`. */
export function lowName(value) {
  if (value[0] === PAIR) return `Pair of ${plural(value[1])}`;
  const first = name(value[1]);
  return `${first[0].toUpperCase()}${first.slice(1)}-${name(value[2])}`;
}

/** {high, low, foul} names of the split of seven `cards` with `low` in front. */
export function preview(cards, low) {
  const high = cards.filter((c) => !low.includes(c));
  const hv = highValue(high);
  const lv = lowValue(low);
  return { high: highName(hv), low: lowName(lv), foul: !beats(hv, lv) };
}

/** The ranking of high hands, best first, for the rules panel. */
export const RANKING = [
  ["Five aces", "four aces and the joker"],
  ["Royal flush", "A K Q J 10 of one suit"],
  ["Straight flush", "five in sequence, one suit (A-2-3-4-5 is the second best)"],
  ["Four of a kind", "four cards of one rank"],
  ["Full house", "three of a kind and a pair"],
  ["Flush", "five of one suit"],
  ["Straight", "five in sequence (A-2-3-4-5 is the second best)"],
  ["Three of a kind", "three cards of one rank"],
  ["Two pair", "two pairs"],
  ["One pair", "two cards of one rank"],
  ["High card", "none of the above"],
];
