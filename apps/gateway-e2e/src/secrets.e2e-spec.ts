import { createServer } from 'node:http';
import { AddressInfo } from 'node:net';
import {
  createDecipheriv,
  createHash,
  createPrivateKey,
  createPublicKey,
  randomBytes,
  randomUUID,
} from 'node:crypto';
import { Writable } from 'node:stream';
import Redis from 'ioredis';
import { connect } from 'nats';
import pino from 'pino';
import { Streams } from '@licensing/contracts';
import { streamName } from '@licensing/shared/messaging';
import { ApiResponse, waitFor, TEST_NATS_URL, TEST_REDIS_URL } from '@licensing/shared/testing';
import { TestOrganization, TestStack, startStack } from './support/stack';
import { apiKeyWithScopes, createLicense, sql } from './support/fixtures';
import { openApiRoutes } from './support/routes';

/**
 * No secret at rest or in the logs: after a workload that touches every kind of secret the
 * platform handles (signing keys of the three algorithms, API keys issued, used and revoked), the
 * raw rows of every table of every schema and every log line written at `trace` level hold no
 * private key material and no plain API key. The signing keys are sealed under a master key this
 * test chooses, so it can open them, prove the sealed column is the private key, and then look for
 * that key's every encoding everywhere else.
 */

const MASTER_KEY = randomBytes(32);
const MASTER_VERSION = 'secrets-test';

/** Every log line the stack writes, captured in memory instead of stdout. */
const logLines: string[] = [];
const logSink = new Writable({
  write(chunk: Buffer | string, _encoding, done) {
    logLines.push(chunk.toString());
    done();
  },
});

/** The encodings a secret could leak in: as text, hex, base64 and base64url of its bytes. */
function encodingsOf(secret: Buffer | string): string[] {
  const bytes = typeof secret === 'string' ? Buffer.from(secret, 'utf8') : secret;
  const forms = [bytes.toString('hex'), bytes.toString('base64'), bytes.toString('base64url')];
  if (typeof secret === 'string') forms.push(secret);
  // A base64 form carries padding only at its very end; inside a longer encoding it would not.
  return [...new Set(forms.map((form) => form.replace(/=+$/, '')))];
}

/** Opens a sealed private key: 12-byte IV, 16-byte GCM tag, ciphertext; the key pair id as associated data. */
function openSealed(keyPairId: string, sealed: Buffer): string {
  const decipher = createDecipheriv('aes-256-gcm', MASTER_KEY, sealed.subarray(0, 12));
  decipher.setAAD(Buffer.from(keyPairId));
  decipher.setAuthTag(sealed.subarray(12, 28));
  return Buffer.concat([decipher.update(sealed.subarray(28)), decipher.final()]).toString('utf8');
}

interface ColumnValue {
  where: string;
  /** The value as PostgreSQL gives it, in every form a secret could be found in. */
  forms: string[];
}

/** Every text, bytea, json and array value of every table of every schema of the test database. */
async function rawDatabaseValues(): Promise<ColumnValue[]> {
  const columns = await sql<{
    table_schema: string;
    table_name: string;
    column_name: string;
    data_type: string;
  }>(
    `SELECT c.table_schema, c.table_name, c.column_name, c.data_type
       FROM information_schema.columns c
       JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
      WHERE c.table_schema NOT IN ('pg_catalog', 'information_schema') AND t.table_type = 'BASE TABLE'
        AND c.data_type IN ('text', 'character varying', 'character', 'bytea', 'json', 'jsonb', 'ARRAY')`,
  );
  const values: ColumnValue[] = [];
  for (const column of columns) {
    const where = `${column.table_schema}.${column.table_name}.${column.column_name}`;
    const rows = await sql<{ value: unknown }>(
      `SELECT "${column.column_name}" AS value FROM "${column.table_schema}"."${column.table_name}"
        WHERE "${column.column_name}" IS NOT NULL`,
    );
    for (const { value } of rows) {
      const forms = Buffer.isBuffer(value)
        ? [value.toString('latin1'), value.toString('hex'), value.toString('base64')]
        : [typeof value === 'string' ? value : JSON.stringify(value)];
      values.push({ where, forms });
    }
  }
  return values;
}

/** Every message of the stack's JetStream streams (events, sync reports): data at rest too. */
async function rawStreamValues(namespace: string): Promise<ColumnValue[]> {
  const connection = await connect({ servers: TEST_NATS_URL });
  try {
    const manager = await connection.jetstreamManager();
    const values: ColumnValue[] = [];
    for (const stream of Object.values(Streams)) {
      const name = streamName(namespace, stream.name);
      const { state } = await manager.streams.info(name);
      for (let seq = state.first_seq; seq <= state.last_seq && state.messages > 0; seq++) {
        const message = await manager.streams.getMessage(name, { seq }).catch(() => undefined);
        if (message) values.push({ where: `jetstream:${stream.name}`, forms: [message.string()] });
      }
    }
    return values;
  } finally {
    await connection.close();
  }
}

