// Provable fairness (protocol/PROTOCOL.md, section 13), in the page: the commitment is
// SHA-256 of the seed, and the deck is re-derived from the seed with HMAC-SHA256
// (WebCrypto) and Fisher-Yates with rejection sampling. verifyRound() checks what a
// round showed (commitment, the player's cards, every revealed hand) against it.

const TAG = new TextEncoder().encode("paigow-shuffle-v1");
const TWO32 = 2 ** 32;

export function hexToBytes(hex) {
  return Uint8Array.from(hex.match(/../g) ?? [], (h) => parseInt(h, 16));
}

export function bytesToHex(bytes) {
  return Array.from(new Uint8Array(bytes), (b) => b.toString(16).padStart(2, "0")).join("");
}

function subtle() {
  if (!globalThis.crypto?.subtle) throw new Error("WebCrypto needs a secure context (https or localhost)");
  return crypto.subtle;
}

/** The lowercase hex SHA-256 of a hex seed: its commitment. */
export async function commitmentOf(seedHex) {
  return bytesToHex(await subtle().digest("SHA-256", hexToBytes(seedHex)));
}

/** The 53 card codes in the order the seed shuffles them (shuffle version 1). */
export async function shuffledDeck(seedHex) {
  const key = await subtle().importKey("raw", hexToBytes(seedHex), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  let block = 0;
  let words = [];
  const next = async () => {
    if (!words.length) {
      const msg = new Uint8Array(TAG.length + 8);
      msg.set(TAG);
      new DataView(msg.buffer).setBigUint64(TAG.length, BigInt(block++));
      const view = new DataView(await subtle().sign("HMAC", key, msg));
      words = Array.from({ length: 8 }, (_, i) => view.getUint32(4 * i));
    }
    return words.shift();
  };
  const deck = Array.from({ length: 53 }, (_, i) => i);
  for (let i = 52; i >= 1; i--) {
    const n = i + 1;
    const limit = TWO32 - (TWO32 % n);
    let w = await next();
    while (w >= limit) w = await next();
    const j = w % n;
    [deck[i], deck[j]] = [deck[j], deck[i]];
  }
  return deck;
}

/** Hand k (seats 0..5, dealer 6) of a shuffled deck. */
export const dealtHand = (deck, k) => deck.slice(7 * k, 7 * k + 7);

const sameSet = (a, b) => a.length === b.length && a.every((c) => b.includes(c));

/**
 * Checks a settled round: {seed, commitment, seat, cards, hands}. Returns
 * {ok, checks: [{what, ok}], deck}; every check is listed, passed or not.
 */
export async function verifyRound({ seed, commitment, seat = null, cards = [], hands = [] }) {
  const checks = [];
  const computed = await commitmentOf(seed);
  checks.push({ what: "SHA-256(seed) is the commitment published before the bets", ok: computed === commitment });
  const deck = await shuffledDeck(seed);
  if (seat !== null && cards.length) {
    checks.push({ what: `your seven cards are hand ${seat} of the shuffle`, ok: sameSet(cards, dealtHand(deck, seat)) });
  }
  for (const h of hands) {
    const who = h.hand === 6 ? "the dealer's hand" : `seat ${h.hand + 1}'s hand`;
    checks.push({ what: `${who} is hand ${h.hand} of the shuffle`, ok: sameSet([...h.high, ...h.low], dealtHand(deck, h.hand)) });
  }
  return { ok: checks.every((c) => c.ok), checks, deck };
}
