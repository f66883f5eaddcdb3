import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { INestApplication } from '@nestjs/common';
import { connect } from 'nats';
import { Streams } from '@licensing/contracts';
import { loadLicenseServiceConfig, startLicenseService } from '@licensing/app/license-service';
import { streamName } from '@licensing/shared/messaging';
import { TEST_NATS_URL, sql, waitFor } from '@licensing/shared/testing';
import { createLicense, decodeBlob, productWithKeyPair } from './support/fixtures';
import { TestOrganization, TestStack, startStack } from './support/stack';

const run = promisify(execFile);

/**
 * The license service's database restored from a backup taken before a revocation, a suspension,
 * an edit and a create. The license events the stream still holds are replayed at boot: the
 * revoked license stays revoked (with its first revoked_at), the suspended one suspended, the
 * edit is back and signed again; the license created after the backup stays unknown, never
 * active. Checked with the revocation cache emptied, so every answer comes from PostgreSQL. The
 * same replay runs every EVENT_REPLAY_MS while the service serves: a revocation lost by a
 * failover comes back without a restart.
 */
describe('a database restored from a backup', () => {
  let stack: TestStack;
  let org: TestOrganization;
  let dir: string;
  let extra: INestApplication | undefined;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'licensing-restore-'));
    stack = await startStack({ env: { EVENT_REPLAY_MS: '100' } });
    org = await stack.newOrganization();
  }, 60_000);
  afterAll(async () => {
    await extra?.close();
    await stack.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const databaseUrl = () => stack.env.DATABASE_URL!;
  const check = async (serials: string[]) =>
    (await org.api.post('/api/v1/licenses/check-revocation', { serials })).body.results;
  const outboxDrained = () =>
    waitFor(async () => (await sql('SELECT 1 FROM license.outbox_events')).length === 0, {
      what: 'every license event to be published',
    });

  it('replays the license events the stream holds: nothing revoked comes back to life', async () => {
    const { product } = await productWithKeyPair(org.api);
    const [revoked, suspended, edited] = await Promise.all(
      [1, 2, 3].map(() => createLicense(org.api, { product_id: product.id, max_seats: 2 })),
    );
    await outboxDrained();
    // The checkpoint catches up with the stream (it is written every 100 ms here).
    await new Promise((resolve) => setTimeout(resolve, 500));

    const backup = join(dir, 'license.dump');
    await run('pg_dump', ['--format=custom', '--schema=license', `--file=${backup}`, databaseUrl()]);

    expect((await org.api.delete(`/api/v1/licenses/${revoked.id}`)).status).toBe(200);
    expect((await org.api.patch(`/api/v1/licenses/${suspended.id}`, { status: 'suspended' })).status).toBe(
      200,
    );
    expect(
      (await org.api.patch(`/api/v1/licenses/${edited.id}`, { features: ['pro'], max_seats: 5 })).status,
    ).toBe(200);
    const createdAfter = await createLicense(org.api, { product_id: product.id });
    const before = {
      revoked: (await org.api.get(`/api/v1/licenses/${revoked.id}`)).body,
      suspended: (await org.api.get(`/api/v1/licenses/${suspended.id}`)).body,
      edited: (await org.api.get(`/api/v1/licenses/${edited.id}`)).body,
    };
    const list = (await org.api.get(`/api/v1/products/${product.id}/revocation-list`)).text;
    await outboxDrained();

    // The restore: the service stopped, its schema replaced by the backup, the cache emptied.
    await stack.stopService('license-service');
    await sql('DROP SCHEMA license CASCADE');
    await run('pg_restore', ['--dbname', databaseUrl(), backup]);
    const serials = [revoked.serial, suspended.serial, edited.serial, createdAfter.serial];
    await stack.forgetCachedSerials(org.id, ...serials);
    // What the backup alone says: all three active, the last one unknown.
    expect((await sql('SELECT status FROM license.licenses WHERE id = $1', [revoked.id]))[0].status).toBe(
      'active',
    );

    await stack.startService('license-service');

    expect(await check(serials)).toEqual([
      { serial: revoked.serial, status: 'revoked', revoked_at: before.revoked.revoked_at },
      { serial: suspended.serial, status: 'suspended', revoked_at: null },
      { serial: edited.serial, status: 'active', revoked_at: null },
      { serial: createdAfter.serial, status: 'not_found', revoked_at: null },
    ]);
    const after = {
      revoked: (await org.api.get(`/api/v1/licenses/${revoked.id}`)).body,
      suspended: (await org.api.get(`/api/v1/licenses/${suspended.id}`)).body,
      edited: (await org.api.get(`/api/v1/licenses/${edited.id}`)).body,
    };
    // Each as the API showed it before the restore. A file is signed again only when what it
    // states changed (a suspension is not in the file), so only its issue time may differ.
    const claims = ({ license_blob }: { license_blob: string }) => {
      const { iat: _, ...rest } = decodeBlob(license_blob).claims;
      return rest;
    };
    for (const name of ['revoked', 'suspended', 'edited'] as const) {
      const { license_blob: _, ...fields } = after[name];
      const { license_blob: __, ...fieldsBefore } = before[name];
      expect(fields).toEqual(fieldsBefore);
      expect(claims(after[name])).toEqual(claims(before[name]));
    }
    expect(claims(after.edited)).toMatchObject({ features: ['pro'], max_seats: 5 });
    expect((await org.api.get(`/api/v1/licenses/${createdAfter.id}`)).status).toBe(404);
    expect((await org.api.post('/api/v1/licenses/validate', { key: revoked.serial })).body).toMatchObject({
      valid: false,
    });

    // The product's revocation list moved past what it said before the restore, with both entries.
    const restoredList = (await org.api.get(`/api/v1/products/${product.id}/revocation-list`)).text;
    const payload = (jws: string) =>
      JSON.parse(Buffer.from(jws.split('.')[1]!, 'base64url').toString('utf8'));
    const version = (jws: string) => payload(jws).version as number;
    const entries = (jws: string) =>
      (payload(jws).entries as Array<{ serial: string; status: string }>).map((e) => [e.serial, e.status]);
    expect(entries(restoredList)).toEqual(
      expect.arrayContaining([
        [revoked.serial, 'revoked'],
        [suspended.serial, 'suspended'],
      ]),
    );
    expect(version(restoredList)).toBeGreaterThanOrEqual(version(list));
  }, 90_000);

  it('writes back a revocation the database lost while running (an asynchronous failover), without a restart', async () => {
    const { product } = await productWithKeyPair(org.api);
    const license = await createLicense(org.api, { product_id: product.id });
    await outboxDrained();
    await new Promise((resolve) => setTimeout(resolve, 300));
    const [{ seq: before }] = await sql<{ seq: string }>('SELECT seq FROM license.stream_checkpoints');
    expect((await org.api.delete(`/api/v1/licenses/${license.id}`)).status).toBe(200);
    const revokedAt = (await org.api.get(`/api/v1/licenses/${license.id}`)).body.revoked_at;
    await outboxDrained();

    // What a standby promoted after it missed the last commits holds: the license as created, and
    // the checkpoint of before the revocation. Set in one transaction, again until a replay has
    // read it (one that had read the newer checkpoint just before would write that one back).
    await waitFor(
      async () => {
        await sql(
          // One statement, so one transaction (PostgreSQL always runs a data-modifying WITH).
          `WITH lost AS (
             UPDATE license.licenses SET status = 'active', revoked_at = NULL, updated_at = created_at
              WHERE id = $1 AND status = 'revoked')
           UPDATE license.stream_checkpoints SET seq = $2`,
          [license.id, before],
        );
        await stack.forgetCachedSerials(org.id, license.serial);
        await new Promise((resolve) => setTimeout(resolve, 500));
        return (await check([license.serial]))[0].status === 'revoked';
      },
      { what: 'the revocation to be written back', timeoutMs: 15_000 },
    );
    expect(await check([license.serial])).toEqual([
      { serial: license.serial, status: 'revoked', revoked_at: revokedAt },
    ]);
  });

  it('refuses to start when the stream no longer holds every event since the checkpoint, unless told to', async () => {
    await stack.stopService('license-service');
    // A backup older than the stream keeps: its checkpoint lies before the stream's first event.
    const nats = await connect({ servers: TEST_NATS_URL });
    try {
      const manager = await nats.jetstreamManager();
      const name = streamName(stack.namespace, Streams.events.name);
      const { state } = await manager.streams.info(name);
      await manager.streams.purge(name, { keep: 1 });
      await sql('UPDATE license.stream_checkpoints SET seq = $1', [state.last_seq - 3]);
    } finally {
      await nats.close();
    }

    await expect(stack.startService('license-service')).rejects.toThrow(/RESTORE_ACCEPT_EVENT_GAP/);
    extra = await startLicenseService(
      loadLicenseServiceConfig({ ...stack.env, RESTORE_ACCEPT_EVENT_GAP: 'true' }),
    );
    const { product } = await productWithKeyPair(org.api);
    expect((await org.api.post('/api/v1/licenses', { product_id: product.id })).status).toBe(201);
  }, 60_000);
});
