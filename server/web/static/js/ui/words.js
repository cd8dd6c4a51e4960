// The words of the tables as players read them: phase names, table names cut by the
// server, the jargon explained, the commission's rounding.

/** The phases as players say them (the wire's names are the protocol's). */
export const PHASE_NAMES = {
  idle: "Waiting for a bet", betting: "Betting", dealing: "Dealing", setting: "Setting hands",
  revealing: "Revealing", settling: "Paying out",
};

/** A table's name to show: one the server cut at the protocol's 32 characters ends at
 * the last whole word, with an ellipsis; the element's title keeps all that came. */
export function shortName(name) {
  if (name.length < 32 || !name.includes(" ")) return name;
  return `${name.slice(0, name.lastIndexOf(" ")).replace(/[\s,(-]+$/, "")}…`;
}

/** The jargon of the tables, explained in the rules panel (and the lobby's tooltips). */
export const GLOSSARY = [
  ["House way", "the fixed way the dealer splits a hand; ask for it to set yours the same way. Hands not set in time are set by it."],
  ["Pair-classes house way", "a house way that sorts pairs into classes to decide how a hand with pairs is split; the other tables use the PartyCasino house way."],
  ["Foul", "a split whose two-card low hand beats or ties the five-card high hand. Depending on the table it is refused (set again) or it loses the bet (“fouls lose”)."],
  ["Copy", "a half (high or low) where your hand and the dealer's are equal: copies go to the dealer."],
  ["Push", "you win one half and the dealer the other: your bet comes back, no win, no loss."],
  ["Commission", "the house's share of a winning main bet, taken from the win in whole chips: rounded down, rounded up, or exact where main bets come in steps whose commission is whole, as the table's rules say."],
  ["Bonus bet", "a side bet on your seven cards alone, paid by the bonus pay table whatever the dealer holds."],
  ["Rebet", "place last round's bet again, with its bonus."],
  ["Sit out", "skip the coming rounds and keep your seat; a bet brings you back."],
];

/** The dealer's hand that pushes every main bet at a commission-free table, by its
 * table_info.commission_free (protocol minor 5). */
const BARRED = {
  ez: "a queen-high pai gow (seven different ranks, the highest a queen, no straight, no flush, no joker)",
  nine_low: "a nine-high low hand (two different cards, the higher a nine; never the joker)",
};

/** "5% of a winning main bet, rounded down …" with the table's own examples, by the
 * table's commission_rounding ("down", "up" or "whole"; main bets then come in steps
 * of mainUnit); at a commission-free table (free "ez" or "nine_low") none, and the
 * dealer's hand that pushes every main bet instead. */
export function commissionText(pct, rounding = "down", mainUnit = 0, free = "none") {
  if (BARRED[free]) {
    return `None: a winning main bet pays even money. Instead every main bet, won or lost, pushes when the dealer's hand is ${BARRED[free]}.`;
  }
  if (rounding === "whole" && mainUnit > 0) {
    const wins = [mainUnit, 5 * mainUnit].map((w) => `a win of ${w} pays ${w - (w * pct) / 100}`).join(", ");
    return `${pct}% of a winning main bet, exactly: main bets come in steps of ${mainUnit}, whose commission is whole chips: ${wins}.`;
  }
  const up = rounding === "up";
  const paid = (win) => win - (up ? Math.ceil((win * pct) / 100) : Math.floor((win * pct) / 100));
  const examples = [10, 19, 20, 100].map((w) => `a win of ${w} pays ${paid(w)}`).join(", ");
  return up
    ? `${pct}% of a winning main bet, taken from the win and rounded up to whole chips (at most one chip more than ${pct}%): ${examples}.`
    : `${pct}% of a winning main bet, taken from the win and rounded down to whole chips (never more than ${pct}%): ${examples}.`;
}

