// REFERENCE PIPELINE — not part of the product. check-revocation's strict ceiling: one MGET of
// entries holding only `status|revoked_at|valid_until` (minimal-entries.js), and the answer.
const minimalEntries = require('./minimal-entries');

const iso = (date) => (date === null ? '' : date.toISOString());

module.exports = {
  name: 'check-revocation-strict',
  method: 'POST',
  url: '/strict/licenses/check-revocation',
  setup: (deps) =>
    minimalEntries(
      deps,
      'revocation',
      (row) => `${row.status}|${iso(row.revoked_at)}|${iso(row.valid_until)}`,
    ),
  async handle({ serials }, { redis }, keyOf) {
    const distinct = [...new Set(serials)];
    const values = await redis.mget(distinct.map(keyOf));
    const now = Date.now();
    const results = distinct.map((serial, i) => {
      const value = values[i];
      if (value === null) return { serial, status: 'not_found', revoked_at: null };
      const [status, revokedAt, validUntil] = value.split('|');
      const lapsed = status === 'active' && validUntil !== '' && Date.parse(validUntil) <= now;
      return { serial, status: lapsed ? 'expired' : status, revoked_at: revokedAt || null };
    });
    return { results, checked_at: new Date(now).toISOString() };
  },
};
