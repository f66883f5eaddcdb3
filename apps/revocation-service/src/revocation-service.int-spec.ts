import { randomUUID } from 'node:crypto';
import { INestApplication } from '@nestjs/common';
import { Redis } from 'ioredis';
import { JetStreamManager, NatsConnection, connect } from 'nats';
import {
  LicensingEvent,
  SerialStatus,
  Streams,
  Messages,
  eventSubject,
  syncReportSubject,
} from '@licensing/contracts';
import { ensureStream, namespaced, streamName } from '@licensing/shared/messaging';
import {
  BusTestClient,
  ScriptedPeer,
  testEnv,
  uniqueNamespace,
  waitFor,
  TEST_NATS_URL,
  TEST_REDIS_URL,
} from '@licensing/shared/testing';
import { startRevocationService } from './app';
import { serialCacheKey } from '@licensing/shared/serial-cache';
import { loadRevocationServiceConfig } from './config';
import { scopedReportId } from './revocation/report-ids';

/**
 * The revocation service alone, on the real Redis and NATS, with the license service played by a
 * scripted peer that records what it is asked: what reaches PostgreSQL and what the cache answers.
 */
describe('revocation service', () => {
  const namespace = uniqueNamespace();
  const orgId = randomUUID();
  const licenses = new Map<string, SerialStatus>();
  const asked: string[][] = [];
  let app: INestApplication;
  let bus: BusTestClient;
  let peer: ScriptedPeer;
  let redis: Redis;
  let nats: NatsConnection;
  let jsm: JetStreamManager;

  const status = (changes: Partial<SerialStatus> = {}): SerialStatus => {
    const entry: SerialStatus = {
      serial: `LIC-TEST-${randomUUID()}`,
      org_id: orgId,
      license_id: randomUUID(),
      product_id: randomUUID(),
      status: 'active',
      revoked_at: null,
      valid_until: null,
      max_seats: 2,
      version: Date.now(),
      ...changes,
    };
    licenses.set(entry.serial, entry);
    return entry;
  };
  const check = (serials: string[], org: string = orgId) =>
    bus.as(org).send(Messages.revocation.check, { serials });
  const statusesOf = async (serials: string[]) =>
    (await check(serials)).results.map((result: { status: string }) => result.status);
  const cached = async (serial: string, org: string = orgId) =>
    redis.get(await serialCacheKey(redis, namespace, org, serial));
  /** An entry's fields: `status|version|revoked_at|valid_until|max_seats|license_id|product_id`. */
  const compact = (entry: SerialStatus) =>
    [
      entry.status,
      entry.version,
      entry.revoked_at ?? '',
      entry.valid_until ?? '',
      entry.max_seats,
      entry.license_id,
      entry.product_id,
    ].join('|');

  /** Publishes a license event as the license service's outbox relay would. */
  /** As the license service publishes it: the serial status it built rides along, versioned by the change. */
  async function publishEvent(entry: SerialStatus, type: string, occurredAt: Date): Promise<void> {
    const event: LicensingEvent = {
      id: randomUUID(),
      schema_version: 1,
      type: type as LicensingEvent['type'],
      org_id: entry.org_id,
      occurred_at: occurredAt.toISOString(),
      data: {
        id: entry.license_id,
        serial: entry.serial,
        product_id: entry.product_id,
        status: entry.status,
        revoked_at: entry.revoked_at,
        valid_until: entry.valid_until,
        max_seats: entry.max_seats,
      },
      serial_status: { ...entry, version: occurredAt.getTime() },
    };
    await nats
      .jetstream()
      .publish(namespaced(namespace, eventSubject(entry.org_id, event.type)), JSON.stringify(event), {
        msgID: event.id,
      });
  }

  /** Every event published so far has been acknowledged by the service. */
  const eventsApplied = () =>
    waitFor(
      async () => {
        const info = await jsm.consumers.info(
          streamName(namespace, Streams.events.name),
          'revocation-service',
        );
        return info.num_pending === 0 && info.num_ack_pending === 0;
      },
      { what: 'the events consumer to catch up' },
    );

  beforeAll(async () => {
    peer = (await ScriptedPeer.connect(namespace)).on(
      Messages.license.statuses,
      ({ serials }: { serials: string[] }) => {
        asked.push(serials);
        return { response: serials.flatMap((serial) => licenses.get(serial) ?? []) };
      },
    );
    app = await startRevocationService(loadRevocationServiceConfig(testEnv(namespace)));
    bus = await BusTestClient.connect(namespace);
    redis = new Redis(TEST_REDIS_URL);
    nats = await connect({ servers: TEST_NATS_URL });
    jsm = await nats.jetstreamManager();
  });

  afterAll(async () => {
    await bus.close();
    await app.close();
    await peer.close();
    for (const name of [Streams.syncReports.name, Streams.events.name]) {
      await jsm.streams.delete(streamName(namespace, name)).catch(() => undefined);
    }
    const keys = await redis.keys(`${namespace}:*`);
    if (keys.length > 0) await redis.del(...keys);
    await Promise.all([nats.close(), redis.quit()]);
  });

  beforeEach(() => {
    asked.length = 0;
  });

  it('asks the license service once per batch, for the misses only, and answers the rest from Redis', async () => {
    const [first, second] = [status(), status({ status: 'revoked', revoked_at: new Date().toISOString() })];
    const unknown = `LIC-TEST-${randomUUID()}`;
    expect(await statusesOf([first.serial, second.serial, unknown])).toEqual([
      'active',
      'revoked',
      'not_found',
    ]);
    expect(asked).toEqual([[first.serial, second.serial, unknown]]);
    await waitFor(async () => (await cached(unknown)) === '-' && (await cached(second.serial)) !== null, {
      what: 'the cache fill',
    });

    asked.length = 0;
    const third = status();
    expect(await statusesOf([unknown, third.serial, second.serial, first.serial])).toEqual([
      'not_found',
      'active',
      'revoked',
      'active',
    ]);
    expect(asked).toEqual([[third.serial]]);
  });

  it("answers another organization's serial as not_found, also from the cache", async () => {
    const foreign = status({ org_id: randomUUID() });
    expect(await statusesOf([foreign.serial])).toEqual(['not_found']);
    // Under its own organization's key, and as unknown under the caller's.
    await waitFor(
      async () =>
        (await cached(foreign.serial, foreign.org_id)) !== null && (await cached(foreign.serial)) === '-',
      { what: 'the cache fill' },
    );
    expect(await statusesOf([foreign.serial])).toEqual(['not_found']);
    expect((await check([foreign.serial], foreign.org_id)).results[0].status).toBe('active');
  });

  it('reports an active license past its valid_until as expired, and a suspended one as suspended', async () => {
    const lapsed = status({ valid_until: new Date(Date.now() - 60_000).toISOString() });
    const suspended = status({ status: 'suspended' });
    const future = status({ valid_until: new Date(Date.now() + 60_000).toISOString() });
    const serials = [lapsed.serial, suspended.serial, future.serial];
    expect(await statusesOf(serials)).toEqual(['expired', 'suspended', 'active']);
    await waitFor(
      async () =>
        (await redis.exists(
          ...(await Promise.all(serials.map((serial) => serialCacheKey(redis, namespace, orgId, serial)))),
        )) === 3,
      {
        what: 'the cache fill',
      },
    );
    // From the cache now: the stored status stays active, the answer is derived when checking.
    asked.length = 0;
    expect(await cached(lapsed.serial)).toMatch(/^active\|/);
    expect(await statusesOf(serials)).toEqual(['expired', 'suspended', 'active']);
    expect(asked).toEqual([]);
  });

  it('never derives a status itself: an event without the serial status is set aside, the cache untouched', async () => {
    const entry = status();
    const event = {
      id: randomUUID(),
      type: 'license.created',
      org_id: entry.org_id,
      occurred_at: new Date().toISOString(),
      data: { id: entry.license_id, serial: entry.serial, status: 'active' },
    };
    await nats
      .jetstream()
      .publish(namespaced(namespace, eventSubject(entry.org_id, 'license.created')), JSON.stringify(event), {
        msgID: event.id,
      });
    await eventsApplied();
    const dead = await jsm.streams.info(streamName(namespace, Streams.deadLetters.name));
    expect(dead.state.messages).toBeGreaterThanOrEqual(1);
    await expect(cached(entry.serial)).resolves.toBeNull();
  });

  it('applies license events to the cache, and an older event never undoes a newer one', async () => {
    const entry = status();
    await publishEvent(entry, 'license.created', new Date(entry.version));
    await eventsApplied();
    expect(await cached(entry.serial)).toBe(compact(entry));
    expect(await statusesOf([entry.serial])).toEqual(['active']);
    expect(asked).toEqual([]);

    const suspendedAt = new Date(entry.version + 1_000);
    await publishEvent({ ...entry, status: 'suspended' }, 'license.suspended', suspendedAt);
    await publishEvent(entry, 'license.updated', new Date(entry.version + 500));
    await eventsApplied();
    expect(await cached(entry.serial)).toBe(
      compact({ ...entry, status: 'suspended', version: suspendedAt.getTime() }),
    );
    expect(await statusesOf([entry.serial])).toEqual(['suspended']);
    expect(asked).toEqual([]);
  });

  it('writes statuses through on revocation.cache.put, and validates them', async () => {
    const entry = status();
    expect(await statusesOf([entry.serial])).toEqual(['active']);
    const revokedAt = new Date().toISOString();
    const revoked = { ...entry, status: 'revoked', revoked_at: revokedAt, version: entry.version + 1 };
    await expect(bus.as(orgId).send(Messages.revocation.put, { statuses: [revoked] })).resolves.toEqual({
      ok: true,
    });
    expect((await check([entry.serial])).results).toEqual([
      { serial: entry.serial, status: 'revoked', revoked_at: revokedAt },
    ]);

    for (const statuses of [
      [],
      [{ ...revoked, status: 'gone' }],
      [{ ...revoked, version: 'x' }],
      [{ serial: 'x' }],
    ]) {
      await expect(bus.as(orgId).send(Messages.revocation.put, { statuses })).rejects.toMatchObject({
        code: 'validation_failed',
      });
    }
  });

  it('answers sync only after the report is in JetStream, and unavailable when it cannot be stored', async () => {
    const entry = status({ max_seats: 1 });
    const reportId = randomUUID();
    const answer = await bus
      .as(orgId)
      .send(Messages.revocation.sync, { license_serial: entry.serial, seats_in_use: 2, report_id: reportId });
    expect(answer).toMatchObject({
      status: 'ok',
      message: 'License is valid; 2 seats in use exceeds the 1 allowed',
    });
    const stored = await jsm.streams.getMessage(streamName(namespace, Streams.syncReports.name), {
      last_by_subj: namespaced(namespace, syncReportSubject(orgId)),
    });
    expect(stored.json()).toMatchObject({
      report_id: scopedReportId(orgId, reportId),
      serial: entry.serial,
      seats_in_use: 2,
    });

    await jsm.streams.delete(streamName(namespace, Streams.syncReports.name));
    try {
      await expect(
        bus.as(orgId).send(Messages.revocation.sync, { license_serial: entry.serial }),
      ).rejects.toMatchObject({ code: 'unavailable', status: 503 });
    } finally {
      await ensureStream(nats, namespace, Streams.syncReports);
    }
  });

  it('without Redis answers from the license service and refuses a write-through, but is not ready until it reaches Redis', async () => {
    // A second instance on a namespace of its own, whose Redis is a port nothing listens on.
    const offline = uniqueNamespace();
    const offlinePeer = (await ScriptedPeer.connect(offline)).on(
      Messages.license.statuses,
      ({ serials }: { serials: string[] }) => ({
        response: serials.flatMap((serial) => licenses.get(serial) ?? []),
      }),
    );
    const offlineApp = await startRevocationService(
      loadRevocationServiceConfig(testEnv(offline, { REDIS_URL: 'redis://127.0.0.1:1' })),
    );
    const offlineBus = await BusTestClient.connect(offline);
    try {
      const address = offlineApp.getHttpServer().address();
      const base = `http://127.0.0.1:${(address as { port: number }).port}`;
      expect((await fetch(`${base}/health/live`)).status).toBe(200);
      // A replica that never reached its Redis is misconfigured: unready, so a rollout stops there.
      const ready = await fetch(`${base}/health/ready`);
      expect({ status: ready.status, body: await ready.json() }).toMatchObject({
        status: 503,
        body: { message: 'redis unavailable' },
      });

      const entry = status({ status: 'revoked', revoked_at: new Date().toISOString() });
      const started = Date.now();
      const answer = await offlineBus.as(orgId).send(Messages.revocation.check, { serials: [entry.serial] });
      expect(answer.results[0].status).toBe('revoked');
      // Well under the 5 s bus timeout that a request stuck on Redis would run into.
      expect(Date.now() - started).toBeLessThan(2_500);

      await expect(
        offlineBus.as(orgId).send(Messages.revocation.put, { statuses: [entry] }),
      ).rejects.toMatchObject({ code: 'unavailable' });
    } finally {
      await offlineBus.close();
      await offlineApp.close();
      await offlinePeer.close();
      const manager = await nats.jetstreamManager();
      for (const name of [Streams.syncReports.name, Streams.events.name]) {
        await manager.streams.delete(streamName(offline, name)).catch(() => undefined);
      }
    }
  });
});
