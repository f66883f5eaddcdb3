// REFERENCE PIPELINE — not part of the product. sync's strict ceiling: one GET of an entry holding
// only `status|valid_until|max_seats|license_id|product_id` (minimal-entries.js: what the answer
// and the report need), then the JetStream publish of sync.js, to the same scratch stream.
const { randomUUID } = require('node:crypto');
const minimalEntries = require('./minimal-entries');
const sync = require('./sync');

const iso = (date) => (date === null ? '' : date.toISOString());

module.exports = {
  name: 'sync-strict',
  method: 'POST',
  url: '/strict/licenses/sync',
  async setup(deps) {
    const [{ js }, keyOf] = await Promise.all([
      sync.setup(deps),
      minimalEntries(
        deps,
        'sync',
        (row) => `${row.status}|${iso(row.valid_until)}|${row.max_seats}|${row.id}|${row.product_id}`,
      ),
    ]);
    return { js, keyOf };
  },
  async handle(report, { redis, orgId, prefix }, { keyOf, js }) {
    const value = await redis.get(keyOf(report.license_serial));
    const serverTime = new Date().toISOString();
    if (value === null) return { status: 'not_found', server_time: serverTime };
    const [status, validUntil, maxSeats, licenseId, productId] = value.split('|');
    const lapsed = status === 'active' && validUntil !== '' && Date.parse(validUntil) <= Date.now();
    const effective = lapsed ? 'expired' : status;
    const overused = typeof report.seats_in_use === 'number' && report.seats_in_use > Number(maxSeats);
    const record = {
      report_id: report.report_id ?? randomUUID(),
      org_id: orgId,
      license_id: licenseId,
      product_id: productId,
      serial: report.license_serial,
      hardware_fingerprint: report.hardware_fingerprint ?? null,
      app_version: report.app_version ?? null,
      features_used: report.features_used ?? [],
      seats_in_use: report.seats_in_use ?? null,
      status: effective === 'active' ? 'ok' : effective,
      received_at: serverTime,
    };
    await js.publish(`${prefix}.sync-reports.${orgId}`, JSON.stringify(record), { msgID: record.report_id });
    const message = overused ? 'License is valid; seats in use exceed the limit' : 'License is valid';
    return { status: record.status, message, server_time: serverTime };
  },
};
