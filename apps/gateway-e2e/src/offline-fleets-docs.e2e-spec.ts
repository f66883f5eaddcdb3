import { ChildProcess, execFile, spawn } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { apiKeyWithScopes, waitFor } from '@licensing/shared/testing';
import { productWithKeyPair } from './support/fixtures';
import { TestOrganization, TestStack, startStack } from './support/stack';

const run = promisify(execFile);
const ROOT = join(__dirname, '../../..');
const DOC = readFileSync(join(ROOT, 'docs/offline-fleets.md'), 'utf8');
const LIBRARY = join(ROOT, 'libs/license-verifier');

interface Block {
  /** The headings above it: `Signed answers / With the SDK`. */
  section: string;
  language: string;
  code: string;
}

/** Every fenced block of the page, under the `##` and `###` headings that hold it. */
function codeBlocks(page: string): Block[] {
  const blocks: Block[] = [];
  const headings: string[] = [];
  const lines = page.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const heading = /^(##+) (.*)$/.exec(lines[i]!);
    if (heading) {
      headings.splice(heading[1]!.length - 2, Infinity, heading[2]!);
      continue;
    }
    const fence = /^(\s*)```(\S*)$/.exec(lines[i]!);
    if (!fence) continue;
    const indent = fence[1]!.length;
    const code: string[] = [];
    for (i++; !/^\s*```$/.test(lines[i]!); i++) code.push(lines[i]!.slice(indent));
    blocks.push({ section: headings.join(' / '), language: fence[2]!, code: `${code.join('\n')}\n` });
  }
  return blocks;
}

const BLOCKS = codeBlocks(DOC);
/** The languages whose blocks are programs to run; the others show formats. */
const RUNNABLE = new Set(['js', 'javascript', 'ts', 'typescript', 'sh', 'bash', 'shell']);
const ran = new Set<Block>();

/** The `n`th block of `language` under `section`, marked as run. */
function block(section: string, language: string, n = 0): string {
  const found = BLOCKS.filter((b) => b.section === section && b.language === language)[n];
  if (!found) throw new Error(`docs/offline-fleets.md has no ${language} block ${n} under "${section}"`);
  ran.add(found);
  return found.code;
}

/**
 * Every JavaScript and shell block of docs/offline-fleets.md, taken from the page as it is and run
 * against a started platform: the JavaScript with Node, importing the verifier SDK as its package
 * is built and `jose` as installed, the shell with bash and curl. What the page leaves to the
 * reader (the API's address, a key, a machine's id, what "stop the application" does) is defined
 * before a block runs; every import, call and file of the block is its own. A block that stops
 * working (a missing import, a renamed function, a changed answer) fails here.
 */
