// REFERENCE PIPELINE — not part of the product. sync's ceiling: one Redis GET of the serial's
// cache entry, then one JetStream publish of the report, awaited (stored), to a scratch stream of
// the reference's own (never the platform's SYNC_REPORTS: analytics must not count these).
const { randomUUID } = require('node:crypto');
const cacheKeys = require('./cache-keys');
const readEntry = require('./compact-entry');

module.exports = {
  name: 'sync',
  method: 'POST',
  url: '/licenses/sync',
  async setup(deps) {
    const jsm = await deps.nc.jetstreamManager();
    const stream = `${deps.prefix}_SYNC`;
    await jsm.streams.delete(stream).catch(() => false);
    await jsm.streams.add({
      name: stream,
      subjects: [`${deps.prefix}.sync-reports.>`],
      storage: 'file',
      // Same de-duplication window as the platform's streams (10 minutes), in nanoseconds.
      duplicate_window: 600 * 1e9,
      max_msgs: 1_000_000,
    });
    return { keyOf: await cacheKeys(deps), js: deps.nc.jetstream() };
  },
  async handle(report, { redis, orgId, prefix }, { keyOf, js }) {
    const entry = readEntry(await redis.get(keyOf(report.license_serial)));
    const serverTime = new Date().toISOString();
    if (!entry) return { status: 'not_found', server_time: serverTime };
    const record = {
      report_id: report.report_id ?? randomUUID(),
      org_id: orgId,
      license_id: entry.license_id,
      product_id: entry.product_id,
      serial: report.license_serial,
      hardware_fingerprint: report.hardware_fingerprint ?? null,
      app_version: report.app_version ?? null,
      features_used: report.features_used ?? [],
      seats_in_use: report.seats_in_use ?? null,
      status: entry.status === 'active' ? 'ok' : entry.status,
      received_at: serverTime,
    };
    await js.publish(`${prefix}.sync-reports.${orgId}`, JSON.stringify(record), { msgID: record.report_id });
    return { status: record.status, message: 'License is valid', server_time: serverTime };
  },
};
