// REFERENCE PIPELINE — not part of the product. check-revocation's ceiling: one MGET of the
// serials' cache keys, each entry read as the service reads it (own organization only, expiry by
// valid_until), nothing else.
const cacheKeys = require('./cache-keys');

module.exports = {
  name: 'check-revocation',
  method: 'POST',
  url: '/licenses/check-revocation',
  setup: cacheKeys,
  async handle({ serials }, { redis, orgId }, keyOf) {
    const distinct = [...new Set(serials)];
    const values = await redis.mget(distinct.map(keyOf));
    const now = Date.now();
    const results = distinct.map((serial, i) => {
      const value = values[i];
      const entry = value && value !== '-' ? JSON.parse(value) : undefined;
      if (!entry || entry.org_id !== orgId) return { serial, status: 'not_found', revoked_at: null };
      const lapsed =
        entry.status === 'active' && entry.valid_until !== null && Date.parse(entry.valid_until) <= now;
      return { serial, status: lapsed ? 'expired' : entry.status, revoked_at: entry.revoked_at };
    });
    return { results, checked_at: new Date(now).toISOString() };
  },
};
