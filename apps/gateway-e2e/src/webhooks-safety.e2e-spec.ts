import { createServer } from 'node:http';
import { AddressInfo } from 'node:net';
import { TestOrganization, TestStack, startStack } from './support/stack';

/**
 * With WEBHOOK_ALLOW_PRIVATE_NETWORKS off (the default everywhere but `npm start`), no webhook can
 * be pointed at this machine or the networks behind it. The delivery-time checks (DNS answers,
 * pinning, connect time) are proven against the sender itself in webhook-sender.int-spec.ts.
 */
describe('webhook destinations while private networks are not allowed', () => {
  let stack: TestStack;
  let org: TestOrganization;

  beforeAll(async () => {
    stack = await startStack({ env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'false' } });
    org = await stack.newOrganization();
  });
  afterAll(() => stack.close());

  it('refuses loopback, private, link-local and metadata addresses, a host name resolving to 127.0.0.1, and plain http, with 400 on url', async () => {
    const local = createServer((_request, response) => response.end('ok'));
    await new Promise<void>((resolve) => local.listen(0, '127.0.0.1', resolve));
    const port = (local.address() as AddressInfo).port;
    try {
      for (const url of [
        `https://127.0.0.1:${port}/hook`,
        `https://localhost:${port}/hook`,
        'https://10.0.0.8/hook',
        'https://192.168.1.10/hook',
        'https://169.254.169.254/latest/meta-data/',
        'https://[::1]/hook',
        'https://[::ffff:127.0.0.1]/hook',
        'https://0.0.0.0/hook',
        'http://hooks.example.test/hook',
      ]) {
        const response = await org.api.post('/api/v1/webhooks', { url, events: ['*'] });
        expect({ url, status: response.status, field: response.body.errors?.[0]?.field }).toEqual({
          url,
          status: 400,
          field: 'url',
        });
      }
      const accepted = await org.api.post('/api/v1/webhooks', {
        url: 'https://hooks.example.test/hook',
        events: ['*'],
      });
      expect(accepted.status).toBe(201);
      const moved = await org.api.put(`/api/v1/webhooks/${accepted.body.id}`, {
        url: `https://localhost:${port}/hook`,
      });
      expect(moved.status).toBe(400);
      expect((await org.api.get(`/api/v1/webhooks/${accepted.body.id}`)).body.url).toBe(
        'https://hooks.example.test/hook',
      );
    } finally {
      await new Promise<void>((resolve) => local.close(() => resolve()));
    }
  });
});
