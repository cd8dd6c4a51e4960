// Card codes (protocol/PROTOCOL.md, section 2): (rank - 2) * 4 + suit, the joker 52.

export const JOKER = 52;
export const RANKS = "23456789TJQKA";
const SUITS = "cdhs";
const SUIT_SYMBOLS = ["♣", "♦", "♥", "♠"];
const SUIT_NAMES = ["clubs", "diamonds", "hearts", "spades"];
export const RANK_NAMES = ["two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "jack", "queen", "king", "ace"];
export const RANK_PLURALS = ["twos", "threes", "fours", "fives", "sixes", "sevens", "eights", "nines", "tens", "jacks", "queens", "kings", "aces"];

export const rankOf = (card) => (card >> 2) + 2;
export const suitOf = (card) => card & 3;

/** The cards sorted for reading: highest rank first, the joker before all (it plays
 * as an ace or completes a hand), ties by suit; a new array. */
export const byRank = (cards) => [...cards].sort((a, b) => (b === JOKER ? 99 : b >> 2) - (a === JOKER ? 99 : a >> 2) || (b & 3) - (a & 3));

/** `As`, `Td`, `JK`. */
export const cardText = (card) => (card === JOKER ? "JK" : RANKS[card >> 2] + SUITS[card & 3]);

/** `ace of spades`, `joker`: what a screen reader says. */
export const cardName = (card) => (card === JOKER ? "joker" : `${RANK_NAMES[card >> 2]} of ${SUIT_NAMES[card & 3]}`);

/** A card face: a fixed-size element (no layout shift), or its back when `card` is null.
 * A shown card is an image named for a screen reader ("ace of spades"); a card button
 * says its name in hidden text (`.name`, which the caller may extend), since a label
 * would hide the face's own characters from its accessible name. */
export function cardElement(card, { tag = "span", small = false } = {}) {
  const el = document.createElement(tag);
  el.className = small ? "card small" : "card";
  const named = (text) => {
    if (tag === "button") el.append(Object.assign(document.createElement("span"), { className: "sr name", textContent: text }));
    else {
      el.setAttribute("role", "img");
      el.setAttribute("aria-label", text);
    }
  };
  if (card === null || card === undefined) {
    el.classList.add("back");
    named("face-down card");
    return el;
  }
  el.dataset.card = cardText(card);
  if (card === JOKER) {
    el.classList.add("joker");
    el.innerHTML = '<span class="rank" aria-hidden="true">JK</span><span class="suit" aria-hidden="true">★</span>';
  } else {
    const suit = suitOf(card);
    el.classList.add(suit === 1 || suit === 2 ? "red" : "black");
    const rank = RANKS[card >> 2] === "T" ? "10" : RANKS[card >> 2];
    el.innerHTML = `<span class="rank" aria-hidden="true">${rank}</span><span class="suit" aria-hidden="true">${SUIT_SYMBOLS[suit]}</span>`;
  }
  named(cardName(card));
  return el;
}