describe('docs/offline-fleets.md, every snippet', () => {
  let stack: TestStack;
  let org: TestOrganization;
  let product: { id: string };
  let productPem: string;
  let clientKey: string;
  let dir: string;
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'offline-fleets-docs-'));
    // The package as an application installs it: its own build, under node_modules.
    const sdk = join(dir, 'node_modules/@licensing/license-verifier');
    mkdirSync(sdk, { recursive: true });
    cpSync(join(LIBRARY, 'package.json'), join(sdk, 'package.json'));
    symlinkSync(dirname(require.resolve('jose/package.json')), join(dir, 'node_modules/jose'));
    await Promise.all([
      run(process.execPath, [join(LIBRARY, 'build.js'), join(sdk, 'dist')]),
      (async () => {
        stack = await startStack();
        org = await stack.newOrganization();
        ({ product } = await productWithKeyPair(org.api));
        productPem = (await org.api.get(`/api/v1/products/${product.id}/public-key`)).body.public_key;
        clientKey = (await apiKeyWithScopes(org.api, ['client'])).key.key;
      })(),
    ]);
  }, 300_000);
  afterAll(async () => {
    for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
    await stack?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const api = () => `${stack.baseUrl}/v1`;

  async function newLicense(body: Record<string, unknown> = {}): Promise<{ id: string; serial: string }> {
    const created = await org.api.post('/api/v1/licenses', { product_id: product.id, ...body });
    expect(created.status).toBe(201);
    return created.body;
  }

  /**
   * Runs `code` as an ES module in the test's directory, after `context` (what the page leaves to
   * the reader) and before `report` (prints what the test checks). Resolves to its stdout.
   */
  async function runModule(
    name: string,
    { context = '', code, report = '' }: { context?: string; code: string; report?: string },
    env: Record<string, string> = {},
  ): Promise<string> {
    writeFileSync(join(dir, `${name}.mjs`), `${context}\n${code}\n${report}\n`);
    try {
      const { stdout } = await run(process.execPath, [`${name}.mjs`], {
        cwd: dir,
        env: { ...process.env, ...env },
        timeout: 30_000,
      });
      return stdout;
    } catch (error) {
      const { stderr, stdout } = error as { stderr?: string; stdout?: string };
      throw new Error(`${name}.mjs failed: ${stderr || stdout || (error as Error).message}`);
    }
  }

  /** Runs a shell command of the page with bash, in the test's directory. */
  async function runShell(command: string, env: Record<string, string>): Promise<string> {
    try {
      const { stdout } = await run('bash', ['-euo', 'pipefail', '-c', command], {
        cwd: dir,
        env: { ...process.env, ...env },
        timeout: 30_000,
      });
      return stdout;
    } catch (error) {
      throw new Error(`${command}\nfailed: ${(error as { stderr?: string }).stderr ?? String(error)}`);
    }
  }

  /** The license's file, as its download route gives it. */
  async function saveLicenseFile(id: string, name: string): Promise<void> {
    const response = await fetch(`${stack.baseUrl}/api/v1/licenses/${id}/download`, {
      headers: { authorization: `Bearer ${org.adminKey}` },
    });
    expect(response.status).toBe(200);
    writeFileSync(join(dir, name), Buffer.from(await response.arrayBuffer()));
  }

  it('Signed revocation lists, with the SDK: keeps the list, follows it by deltas, stops a revoked license', async () => {
    const license = await newLicense();
    await saveLicenseFile(license.id, 'license.lic');
    writeFileSync(join(dir, 'product.pem'), productPem);
    const code = block('Signed revocation lists / With the SDK', 'js');
    const context = `
const API = ${JSON.stringify(api())};
const PRODUCT_ID = ${JSON.stringify(product.id)};
const CLIENT_KEY = ${JSON.stringify(clientKey)};
const stopTheApplication = () => console.log('stopped');
globalThis.fetch = new Proxy(globalThis.fetch, {
  apply: async (target, self, args) => {
    const response = await Reflect.apply(target, self, args);
    console.log('fetched', new URL(args[0]).search || '(full)', response.status);
    return response;
  },
});`;
    const held = () => JSON.parse(readFileSync(join(dir, 'revocations.json'), 'utf8'));

    // First run: no list held, the full list is fetched and kept; the license runs.
    expect(await runModule('revocation-list', { context, code })).toBe('fetched (full) 200\n');
    const first = held();
    expect(first).toMatchObject({ product_id: product.id, entries: [] });

    // Revoked: the next run fetches a delta from the version held, and stops the application.
    expect((await org.api.delete(`/api/v1/licenses/${license.id}`)).status).toBe(200);
    expect(await runModule('revocation-list', { context, code })).toBe(
      `fetched ?since=${first.version} 200\nstopped\n`,
    );
    const second = held();
    expect(second.version).toBeGreaterThan(first.version);
    expect(second.entries).toMatchObject([{ serial: license.serial, status: 'revoked' }]);

    // Nothing changed since: 304, the list held stays, the application still stops.
    expect(await runModule('revocation-list', { context, code })).toBe(
      `fetched ?since=${second.version} 304\nstopped\n`,
    );
    expect(held()).toEqual(second);
  });

  it('Signed revocation lists, with plain jose: reads the revoked serials of a genuine list', async () => {
    const license = await newLicense();
    expect((await org.api.delete(`/api/v1/licenses/${license.id}`)).status).toBe(200);
    const response = await fetch(`${api()}/products/${product.id}/revocation-list`, {
      headers: { authorization: `Bearer ${clientKey}` },
    });
    expect(response.status).toBe(200);
    const jws = await response.text();
    const context = `
const productPem = ${JSON.stringify(productPem)};
const PRODUCT_ID = ${JSON.stringify(product.id)};
const jws = ${JSON.stringify(jws)};
const held = { version: 0 };`;
    const printed = await runModule('revocation-list-jose', {
      context,
      code: block('Signed revocation lists / With plain `jose`', 'js'),
      report: 'console.log(JSON.stringify([...revoked]));',
    });
    expect(JSON.parse(printed)).toContain(license.serial);

    // A list of another product is refused.
    await expect(
      runModule('revocation-list-jose-other', {
        context: context.replace(product.id, '00000000-0000-4000-8000-000000000000'),
        code: block('Signed revocation lists / With plain `jose`', 'js'),
      }),
    ).rejects.toThrow(/refused/);
  });

  it('Signed answers, with the SDK and with plain jose: a signed sync verifies both ways', async () => {
    const license = await newLicense();
    const keys = await fetch(`${api()}/organizations/current/response-keys`, {
      headers: { authorization: `Bearer ${clientKey}` },
    });
    expect(keys.status).toBe(200);
    writeFileSync(join(dir, 'response-keys.json'), await keys.text());
    // The plain jose block goes on from the SDK block: the same response, body and nonce.
    const printed = await runModule('signed-answers', {
      context: `
const API = ${JSON.stringify(api())};
const CLIENT_KEY = ${JSON.stringify(clientKey)};
const SERIAL = ${JSON.stringify(license.serial)};
const machineId = 'docs-machine-1';`,
      code: `${block('Signed answers / With the SDK', 'js')}\n${block('Signed answers / With plain `jose`', 'js')}`,
      report: 'console.log(JSON.stringify({ answer, typ: header.typ, nonce: header.nonce === nonce }));',
    });
    expect(JSON.parse(printed)).toMatchObject({
      answer: { status: 'ok' },
      typ: 'licensing-answer+jws',
      nonce: true,
    });
  });

  /** A stream of the page's curl command, in its own process group, and what it has printed. */
  function stream(command: string, env: Record<string, string>): { child: ChildProcess; out: () => string } {
    const child = spawn('bash', ['-c', command], {
      cwd: dir,
      env: { ...process.env, ...env },
      detached: true,
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    children.push(child);
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
    return { child, out: () => out };
  }
  const stop = (child: ChildProcess) => {
    if (child.exitCode === null) process.kill(-child.pid!, 'SIGTERM');
  };

  it('Push revocation, with curl: the ready event, a revocation as it happens, and a resumed stream', async () => {
    const license = await newLicense();
    const code = block('Push revocation / Worked example', 'sh');
    const commands = code
      .replace(/\\\n/g, '')
      .split('\n')
      .filter((line) => line.trim() !== '' && !line.startsWith('#'));
    expect(commands).toHaveLength(2);
    const revoke = /in another terminal: (curl [^)]*)\)/.exec(code)?.[1];
    expect(revoke).toBeDefined();
    const env = {
      API: api(),
      SERIAL: license.serial,
      CLIENT: clientKey,
      LICENSE: license.id,
      AUTH: `Authorization: Bearer ${org.adminKey}`,
    };

    const live = stream(commands[0]!, env);
    const ready = await waitFor(
      () => /id: (\d+)\nevent: ready\ndata: \{"serials":2\}\n/.exec(live.out()) ?? false,
      {
        what: 'the ready event',
      },
    );
    expect(live.out().startsWith('retry: ')).toBe(true);
    await runShell(revoke!, env);
    const revoked = await waitFor(
      () => /id: (\d+)\nevent: license\.revoked\ndata: (.*)\n/.exec(live.out().slice(ready.index)) ?? false,
      { what: 'the license.revoked event' },
    );
    expect(JSON.parse(revoked[2]!)).toMatchObject({
      type: 'license.revoked',
      serial: license.serial,
      status: 'revoked',
    });
    stop(live.child);

    // Resumed after the ready event's id (the page's 1841): the revocation, then ready.
    expect(commands[1]).toContain("'Last-Event-ID: 1841'");
    const resumed = stream(commands[1]!.replace('1841', ready[1]!), env);
    await waitFor(() => /event: ready\n/.test(resumed.out()), { what: 'the resumed ready event' });
    stop(resumed.child);
    expect(resumed.out()).toMatch(
      new RegExp(
        `id: ${revoked[1]}\nevent: license\\.revoked\ndata: .*"serial":"${license.serial}"[\\s\\S]*event: ready\n`,
      ),
    );
  });

  it('Push revocation, with the SDK: resumes from a stored event id, stops on the revocation, re-checks on a reset', async () => {
    const license = await newLicense();
    // Where the stream stands now: the id of a ready event, as an earlier run would have stored.
    const position = stream(
      `curl -sN "$API/licenses/events?serials=$SERIAL" -H "Authorization: Bearer $CLIENT"`,
      {
        API: api(),
        SERIAL: license.serial,
        CLIENT: clientKey,
      },
    );
    const ready = await waitFor(() => /id: (\d+)\nevent: ready\n/.exec(position.out()) ?? false, {
      what: 'the ready event',
    });
    stop(position.child);
    expect((await org.api.delete(`/api/v1/licenses/${license.id}`)).status).toBe(200);

    const code = block('Push revocation / Worked example', 'js');
    expect(code).toContain("const baseUrl = 'https://licensing.example.com';");
    const printed = await runModule(
      'push-revocation',
      {
        context: `
const licenseKey = ${JSON.stringify(license.serial)};
const loadLastEventId = async () => ${JSON.stringify(ready[1])};
const saveLastEventId = (id) => console.log('saved', id);
const stopTheApplication = (status) => {
  console.log('stopped', status);
  setImmediate(() => subscription.close());
};`,
        code: code.replace('https://licensing.example.com', stack.baseUrl),
      },
      { LICENSING_CLIENT_KEY: clientKey },
    );
    expect(printed).toMatch(/^stopped revoked\nsaved \d+\n$/);
    expect(Number(/saved (\d+)/.exec(printed)![1])).toBeGreaterThan(Number(ready[1]));

    // An id the service cannot resume from: reset, and the page's client re-checks the license.
    const active = await newLicense();
    const checked = await runModule(
      'push-revocation-reset',
      {
        context: `
const licenseKey = ${JSON.stringify(active.serial)};
const loadLastEventId = async () => '999999999999';
const saveLastEventId = (id) => console.log('saved', id);
const stopTheApplication = (status) => console.log('stopped', status);
globalThis.fetch = new Proxy(globalThis.fetch, {
  apply: async (target, self, args) => {
    const response = await Reflect.apply(target, self, args);
    if (String(args[0]).endsWith('/check-revocation')) {
      console.log('checked', response.status, JSON.stringify(await response.clone().json()));
      setImmediate(() => subscription.close());
    }
    return response;
  },
});`,
        code: code.replace('https://licensing.example.com', stack.baseUrl),
      },
      { LICENSING_CLIENT_KEY: clientKey },
    );
    expect(checked).toMatch(/^checked 200 /);
    expect(checked).toContain(active.serial);
    expect(checked).not.toContain('stopped');
  });

  it('Air-gapped activation: request, activation with curl, verification, release with curl', async () => {
    const license = await newLicense({ max_seats: 1 });
    const token = (await org.api.post(`/api/v1/licenses/${license.id}/tokens`, {})).body.token as string;
    writeFileSync(join(dir, 'product.pem'), productPem);
    const section = 'Air-gapped activation / Worked example';
    const context = `
const machineId = 'docs-air-gapped-1';
const cpuId = 'cpu-1';
const diskId = 'disk-1';`;
    const env = { API: api(), TOKEN: token };
    const seats = async () =>
      (await org.api.get(`/api/v1/activations?license_id=${license.id}`)).body.activations as unknown[];

    const request = block(section, 'js', 0);
    expect(request).toContain("licenseKey: 'LIC-CAD-7K3F9QX2M4W8T1ZC'");
    await runModule('activation-request', {
      context,
      code: request.replace('LIC-CAD-7K3F9QX2M4W8T1ZC', license.serial),
    });
    await runShell(block(section, 'sh', 0), env);
    expect(await seats()).toHaveLength(1);
    const printed = await runModule('activation-verify', { context, code: block(section, 'js', 1) });
    expect(printed).toMatch(/^activated until \d{4}-\d\d-\d\dT/);
    await runShell(block(section, 'sh', 1), env);
    expect(await seats()).toHaveLength(0);
  });

  it('runs every JavaScript and shell block of the page', () => {
    const runnable = BLOCKS.filter((b) => RUNNABLE.has(b.language));
    expect(runnable.length).toBeGreaterThanOrEqual(10);
    expect(runnable.filter((b) => !ran.has(b)).map((b) => `${b.section} (${b.language})`)).toEqual([]);
  });
});
