import { ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { waitFor, freePort } from '@licensing/shared/testing';
import { TestOrganization, TestStack, startStack } from './support/stack';

/**
 * The signature-verifying receivers of docs/webhooks.md, taken from the page as it is, run against
 * real deliveries: each must accept the platform's signed requests and refuse a forged one.
 */
const DOC = readFileSync(path.join(__dirname, '../../../docs/webhooks.md'), 'utf8');
const snippet = (language: string): string => {
  const match = new RegExp('```' + language + '\\n([\\s\\S]*?)```').exec(DOC);
  if (!match) throw new Error(`docs/webhooks.md has no ${language} block`);
  return match[1]!;
};
const RECEIVERS = [
  { name: 'Node.js', file: 'receiver.js', command: process.execPath, code: snippet('js') },
  { name: 'Python', file: 'receiver.py', command: 'python3', code: snippet('python') },
];

describe('the receivers of docs/webhooks.md, against real deliveries', () => {
  let stack: TestStack;
  let org: TestOrganization;
  let dir: string;
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    stack = await startStack({ env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', WEBHOOK_POLL_MS: '50' } });
    org = await stack.newOrganization();
    dir = mkdtempSync(path.join(tmpdir(), 'licensing-webhook-docs-'));
  });
  afterAll(async () => {
    for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
    await stack.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it.each(RECEIVERS)(
    '$name: verifies a real delivery, and refuses a forged one',
    async ({ file, command, code }) => {
      const port = await freePort();
      const webhook = (
        await org.api.post('/api/v1/webhooks', { url: `http://127.0.0.1:${port}/`, events: ['*'] })
      ).body;
      writeFileSync(path.join(dir, file), code);
      const child = spawn(command, [file], {
        cwd: dir,
        env: { ...process.env, PORT: String(port), WEBHOOK_SECRET: webhook.secret },
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      children.push(child);
      let printed = '';
      child.stdout!.on('data', (chunk: Buffer) => (printed += chunk.toString()));
      await waitFor(
        () =>
          new Promise<boolean>((resolve) => {
            const socket = connect(port, '127.0.0.1', () => {
              socket.end();
              resolve(true);
            }).on('error', () => resolve(false));
          }),
        { what: `${file} to listen` },
      );

      const test = await org.api.post(`/api/v1/webhooks/${webhook.id}/test`);
      expect(test.status).toBe(202);
      const [delivery] = await waitFor(
        async () => {
          const log = (await org.api.get(`/api/v1/webhooks/${webhook.id}/deliveries`)).body.deliveries;
          return log[0]?.status === 'delivered' && log;
        },
        { what: 'the delivery' },
      );
      expect(delivery).toMatchObject({ attempts: 1, last_status_code: 200 });
      await waitFor(() => printed.includes(`webhook.test ${test.body.event_id}`), {
        what: 'the printed event',
      });

      const forged = await fetch(`http://127.0.0.1:${port}/`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'licensing-signature': `t=${Math.floor(Date.now() / 1000)},v1=${'0'.repeat(64)}`,
        },
        body: JSON.stringify({ id: 'forged', type: 'license.revoked' }),
      });
      expect(forged.status).toBe(400);
      const stale = await fetch(`http://127.0.0.1:${port}/`, { method: 'POST', body: '{}' });
      expect(stale.status).toBe(400);
      expect(printed).not.toContain('forged');
    },
  );
});