/** Every value the stack keeps in Redis under its namespace (the serial-status cache). */
async function rawRedisValues(namespace: string): Promise<ColumnValue[]> {
  const redis = new Redis(TEST_REDIS_URL);
  try {
    const values: ColumnValue[] = [];
    for (const key of await redis.keys(`${namespace}:*`)) {
      const type = await redis.type(key);
      const value =
        type === 'string'
          ? await redis.get(key)
          : type === 'hash'
            ? JSON.stringify(await redis.hgetall(key))
            : type;
      values.push({ where: `redis:${key.split(':').slice(0, 2).join(':')}`, forms: [key, value ?? ''] });
    }
    return values;
  } finally {
    redis.disconnect();
  }
}

describe('no secrets at rest or in logs; constant-time key handling; security headers', () => {
  let stack: TestStack;
  let org: TestOrganization;
  let other: TestOrganization;
  /** Every plain API key the workload saw: admin keys, issued keys, a revoked one. */
  const plainKeys: string[] = [];
  /** The key pairs the workload created, one per algorithm (and one deleted afterwards). */
  const keyPairs: any[] = [];
  /** Webhook signing secrets the workload was shown: one at creation, one at rotation. */
  const webhookSecrets: string[] = [];
  let database: ColumnValue[];

  beforeAll(async () => {
    // Every service's pino logger writes to pino.destination(1); here it writes into memory instead.
    jest
      .spyOn(pino, 'destination')
      .mockImplementation(() => logSink as unknown as ReturnType<typeof pino.destination>);
    stack = await startStack({
      env: {
        LOG_LEVEL: 'trace',
        SIGNING_MASTER_KEYS: `${MASTER_VERSION}:${MASTER_KEY.toString('base64')}`,
        WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      },
    });
    [org, other] = await Promise.all([stack.newOrganization(), stack.newOrganization()]);
    plainKeys.push(org.adminKey, other.adminKey);

    // The workload: key pairs of all three algorithms, products, licenses (patched, downloaded,
    // revoked), API keys issued, used and revoked, activations, heartbeats, verify, validate, sync.
    const read = await apiKeyWithScopes(org.api, ['read']);
    const app = await apiKeyWithScopes(org.api, ['client']);
    const doomed = await apiKeyWithScopes(org.api, ['admin'], 'to be revoked');
    plainKeys.push(read.key.key, app.key.key, doomed.key.key);
    expect((await doomed.api.get('/api/v1/products')).status).toBe(200);
    expect((await org.api.delete(`/api/v1/api-keys/${doomed.key.id}`)).status).toBe(200);
    expect((await doomed.api.get('/api/v1/products')).status).toBe(401);

    for (const algorithm of ['ed25519', 'ecdsa-p256', 'rsa-3072']) {
      const keyPair = await org.api.post('/api/v1/key-pairs', { name: `${algorithm} signing`, algorithm });
      expect(keyPair.status).toBe(201);
      keyPairs.push(keyPair.body);
      const product = await org.api.post('/api/v1/products', {
        name: `Product ${algorithm}`,
        code: `p-${randomBytes(4).toString('hex')}`,
        key_pair_id: keyPair.body.id,
        default_features: ['pro'],
      });
      expect(product.status).toBe(201);
      const license = await createLicense(org.api, {
        product_id: product.body.id,
        customer_email: 'ada@example.com',
        max_seats: 3,
      });
      expect(
        (await org.api.patch(`/api/v1/licenses/${license.id}`, { features: ['pro', 'extra'] })).status,
      ).toBe(200);
      expect((await read.api.get(`/api/v1/licenses/${license.id}/download`)).status).toBe(200);
      const verified = await app.api.post('/api/v1/licenses/verify', {
        license_blob: (await org.api.get(`/api/v1/licenses/${license.id}`)).body.license_blob,
        product_id: product.body.id,
      });
      expect(verified.body.valid).toBe(true);
      const activation = await app.api.post('/v1/activations', {
        license_key: license.serial,
        fingerprint: 'fp-1',
      });
      expect(activation.status).toBe(201);
      expect((await app.api.post(`/v1/activations/${activation.body.id}/heartbeat`)).status).toBe(200);
      expect(
        (await app.api.post('/api/v1/licenses/validate', { key: license.serial, fingerprint: 'fp-1' })).body
          .code,
      ).toBe('VALID');
      expect((await app.api.post('/api/v1/licenses/sync', { license_serial: license.serial })).status).toBe(
        200,
      );
      expect(
        (await app.api.post('/api/v1/licenses/check-revocation', { serials: [license.serial] })).status,
      ).toBe(200);
      expect((await org.api.delete(`/api/v1/licenses/${license.id}`)).status).toBe(200);
    }
    const unused = await org.api.post('/api/v1/key-pairs', { algorithm: 'ed25519' });
    expect(unused.status).toBe(201);
    keyPairs.push(unused.body);

    // A webhook that receives signed deliveries before and after its secret is rotated.
    const receiver = createServer((_request, response) => response.end('ok'));
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    try {
      const webhook = await org.api.post('/api/v1/webhooks', {
        url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/`,
        events: ['*'],
      });
      expect(webhook.status).toBe(201);
      webhookSecrets.push(webhook.body.secret);
      const delivered = async (count: number) =>
        (await org.api.get(`/api/v1/webhooks/${webhook.body.id}/deliveries?status=delivered`)).body.total >=
        count;
      expect((await org.api.post(`/api/v1/webhooks/${webhook.body.id}/test`)).status).toBe(202);
      await waitFor(() => delivered(1), { what: 'a webhook delivery' });
      const rotated = await org.api.post(`/api/v1/webhooks/${webhook.body.id}/rotate-secret`);
      webhookSecrets.push(rotated.body.secret);
      expect((await org.api.post(`/api/v1/webhooks/${webhook.body.id}/test`)).status).toBe(202);
      await waitFor(() => delivered(2), { what: 'a delivery signed with both secrets' });
    } finally {
      receiver.closeAllConnections();
      await new Promise<void>((resolve) => receiver.close(() => resolve()));
    }

    // Wait for the background paths too (the outbox relay, the analytics consumer), so their logs
    // and rows are part of what is searched.
    await waitFor(async () => (await sql(`SELECT 1 FROM analytics.sync_reports`)).length >= 3, {
      what: 'the sync reports to be stored',
    });
    database = [
      ...(await rawDatabaseValues()),
      ...(await rawStreamValues(stack.namespace)),
      ...(await rawRedisValues(stack.namespace)),
    ];
  }, 60_000);
  afterAll(async () => {
    await stack.close();
    jest.restoreAllMocks();
  });

  /** The private key material of every key pair, opened from its sealed column with the test's master key. */
  async function privateKeys(): Promise<{ id: string; pem: string; secrets: (Buffer | string)[] }[]> {
    const rows = await sql<{
      id: string;
      private_key_ciphertext: Buffer;
      master_key_version: string;
      public_key: string;
    }>(`SELECT id, private_key_ciphertext, master_key_version, public_key FROM license.key_pairs`);
    return rows.map((row) => {
      expect(row.master_key_version).toBe(MASTER_VERSION);
      const pem = openSealed(row.id, row.private_key_ciphertext);
      const key = createPrivateKey(pem);
      // The sealed bytes are this key pair's private key: its public half is the published one.
      expect(createPublicKey(key).export({ type: 'spki', format: 'pem' })).toBe(row.public_key);
      const jwk = key.export({ format: 'jwk' });
      const secretMembers = ['d', 'p', 'q', 'dp', 'dq', 'qi'] as const;
      const secrets: (Buffer | string)[] = secretMembers
        .map((member) => jwk[member])
        .filter((value): value is string => typeof value === 'string')
        .map((value) => Buffer.from(value, 'base64url'));
      // The DER, and the first base64 line of the PEM (a PEM wraps the DER's base64 at 64 characters).
      secrets.push(key.export({ type: 'pkcs8', format: 'der' }), pem.split('\n')[1]!);
      return { id: row.id, pem, secrets };
    });
  }

  describe('at rest', () => {
    it('searched every text, bytea, json and array column of every schema, every JetStream message and the Redis cache', () => {
      const places = new Set(
        database.map((value) => value.where.split('.')[0]!.split(':').slice(0, 2).join(':')),
      );
      expect([...places]).toEqual(
        expect.arrayContaining([
          'identity',
          'license',
          'product',
          'analytics',
          'jetstream:LICENSING_EVENTS',
          'jetstream:SYNC_REPORTS',
          `redis:${stack.namespace}`,
        ]),
      );
      expect(database.length).toBeGreaterThan(50);
    });

    it('stores no PEM private key and no JWK private member anywhere', () => {
      for (const { where, forms } of database) {
        for (const form of forms) {
          expect({ where, pem: /PRIVATE KEY/.test(form), jwk: /"(d|p|q|dp|dq|qi)"\s*:/.test(form) }).toEqual({
            where,
            pem: false,
            jwk: false,
          });
        }
      }
    });

    it('stores each signing key sealed (AES-256-GCM under the master key, bound to its key pair id), never as plaintext PKCS#8', async () => {
      const rows = await sql<{ id: string; sealed: Buffer }>(
        `SELECT id, private_key_ciphertext AS sealed FROM license.key_pairs`,
      );
      expect(rows.map((row) => row.id).sort()).toEqual(keyPairs.map((keyPair) => keyPair.id).sort());
      for (const { id, sealed } of rows) {
        expect(sealed.toString('latin1')).not.toContain('-----BEGIN');
        expect(() => createPrivateKey({ key: sealed, format: 'der', type: 'pkcs8' })).toThrow();
        // Bound to its row: the same bytes do not open as another key pair's key.
        const otherId = rows.find((row) => row.id !== id)!.id;
        expect(() => openSealed(otherId, sealed)).toThrow();
      }
      expect(await privateKeys()).toHaveLength(keyPairs.length);
    });

    it('stores no private key material in any encoding (seed, scalar, RSA factors, PKCS#8 DER) outside the sealed column', async () => {
      for (const { id, secrets } of await privateKeys()) {
        for (const secret of secrets) {
          for (const needle of encodingsOf(secret)) {
            const found = database.filter(({ forms }) => forms.some((form) => form.includes(needle)));
            expect({ keyPair: id, foundIn: found.map((value) => value.where) }).toEqual({
              keyPair: id,
              foundIn: [],
            });
          }
        }
      }
    });

    it('stores no plain API key in any encoding, only its SHA-256', async () => {
      expect(plainKeys).toHaveLength(5);
      for (const key of plainKeys) {
        for (const needle of encodingsOf(key)) {
          const found = database.filter(({ forms }) => forms.some((form) => form.includes(needle)));
          expect({ key: key.slice(0, 10), foundIn: found.map((value) => value.where) }).toEqual({
            key: key.slice(0, 10),
            foundIn: [],
          });
        }
      }
      const hashes = (await sql<{ key_hash: string }>(`SELECT key_hash FROM identity.api_keys`)).map(
        (r) => r.key_hash,
      );
      for (const key of plainKeys) expect(hashes).toContain(createHash('sha256').update(key).digest('hex'));
    });
  });

  it('stores no webhook secret in any encoding outside its sealed column, and logs none', () => {
    expect(webhookSecrets).toHaveLength(2);
    const log = logLines.join('\n');
    for (const secret of webhookSecrets) {
      for (const needle of encodingsOf(secret)) {
        const found = database.filter(({ forms }) => forms.some((form) => form.includes(needle)));
        expect({
          secret: secret.slice(0, 8),
          foundIn: found.map((value) => value.where),
          logged: log.includes(needle),
        }).toEqual({
          secret: secret.slice(0, 8),
          foundIn: [],
          logged: false,
        });
      }
    }
  });

  describe('in logs', () => {
    it('captured the services at trace level while the workload ran', () => {
      const entries = logLines
        .flatMap((chunk) => chunk.split('\n'))
        .filter(Boolean)
        .map((line) => JSON.parse(line) as Record<string, unknown>);
      expect(new Set(entries.map((entry) => entry.service))).toEqual(
        new Set([
          'gateway',
          'product-service',
          'license-service',
          'revocation-service',
          'analytics-service',
          'webhook-service',
        ]),
      );
      expect(entries.some((entry) => entry.msg === 'api key revoked')).toBe(true);
      expect(entries.some((entry) => entry.level === 'debug')).toBe(true);
    });

    it('logs no PEM or JWK private key, and no private key material in any encoding', async () => {
      const log = logLines.join('\n');
      expect(log).not.toMatch(/PRIVATE KEY/);
      expect(log).not.toMatch(/"(d|p|q|dp|dq|qi)"\s*:/);
      for (const { id, secrets } of await privateKeys()) {
        for (const secret of secrets) {
          for (const needle of encodingsOf(secret))
            expect({ keyPair: id, logged: log.includes(needle) }).toEqual({ keyPair: id, logged: false });
        }
      }
    });

    it('logs no plain API key, not even one refused after its revocation or sent with a bad scheme', async () => {
      const revoked = plainKeys[4]!;
      expect(
        (await stack.anonymous.get('/api/v1/licenses', { authorization: `Bearer ${revoked}` })).status,
      ).toBe(401);
      expect(
        (await stack.anonymous.get('/api/v1/licenses', { authorization: `Token ${org.adminKey}` })).status,
      ).toBe(401);
      const log = logLines.join('\n');
      for (const key of plainKeys) {
        for (const needle of encodingsOf(key))
          expect({ key: key.slice(0, 10), logged: log.includes(needle) }).toEqual({
            key: key.slice(0, 10),
            logged: false,
          });
      }
    });
  });

  describe('API key handling', () => {
    // Keys are found by their SHA-256 through a unique index (and a per-gateway cache keyed by the
    // same hash); no code compares a presented key with a stored secret byte by byte. A lookup's
    // timing can only tell an attacker about a hash of their own guess, which preimage resistance
    // makes useless for finding a real key; that is why an indexed lookup needs no timingSafeEqual.
    it('resolves a key only through its SHA-256: the stored hash itself is not a credential', async () => {
      const [{ key_hash: hash }] = await sql<{ key_hash: string }>(
        `SELECT key_hash FROM identity.api_keys WHERE org_id = $1 LIMIT 1`,
        [org.id],
      );
      for (const credential of [hash, `lk_${Buffer.from(hash, 'hex').toString('base64url')}`]) {
        const response = await stack.anonymous.get('/api/v1/products', {
          authorization: `Bearer ${credential}`,
        });
        expect(response.status).toBe(401);
      }
    });

    it('shows the plain key exactly once: in the creation answer, never in the list', async () => {
      const created = await apiKeyWithScopes(org.api, ['read'], 'shown once');
      plainKeys.push(created.key.key);
      const listed = await org.api.get('/api/v1/api-keys?per_page=100');
      expect(listed.text).not.toContain(created.key.key);
      expect(listed.body.api_keys.find((key: any) => key.id === created.key.id)).not.toHaveProperty('key');
    });
  });

  describe('security headers', () => {
    const expectHeaders = (what: string, response: ApiResponse, noStore: boolean) => {
      expect({
        what,
        nosniff: response.headers.get('x-content-type-options'),
        cacheControl: noStore ? response.headers.get('cache-control') : 'n/a',
      }).toEqual({ what, nosniff: 'nosniff', cacheControl: noStore ? 'no-store' : 'n/a' });
    };

    it('answers the API key creation, the one response holding a plain key, with Cache-Control: no-store and nosniff', async () => {
      const created = await org.api.post('/api/v1/api-keys', { name: 'cache me not', scopes: ['client'] });
      expect(created.status).toBe(201);
      expectHeaders('POST /api/v1/api-keys', created, true);
    });

    it('puts nosniff and no-store on every route of the OpenAPI document under both prefixes, whatever the status', async () => {
      const statuses = new Set<number>();
      for (const route of await openApiRoutes(stack.anonymous)) {
        const [method, template] = route.split(' ') as [string, string];
        const path = template.replace(/\{[^}]+\}/g, randomUUID());
        // Writes get an empty body (a 400) and unknown ids (a 404): nothing changes.
        const response = await org.api.request(method, path, method === 'GET' ? undefined : {});
        statuses.add(response.status);
        expectHeaders(route, response, path.startsWith('/api/v1/') || path.startsWith('/v1/'));
      }
      expect([...statuses]).toEqual(expect.arrayContaining([200, 400, 404]));
    });

    it('puts nosniff and no-store on errors from the edge: 401, 403, 404 for an unknown route, 413, and a download', async () => {
      const readOnly = (await apiKeyWithScopes(org.api, ['read'])).api;
      const license = (await org.api.get('/api/v1/licenses?per_page=1')).body.licenses[0];
      const cases: [string, ApiResponse][] = [
        ['401', await stack.anonymous.get('/api/v1/products')],
        ['403', await readOnly.post('/api/v1/key-pairs', {})],
        ['404 route', await org.api.get('/api/v1/nowhere')],
        ['413', await org.api.post('/api/v1/products', JSON.stringify({ name: 'x'.repeat(1_100_000) }))],
        ['download', await org.api.get(`/v1/licenses/${license.id}/download`)],
      ];
      expect(cases.map(([, response]) => response.status)).toEqual([401, 403, 404, 413, 200]);
      for (const [what, response] of cases) expectHeaders(what, response, true);
    });

    it('puts nosniff on the public probes and documents', async () => {
      for (const path of [
        '/health/live',
        '/health/ready',
        '/healthz',
        '/readyz',
        '/openapi.json',
        '/openapi.yaml',
        '/docs',
      ]) {
        const response = await stack.anonymous.get(path);
        expect({ path, status: response.status }).toEqual({ path, status: 200 });
        expectHeaders(path, response, false);
      }
    });
  });
});
