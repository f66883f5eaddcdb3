// docs/relay-openapi.json against the server: the same routes, the same request schemas, the
// answers' shapes, and a document Redocly's recommended rules accept.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import pino from 'pino';
import { createPrivateKey } from 'node:crypto';
import { LeaseBook } from '../leases/lease-book';
import { initRelay } from '../relay';
import { parseProductKey } from '../relay-file/product-key';
import { loadRelayFile } from '../relay-file/relay-file';
import { RelayStore } from '../store/relay-store';
import { productFixture, relayFile, tempDir } from '../testing/relay-fixtures';
import { createRelayServer, SCHEMAS } from './relay-server';

const ROOT = path.join(__dirname, '../../../..');
const DOCUMENT = 'docs/relay-openapi.json';
const METHODS = ['get', 'post', 'put', 'patch', 'delete'];

type Json = any;

describe(DOCUMENT, () => {
  const doc: Json = JSON.parse(readFileSync(path.join(ROOT, DOCUMENT), 'utf8'));
  const routes: { method: string; url: string; schema?: Json }[] = [];
  let app: ReturnType<typeof createRelayServer>;
  let store: RelayStore;
  let remove: () => void;

  beforeAll(async () => {
    const temp = tempDir();
    remove = temp.remove;
    const product = await productFixture();
    const { public_key } = await initRelay(temp.dir, 'Plant 4');
    store = RelayStore.open(temp.dir);
    const input = relayFile(product, { relayPublicKey: public_key, site: 'Plant 4' });
    await loadRelayFile(input, store, await parseProductKey(product.publicKeyPem), Date.now());
    const privateKey = createPrivateKey(store.identity().private_key_pem);
    app = createRelayServer({
      book: new LeaseBook(store, { leaseTtlSeconds: 600, clock: Date.now }),
      signer: () => ({ kid: store.relayFile()!.relay_file_id, privateKey }),
      clock: Date.now,
      logger: pino({ level: 'silent' }),
      onRoute: ({ method, url, schema }) => {
        for (const m of [method].flat())
          if (m !== 'HEAD') routes.push({ method: m.toLowerCase(), url, schema });
      },
    });
    await app.ready();
  });

  afterAll(async () => {
    await app.close();
    store.close();
    remove();
  });

  const resolve = (value: Json): Json =>
    value?.$ref
      ? value.$ref
          .split('/')
          .slice(1)
          .reduce((node: Json, key: string) => node[key], doc)
      : value;

  it('documents exactly the routes the server has', () => {
    const documented = Object.entries(doc.paths).flatMap(([url, item]: [string, Json]) =>
      Object.keys(item)
        .filter((key) => METHODS.includes(key))
        .map((method) => `${method} ${url}`),
    );
    const served = routes.map(({ method, url }) => `${method} ${url.replace(/:(\w+)/g, '{$1}')}`);
    expect(documented.sort()).toEqual(served.sort());
  });

  it('states the request schemas the server validates with', () => {
    for (const { method, url, schema } of routes) {
      const operation = doc.paths[url.replace(/:(\w+)/g, '{$1}')][method];
      const body = operation.requestBody?.content?.['application/json']?.schema;
      expect([method, url, body]).toEqual([method, url, schema?.body]);
      const params = (operation.parameters ?? []).map(resolve).filter((p: Json) => p.in === 'path');
      const expected = schema?.params ? Object.entries(schema.params.properties) : [];
      expect([method, url, params.map((p: Json) => [p.name, p.schema])]).toEqual([method, url, expected]);
    }
    expect(SCHEMAS.leaseBody.additionalProperties).toBe(false);
  });

  it('says every signed answer carries Licensing-Signature', () => {
    for (const { method, url } of routes.filter((r) => r.url.startsWith('/v1/'))) {
      const responses = doc.paths[url.replace(/:(\w+)/g, '{$1}')][method].responses;
      for (const [status, response] of Object.entries(responses) as [string, Json][]) {
        if (status.startsWith('2'))
          expect([url, status, Object.keys(response.headers ?? {})]).toEqual([
            url,
            status,
            ['Licensing-Signature'],
          ]);
      }
    }
  });

  it('describes the answers as the server gives them', async () => {
    const keysOf = (name: string) => [...resolve({ $ref: `#/components/schemas/${name}` }).required].sort();
    const lease = await app.inject({ method: 'POST', url: '/v1/leases', payload: { fingerprint: 'm-1' } });
    expect(Object.keys(lease.json()).sort()).toEqual(keysOf('Lease'));
    const status = await app.inject({ method: 'GET', url: '/v1/status' });
    expect(Object.keys(status.json()).sort()).toEqual(keysOf('Status'));
    const list = await app.inject({ method: 'GET', url: '/v1/leases' });
    expect(Object.keys(list.json()).sort()).toEqual(keysOf('LeaseList'));
    const problem = await app.inject({
      method: 'POST',
      url: '/v1/leases',
      payload: { fingerprint: 'm', x: 1 },
    });
    expect(keysOf('Problem').every((key) => key in problem.json())).toBe(true);
  });

  it('passes Redocly’s recommended rules without an error', () => {
    const lint = spawnSync(process.execPath, ['tools/openapi-lint.mjs', DOCUMENT, '--json'], {
      cwd: ROOT,
      encoding: 'utf8',
    });
    expect(JSON.parse(lint.stdout).errors).toBe(0);
  });
});
