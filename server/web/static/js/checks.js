// The cross-field rules of protocol/checks.py, written by hand (schema.js, the
// tables, is generated: make schema-js).

// Cross-field rules the tables cannot say (section 6: hello, bet).
export const CHECKS = {
  hello(m) {
    if (m.min_version > m.max_version) return ["min_version", "min_version is greater than max_version"];
    if ((m.token === null) === !m.guest) return ["token", "give either a token or guest=true"];
    if (m.last_seq.length && m.resume_token === null) return ["last_seq", "last_seq needs a resume_token"];
    return null;
  },
  bet(m) {
    // Minor 6: each side bet once; a bonus listed in `wagers` is the bonus (both: equal).
    const kinds = m.wagers.map((w) => w.kind);
    if (new Set(kinds).size !== kinds.length) return ["wagers", "a side bet is listed once"];
    const listed = m.wagers.find((w) => w.kind === "bonus");
    if (listed) {
      if (m.bonus && m.bonus !== listed.amount) return ["bonus", "bonus and the bonus wager differ"];
      m.bonus = listed.amount;
    }
    if (m.bonus && !m.amount) return ["bonus", "a bonus bet needs a main bet"];
    return m.wagers.length && !m.amount ? ["wagers", "a side bet needs a main bet"] : null;
  },
};
