// REFERENCE PIPELINE — not part of the product. check-revocation's ceiling in the platform's own
// format: one MGET of the serials' cache keys (the caller's organization is in the key), each
// entry read as the service reads it (expiry by valid_until), nothing else.
const cacheKeys = require('./cache-keys');
const readEntry = require('./compact-entry');

module.exports = {
  name: 'check-revocation',
  method: 'POST',
  url: '/licenses/check-revocation',
  setup: cacheKeys,
  async handle({ serials }, { redis }, keyOf) {
    const distinct = [...new Set(serials)];
    const values = await redis.mget(distinct.map(keyOf));
    const now = Date.now();
    const results = distinct.map((serial, i) => {
      const entry = readEntry(values[i]);
      if (!entry) return { serial, status: 'not_found', revoked_at: null };
      const lapsed =
        entry.status === 'active' && entry.valid_until !== null && Date.parse(entry.valid_until) <= now;
      return { serial, status: lapsed ? 'expired' : entry.status, revoked_at: entry.revoked_at };
    });
    return { results, checked_at: new Date(now).toISOString() };
  },
};
