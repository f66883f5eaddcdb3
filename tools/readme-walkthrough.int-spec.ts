/**
 * The README's walk-through runs as written: its shell blocks marked `<!-- walkthrough -->`, in
 * order, in bash, against the platform started as `npm start` starts it (compiled, one process per
 * service, a `default` organization bootstrapped on first boot), on a database, bus namespace and
 * ports of its own. Twice in a row on the same platform, as a newcomer pasting it again would: a
 * walk-through that only works once is a broken walk-through.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  TEST_DATABASE_URL,
  TEST_NATS_URL,
  TEST_REDIS_URL,
  build,
  deleteNamespaceStreams,
  freePort,
  startPlatform,
  uniqueNamespace,
} from '@licensing/shared/testing';

const root = path.join(__dirname, '..');

/** The shell blocks that follow a `<!-- walkthrough -->` line, in README order. */
function walkthroughBlocks(markdown: string): string[] {
  return [...markdown.matchAll(/^<!-- walkthrough -->\n```sh\n([\s\S]*?)^```$/gm)].map((match) => match[1]!);
}

function run(
  script: string,
  cwd: string,
  env: Record<string, string>,
): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn('bash', ['-e', '-o', 'pipefail', '-c', script], {
      cwd,
      env: { ...process.env, ...env },
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('exit', (code) => resolve({ code, output }));
  });
}

describe("the README's walk-through", () => {
  const namespace = uniqueNamespace('readme');
  const dir = mkdtempSync(path.join(tmpdir(), 'readme-walkthrough-'));
  const logFile = path.join(dir, 'platform.log');
  let platform: Awaited<ReturnType<typeof startPlatform>> | undefined;

  afterAll(async () => {
    await platform?.stop();
    await deleteNamespaceStreams(namespace);
    rmSync(dir, { recursive: true, force: true });
  });

  it('finds the walk-through in the README', () => {
    const blocks = walkthroughBlocks(readFileSync(path.join(root, 'README.md'), 'utf8'));
    expect(blocks.length).toBeGreaterThanOrEqual(5);
    expect(blocks[0]).toContain('export API=');
  });

  it('runs as written, twice in a row, against a freshly started platform', async () => {
    build();
    platform = await startPlatform({
      databaseUrl: TEST_DATABASE_URL,
      namespace,
      natsUrl: TEST_NATS_URL,
      redisUrl: TEST_REDIS_URL,
      logFile,
      env: {
        NODE_ENV: 'development',
        LOG_LEVEL: 'warn',
        BOOTSTRAP_DEFAULT_ORG: 'true',
        WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      },
    });
    // What a newcomer copies from `npm start`'s first boot.
    const key = /export LICENSING_API_KEY=(lk_\S+)/.exec(readFileSync(logFile, 'utf8'))?.[1];
    expect(key).toBeDefined();

    const script = walkthroughBlocks(readFileSync(path.join(root, 'README.md'), 'utf8')).join('\n');
    for (const attempt of [1, 2]) {
      const env = {
        LICENSING_URL: platform.url,
        LICENSING_API_KEY: key!,
        HOOK_PORT: String(await freePort()),
      };
      const { code, output } = await run(script, dir, env);
      expect({ attempt, code, output: code === 0 ? '' : output }).toEqual({ attempt, code: 0, output: '' });
      expect(output).toMatch(/^valid /m);
      expect(output).toContain('"code":"VALID"');
      expect(output).toMatch(/d: 409/);
      expect(output).toMatch(/idempotent-replayed: true/i);
      // The walk-through cleans up after itself: no webhook is left to retry into its stopped
      // receiver, nor to deliver twice on the next run.
      const webhooks = await fetch(`${platform.url}/api/v1/webhooks`, {
        headers: { authorization: `Bearer ${key!}` },
      });
      expect(await webhooks.json()).toMatchObject({ webhooks: [], total: 0 });
    }
  }, 120_000);
});
