import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { ensureDatabase, migrate, serviceDataSourceOptions } from '@licensing/shared/database';
import { TEST_DATABASE_URL } from '@licensing/shared/testing';
import { GATEWAY_ENTITIES, GATEWAY_SCHEMA } from '../app.module';
import { OrganizationEntity } from '../identity/organization.entity';
import { GATEWAY_MIGRATIONS } from '../migrations';
import { IdempotencyKeyEntity } from './idempotency-key.entity';
import { IdempotencyKeySweeper } from './idempotency-key.sweeper';

describe('the idempotency key sweeper', () => {
  let dataSource: DataSource;
  const orgId = randomUUID();

  beforeAll(async () => {
    await ensureDatabase(TEST_DATABASE_URL);
    dataSource = new DataSource(
      serviceDataSourceOptions({
        url: TEST_DATABASE_URL,
        schema: GATEWAY_SCHEMA,
        entities: GATEWAY_ENTITIES,
        migrations: GATEWAY_MIGRATIONS,
        poolSize: 2,
      }),
    );
    await dataSource.initialize();
    await migrate(dataSource, GATEWAY_SCHEMA);
    await dataSource
      .getRepository(OrganizationEntity)
      .insert({ id: orgId, name: `sweeper-${orgId}`, createdAt: new Date() });
  });
  afterAll(() => dataSource.destroy());

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
    const hourAgo = new Date(Date.now() - 3_600_000);
    const tomorrow = new Date(Date.now() + 86_400_000);
    const repository = dataSource.getRepository(IdempotencyKeyEntity);
    await repository.insert([
      keyRow('expired-answered', hourAgo, 201),
      keyRow('expired-abandoned', hourAgo, null),
      keyRow('live', tomorrow, 201),
    ]);

    const sweeper = new IdempotencyKeySweeper(dataSource);
    expect(await sweeper.run()).toBe(2);
    const left = await repository.find({ where: { orgId }, select: { key: true } });
    expect(left.map((row) => row.key)).toEqual(['live']);
  });

  it('refuses to store a 5xx answer: the database states the rule too', async () => {
    await expect(
      dataSource.getRepository(IdempotencyKeyEntity).insert(keyRow('five-hundred', new Date(), 503)),
    ).rejects.toThrow(/ck_idempotency_keys_status/);
  });
});
