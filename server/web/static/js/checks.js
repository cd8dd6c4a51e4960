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
    return m.bonus && !m.amount ? ["bonus", "a bonus bet needs a main bet"] : null;
  },
};
