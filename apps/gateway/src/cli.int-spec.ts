import { PassThrough } from 'node:stream';
import { Client } from 'pg';
import { TEST_DATABASE_URL, testEnv, uniqueNamespace } from '@licensing/shared/testing';
import { runCli } from './cli';
import { hashApiKey } from './identity/api-key-issuer';

function capture() {
  const stream = new PassThrough();
  let text = '';
  stream.on('data', (chunk: Buffer) => (text += chunk.toString()));
  return { stream, text: () => text };
}

describe('npm run cli -- org create', () => {
  const env = testEnv(uniqueNamespace());

  it('creates an organization and prints its first admin key, stored only as a hash', async () => {
    const out = capture();
    const name = `Acme ${uniqueNamespace()}`;
    expect(await runCli(['org', 'create', name], out.stream, env)).toBe(0);
    const key = /^(lk_[A-Za-z0-9_-]{43})$/m.exec(out.text())?.[1];
    expect(out.text()).toContain(`Created organization "${name}"`);
    expect(key).toBeDefined();

    const db = new Client({ connectionString: TEST_DATABASE_URL });
    await db.connect();
    try {
      const { rows } = await db.query(
        `SELECT o.name, k.scopes, k.key_hash FROM identity.api_keys k JOIN identity.organizations o ON o.id = k.org_id
          WHERE o.name = $1`,
        [name],
      );
      expect(rows).toEqual([{ name, scopes: ['admin'], key_hash: hashApiKey(key!) }]);
    } finally {
      await db.end();
    }
  });

  it('refuses a second organization of the same name', async () => {
    const name = `Twice ${uniqueNamespace()}`;
    expect(await runCli(['org', 'create', name], capture().stream, env)).toBe(0);
    const err = capture();
    expect(await runCli(['org', 'create', name], capture().stream, env, err.stream)).toBe(1);
    expect(err.text()).toMatch(/already exists/);
  });

  it('prints its usage for anything else', async () => {
    const err = capture();
    expect(await runCli(['org', 'delete', 'x'], capture().stream, env, err.stream)).toBe(2);
    expect(err.text()).toMatch(/usage: npm run cli -- org create/);
  });
});
