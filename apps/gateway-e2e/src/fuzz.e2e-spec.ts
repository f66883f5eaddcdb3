import fc from 'fast-check';
import { ApiClient, bodyText } from '@licensing/shared/testing';
import {
  GeneratedRequest,
  Operation,
  Seeds,
  operationsOf,
  requestFor,
  resourceOf,
} from './support/hostile-input';
import { TestOrganization, TestStack, startStack } from './support/stack';
import { createLicense, productWithKeyPair } from './support/fixtures';

/**
 * Generated hostile requests against every operation of the OpenAPI document. Whatever a request
 * holds, the answer is a 2xx or a 4xx problem+json within a few seconds: never a 5xx, never another
 * error format, never a hang. Afterwards, every list holds exactly what the 2xx answers created.
 *
 * A failure prints fast-check's seed and path; replay it with
 *   FUZZ_SEED=<seed> FUZZ_PATH=<path> npx jest apps/gateway-e2e/src/fuzz.e2e-spec.ts -t '<operation>'
 * and more cases run with FUZZ_RUNS=<per operation>.
 */
const RUNS = Number(process.env.FUZZ_RUNS ?? 25);
const SEED = process.env.FUZZ_SEED === undefined ? undefined : Number(process.env.FUZZ_SEED);
const PATH = process.env.FUZZ_PATH;
const ANSWER_WITHIN_MS = 5_000;

/** The lists whose totals must only move by what a 2xx created or deleted. */
const LISTS: Record<string, { path: string; removedByDelete: boolean }> = {
  product: { path: '/api/v1/products', removedByDelete: true },
  key_pair: { path: '/api/v1/key-pairs', removedByDelete: true },
  license: { path: '/api/v1/licenses', removedByDelete: false },
  api_key: { path: '/api/v1/api-keys', removedByDelete: true },
  activation: { path: '/api/v1/activations', removedByDelete: true },
  webhook: { path: '/api/v1/webhooks', removedByDelete: true },
};

describe('generated hostile requests, for every operation of the OpenAPI document', () => {
  let stack: TestStack;
  let org: TestOrganization;
  let seeds: Seeds;
  let operations: Operation[];
  const totalsBefore: Record<string, number> = {};
  /** What 2xx answers did to each list: +1 per create, -1 per delete that removes. */
  const moved: Record<string, number> = {};

  const totalOf = async (api: ApiClient, path: string): Promise<number> => {
    const response = await api.get(`${path}?per_page=1`);
    expect(response.status).toBe(200);
    return response.body.total;
  };

  beforeAll(async () => {
    stack = await startStack();
    org = await stack.newOrganization();
    const { product, keyPair } = await productWithKeyPair(org.api, {}, 'ed25519');
    const license = await createLicense(org.api, {
      product_id: product.id,
      license_type: 'floating',
      max_seats: 50,
    });
    const activation = await org.api.post('/api/v1/activations', {
      license_id: license.id,
      fingerprint: 'seed',
    });
    const apiKey = await org.api.post('/api/v1/api-keys', { name: 'seed', scopes: ['read'] });
    const webhook = await org.api.post('/api/v1/webhooks', {
      url: 'https://hooks.example.test/fuzz',
      events: ['*'],
    });
    seeds = {
      ids: {
        product: product.id,
        key_pair: keyPair.id,
        license: license.id,
        activation: activation.body.id,
        api_key: apiKey.body.id,
        webhook: webhook.body.id,
      },
      serials: [license.serial],
    };
    operations = operationsOf((await stack.anonymous.get('/openapi.json')).body);
    for (const [resource, list] of Object.entries(LISTS))
      totalsBefore[resource] = await totalOf(org.api, list.path);
  });
  afterAll(() => stack.close());

  async function send(
    request: GeneratedRequest,
  ): Promise<{ status: number; contentType: string; body: string }> {
    const response = await fetch(`${stack.baseUrl}${request.path}`, {
      method: request.method,
      headers: { authorization: `Bearer ${org.adminKey}`, ...request.headers },
      body: request.body,
      signal: AbortSignal.timeout(ANSWER_WITHIN_MS),
    });
    return {
      status: response.status,
      contentType: response.headers.get('content-type') ?? '',
      body: await bodyText(response),
    };
  }

  /** Operations are known only once the stack runs: one test walks them all, one property each. */
  it('answers every generated request with a 2xx or a 4xx problem+json, promptly', async () => {
    expect(operations.length).toBeGreaterThan(50);
    const failures: string[] = [];
    for (const operation of operations) {
      const name = `${operation.method} ${operation.path}`;
      const details = await fc.check(
        fc.asyncProperty(requestFor(operation, seeds), async (request) => {
          let answer: Awaited<ReturnType<typeof send>>;
          try {
            answer = await send(request);
          } catch (error) {
            // A header fetch itself refuses to send is not a request the server ever saw.
            if (error instanceof TypeError && /header/i.test(String(error.cause ?? error.message)))
              return true;
            throw new Error(`no answer within ${ANSWER_WITHIN_MS} ms (${String(error)})`);
          }
          if (answer.status >= 500) throw new Error(`${answer.status}: ${answer.body.slice(0, 500)}`);
          if (answer.status >= 400 && !answer.contentType.startsWith('application/problem+json')) {
            throw new Error(`${answer.status} as ${answer.contentType}: ${answer.body.slice(0, 300)}`);
          }
          if (answer.status < 300) record(operation, answer.status);
          return true;
        }),
        { numRuns: RUNS, seed: SEED, path: PATH, endOnFailure: true },
      );
      if (details.failed) {
        failures.push(
          `${name}: ${String(details.errorInstance)}\n  request: ${(details.counterexample?.[0] as GeneratedRequest | undefined)?.description}\n  replay: FUZZ_SEED=${details.seed} FUZZ_PATH=${details.counterexample ? details.counterexamplePath : ''}`,
        );
      }
    }
    expect(failures).toEqual([]);
  }, 600_000);

  it('changed no list beyond what the 2xx answers created or deleted', async () => {
    for (const [resource, list] of Object.entries(LISTS)) {
      expect({ resource, total: await totalOf(org.api, list.path) }).toEqual({
        resource,
        total: totalsBefore[resource]! + (moved[resource] ?? 0),
      });
    }
  });

  function record(operation: Operation, status: number): void {
    const resource = resourceOf(operation.path);
    const list = LISTS[resource];
    if (!list) return;
    const isCollection = !operation.path.includes('{');
    if (operation.method === 'POST' && isCollection && status === 201)
      moved[resource] = (moved[resource] ?? 0) + 1;
    if (operation.method === 'DELETE' && /\/\{id\}$/.test(operation.path) && list.removedByDelete) {
      moved[resource] = (moved[resource] ?? 0) - 1;
    }
  }
});
