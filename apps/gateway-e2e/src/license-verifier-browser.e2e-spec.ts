import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { chromium, type Browser, type Page } from 'playwright-core';
import type { verifyLicense as VerifyLicense } from '@licensing/license-verifier';
import { ensureChromium } from './support/chromium';
import { ALGORITHMS, issueLicenseFiles, verifierCases, type VerifierCase } from './support/license-files';
import { TestStack, startStack } from './support/stack';

const LIBRARY = join(__dirname, '../../../libs/license-verifier');

/**
 * The verifier's published ESM build in a real browser (headless Chromium): served from a local
 * origin as a page would load it, it verifies the license files the running service issued, with
 * the same answers as in Node. A module that imported anything from `node:` (or any package) would
 * not even load there.
 */
describe('the verifier SDK in a browser', () => {
  let stack: TestStack;
  let browser: Browser;
  let page: Page;
  let server: Server;
  let origin: string;
  const build = mkdtempSync(join(tmpdir(), 'license-verifier-esm-'));
  const cases: VerifierCase[] = [];
  const requested: string[] = [];

  beforeAll(async () => {
    const [executablePath] = await Promise.all([
      ensureChromium(),
      promisify(execFile)(process.execPath, [join(LIBRARY, 'build.js'), build]),
      (async () => {
        stack = await startStack();
        const org = await stack.newOrganization();
        for (const files of await Promise.all(ALGORITHMS.map((a) => issueLicenseFiles(org.api, a)))) {
          cases.push(...verifierCases(files));
        }
      })(),
    ]);
    server = createServer((request, response) => {
      const name = /^\/verifier\/([a-z-]+\.js)$/.exec(request.url ?? '')?.[1];
      if (request.url === '/') {
        response.setHeader('content-type', 'text/html');
        response.end('<!doctype html><title>verifier</title>');
      } else if (name && readdirSync(join(build, 'esm')).includes(name)) {
        response.setHeader('content-type', 'text/javascript');
        response.end(readFileSync(join(build, 'esm', name)));
      } else {
        response.statusCode = 404;
        response.end();
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    if (typeof address !== 'object' || address === null) throw new Error('not listening');
    // 127.0.0.1 is a secure context, where browsers expose crypto.subtle.
    origin = `http://127.0.0.1:${address.port}`;
    browser = await chromium.launch({ executablePath });
    page = await browser.newPage();
    page.on('request', (request) => requested.push(request.url()));
    await page.goto(`${origin}/`);
  }, 600_000);
  afterAll(async () => {
    await browser?.close();
    server?.close();
    rmSync(build, { recursive: true, force: true });
    await stack?.close();
  });

  it('verifies every case with the expected codes, for the three algorithms', async () => {
    // Loaded as a page loads it, by a module script (a function handed to page.evaluate would be
    // compiled to CommonJS by the test runner, import() and all).
    await page.addScriptTag({
      type: 'module',
      content: "import * as verifier from '/verifier/index.js'; window.licenseVerifier = verifier;",
    });
    await page.waitForFunction(() => 'licenseVerifier' in globalThis);
    const answers = await page.evaluate(async (all) => {
      const { verifyLicense } = (
        globalThis as unknown as { licenseVerifier: { verifyLicense: typeof VerifyLicense } }
      ).licenseVerifier;
      return Promise.all(
        all.map(async (c) => {
          const result = await verifyLicense(c.input, c.publicKey as string, c.options);
          return { name: c.name, valid: result.valid, codes: result.errors.map((e) => e.code) };
        }),
      );
    }, cases);
    expect(answers).toEqual(
      cases.map((c) => ({ name: c.name, valid: c.expected.length === 0, codes: c.expected })),
    );
    expect(cases.filter((c) => c.expected.length === 0).map((c) => c.algorithm)).toEqual(
      expect.arrayContaining(ALGORITHMS),
    );
  });

  it('loads the ESM build from its own files only, importing nothing from node:', () => {
    const modules = requested.filter((url) => url.startsWith(`${origin}/verifier/`));
    expect(modules).toContain(`${origin}/verifier/index.js`);
    expect(requested.filter((url) => !url.startsWith(`${origin}/`))).toEqual([]);
    for (const file of readdirSync(join(build, 'esm')).filter((f) => f.endsWith('.js'))) {
      expect({
        file,
        node: /['"]node:|require\(/.test(readFileSync(join(build, 'esm', file), 'utf8')),
      }).toEqual({
        file,
        node: false,
      });
    }
  });
});
