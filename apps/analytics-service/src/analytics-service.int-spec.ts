import { randomUUID } from 'node:crypto';
import { INestApplication } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { Streams, Messages, SyncReportRecord, syncReportSubject } from '@licensing/contracts';
import { pendingSchemaChanges } from '@licensing/shared/database';
import { BusClient, DeadLetterHeaders, namespaced, streamName } from '@licensing/shared/messaging';
import {
  BusTestClient,
  ScriptedPeer,
  testEnv,
  uniqueNamespace,
  waitFor,
  TEST_NATS_URL,
} from '@licensing/shared/testing';
import { startAnalyticsService } from './app';
import { loadAnalyticsServiceConfig } from './config';
import { PartitionMaintenanceJob, PartitionsService } from './partitions/partitions.service';
import { ALL_PRODUCTS } from './reports/rollup.entity';
import { SYNC_REPORT_CONSUMER } from './reports/sync-report.consumer';

/**
 * The analytics service alone, on the real PostgreSQL and NATS: the test publishes sync reports to
 * the stream as the revocation service would, and plays the license service for license lookups.
 */
describe('analytics service', () => {
  const namespace = uniqueNamespace();
  // The reports below are dated in early 2026: retention long enough that none of them expire.
  const env = testEnv(namespace, { ANALYTICS_BATCH_SIZE: '25', ANALYTICS_RAW_RETENTION_DAYS: '3650' });
  let app: INestApplication;
  let bus: BusTestClient;
  let publisher: BusClient;
  let peer: ScriptedPeer;
  /** Licenses the scripted license service knows; any other id is a 404, as for another organization's. */
  const knownLicenses = new Set<string>();

  const report = (orgId: string, fields: Partial<SyncReportRecord> = {}): SyncReportRecord => ({
    report_id: randomUUID(),
    org_id: orgId,
    license_id: randomUUID(),
    product_id: randomUUID(),
    serial: 'LIC-EDITOR-7K3F9QX2M4W8T1ZC',
    hardware_fingerprint: null,
    app_version: null,
    features_used: [],
    seats_in_use: null,
    status: 'ok',
    received_at: new Date().toISOString(),
    ...fields,
  });

  const publish = (record: SyncReportRecord, messageId = record.report_id): Promise<void> =>
    publisher.publishDurable(syncReportSubject(record.org_id), JSON.stringify(record), messageId);

  /** Everything published so far has been delivered and acknowledged (stored, or refused for good). */
  async function drained(): Promise<void> {
    const manager = await publisher.connection().jetstreamManager();
    const stream = streamName(namespace, Streams.syncReports.name);
    await waitFor(
      async () => {
        const info = await manager.consumers.info(stream, SYNC_REPORT_CONSUMER);
        return info.num_pending === 0 && info.num_ack_pending === 0;
      },
      { what: 'the sync-report consumer to catch up' },
    );
  }

  const namespacedSubject = (subject: string): string => namespaced(namespace, subject);

  const day = { from: '2026-03-01T00:00:00.000Z', to: '2026-03-03T00:00:00.000Z' };

  beforeAll(async () => {
    peer = (await ScriptedPeer.connect(namespace)).on(Messages.license.get, ({ id }: { id: string }) =>
      knownLicenses.has(id)
        ? { response: { id } }
        : { err: { code: 'not_found', status: 404, message: `License ${id} does not exist` } },
    );
    app = await startAnalyticsService(loadAnalyticsServiceConfig(env));
    bus = await BusTestClient.connect(namespace);
    publisher = new BusClient({
      natsUrl: TEST_NATS_URL,
      namespace,
      timeoutMs: 10_000,
      name: 'test-publisher',
    });
    await publisher.connect();
  });

  afterAll(async () => {
    await app.close();
    const manager = await publisher.connection().jetstreamManager();
    for (const stream of [Streams.syncReports, Streams.deadLetters]) {
      await manager.streams.delete(streamName(namespace, stream.name)).catch(() => undefined);
    }
    await publisher.onApplicationShutdown();
    await bus.close();
    await peer.close();
  });

  it('leaves no difference between its entities and its migrations', async () => {
    expect(await pendingSchemaChanges(app.get(DataSource))).toEqual([]);
  });

  it('counts every report exactly once, however many times it reaches the stream or the consumer', async () => {
    const orgId = randomUUID();
    const org = bus.as(orgId);
    const at = (i: number) => new Date(Date.parse('2026-04-01T12:00:00.000Z') + i * 1000).toISOString();
    const twice = report(orgId, { received_at: at(0) });
    // Same Nats-Msg-Id: JetStream drops the copy. Another id: the copy reaches the consumer, and
    // only the primary key on report_id keeps it from counting twice.
    await publish(twice);
    await publish(twice);
    await publish(twice, randomUUID());
    const n = 60;
    for (let i = 1; i < n; i += 1) await publish(report(orgId, { received_at: at(i) }));

    const range = { from: '2026-04-01T00:00:00.000Z', to: '2026-04-02T00:00:00.000Z' };
    await waitFor(async () => (await org.send(Messages.analytics.usage, range)).buckets[0]?.syncs >= n, {
      what: `${n} syncs`,
    });
    await drained();
    expect(await org.send(Messages.analytics.usage, range)).toEqual({
      interval: 'day',
      buckets: [
        {
          bucket: '2026-04-01T00:00:00.000Z',
          syncs: n,
          licenses: n,
          fingerprints: 0,
          peak_seats_in_use: null,
        },
      ],
      total: 1,
    });
  });

  /** Raw rows of the report ids, and what the organization's rollups and active rows say. */
  async function stored(orgId: string, reportIds: string[]) {
    const [row] = await app
      .get(DataSource)
      .query<Array<{ raw: number; ids: number; syncs: number; licenses: number; hourly: number }>>(
        `SELECT (SELECT count(*)::int FROM analytics.sync_reports WHERE report_id = ANY($1)) AS raw,
              (SELECT count(*)::int FROM analytics.sync_report_ids WHERE report_id = ANY($1)) AS ids,
              (SELECT coalesce(sum(syncs), 0)::int FROM analytics.usage_daily WHERE org_id = $2 AND product_id = $3) AS syncs,
              (SELECT coalesce(sum(licenses), 0)::int FROM analytics.usage_daily WHERE org_id = $2 AND product_id = $3) AS licenses,
              (SELECT coalesce(sum(syncs), 0)::int FROM analytics.usage_hourly WHERE org_id = $2 AND product_id = $3) AS hourly`,
        [reportIds, orgId, ALL_PRODUCTS],
      );
    return row;
  }

  it('counts a report once when it comes back after the duplicate window, with another received_at', async () => {
    const orgId = randomUUID();
    const first = report(orgId, { received_at: '2026-04-10T23:59:00.000Z', hardware_fingerprint: 'm1' });
    // A client retrying 10 minutes later: the revocation service publishes it again with a new
    // received_at (here in the next UTC day, so in another partition), under a Nats-Msg-Id the stream
    // no longer remembers.
    const retried = { ...first, received_at: '2026-04-11T00:09:30.000Z' };
    await publish(first);
    await waitFor(async () => (await stored(orgId, [first.report_id])).raw === 1, { what: 'the first copy' });
    await publish(retried, randomUUID());
    const marker = report(orgId, { received_at: '2026-04-11T01:00:00.000Z' });
    await publish(marker);
    await waitFor(async () => (await stored(orgId, [marker.report_id])).raw === 1, { what: 'the marker' });
    await drained();

    expect(await stored(orgId, [first.report_id])).toEqual({
      raw: 1,
      ids: 1,
      syncs: 2,
      licenses: 2,
      hourly: 2,
    });
    const range = { from: '2026-04-10T00:00:00.000Z', to: '2026-04-12T00:00:00.000Z' };
    expect((await bus.as(orgId).send(Messages.analytics.usage, range)).buckets).toEqual([
      { bucket: '2026-04-10T00:00:00.000Z', syncs: 1, licenses: 1, fingerprints: 1, peak_seats_in_use: null },
      { bucket: '2026-04-11T00:00:00.000Z', syncs: 1, licenses: 1, fingerprints: 0, peak_seats_in_use: null },
    ]);
  });

  it('counts a report once when two consumers store it at the same time, whatever the order of their batches', async () => {
    const orgId = randomUUID();
    const dataSource = app.get(DataSource);
    await app.get(PartitionsService).ensure(['2026-04-20', '2026-04-21']);
    const shared = Array.from({ length: 50 }, (_, i) =>
      report(orgId, { received_at: `2026-04-20T10:${String(i).padStart(2, '0')}:00.000Z` }),
    );
    const own = (n: number) =>
      Array.from({ length: n }, () => report(orgId, { received_at: '2026-04-20T11:00:00.000Z' }));
    // The same ids in the other order, received a day later (a retry), plus one identical copy.
    const batchA = [...shared, ...own(5)];
    const batchB = [
      ...own(7),
      ...shared.map((r) => ({ ...r, received_at: '2026-04-21T09:00:00.000Z' })).reverse(),
      shared[0],
    ];
    const store = 'SELECT analytics.store_sync_reports($1::jsonb) AS inserted';

    const a = dataSource.createQueryRunner();
    const b = dataSource.createQueryRunner();
    try {
      await a.connect();
      await b.connect();
      await a.startTransaction();
      const [{ inserted: storedByA }] = await a.query(store, [JSON.stringify(batchA)]);
      const bPid = (await b.query('SELECT pg_backend_pid() AS pid'))[0].pid;
      const storingB = b.query(store, [JSON.stringify(batchB)]);
      // B waits on the ids A holds, uncommitted: the database, not timing, decides who stores them.
      await waitFor(
        async () =>
          (await dataSource.query(`SELECT wait_event_type FROM pg_stat_activity WHERE pid = $1`, [bPid]))[0]
            ?.wait_event_type === 'Lock',
        { what: 'the second batch to wait for the first' },
      );
      await a.commitTransaction();
      const [{ inserted: storedByB }] = await storingB;
      expect([storedByA, storedByB]).toEqual([55, 7]);
    } finally {
      await a.release();
      await b.release();
    }
    const ids = [...batchA, ...batchB].map((r) => r.report_id);
    expect(await stored(orgId, ids)).toEqual({ raw: 62, ids: 62, syncs: 62, licenses: 62, hourly: 62 });
  });

  describe('queries over hand-made reports', () => {
    const orgId = randomUUID();
    const productA = randomUUID();
    const productB = randomUUID();
    const l1 = randomUUID();
    const l2 = randomUUID();
    const l3 = randomUUID();
    const org = () => bus.as(orgId);

    beforeAll(async () => {
      const reports = [
        report(orgId, {
          license_id: l1,
          product_id: productA,
          hardware_fingerprint: 'fp-a',
          app_version: '1.0',
          features_used: ['pro', 'export'],
          seats_in_use: 2,
          received_at: '2026-03-01T10:05:00.000Z',
        }),
        report(orgId, {
          license_id: l1,
          product_id: productA,
          hardware_fingerprint: 'fp-b',
          app_version: '1.1',
          features_used: ['pro'],
          seats_in_use: 3,
          received_at: '2026-03-01T10:40:00.000Z',
        }),
        report(orgId, {
          license_id: l2,
          product_id: productA,
          hardware_fingerprint: 'fp-a',
          seats_in_use: 1,
          received_at: '2026-03-01T10:59:59.999Z',
        }),
        report(orgId, {
          license_id: l2,
          product_id: productA,
          app_version: '1.1',
          features_used: ['pro', 'pro'],
          received_at: '2026-03-01T11:00:00.000Z',
        }),
        report(orgId, {
          license_id: l3,
          product_id: productB,
          hardware_fingerprint: 'fp-c',
          app_version: '2.10.0',
          features_used: ['sso'],
          seats_in_use: 5,
          received_at: '2026-03-02T00:00:00.000Z',
        }),
        report(orgId, {
          license_id: l3,
          product_id: productB,
          app_version: '2.9.1',
          received_at: '2026-03-02T08:00:00.000Z',
        }),
        // Just outside the ranges queried below: `from` is inclusive and `to` exclusive.
        report(orgId, { license_id: l1, product_id: productA, received_at: '2026-02-28T23:59:59.999Z' }),
        report(orgId, { license_id: l1, product_id: productA, received_at: '2026-03-03T00:00:00.000Z' }),
      ];
      for (const r of reports) await publish(r);
      await waitFor(async () => (await org().send(Messages.analytics.licenseUsage, { id: l1 })).syncs === 4, {
        what: 'the hand-made reports',
      });
      await drained();
    });

    it('buckets by UTC hour with syncs, distinct licenses and fingerprints, and peak seats, oldest first', async () => {
      const usage = await org().send(Messages.analytics.usage, {
        interval: 'hour',
        from: '2026-03-01T00:00:00.000Z',
        to: '2026-03-02T00:00:00.000Z',
      });
      expect(usage).toEqual({
        interval: 'hour',
        buckets: [
          {
            bucket: '2026-03-01T10:00:00.000Z',
            syncs: 3,
            licenses: 2,
            fingerprints: 2,
            peak_seats_in_use: 3,
          },
          {
            bucket: '2026-03-01T11:00:00.000Z',
            syncs: 1,
            licenses: 1,
            fingerprints: 0,
            peak_seats_in_use: null,
          },
        ],
        total: 2,
      });
    });

    it('buckets by UTC day, filters by product, and pages over buckets', async () => {
      expect(await org().send(Messages.analytics.usage, { ...day, interval: 'day' })).toEqual({
        interval: 'day',
        buckets: [
          {
            bucket: '2026-03-01T00:00:00.000Z',
            syncs: 4,
            licenses: 2,
            fingerprints: 2,
            peak_seats_in_use: 3,
          },
          {
            bucket: '2026-03-02T00:00:00.000Z',
            syncs: 2,
            licenses: 1,
            fingerprints: 1,
            peak_seats_in_use: 5,
          },
        ],
        total: 2,
      });
      expect((await org().send(Messages.analytics.usage, { ...day, product_id: productB })).buckets).toEqual([
        { bucket: '2026-03-02T00:00:00.000Z', syncs: 2, licenses: 1, fingerprints: 1, peak_seats_in_use: 5 },
      ]);
      expect((await org().send(Messages.analytics.usage, { ...day, product_id: randomUUID() })).total).toBe(
        0,
      );
      const second = await org().send(Messages.analytics.usage, { ...day, per_page: 1, page: 2 });
      expect(second.buckets.map((b: { bucket: string }) => b.bucket)).toEqual(['2026-03-02T00:00:00.000Z']);
      expect(second.total).toBe(2);
      expect(await org().send(Messages.analytics.usage, { ...day, per_page: 1, page: 3 })).toEqual({
        interval: 'day',
        buckets: [],
        total: 2,
      });
    });

    it('counts the reports that used each feature, most used first', async () => {
      expect(await org().send(Messages.analytics.features, day)).toEqual({
        features: [
          { feature: 'pro', count: 3 },
          { feature: 'export', count: 1 },
          { feature: 'sso', count: 1 },
        ],
        total: 3,
      });
      expect(await org().send(Messages.analytics.features, { ...day, per_page: 1, page: 2 })).toEqual({
        features: [{ feature: 'export', count: 1 }],
        total: 3,
      });
    });

    it('counts reports per app version, a missing version as null', async () => {
      expect(await org().send(Messages.analytics.versions, day)).toEqual({
        versions: [
          { app_version: '1.1', count: 2 },
          { app_version: '1.0', count: 1 },
          { app_version: '2.10.0', count: 1 },
          { app_version: '2.9.1', count: 1 },
          { app_version: null, count: 1 },
        ],
        total: 5,
      });
      expect(await org().send(Messages.analytics.versions, { ...day, product_id: productB })).toEqual({
        versions: [
          { app_version: '2.10.0', count: 1 },
          { app_version: '2.9.1', count: 1 },
        ],
        total: 2,
      });
    });

    it("summarises one license's usage, its fingerprints most recent first", async () => {
      expect(await org().send(Messages.analytics.licenseUsage, { id: l1 })).toEqual({
        license_id: l1,
        last_sync_at: '2026-03-03T00:00:00.000Z',
        syncs: 4,
        peak_seats_in_use: 3,
        versions: ['1.0', '1.1'],
        fingerprints: [
          { fingerprint: 'fp-b', last_sync_at: '2026-03-01T10:40:00.000Z' },
          { fingerprint: 'fp-a', last_sync_at: '2026-03-01T10:05:00.000Z' },
        ],
        total: 2,
        // By UTC day: the last millisecond of a day stays in it; a report without a fingerprint
        // counts as a sync, not as a machine.
        daily: [
          { day: '2026-02-28', syncs: 1, machines: 0 },
          { day: '2026-03-01', syncs: 2, machines: 2 },
          { day: '2026-03-03', syncs: 1, machines: 0 },
        ],
        // Metered uses come from usage events, not from sync reports: none here.
        increments: 0,
        uses_counted: 0,
        last_increment_at: null,
      });
      expect(
        await org().send(Messages.analytics.licenseUsage, { id: l1, per_page: 1, page: 2 }),
      ).toMatchObject({
        syncs: 4,
        fingerprints: [{ fingerprint: 'fp-a', last_sync_at: '2026-03-01T10:05:00.000Z' }],
        total: 2,
      });
      expect((await org().send(Messages.analytics.licenseUsage, { id: l3 })).versions).toEqual([
        '2.9.1',
        '2.10.0',
      ]);
    });

    it('answers empty usage for an existing license that never synced, and 404 for a license it cannot find', async () => {
      const unused = randomUUID();
      knownLicenses.add(unused);
      expect(await org().send(Messages.analytics.licenseUsage, { id: unused })).toEqual({
        license_id: unused,
        last_sync_at: null,
        syncs: 0,
        peak_seats_in_use: null,
        versions: [],
        fingerprints: [],
        total: 0,
        daily: [],
        increments: 0,
        uses_counted: 0,
        last_increment_at: null,
      });
      await expect(org().send(Messages.analytics.licenseUsage, { id: randomUUID() })).rejects.toMatchObject({
        code: 'not_found',
        status: 404,
      });
    });

    it('answers ranges that start or end inside an hour or a day as the raw reports do', async () => {
      // What the service answered before rollups: every bucket aggregated from raw reports.
      const raw = async (interval: 'hour' | 'day', from: string, to: string, productId?: string) => {
        const rows = await app.get(DataSource).query<Array<Record<string, unknown> & { bucket: Date }>>(
          `SELECT date_trunc($5, received_at, 'UTC') AS bucket, count(*)::int AS syncs,
                  count(DISTINCT license_id)::int AS licenses,
                  count(DISTINCT hardware_fingerprint)::int AS fingerprints, max(seats_in_use) AS peak_seats_in_use
             FROM analytics.sync_reports
            WHERE org_id = $1 AND received_at >= $2 AND received_at < $3 AND ($4::uuid IS NULL OR product_id = $4)
            GROUP BY 1 ORDER BY 1`,
          [orgId, from, to, productId ?? null, interval],
        );
        return rows.map((row) => ({ ...row, bucket: row.bucket.toISOString() }));
      };
      const ranges = [
        ['2026-03-01T10:30:00.000Z', '2026-03-02T00:30:00.000Z'],
        ['2026-03-01T10:06:00.000Z', '2026-03-01T10:59:59.999Z'],
        ['2026-03-01T10:40:00.000Z', '2026-03-02T08:00:00.001Z'],
        ['2026-02-28T23:00:00.000Z', '2026-03-03T00:00:00.001Z'],
        ['2026-03-01T11:00:00.000Z', '2026-03-02T00:00:00.000Z'],
        // Cut only by `to`, with reports of the day after it (counted) and without (the day's counters).
        ['2026-03-01T00:00:00.000Z', '2026-03-01T10:50:00.000Z'],
        ['2026-03-01T00:00:00.000Z', '2026-03-02T09:00:00.000Z'],
      ];
      for (const [from, to] of ranges) {
        for (const interval of ['hour', 'day'] as const) {
          for (const product_id of [undefined, productA, productB]) {
            const usage = await org().send(Messages.analytics.usage, { from, to, interval, product_id });
            expect([from, to, interval, product_id, usage.buckets]).toEqual([
              from,
              to,
              interval,
              product_id,
              await raw(interval, from, to, product_id),
            ]);
          }
        }
      }
      expect(
        await org().send(Messages.analytics.features, {
          from: '2026-03-01T10:30:00.000Z',
          to: '2026-03-02T00:00:00.001Z',
        }),
      ).toEqual({
        features: [
          { feature: 'pro', count: 2 },
          { feature: 'sso', count: 1 },
        ],
        total: 2,
      });
      expect(
        await org().send(Messages.analytics.versions, {
          from: '2026-03-01T10:30:00.000Z',
          to: '2026-03-01T11:00:00.001Z',
          product_id: productA,
        }),
      ).toEqual({
        versions: [
          { app_version: '1.1', count: 2 },
          { app_version: null, count: 1 },
        ],
        total: 2,
      });
    });

    it("never shows one organization's reports to another", async () => {
      const stranger = bus.as(randomUUID());
      expect(await stranger.send(Messages.analytics.usage, day)).toEqual({
        interval: 'day',
        buckets: [],
        total: 0,
      });
      expect(await stranger.send(Messages.analytics.features, day)).toEqual({ features: [], total: 0 });
      expect(await stranger.send(Messages.analytics.versions, day)).toEqual({ versions: [], total: 0 });
      await expect(stranger.send(Messages.analytics.licenseUsage, { id: l1 })).rejects.toMatchObject({
        code: 'not_found',
      });
    });
  });

  it('counts distinct active licenses and machines over 24 hours, 7 and 30 days, per product or all', async () => {
    const orgId = randomUUID();
    const [p1, p2, l1, l2, l3] = [randomUUID(), randomUUID(), randomUUID(), randomUUID(), randomUUID()];
    const ago = (ms: number) => new Date(Date.now() - ms).toISOString();
    const reports = [
      report(orgId, { license_id: l1, product_id: p1, hardware_fingerprint: 'm1', received_at: ago(0) }),
      report(orgId, { license_id: l1, product_id: p1, hardware_fingerprint: 'm2', received_at: ago(1000) }),
      // The same machine under another product's license: one machine for the organization.
      report(orgId, { license_id: l2, product_id: p2, hardware_fingerprint: 'm1', received_at: ago(2000) }),
      report(orgId, {
        license_id: l3,
        product_id: p2,
        hardware_fingerprint: 'm3',
        received_at: ago(10 * 86_400_000),
      }),
    ];
    for (const r of reports) await publish(r);
    const org = bus.as(orgId);
    await waitFor(async () => (await org.send(Messages.analytics.active, { window: '30d' })).licenses === 3, {
      what: 'the active reports',
    });
    // Late: an older report of l1 and m1, stored after the recent ones, leaves them seen recently.
    const late = report(orgId, {
      license_id: l1,
      product_id: p1,
      hardware_fingerprint: 'm1',
      received_at: ago(8 * 86_400_000),
    });
    await publish(late);
    await waitFor(async () => (await stored(orgId, [late.report_id])).raw === 1, { what: 'the late report' });
    expect(await org.send(Messages.analytics.active, {})).toMatchObject({
      window: '24h',
      licenses: 2,
      machines: 2,
    });
    expect(await org.send(Messages.analytics.active, { window: '7d', product_id: p2 })).toMatchObject({
      licenses: 1,
      machines: 1,
    });
    const month = await org.send(Messages.analytics.active, { window: '30d' });
    expect(month).toMatchObject({ window: '30d', licenses: 3, machines: 3 });
    expect(month.from).toMatch(/T00:00:00\.000Z$/);
    // The same counts as distinct licenses and machines over the hours of the window's active rows.
    for (const window of ['24h', '7d', '30d'] as const) {
      for (const product_id of [undefined, p1, p2]) {
        const answer = await org.send(Messages.analytics.active, { window, product_id });
        const hoursSince = (table: string) =>
          `FROM analytics.${table} CROSS JOIN generate_series(0, 23) h
            WHERE hours & (1 << h) <> 0 AND (day::timestamp + h * interval '1 hour') AT TIME ZONE 'UTC' >= $3`;
        const [counted] = await app.get(DataSource).query(
          `SELECT (SELECT count(DISTINCT license_id)::int ${hoursSince('active_licenses_daily')}
                      AND org_id = $1 AND ($2::uuid IS NULL OR product_id = $2)) AS licenses,
                  (SELECT count(DISTINCT fingerprint)::int ${hoursSince('active_fingerprints_daily')}
                      AND org_id = $1 AND product_id = coalesce($2::uuid, $4::uuid)) AS machines`,
          [orgId, product_id ?? null, answer.from, ALL_PRODUCTS],
        );
        expect({ window, product_id, licenses: answer.licenses, machines: answer.machines }).toEqual({
          window,
          product_id,
          ...counted,
        });
      }
    }
    await expect(org.send(Messages.analytics.active, { window: '1y' })).rejects.toMatchObject({
      code: 'validation_failed',
      errors: [expect.objectContaining({ field: 'window' })],
    });
  });

  it('drops whole partitions once they are past retention, never rows, with their report ids and last-seen rows', async () => {
    await app.get(PartitionsService).ensure(['2016-01-15']);
    const old = report(randomUUID(), {
      hardware_fingerprint: 'm-old',
      received_at: '2016-01-15T12:00:00.000Z',
    });
    const dataSource = app.get(DataSource);
    await dataSource.query('SELECT analytics.store_sync_reports($1::jsonb)', [JSON.stringify([old])]);
    // An id a batch claimed in January 2016 (this one, arriving late, was claimed this month).
    const claimedThen = randomUUID();
    await dataSource.query(`INSERT INTO analytics.sync_report_ids VALUES ($1, '2016-01-01')`, [claimedThen]);
    const leftOf = async () =>
      (
        await dataSource.query(
          `SELECT (SELECT count(*)::int FROM analytics.sync_report_ids WHERE report_id = $1) AS ids_now,
                  (SELECT count(*)::int FROM analytics.sync_report_ids WHERE report_id = $3) AS ids_then,
                  (SELECT count(*)::int FROM analytics.license_last_seen WHERE org_id = $2) AS licenses,
                  (SELECT count(*)::int FROM analytics.fingerprint_last_seen WHERE org_id = $2) AS machines`,
          [old.report_id, old.org_id, claimedThen],
        )
      )[0];
    expect(await leftOf()).toEqual({ ids_now: 1, ids_then: 1, licenses: 1, machines: 2 });
    const partitions = () =>
      dataSource
        .query<Array<{ relname: string }>>(
          "SELECT relname FROM pg_class WHERE relname LIKE '%\\_p201601%' ORDER BY relname",
        )
        .then((rows) => rows.map((row) => row.relname));
    expect(await partitions()).toEqual(
      expect.arrayContaining([
        'sync_reports_p20160115',
        'active_licenses_daily_p20160115',
        'sync_report_ids_p201601',
      ]),
    );
    await app.get(PartitionMaintenanceJob).run();
    expect(await partitions()).toEqual([]);
    // This month's ids stay as long as any raw report of this month can.
    expect(await leftOf()).toEqual({ ids_now: 1, ids_then: 0, licenses: 0, machines: 0 });
  });

  it('vacuums the active rows of a day once it has ended, so a cut range counts them from the index alone', async () => {
    const dataSource = app.get(DataSource);
    const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
    const today = new Date().toISOString().slice(0, 10).replace(/-/g, '');
    await app.get(PartitionsService).ensure([yesterday]);
    await dataSource.query('SELECT analytics.store_sync_reports($1::jsonb)', [
      JSON.stringify([
        report(randomUUID(), { received_at: `${yesterday}T12:00:00.000Z`, hardware_fingerprint: 'm' }),
      ]),
    ]);
    const partition = `active_licenses_daily_p${yesterday.replace(/-/g, '')}`;
    const sealed = await app.get(PartitionsService).sealEndedDays();
    expect(sealed).toContain(partition);
    expect(sealed).toContain(`active_fingerprints_daily_p${yesterday.replace(/-/g, '')}`);
    expect(sealed.filter((name) => name.endsWith(today))).toEqual([]);
    const [{ pages, visible }] = await dataSource.query(
      `SELECT relpages AS pages, relallvisible AS visible FROM pg_class WHERE relname = $1`,
      [partition],
    );
    expect(pages).toBeGreaterThan(0);
    expect(visible).toBe(pages);
  });

  it('refuses a report_id that an earlier month still holds', async () => {
    const orgId = randomUUID();
    const dataSource = app.get(DataSource);
    const first = report(orgId, { received_at: new Date().toISOString() });
    const store = (reports: unknown[]) =>
      dataSource.query<Array<{ inserted: number }>>(
        'SELECT analytics.store_sync_reports($1::jsonb) AS inserted',
        [JSON.stringify(reports)],
      );
    expect(await store([first])).toEqual([{ inserted: 1 }]);
    // As if it had been claimed last month: the copy that comes back now is not counted again.
    const lastMonth = new Date(Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth() - 1, 15));
    await app.get(PartitionsService).ensure([lastMonth.toISOString().slice(0, 10)]);
    await dataSource.query(
      `UPDATE analytics.sync_report_ids SET claimed_month = date_trunc('month', $2::date) WHERE report_id = $1`,
      [first.report_id, lastMonth.toISOString().slice(0, 10)],
    );
    expect(await store([{ ...first, received_at: new Date().toISOString() }])).toEqual([{ inserted: 0 }]);
    expect(await stored(orgId, [first.report_id])).toMatchObject({ raw: 1, ids: 1, syncs: 1 });
  });

  it("holds a month's first batch until every batch that locked the month before has committed", async () => {
    const dataSource = app.get(DataSource);
    const thisMonth = `${new Date().toISOString().slice(0, 7)}-01`;
    const lastMonthKey = Number(
      new Date(Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth() - 1, 1))
        .toISOString()
        .slice(0, 7)
        .replace('-', ''),
    );
    const before = dataSource.createQueryRunner();
    try {
      await before.connect();
      await before.startTransaction();
      // What a batch of last month holds while it runs.
      await before.query(`SELECT pg_advisory_xact_lock_shared(hashtext('analytics:report-ids'), $1)`, [
        lastMonthKey,
      ]);
      await dataSource.query('DELETE FROM analytics.report_id_months WHERE month = $1', [thisMonth]);
      const orgId = randomUUID();
      let done = false;
      const storing = dataSource
        .query('SELECT analytics.store_sync_reports($1::jsonb) AS inserted', [
          JSON.stringify([report(orgId, { received_at: new Date().toISOString() })]),
        ])
        .finally(() => (done = true));
      await waitFor(
        async () =>
          (
            await dataSource.query(
              `SELECT count(*)::int AS n FROM pg_stat_activity
                WHERE wait_event_type = 'Lock' AND wait_event = 'advisory' AND query LIKE '%store_sync_reports%'`,
            )
          )[0].n > 0,
        { what: 'the batch to wait for last month' },
      );
      expect(done).toBe(false);
      await before.commitTransaction();
      expect(await storing).toEqual([{ inserted: 1 }]);
      expect(
        await dataSource.query('SELECT month::text FROM analytics.report_id_months WHERE month = $1', [
          thisMonth,
        ]),
      ).toEqual([{ month: thisMonth }]);
    } finally {
      if (before.isTransactionActive) await before.rollbackTransaction();
      await before.release();
    }
  });

  it('refuses ranges that end before they start, are too long, or have an unknown interval', async () => {
    const org = bus.as(randomUUID());
    await expect(
      org.send(Messages.analytics.usage, { from: '2026-03-02T00:00:00Z', to: '2026-03-01T00:00:00Z' }),
    ).rejects.toMatchObject({
      code: 'validation_failed',
      status: 400,
      errors: [expect.objectContaining({ field: 'to' })],
    });
    await expect(
      org.send(Messages.analytics.features, { from: day.from, to: day.from }),
    ).rejects.toMatchObject({
      code: 'validation_failed',
      errors: [expect.objectContaining({ field: 'to' })],
    });
    await expect(org.send(Messages.analytics.usage, { ...day, interval: 'week' })).rejects.toMatchObject({
      code: 'validation_failed',
      errors: [expect.objectContaining({ field: 'interval' })],
    });
    await expect(
      org.send(Messages.analytics.usage, {
        interval: 'hour',
        from: '2026-01-01T00:00:00Z',
        to: '2026-02-15T00:00:00Z',
      }),
    ).rejects.toMatchObject({
      code: 'validation_failed',
      errors: [expect.objectContaining({ field: 'to' })],
    });
    await expect(
      org.send(Messages.analytics.versions, { from: '2025-01-01T00:00:00Z', to: '2026-02-15T00:00:00Z' }),
    ).rejects.toMatchObject({
      code: 'validation_failed',
      errors: [expect.objectContaining({ field: 'to' })],
    });
    await expect(
      org.send(Messages.analytics.usage, { ...day, product_id: 'nope', extra: 1 }),
    ).rejects.toMatchObject({
      code: 'validation_failed',
      errors: expect.arrayContaining([
        expect.objectContaining({ field: 'product_id' }),
        expect.objectContaining({ field: 'extra' }),
      ]),
    });
    await expect(org.send(Messages.analytics.licenseUsage, { id: 'nope' })).rejects.toMatchObject({
      code: 'validation_failed',
      errors: [expect.objectContaining({ field: 'id' })],
    });
  });

  /** The dead letters set aside so far: reason, origin subject, and the original bytes. */
  async function deadLetters(): Promise<Array<{ reason: string; subject: string; data: string }>> {
    const manager = await publisher.connection().jetstreamManager();
    const stream = streamName(namespace, Streams.deadLetters.name);
    const info = await manager.streams.info(stream).catch(() => undefined);
    const letters = [];
    if (!info || info.state.messages === 0) return [];
    for (let seq = info.state.first_seq; seq <= info.state.last_seq; seq += 1) {
      const message = await manager.streams.getMessage(stream, { seq });
      letters.push({
        reason: message.header.get(DeadLetterHeaders.reason),
        subject: message.header.get(DeadLetterHeaders.subject),
        data: new TextDecoder().decode(message.data),
      });
    }
    return letters;
  }

  it('sets a malformed report aside in the dead-letter stream, without holding up the ones behind it', async () => {
    const orgId = randomUUID();
    const subject = syncReportSubject(orgId);
    const before = (await deadLetters()).length;
    await publisher.publishDurable(subject, 'not json', randomUUID());
    await publisher.publishDurable(
      subject,
      JSON.stringify({ ...report(orgId), license_id: 'nope' }),
      randomUUID(),
    );
    // Filed under another organization's subject.
    await publisher.publishDurable(subject, JSON.stringify(report(randomUUID())), randomUUID());
    await publish(report(orgId, { received_at: '2026-05-01T00:00:00.000Z' }));
    const range = { from: '2026-05-01T00:00:00.000Z', to: '2026-05-02T00:00:00.000Z' };
    await waitFor(async () => (await bus.as(orgId).send(Messages.analytics.usage, range)).total === 1, {
      what: 'the well-formed report',
    });
    await drained();
    expect((await bus.as(orgId).send(Messages.analytics.usage, range)).buckets[0].syncs).toBe(1);

    // In any order: the two pullers of the consumer may each take some of them.
    const letters = (await deadLetters()).slice(before);
    expect(letters).toHaveLength(3);
    expect(letters.map((l) => l.reason)).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^malformed: not JSON/),
        expect.stringMatching(/license_id must be a UUID/),
        expect.stringMatching(/not the organization of the subject/),
      ]),
    );
    expect(letters.find((l) => l.data === 'not json')).toMatchObject({
      subject: namespacedSubject(subject),
      reason: expect.stringMatching(/^malformed: not JSON/),
    });
  });

  it('sets aside a report PostgreSQL refuses for its content and stores the rest of its batch', async () => {
    const orgId = randomUUID();
    const range = { from: '2026-07-01T00:00:00.000Z', to: '2026-07-02T00:00:00.000Z' };
    const at = (i: number) => new Date(Date.parse(range.from) + i * 60_000).toISOString();
    const before = (await deadLetters()).length;
    // Passes the decoder (an ISO 8601 date) and PostgreSQL cannot store it: it has no year 0.
    const poisoned = report(orgId, { received_at: '0000-01-01T00:00:00.000Z' });
    await publish(report(orgId, { received_at: at(0) }));
    await publish(poisoned);
    await publish(report(orgId, { received_at: at(1) }));
    await waitFor(
      async () => (await bus.as(orgId).send(Messages.analytics.usage, range)).buckets[0]?.syncs === 2,
      { what: 'the two good reports of the batch' },
    );
    await drained();
    const letters = (await deadLetters()).slice(before);
    expect(letters).toHaveLength(1);
    expect(letters[0].reason).toMatch(/^refused by PostgreSQL/);
    expect(JSON.parse(letters[0].data).report_id).toBe(poisoned.report_id);
  });

  it("keeps counting another organization's reports within seconds while one floods it with poison", async () => {
    const flooder = randomUUID();
    const honest = randomUUID();
    const range = { from: '2026-08-01T00:00:00.000Z', to: '2026-08-02T00:00:00.000Z' };
    const publishing: Array<Promise<void>> = [];
    for (let i = 0; i < 2_000; i += 1) {
      publishing.push(publish(report(flooder, { hardware_fingerprint: '\ud800', received_at: range.from })));
    }
    await Promise.all(publishing);
    const sentAt = Date.now();
    for (let i = 0; i < 20; i += 1) await publish(report(honest, { received_at: range.from }));
    await waitFor(
      async () => (await bus.as(honest).send(Messages.analytics.usage, range)).buckets[0]?.syncs === 20,
      { what: "the honest organization's 20 reports", timeoutMs: 15_000 },
    );
    // Seconds, not minutes: a poisoned report redelivered with backoff would hold the others for
    // minutes. 10 s leaves room for a loaded machine.
    expect(Date.now() - sentAt).toBeLessThan(10_000);
    await drained();
  }, 60_000);

  it('keeps reports published while it is down and counts them once it is back', async () => {
    const orgId = randomUUID();
    await app.close();
    const range = { from: '2026-06-01T00:00:00.000Z', to: '2026-06-02T00:00:00.000Z' };
    for (let i = 0; i < 10; i += 1) {
      await publish(
        report(orgId, { received_at: new Date(Date.parse(range.from) + i * 60_000).toISOString() }),
      );
    }
    app = await startAnalyticsService(loadAnalyticsServiceConfig(env));
    await waitFor(
      async () => (await bus.as(orgId).send(Messages.analytics.usage, range)).buckets[0]?.syncs === 10,
      {
        what: '10 syncs after the restart',
      },
    );
  });
});
