import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { ensureDatabase, migrate, serviceDataSourceOptions } from '@licensing/shared/database';
import { TEST_DATABASE_URL, waitFor } from '@licensing/shared/testing';
import { GATEWAY_ENTITIES, GATEWAY_SCHEMA } from '../edge/app.module';
import { GatewayConfig } from '../config';
import { OrganizationEntity } from '../identity/organization.entity';
import { GATEWAY_MIGRATIONS } from '../migrations';
import { IdempotencyKeyEntity } from './idempotency-key.entity';
import { IdempotencyKeySweeper } from './idempotency-key.sweeper';
import { IdempotencyService, IdempotentRequest, OwnedClaim } from './idempotency.service';

/** The claim protocol and the sweep, against the real PostgreSQL (the HTTP side is in the e2e tests). */
describe('idempotency keys in PostgreSQL', () => {
  let dataSource: DataSource;
  const orgId = randomUUID();
  // A bus timeout of 200 ms: repeats wait up to 200 ms, and a claim's lease is 800 ms.
  const service = () =>
    new IdempotencyService(dataSource, {
      IDEMPOTENCY_KEY_TTL_HOURS: 24,
      BUS_TIMEOUT_MS: 200,
    } as GatewayConfig);
  const request = (key: string = randomUUID()): IdempotentRequest => ({
    orgId,
    key,
    route: 'POST /v1/key-pairs',
    requestHash: 'a'.repeat(64),
  });
  const owned = async (promise: Promise<unknown>): Promise<OwnedClaim> => {
    const claim = (await promise) as OwnedClaim;
    expect(claim.kind).toBe('owned');
    return claim;
  };

  beforeAll(async () => {
    Logger.overrideLogger(false); // the takeovers below are logged on purpose
    await ensureDatabase(TEST_DATABASE_URL);
    dataSource = new DataSource(
      serviceDataSourceOptions({
        url: TEST_DATABASE_URL,
        schema: GATEWAY_SCHEMA,
        entities: GATEWAY_ENTITIES,
        migrations: GATEWAY_MIGRATIONS,
        poolSize: 4,
      }),
    );
    await dataSource.initialize();
    await migrate(dataSource, GATEWAY_SCHEMA);
    await dataSource
      .getRepository(OrganizationEntity)
      .insert({ id: orgId, name: `idempotency-${orgId}`, createdAt: new Date() });
  });
  afterAll(() => dataSource.destroy());

  describe('claims', () => {
    it('lets a repeat waiting for a first request that failed run itself', async () => {
      const idempotency = service();
      const first = await owned(idempotency.claim(request('released')));
      const waiting = idempotency.claim(request('released'));
      await sleep(50);
      await idempotency.release(first);
      const second = await owned(waiting);
      expect(second.token).not.toBe(first.token);
    });

    it('gives a key back once the database answers again, when its release failed (an outage, a failover)', async () => {
      const idempotency = service();
      const first = await owned(idempotency.claim(request('release-failed')));
      const repository = dataSource.getRepository(IdempotencyKeyEntity);
      const lost = jest
        .spyOn(repository, 'delete')
        .mockRejectedValueOnce(new Error('Connection terminated unexpectedly'));
      await idempotency.release(first);
      await waitFor(async () => (await repository.findOneBy({ id: first.id })) === null, {
        what: 'the release to be tried again',
      });
      expect(lost).toHaveBeenCalledTimes(2);
      lost.mockRestore();
      await owned(idempotency.claim(request('release-failed')));
    });

    it('hands a waiting repeat the answer once the first request stores it', async () => {
      const idempotency = service();
      const first = await owned(idempotency.claim(request('answered')));
      const waiting = idempotency.claim(request('answered'));
      await sleep(50);
      await idempotency.complete(first, 201, { id: 'x' }, { location: '/v1/key-pairs/x' });
      await expect(waiting).resolves.toEqual({
        kind: 'replay',
        status: 201,
        body: { id: 'x' },
        headers: { location: '/v1/key-pairs/x' },
      });
    });

    it('takes over a claim older than its lease, and the first owner can no longer store its answer', async () => {
      const idempotency = service();
      const first = await owned(idempotency.claim(request('abandoned')));
      await expect(idempotency.claim(request('abandoned'))).rejects.toMatchObject({ code: 'conflict' });
      await sleep(850);
      const second = await owned(idempotency.claim(request('abandoned')));
      await idempotency.complete(first, 201, { id: 'late' }, {});
      await idempotency.release(first);
      await idempotency.complete(second, 201, { id: 'taken over' }, {});
      await expect(idempotency.claim(request('abandoned'))).resolves.toMatchObject({
        kind: 'replay',
        body: { id: 'taken over' },
      });
    });

    it('frees a key past its expiry for any request, on any route', async () => {
      const idempotency = service();
      const first = await owned(idempotency.claim(request('expired')));
      await idempotency.complete(first, 201, { id: 'old' }, {});
      await dataSource
        .getRepository(IdempotencyKeyEntity)
        .update({ id: first.id }, { expiresAt: new Date(Date.now() - 1000) });
      await owned(
        idempotency.claim({ ...request('expired'), route: 'POST /v1/products', requestHash: 'b'.repeat(64) }),
      );
    });
  });

  describe('the sweeper', () => {
    const keyRow = (key: string, expiresAt: Date, status: number | null): Partial<IdempotencyKeyEntity> => ({
      id: randomUUID(),
      orgId,
      key,
      route: 'POST /v1/licenses',
      requestHash: '0'.repeat(64),
      claimToken: randomUUID(),
      lockedAt: new Date(),
      status,
      responseBody: status === null ? null : { id: key },
      responseHeaders: {},
      createdAt: new Date(),
      expiresAt,
    });

    it('removes the keys past their expiry, answered or abandoned, and keeps the others', async () => {
      const repository = dataSource.getRepository(IdempotencyKeyEntity);
      await repository.delete({ orgId });
      const hourAgo = new Date(Date.now() - 3_600_000);
      const tomorrow = new Date(Date.now() + 86_400_000);
      await repository.insert([
        keyRow('expired-answered', hourAgo, 201),
        keyRow('expired-abandoned', hourAgo, null),
        keyRow('live', tomorrow, 201),
      ]);

      expect(await new IdempotencyKeySweeper(dataSource).run()).toBe(2);
      const left = await repository.find({ where: { orgId }, select: { key: true } });
      expect(left.map((row) => row.key)).toEqual(['live']);
    });

    it('cannot meet a stored 5xx: the database refuses one', async () => {
      await expect(
        dataSource.getRepository(IdempotencyKeyEntity).insert(keyRow('five-hundred', new Date(), 503)),
      ).rejects.toThrow(/ck_idempotency_keys_status/);
    });
  });
});
