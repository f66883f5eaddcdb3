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

async function sqlRows(text: string, params: unknown[]): Promise<unknown[]> {
  const db = new Client({ connectionString: TEST_DATABASE_URL });
  await db.connect();
  try {
    return (await db.query(text, params)).rows;
  } finally {
    await db.end();
  }
}

describe('npm run operator -- org', () => {
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

  it("sets, shows and drops an organization's rate limits, by name or id", async () => {
    const name = `Limited ${uniqueNamespace()}`;
    const created = capture();
    expect(await runCli(['org', 'create', name], created.stream, env)).toBe(0);
    const id = /\(([0-9a-f-]{36})\)/.exec(created.text())![1]!;

    const set = capture();
    expect(
      await runCli(['org', 'limits', name, 'client=900000/1m', 'activations=120/1h'], set.stream, env),
    ).toBe(0);
    expect(set.text()).toMatch(/client\s+900000 per 60 s per API key \(this organization\)/);
    expect(set.text()).toMatch(/activations\s+120 per 3600 s per license \(this organization\)/);
    expect(set.text()).toMatch(/admin\s+30000 per 60 s per API key \(default\)/);
    const stored = () => sqlRows(`SELECT rate_limits FROM identity.organizations WHERE id = $1`, [id]);
    expect(await stored()).toEqual([
      {
        rate_limits: {
          client: { limit: 900000, window_seconds: 60 },
          activations: { limit: 120, window_seconds: 3600 },
        },
      },
    ]);

    const shown = capture();
    expect(await runCli(['org', 'limits', id], shown.stream, env)).toBe(0);
    expect(shown.text()).toMatch(/client\s+900000 per 60 s/);

    expect(
      await runCli(['org', 'limits', id, 'client=default', 'activations=default'], capture().stream, env),
    ).toBe(0);
    expect(await stored()).toEqual([{ rate_limits: null }]);
  });

  it('refuses malformed limits and unknown organizations', async () => {
    const err = capture();
    expect(await runCli(['org', 'limits', 'Acme', 'client=lots'], capture().stream, env, err.stream)).toBe(2);
    expect(err.text()).toMatch(/"client=lots" is not/);
    const missing = capture();
    expect(
      await runCli(['org', 'limits', `Nobody ${uniqueNamespace()}`], capture().stream, env, missing.stream),
    ).toBe(1);
    expect(missing.text()).toMatch(/does not exist/);
  });

  it('prints a new key of an existing organization, by name or id, with the scopes asked for', async () => {
    const name = `Keys ${uniqueNamespace()}`;
    const created = capture();
    expect(await runCli(['org', 'create', name], created.stream, env)).toBe(0);
    const id = /\(([0-9a-f-]{36})\)/.exec(created.text())![1]!;

    const admin = capture();
    expect(await runCli(['keys', 'create', '--org', name], admin.stream, env)).toBe(0);
    const adminKey = /^(lk_[A-Za-z0-9_-]{43})$/m.exec(admin.text())?.[1];
    expect(admin.text()).toContain(`of organization "${name}" (${id})`);
    const client = capture();
    expect(
      await runCli(
        ['keys', 'create', '--org', id, '--scopes', 'client', '--name', 'kiosk'],
        client.stream,
        env,
      ),
    ).toBe(0);
    const clientKey = /^(lk_[A-Za-z0-9_-]{43})$/m.exec(client.text())?.[1];

    const rows = await sqlRows(
      `SELECT name, scopes, key_hash FROM identity.api_keys WHERE org_id = $1 ORDER BY created_at`,
      [id],
    );
    expect(rows).toEqual([
      expect.objectContaining({ scopes: ['admin'] }),
      { name: 'admin (cli)', scopes: ['admin'], key_hash: hashApiKey(adminKey!) },
      { name: 'kiosk', scopes: ['client'], key_hash: hashApiKey(clientKey!) },
    ]);

    const missing = capture();
    expect(
      await runCli(
        ['keys', 'create', '--org', `Nobody ${uniqueNamespace()}`],
        capture().stream,
        env,
        missing.stream,
      ),
    ).toBe(1);
    expect(missing.text()).toMatch(/does not exist/);
    expect(
      await runCli(
        ['keys', 'create', '--org', name, '--scopes', 'root'],
        capture().stream,
        env,
        capture().stream,
      ),
    ).toBe(2);
  });

  it('answers --help for every command on stdout with exit status 0', async () => {
    for (const argv of [
      ['--help'],
      ['-h'],
      ['help'],
      ['org', '--help'],
      ['org', 'create', '--help'],
      ['org', 'limits', '--help'],
      ['keys', '--help'],
      ['keys', 'create', '--help'],
    ]) {
      const out = capture();
      expect({ argv, code: await runCli(argv, out.stream, env) }).toEqual({ argv, code: 0 });
      expect(out.text()).toMatch(/usage: npm run operator --/);
    }
  });

  it('prints its usage for anything else', async () => {
    const err = capture();
    expect(await runCli(['org', 'delete', 'x'], capture().stream, env, err.stream)).toBe(2);
    expect(err.text()).toMatch(/usage: npm run operator -- org create/);
  });
});
