import { randomBytes, randomUUID } from 'node:crypto';
import { INestApplication } from '@nestjs/common';
import { loadGatewayConfig, startGateway } from '@licensing/app/gateway';
import { loadLicenseServiceConfig, startLicenseService } from '@licensing/app/license-service';
import { loadWebhookServiceConfig, startWebhookService } from '@licensing/app/webhook-service';
import { verifySignedAnswer } from '@licensing/license-verifier';
import { ApiClient, waitFor } from '@licensing/shared/testing';
import { createLicense, productWithKeyPair, sql } from './support/fixtures';
import { TestOrganization, TestStack, startStack } from './support/stack';
import { WebhookReceiver, validSignatures } from './support/webhook-receiver';

const masterKey = (version: string) => `${version}:${randomBytes(32).toString('base64')}`;
const MASTER_KEY_SETTINGS = ['SIGNING_MASTER_KEYS', 'WEBHOOK_MASTER_KEYS', 'RESPONSE_MASTER_KEYS'] as const;

/**
 * Master keys rotated without downtime, as docs/operations.md says to: a new key put first in each
 * setting (`v2:…,v1:…`) on new replicas, which re-seal every stored secret in the background;
 * then replicas that know only `v2` sign licenses, webhooks and answers with what was stored under
 * `v1`. The old replicas keep running meanwhile and never move a row back.
 */
describe('master key rotation (SIGNING, WEBHOOK and RESPONSE_MASTER_KEYS)', () => {
  const v1 = Object.fromEntries(MASTER_KEY_SETTINGS.map((name) => [name, masterKey('v1')]));
  const v2 = Object.fromEntries(MASTER_KEY_SETTINGS.map((name) => [name, masterKey('v2')]));
  let stack: TestStack;
  let org: TestOrganization;
  let receiver: WebhookReceiver;
  const started: INestApplication[] = [];

  /** A license service, a webhook service and a gateway with these master key settings. */
  async function replicas(settings: Record<string, string>): Promise<ApiClient> {
    const env = { ...stack.env, ...settings, MASTER_KEY_RESEAL_MS: '100' };
    started.push(await startLicenseService(loadLicenseServiceConfig(env)));
    started.push(await startWebhookService(loadWebhookServiceConfig(env)));
    const gateway = await startGateway(loadGatewayConfig(env));
    started.push(gateway);
    const { port } = gateway.getHttpServer().address() as { port: number };
    return new ApiClient(`http://127.0.0.1:${port}`, org.adminKey);
  }

  beforeAll(async () => {
    stack = await startStack({
      env: { ...v1, WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', MASTER_KEY_RESEAL_MS: '100' },
    });
    org = await stack.newOrganization();
    receiver = await WebhookReceiver.start();
  });
  afterAll(async () => {
    for (const app of started.reverse()) await app.close().catch(() => undefined);
    await receiver.close();
    await stack.close();
  });

  it('re-seals every secret under the new key in the background, after which the old key can go', async () => {
    // Secrets sealed with v1: a signing key, a webhook secret (and a previous one), a response key.
    const { product } = await productWithKeyPair(org.api);
    const webhook = await org.api.post('/api/v1/webhooks', { url: receiver.url, events: ['*'] });
    expect(webhook.status).toBe(201);
    const rotated = await org.api.post(`/api/v1/webhooks/${webhook.body.id}/rotate-secret`);
    expect(rotated.status).toBe(200);
    expect((await org.api.get('/api/v1/organizations/current/response-keys')).status).toBe(200);
    const versions = async () =>
      (
        await sql<{ version: string }>(
          `SELECT master_key_version AS version FROM license.key_pairs WHERE org_id = $1
           UNION ALL SELECT secret_key_version FROM webhook.endpoints WHERE org_id = $1
           UNION ALL SELECT previous_secret_key_version FROM webhook.endpoints WHERE org_id = $1
           UNION ALL SELECT master_key_version FROM identity.response_keys WHERE org_id = $1`,
          [org.id],
        )
      ).map((row) => row.version);
    expect(await versions()).toEqual(['v1', 'v1', 'v1', 'v1']);

    // New replicas know v2 first and v1 still; the v1-only ones keep running beside them.
    await replicas(Object.fromEntries(MASTER_KEY_SETTINGS.map((name) => [name, `${v2[name]},${v1[name]}`])));
    await waitFor(async () => (await versions()).every((version) => version === 'v2'), {
      what: 'every secret re-sealed under v2',
    });

    // v1 removed: only v2-only replicas serve from here on.
    await Promise.all(['license-service', 'webhook-service'].map((name) => stack.stopService(name)));
    for (const app of started.splice(0)) await app.close();
    const api = await replicas(v2);

    const license = await createLicense(api, { product_id: product.id });
    expect(license.license_blob).toEqual(expect.any(String));
    const test = await api.post(`/api/v1/webhooks/${webhook.body.id}/test`);
    expect(test.status).toBe(202);
    const delivered = await waitFor(() => receiver.of((hook) => hook.body.id === test.body.event_id)[0], {
      what: 'the test event',
    });
    expect(validSignatures(delivered, rotated.body.secret as string)).toBe(1);
    expect(validSignatures(delivered, webhook.body.secret as string)).toBe(1);

    const nonce = randomUUID();
    const answer = await api.post(
      '/api/v1/licenses/validate',
      { key: license.serial },
      { 'licensing-nonce': nonce },
    );
    const jwks = (await api.get('/api/v1/organizations/current/response-keys')).body;
    const verified = await verifySignedAnswer(
      { body: answer.text, signature: answer.headers.get('licensing-signature'), nonce },
      jwks,
    );
    expect(verified.errors).toEqual([]);
  }, 120_000);
});
