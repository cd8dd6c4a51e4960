"""The page's own code against the protocol: the codec and its vectors, the fair shuffle,
and the split preview against the reference client's."""

from __future__ import annotations

import random
from itertools import combinations

import pytest
from playwright.async_api import Browser

from clients.handrank import preview
from protocol import fairness
from protocol.vectors import load_vectors
from server.app import App
from tests.web.helpers import base_url

pytestmark = [pytest.mark.asyncio, pytest.mark.timeout(60)]

MESSAGES = load_vectors("messages")
ERRORS = load_vectors("errors")

# Runs in the page: every vector through the page's codec.js; the disagreements.
CHECK_VECTORS = """async ([messages, errors]) => {
  const codec = await import('/js/codec.js');
  const bytes = (hex) => Uint8Array.from(hex.match(/../g) ?? [], (h) => parseInt(h, 16));
  const hex = (b) => Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
  const decode = (v) =>
    (v.direction === 'client->server' ? codec.decodeClient : codec.decodeServer)(bytes(v.hex));
  const bad = [];
  for (const v of messages) {
    try {
      const got = JSON.stringify(decode(v));
      if (got !== JSON.stringify(v.message)) bad.push(`${v.name}: decoded ${got}`);
      const encoded = v.canonical && hex(codec.encode(v.message));
      if (v.canonical && encoded !== v.hex) bad.push(`${v.name}: encoded ${encoded}`);
    } catch (e) { bad.push(`${v.name}: ${e.code} ${e.message}`); }
  }
  for (const v of errors) {
    try { decode(v); bad.push(`${v.name}: accepted`); }
    catch (e) {
      if (e.code !== v.error) bad.push(`${v.name}: ${e.code} (${e.message}), not ${v.error}`);
    }
  }
  return {bad, count: messages.length + errors.length};
}"""


async def test_the_page_codec_agrees_with_every_vector(browser: Browser, web_app: App) -> None:
    page = await browser.new_page()
    await page.goto(base_url(web_app))
    report = await page.evaluate(CHECK_VECTORS, [MESSAGES, ERRORS])
    assert report["bad"] == []
    assert report["count"] == len(MESSAGES) + len(ERRORS) > 90


async def test_the_page_derives_the_shuffle_of_section_13(browser: Browser, web_app: App) -> None:
    """WebCrypto in the page gives the worked example's commitment and deck, and the deal
    of the vectors' round (its seed event and the seat's private cards)."""
    page = await browser.new_page()
    await page.goto(base_url(web_app))
    by_name = {v["name"]: v["message"] for v in MESSAGES}
    seed = by_name["seed"]["seed"]
    cards = by_name["cards_private"]["cards"]
    got = await page.evaluate(
        """async ([seed, cards]) => {
          const fair = await import('/js/fair.js');
          const commitment = await fair.commitmentOf(seed);
          const verdict = await fair.verifyRound({seed, commitment, seat: 0, cards});
          return {commitment, deck: await fair.shuffledDeck(seed), ok: verdict.ok};
        }""",
        [seed, cards],
    )
    raw = bytes.fromhex(seed)
    assert got["commitment"] == fairness.commitment(raw) == by_name["seed"]["commitment"]
    assert got["deck"] == list(fairness.shuffled_deck(raw))
    assert got["ok"] is True
    example = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
    deck = await page.evaluate(
        "async (s) => (await import('/js/fair.js')).shuffledDeck(s)", example
    )
    assert deck[:7] == [4, 51, 34, 2, 12, 18, 11]  # protocol/PROTOCOL.md, section 13: seat 0
    assert deck == list(fairness.shuffled_deck(bytes.fromhex(example)))


async def test_the_page_previews_splits_as_the_reference_client(
    browser: Browser, web_app: App
) -> None:
    """The page's live preview (names and foul) against clients/handrank.py, for every
    split of 200 random hands, the joker in many of them."""
    rng = random.Random(15)
    hands = [rng.sample(range(53), 7) for _ in range(200)]
    page = await browser.new_page()
    await page.goto(base_url(web_app))
    got = await page.evaluate(
        """async (hands) => {
          const { preview } = await import('/js/handrank.js');
          return hands.map((cards) => {
            const out = [];
            for (let i = 0; i < 7; i++) for (let j = i + 1; j < 7; j++) {
              const p = preview(cards, [cards[i], cards[j]]);
              out.push([p.high, p.low, p.foul]);
            }
            return out;
          });
        }""",
        hands,
    )
    want = [[list(preview(cards, low)) for low in combinations(cards, 2)] for cards in hands]
    assert got == want
