import { execFile } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { chromium, type Browser, type BrowserContext, type Locator, type Page } from 'playwright-core';
import { verifyLicense } from '@licensing/license-verifier';
import { apiKeyWithScopes, decodeBlob, waitFor } from '@licensing/shared/testing';
import { ensureChromium } from './support/chromium';
import { TestOrganization, TestStack, startStack } from './support/stack';
import { WebhookReceiver, validSignatures } from './support/webhook-receiver';

const ROOT = join(__dirname, '../../..');
/** Test artefacts (gitignored): one screenshot per page, desktop and phone. */
const SCREENSHOTS = join(ROOT, 'tmp/console-screenshots');
const AXE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
const PAGES = [
  'overview',
  'licenses',
  'products',
  'entitlements',
  'policies',
  'key-pairs',
  'api-keys',
  'webhooks',
  'settings',
] as const;
/** What a `read` key may see of the controls: navigation, search, downloads, paging. */
const READ_ONLY_BUTTONS = new Set([
  'Sign out',
  'Search',
  'Download .lic',
  'Download public key',
  'Previous',
  'Next',
]);
const PHONE = { width: 390, height: 844 };

/**
 * The console in headless Chromium against the whole platform, as a user drives it: sign in with
 * an organization's key, create a key pair, a product and a license, find it, revoke it, see a sync
 * on the overview, create and revoke a license token, change the organization's settings, and the
 * same pages read-only with a `read` key. Every page passes axe-core with
 * no serious or critical violation, and the console runs under its CSP without a single violation.
 */
describe('the console in a browser', () => {
  let stack: TestStack;
  let org: TestOrganization;
  let browser: Browser;
  const contexts: BrowserContext[] = [];
  /** Console messages and page errors, every page: a CSP violation or a crash shows here. */
  const problems: string[] = [];
  const email = `console-${Date.now()}@example.com`;

  beforeAll(async () => {
    mkdirSync(SCREENSHOTS, { recursive: true });
    const [executablePath] = await Promise.all([
      ensureChromium(),
      (async () => {
        // Built (when stale) before the gateway starts: it looks for the build once, at boot.
        await promisify(execFile)(process.execPath, [join(ROOT, 'tools/build-console.js')]);
        // Webhooks reach the test's receiver on 127.0.0.1, and are picked up at once.
        stack = await startStack({ env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', WEBHOOK_POLL_MS: '50' } });
        org = await stack.newOrganization();
      })(),
    ]);
    browser = await chromium.launch({ executablePath });
  }, 300_000);
  afterAll(async () => {
    await browser?.close();
    await stack?.close();
  });

  async function newPage(viewport = { width: 1280, height: 900 }): Promise<Page> {
    const context = await browser.newContext({ viewport });
    contexts.push(context);
    // A control that never appears fails its step with the locator's name, before jest's timeout.
    // A page shows in well under a second here; in CI this spec shares the two cores with the
    // scale-out spec's dozen processes, and a license's page once took over 10 s to show.
    context.setDefaultTimeout(20_000);
    const page = await context.newPage();
    // A refused request is the console's to show (the wrong-key test makes one); a CSP violation
    // or any other error is a fault.
    page.on('console', (message) => {
      if (message.type() === 'error' && !message.text().startsWith('Failed to load resource'))
        problems.push(`${page.url()}: ${message.text()}`);
    });
    page.on('pageerror', (error) => problems.push(`${page.url()}: ${error.message}`));
    return page;
  }

  async function signIn(page: Page, key: string): Promise<void> {
    await page.goto(`${stack.baseUrl}/console/`);
    await page.getByLabel('Organization API key').fill(key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    // Signed in (the navigation shows) or refused (an alert): a page opened before the sign-in has
    // finished would be replaced by the console's first page once it does.
    await page.getByRole('navigation').or(page.getByRole('alert')).first().waitFor();
  }

  async function open(page: Page, path: string, heading: string): Promise<void> {
    await page.goto(`${stack.baseUrl}/console/#/${path}`);
    await page.getByRole('heading', { level: 1, name: heading }).waitFor();
    await page.locator('[role=status]:has-text("Loading")').first().waitFor({ state: 'detached' });
  }

  /** Waits for what an action shows, or fails with the problem the console shows instead. */
  async function expectShown(page: Page, shown: Locator): Promise<void> {
    const alert = page.getByRole('alert');
    await shown.or(alert).first().waitFor();
    if ((await alert.count()) > 0) throw new Error(`the console said: ${await alert.first().textContent()}`);
  }

  /** axe-core, evaluated through the DevTools protocol (the page's CSP allows no injected script). */
  async function seriousViolations(page: Page): Promise<string[]> {
    await page.evaluate(AXE);
    const violations = (await page.evaluate(
      `axe.run(document).then((r) => r.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.map((n) => n.target.join(' ')) })))`,
    )) as { id: string; impact: string; nodes: string[] }[];
    return violations
      .filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map((v) => `${v.id} (${v.impact}): ${v.nodes.join(', ')}`);
  }

  /** What a create form says once it made something: its name (or serial) and its id. */
  async function expectCreated(page: Page, ...texts: string[]): Promise<void> {
    const notice = page.getByTestId('created');
    await expectShown(page, notice);
    const text = (await notice.textContent())!;
    for (const expected of texts) expect(text).toContain(expected);
  }

  /** Whether two elements sit on one row: their boxes overlap vertically. */
  async function sameRow(a: Locator, b: Locator): Promise<boolean> {
    const [one, two] = [(await a.boundingBox())!, (await b.boundingBox())!];
    return one.y < two.y + two.height && two.y < one.y + one.height;
  }

  async function checkPage(page: Page, name: string): Promise<void> {
    await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });
    expect({ page: name, violations: await seriousViolations(page) }).toEqual({ page: name, violations: [] });
  }

  it('is served without a key: index.html no-cache, hashed assets immutable, a strict CSP', async () => {
    const redirect = await fetch(`${stack.baseUrl}/console`, { redirect: 'manual' });
    expect([redirect.status, redirect.headers.get('location')]).toEqual([301, '/console/']);
    const index = await fetch(`${stack.baseUrl}/console/`);
    expect(index.status).toBe(200);
    expect(index.headers.get('content-type')).toMatch(/^text\/html/);
    expect(index.headers.get('cache-control')).toBe('no-cache');
    const csp = index.headers.get('content-security-policy') ?? '';
    for (const directive of [
      "default-src 'self'",
      "script-src 'self'",
      "connect-src 'self'",
      "frame-ancestors 'none'",
      "object-src 'none'",
    ])
      expect(csp).toContain(directive);
    expect(csp).not.toContain('unsafe-inline');
    expect(index.headers.get('x-frame-options')).toBe('DENY');
    const html = await index.text();
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/); // no inline script
    const assets = [...html.matchAll(/(?:src|href)="(\/console\/assets\/[^"]+)"/g)].map((m) => m[1]!);
    expect(assets.length).toBeGreaterThanOrEqual(2);
    for (const asset of assets) {
      expect(asset).toMatch(/-[A-Za-z0-9_-]{8}\.(js|css)$/);
      const response = await fetch(`${stack.baseUrl}${asset}`);
      expect([asset, response.status, response.headers.get('cache-control')]).toEqual([
        asset,
        200,
        'public, max-age=31536000, immutable',
      ]);
      expect(response.headers.get('content-security-policy')).toBe(csp);
    }
    expect((await fetch(`${stack.baseUrl}/console/assets/missing.js`)).status).toBe(404);
  });

  it('tells a wrong key what went wrong, and keeps it out', async () => {
    const page = await newPage();
    await signIn(page, 'lk_not-a-key-of-anyone-0000000000000000000000000');
    await expect(page.getByRole('alert').textContent()).resolves.toMatch(
      /This API key was refused: .*unknown.* revoked/,
    );
    expect(await page.getByRole('navigation', { name: 'Pages' }).count()).toBe(0);
    await checkPage(page, 'sign-in-refused');
  });

  it('signs in with an admin key: creates a key pair, a product and a license, finds it by e-mail, revokes it', async () => {
    const page = await newPage();
    await signIn(page, org.adminKey);
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    // The key lives in this tab's sessionStorage, never in localStorage.
    expect(await page.evaluate('Object.keys(localStorage).length')).toBe(0);
    expect(await page.evaluate('Object.values(sessionStorage)')).toEqual([org.adminKey]);

    await open(page, 'key-pairs', 'Key pairs');
    await page.getByLabel('Key pair name').fill('console signing');
    await page.getByRole('button', { name: 'Create key pair' }).click();
    await expectShown(page, page.getByRole('heading', { level: 2, name: 'console signing' }));
    const keyPair = (await org.api.get('/api/v1/key-pairs')).body.key_pairs.find(
      (k: { name: string }) => k.name === 'console signing',
    );
    await expectCreated(page, 'console signing', keyPair.id);
    await expect(page.getByLabel('Key pair name').inputValue()).resolves.toBe('');

    await open(page, 'products', 'Products');
    await page.getByText('Create a product').click();
    await page.getByLabel('Name').fill('Console Editor');
    await page.getByLabel('Code').fill('console-editor');
    await page.getByLabel('Default features').fill('pro, export');
    await page.getByRole('button', { name: 'Create product' }).click();
    await expectShown(page, page.getByRole('heading', { level: 2, name: 'Console Editor' }));
    const product = (await org.api.get('/api/v1/products')).body.products[0];
    await expectCreated(page, 'Console Editor (console-editor)', product.id);
    for (const field of ['Name', 'Code', 'Default features'])
      await expect(page.getByLabel(field).inputValue()).resolves.toBe('');

    await open(page, 'policies', 'Policies');
    await page.getByText('Create a policy').click();
    await page.getByLabel('Policy name').fill('Console team');
    await page.getByLabel('Machines').fill('3');
    await page.getByLabel('Processes per machine').fill('2');
    await page.getByLabel('Overage').selectOption('1.5x');
    await page.getByRole('button', { name: 'Create policy' }).click();
    await expectShown(page, page.getByRole('heading', { level: 2, name: 'Console team' }));
    const policies = await org.api.get('/api/v1/policies');
    const policy = policies.body.policies.find((p: { name: string }) => p.name === 'Console team');
    await expectCreated(page, 'Console team', policy.id);
    await expect(page.getByLabel('Policy name').inputValue()).resolves.toBe('');
    await expect(page.getByLabel('Machines').inputValue()).resolves.toBe('1');
    await expect(page.getByLabel('Overage').inputValue()).resolves.toBe('none');
    expect(policy).toMatchObject({
      max_machines: 3,
      max_processes: 2,
      overage: '1.5x',
      heartbeat_interval_seconds: null,
    });

    await open(page, 'licenses', 'Licenses');
    await page.getByText('Create a license').click();
    await page.getByLabel('Customer e-mail').first().fill(email);
    await page.getByRole('button', { name: 'Create license' }).click();
    const created = page.getByRole('status').filter({ hasText: 'Created the license LIC-CONSOLE-EDITOR-' });
    await expectShown(page, created);
    const serial = (await created.getByRole('link').textContent())!;
    const license = (await org.api.get(`/api/v1/licenses?serial=${serial}`)).body.licenses[0];
    await expectCreated(page, serial, email, license.id);
    await expect(page.getByLabel('Customer e-mail').first().inputValue()).resolves.toBe('');

    // Find it by e-mail (the search form's field, not the create form's).
    await page.reload();
    await page.getByRole('search').getByLabel('Customer e-mail').fill(email.toUpperCase());
    await page.getByRole('search').getByRole('button', { name: 'Search' }).click();
    const rows = page.locator('tbody tr');
    await expect(rows.count()).resolves.toBeGreaterThan(0);
    await page.getByRole('link', { name: serial }).waitFor();
    expect(await rows.count()).toBe(1);
    // The search button sits on the row of the search's fields.
    const search = page.getByRole('search');
    expect(await sameRow(search.getByRole('button', { name: 'Search' }), search.getByLabel('Serial'))).toBe(
      true,
    );
    await checkPage(page, 'licenses');

    // And by serial.
    await page.getByRole('search').getByLabel('Customer e-mail').fill('');
    await page.getByRole('search').getByLabel('Serial').fill(serial.toLowerCase());
    await page.getByRole('search').getByRole('button', { name: 'Search' }).click();
    await page.getByRole('link', { name: serial }).click();

    await page.getByRole('heading', { level: 1, name: serial }).waitFor();
    await expect(page.locator('.page-head .badge').textContent()).resolves.toBe('active');
    await page.getByRole('button', { name: 'Revoke', exact: true }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Revoke license' }).click();
    await page.locator('.page-head .badge', { hasText: 'revoked' }).waitFor();
    await page.getByRole('button', { name: 'Revoke', exact: true }).waitFor({ state: 'detached' });
    await page.locator('.audit li', { hasText: 'revoked' }).waitFor();
    await checkPage(page, 'license-detail');

    const licenses = await org.api.get(`/api/v1/licenses?serial=${serial}`);
    expect(licenses.body.licenses.map((l: { status: string }) => l.status)).toEqual(['revoked']);

    for (const name of PAGES.filter((p) => p !== 'licenses')) {
      await open(page, name, (await page.locator(`nav a[href="#/${name}"]`).textContent())!);
      await checkPage(page, name);
    }
  }, 60_000);

  it("creates an entitlement, attaches it to a license and detaches it, and resets the license's uses", async () => {
    const page = await newPage();
    await signIn(page, org.adminKey);
    const code = `console.export-${Date.now().toString(36)}`;
    await open(page, 'entitlements', 'Entitlements');
    await page.getByLabel('Code').fill(code);
    await page.getByLabel('Entitlement name').fill('Console export');
    await page.getByRole('button', { name: 'Create entitlement' }).click();
    await expectShown(page, page.getByRole('cell', { name: code }));
    const entitlement = (await org.api.get('/api/v1/entitlements?per_page=100')).body.entitlements.find(
      (e: { code: string }) => e.code === code,
    );
    await expectCreated(page, code, entitlement.id);
    await expect(page.getByLabel('Code').inputValue()).resolves.toBe('');
    await expect(page.getByLabel('Entitlement name').inputValue()).resolves.toBe('');
    await checkPage(page, 'entitlements');

    const product = (await org.api.get('/api/v1/products')).body.products[0];
    const license = await org.api.post('/api/v1/licenses', { product_id: product.id, max_uses: 10 });
    expect(license.status).toBe(201);
    await org.api.post(`/api/v1/licenses/${license.body.id}/usage`, { increment: 3 });
    await open(page, `licenses/${license.body.id}`, license.body.serial);
    await page.getByText('3 of 10').waitFor();
    await page.getByLabel('Entitlement to attach').selectOption(code);
    await page.getByRole('button', { name: 'Attach', exact: true }).click();
    await expectShown(page, page.getByRole('button', { name: `Detach ${code}` }));
    expect((await org.api.get(`/api/v1/licenses/${license.body.id}`)).body.entitlements).toEqual([code]);
    await checkPage(page, 'license-entitlements');

    await page.getByRole('button', { name: 'Reset uses' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Reset uses' }).click();
    await page.getByText('0 of 10').waitFor();
    await page.getByRole('button', { name: `Detach ${code}` }).click();
    await page.getByRole('button', { name: `Detach ${code}` }).waitFor({ state: 'detached' });
    expect((await org.api.get(`/api/v1/licenses/${license.body.id}`)).body).toMatchObject({
      entitlements: [],
      uses: 0,
    });
  }, 60_000);

  it('shows a sync posted through the API on the overview chart', async () => {
    const licensed = await org.api.post('/api/v1/licenses', {
      product_id: (await org.api.get('/api/v1/products')).body.products[0].id,
      customer_email: email,
    });
    const client = await apiKeyWithScopes(org.api, ['client']);
    const sync = await client.api.post('/api/v1/licenses/sync', {
      license_serial: licensed.body.serial,
      hardware_fingerprint: 'console-machine',
      app_version: '7.1.0',
      features_used: ['pro'],
    });
    expect(sync.status).toBe(200);

    const page = await newPage();
    await signIn(page, org.adminKey);
    const hourly = page.getByRole('img', { name: /^Last 24 hours, per hour: 1 syncs$/ });
    // The analytics service counts a report within about a second of its sync.
    for (let attempt = 0; (await hourly.count()) === 0; attempt++) {
      if (attempt === 40) throw new Error('the overview never showed the sync');
      await page.waitForTimeout(250);
      await page.reload();
      await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
      await page.locator('[role=status]:has-text("Loading")').first().waitFor({ state: 'detached' });
    }
    await page.getByRole('img', { name: /^Last 30 days, per day: 1 syncs$/ }).waitFor();
    // Counts per bucket are bars: the one sync is a bar in the last hour, and nothing is drawn
    // across the empty hours (a line would run along them, then climb into the last one).
    const drawn = await syncPixels(page, 'Last 24 hours, per hour');
    expect(drawn.columns).toBeGreaterThanOrEqual(3);
    expect(drawn.minX).toBeGreaterThan(drawn.width * 0.85);
    expect(drawn.maxX - drawn.minX).toBeLessThan(drawn.width / 20);
    expect(drawn.top).toBeLessThan(drawn.height / 2);
    // The legend names the series, and has no readout of the pointer ("Time: --").
    for (const legend of await page.locator('figure.chart').allTextContents()) {
      expect(legend).toContain('Syncs');
      expect(legend).not.toMatch(/Time|--/);
    }
    await page.getByRole('cell', { name: '7.1.0' }).waitFor();
    await page.getByRole('cell', { name: 'pro', exact: true }).waitFor();
    await expect(page.getByTestId('count-revoked').textContent()).resolves.toBe('1');
    await expect(page.getByTestId('active-machines').textContent()).resolves.toBe('1');
    await checkPage(page, 'overview-with-sync');
  }, 60_000);

  /**
   * Where a chart's canvas is painted in the first series' colour (#1f5fbf, opaque): its columns,
   * leftmost and rightmost, and the topmost row, in canvas pixels.
   */
  async function syncPixels(
    page: Page,
    title: string,
  ): Promise<{ width: number; height: number; columns: number; minX: number; maxX: number; top: number }> {
    return (await page.evaluate(`(() => {
      const figure = [...document.querySelectorAll('figure.chart')].find(
        (f) => f.querySelector('figcaption').textContent === ${JSON.stringify(title)},
      );
      const canvas = figure.querySelector('canvas');
      const { width, height } = canvas;
      const pixels = canvas.getContext('2d').getImageData(0, 0, width, height).data;
      const columns = new Set();
      let top = height;
      for (let y = 0; y < height; y++)
        for (let x = 0; x < width; x++) {
          const i = (y * width + x) * 4;
          const near = (value, target) => Math.abs(value - target) < 6;
          if (near(pixels[i], 31) && near(pixels[i + 1], 95) && near(pixels[i + 2], 191) && pixels[i + 3] > 250) {
            columns.add(x);
            top = Math.min(top, y);
          }
        }
      return { width, height, columns: columns.size, minX: Math.min(...columns), maxX: Math.max(...columns), top };
    })()`)) as { width: number; height: number; columns: number; minX: number; maxX: number; top: number };
  }

  /**
   * The elements that reach past the right edge of the screen, outside a region that scrolls on
   * its own, and how wide the page is (wider than the screen: it scrolls sideways).
   */
  async function widerThanScreen(page: Page): Promise<{ width: number; elements: string[] }> {
    return (await page.evaluate(`({
      width: document.documentElement.scrollWidth,
      elements: [...document.querySelectorAll('body *')]
        .filter((e) => e.getBoundingClientRect().right > document.documentElement.clientWidth + 0.5)
        .filter((e) => !e.closest('.table-wrap, .payload'))
        .map((e) => e.tagName.toLowerCase() + (typeof e.className === 'string' && e.className ? '.' + e.className.split(' ').join('.') : ''))
        .slice(0, 5),
    })`)) as { width: number; elements: string[] };
  }

  it('fits a phone: every page link in view, the search button beside a field, every page passing axe', async () => {
    const phone = await newPage(PHONE);
    await signIn(phone, org.adminKey);
    await phone.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    const links = phone.getByRole('navigation', { name: 'Pages' }).getByRole('link');
    expect(await links.count()).toBe(PAGES.length);
    // Nothing wider than the screen, and each link wholly on it without scrolling.
    expect(await widerThanScreen(phone)).toEqual({ width: PHONE.width, elements: [] });
    for (const link of await links.all()) {
      const box = (await link.boundingBox())!;
      expect({
        link: await link.textContent(),
        inView: box.x >= 0 && box.x + box.width <= PHONE.width && box.y + box.height <= PHONE.height,
      }).toEqual({ link: await link.textContent(), inView: true });
    }
    for (const name of PAGES) {
      const title = (await phone.locator(`nav a[href="#/${name}"]`).textContent())!;
      await phone.locator(`nav a[href="#/${name}"]`).click();
      await phone.getByRole('heading', { level: 1, name: title }).waitFor();
      await phone.locator('[role=status]:has-text("Loading")').first().waitFor({ state: 'detached' });
      expect({ page: name, ...(await widerThanScreen(phone)) }).toEqual({
        page: name,
        width: PHONE.width,
        elements: [],
      });
      await checkPage(phone, `phone-${name}`);
    }
    await open(phone, 'licenses', 'Licenses');
    const search = phone.getByRole('search');
    expect(await sameRow(search.getByRole('button', { name: 'Search' }), search.getByLabel('Status'))).toBe(
      true,
    );
  }, 60_000);

  /** A new license of the product the admin test made, through the API. */
  async function newLicense(
    body: Record<string, unknown> = {},
  ): Promise<{ id: string; serial: string; product_id: string }> {
    const created = await org.api.post('/api/v1/licenses', {
      product_id: (await org.api.get('/api/v1/products')).body.products[0].id,
      customer_email: email,
      ...body,
    });
    expect(created.status).toBe(201);
    return created.body;
  }

  /** A relay request as `licensing-relay init` writes it: the site and a new Ed25519 public key. */
  function relayRequest(site: string): { site: string; public_key: string; text: string } {
    const { publicKey } = generateKeyPairSync('ed25519');
    const public_key = publicKey.export({ type: 'spki', format: 'pem' }).toString();
    return { site, public_key, text: JSON.stringify({ v: 1, kind: 'relay_request', site, public_key }) };
  }

  it("issues a relay file on a floating license's page from a pasted request, downloads it, lists it", async () => {
    const license = await newLicense({ license_type: 'floating', max_seats: 5 });
    const page = await newPage();
    await signIn(page, org.adminKey);
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    await open(page, `licenses/${license.id}`, license.serial);
    const section = page.getByRole('region', { name: 'Relay files', exact: true });
    await section.getByText('No relay file has been issued for this license.').waitFor();
    const form = section.getByRole('form', { name: 'Issue a relay file' });

    // Refused at the field: a pasted text that is no relay request, a lifetime out of range (the
    // form's own checks), and a public key the API refuses.
    await form.getByLabel(/^Relay request/).fill('{"site": "Plant 4"');
    await expect(fieldError(form.getByLabel(/^Relay request/))).resolves.toMatch(
      /^The relay request is not JSON/,
    );
    await form.getByLabel(/^Relay request/).fill('');
    await form.getByLabel(/^Site/).fill('Plant 4, building B');
    await form.getByLabel(/^Public key/).fill(relayRequest('x').public_key);
    await form.getByLabel(/^Lifetime/).fill('400');
    await form.getByRole('button', { name: 'Issue relay file' }).click();
    await expect(fieldError(form.getByLabel(/^Lifetime/))).resolves.toBe(
      'The lifetime must be between 1 hour and 365 days.',
    );
    await form.getByLabel(/^Lifetime/).fill('');
    await form
      .getByLabel(/^Public key/)
      .fill('-----BEGIN PUBLIC KEY-----\nnot a key\n-----END PUBLIC KEY-----\n');
    await form.getByRole('button', { name: 'Issue relay file' }).click();
    await expect(fieldError(form.getByLabel(/^Public key/))).resolves.toMatch(/public_key|key/);
    expect(await form.getByLabel(/^Site/).getAttribute('aria-invalid')).toBeNull();
    await checkPage(page, 'relay-file-refused');
    expect((await org.api.get(`/api/v1/relay-files?license_id=${license.id}`)).body.total).toBe(0);

    // The pasted request fills the site and the public key; 36 hours of lifetime.
    const request = relayRequest('Plant 4, building B');
    await form.getByLabel(/^Public key/).fill('');
    await form.getByLabel(/^Site/).fill('');
    await form.getByLabel(/^Relay request/).fill(request.text);
    await expect(form.getByLabel(/^Site/).inputValue()).resolves.toBe(request.site);
    await expect(form.getByLabel(/^Public key/).inputValue()).resolves.toBe(request.public_key);
    await form.getByLabel(/^Lifetime/).fill('36');
    await form.getByLabel(/^Unit/).selectOption('hours');
    await form.getByRole('button', { name: 'Issue relay file' }).click();
    const issued = section.getByTestId('issued-relay-file');
    await expectShown(page, issued);
    const listed = (await org.api.get(`/api/v1/relay-files?license_id=${license.id}`)).body;
    expect(listed).toMatchObject({
      total: 1,
      relay_files: [{ site: request.site, public_key: request.public_key }],
    });
    const [record] = listed.relay_files;
    expect((Date.parse(record.expires_at) - Date.parse(record.issued_at)) / 1000).toBe(129_600);
    await expect(issued.textContent()).resolves.toContain(record.id);
    for (const field of [/^Relay request/, /^Site/, /^Public key/])
      await expect(form.getByLabel(field).inputValue()).resolves.toBe('');
    const row = section.locator('tbody tr', { hasText: record.id });
    await row.getByRole('cell', { name: request.site }).waitFor();
    expect(await row.getByText('expired').count()).toBe(0);
    await checkPage(page, 'relay-file-issued');

    // The download is the relay file itself: the license file with the claim relay.
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      issued.getByRole('button', { name: 'Download .relay.lic' }).click(),
    ]);
    expect(download.suggestedFilename()).toBe(`${license.serial}.relay.lic`);
    const file = readFileSync((await download.path())!);
    const blob = file.toString('base64');
    const productKey = (await org.api.get(`/api/v1/products/${license.product_id}/public-key`)).body
      .public_key;
    const verified = await verifyLicense(blob, productKey, { productId: license.product_id });
    expect(verified.errors).toEqual([]);
    expect(verified.license).toMatchObject({ serial: license.serial });
    expect(decodeBlob(blob).claims.relay).toEqual({
      id: record.id,
      site: request.site,
      public_key: request.public_key,
    });
    await issued.getByRole('button', { name: 'Done' }).click();
    await issued.waitFor({ state: 'detached' });

    // A file past its expiry says so: one issued while the license ends in four seconds.
    const ending = new Date(Date.now() + 4_000).toISOString();
    expect((await org.api.patch(`/api/v1/licenses/${license.id}`, { valid_until: ending })).status).toBe(200);
    const short = await org.api.post(`/api/v1/licenses/${license.id}/relay-files`, {
      site: 'short-lived',
      public_key: request.public_key,
    });
    expect(short.status).toBe(201);
    await waitFor(() => Date.now() > Date.parse(short.body.expires_at) + 500, {
      timeoutMs: 15_000,
      what: 'the file to expire',
    });
    await page.reload();
    const expired = section.locator('tbody tr', { hasText: short.body.id });
    await expired.getByText('expired', { exact: true }).waitFor();
    expect(await row.getByText('expired').count()).toBe(0);
    await checkPage(page, 'relay-files-expired');

    // A license of another type has no relay files.
    const subscription = await newLicense();
    await open(page, `licenses/${subscription.id}`, subscription.serial);
    await page.getByRole('region', { name: 'License tokens' }).waitFor();
    expect(await page.getByRole('region', { name: 'Relay files', exact: true }).count()).toBe(0);
  }, 60_000);

  it("creates a license token on a license's page, shows it once, lists its prefix, and revokes it", async () => {
    const license = await newLicense();
    const tokens = `/api/v1/licenses/${license.id}/tokens`;
    const page = await newPage();
    await signIn(page, org.adminKey);
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    await open(page, `licenses/${license.id}`, license.serial);
    const section = page.getByRole('region', { name: 'License tokens' });
    await section.getByText('This license has no token.').waitFor();

    await section.getByLabel('Token name').fill('console app');
    await section.getByLabel('Expires').fill('2099-12-31T23:59');
    await section.getByRole('button', { name: 'Create license token' }).click();
    const shown = section.getByTestId('new-license-token');
    await expectShown(page, shown);
    const token = (await shown.textContent())!;
    expect(token).toMatch(/^lt_[A-Za-z0-9_-]{43}$/);
    await expect(section.getByRole('status').first().textContent()).resolves.toMatch(
      /shown only this once; copy it now/,
    );
    const listed = (await org.api.get(tokens)).body;
    expect(listed).toMatchObject({ total: 1, license_tokens: [{ name: 'console app' }] });
    const { prefix, expires_at } = listed.license_tokens[0];
    expect(token.startsWith(prefix)).toBe(true);
    expect(new Date(expires_at).getFullYear()).toBe(2099);
    const row = section.locator('tbody tr', { hasText: 'console app' });
    await expect(row.locator('td.mono').textContent()).resolves.toBe(`${prefix}…`);
    expect(await section.locator('table').textContent()).not.toContain(token);
    // The token acts on its license.
    const application = org.api.withKey(token);
    expect((await application.post('/api/v1/licenses/validate', { key: license.serial })).status).toBe(200);
    await checkPage(page, 'license-token-created');

    // Shown once: gone when dismissed, and not there after a reload.
    await section.getByRole('button', { name: 'I have copied it' }).click();
    await shown.waitFor({ state: 'detached' });
    await page.reload();
    await row.waitFor();
    expect(await page.content()).not.toContain(token);

    await row.getByRole('button', { name: 'Revoke token console app' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Revoke token' }).click();
    await expectShown(page, section.getByText('This license has no token.'));
    expect((await org.api.get(tokens)).body).toEqual({ license_tokens: [], total: 0 });
    expect((await application.post('/api/v1/licenses/validate', { key: license.serial })).status).toBe(401);
  }, 60_000);

  it('flips the client keys switch and changes the offline file lifetime, as the API reads them', async () => {
    const settings = async () => (await org.api.get('/api/v1/organizations/current')).body;
    expect(await settings()).toMatchObject({
      client_keys_license_actions: true,
      checkout_ttl_seconds: 2_592_000,
    });
    const page = await newPage();
    await signIn(page, org.adminKey);
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    await open(page, 'settings', 'Settings');
    await page
      .getByText(
        'Client keys may activate, validate with a fingerprint and sync. Turn off once every shipped application uses license tokens.',
      )
      .waitFor();
    const toggle = page.getByRole('switch', { name: 'Client keys may act on licenses' });
    await expect(toggle.getAttribute('aria-checked')).resolves.toBe('true');
    await checkPage(page, 'settings');

    // Off asks first; then a client key is refused on a route that acts on one license.
    await toggle.click();
    await page.getByRole('dialog').getByRole('button', { name: 'Turn off' }).click();
    await expectShown(page, page.locator('[role=switch][aria-checked=false]'));
    expect((await settings()).client_keys_license_actions).toBe(false);
    const license = await newLicense();
    const client = await apiKeyWithScopes(org.api, ['client']);
    const sync = () =>
      client.api.post('/api/v1/licenses/sync', {
        license_serial: license.serial,
        hardware_fingerprint: 'console-switch',
        app_version: '1.0.0',
      });
    expect((await sync()).status).toBe(403);
    await checkPage(page, 'settings-client-keys-off');

    // On again, at once.
    await toggle.click();
    await expectShown(page, page.locator('[role=switch][aria-checked=true]'));
    expect((await settings()).client_keys_license_actions).toBe(true);
    expect((await sync()).status).toBe(200);

    // The lifetime, in days or hours, 1 hour to 365 days.
    const lifetime = page.getByTestId('checkout-ttl');
    await expect(lifetime.textContent()).resolves.toBe('30 days');
    await page.getByLabel('Offline activation file lifetime').fill('400');
    await page.getByRole('button', { name: 'Save lifetime' }).click();
    await expect(page.getByRole('alert').textContent()).resolves.toBe(
      'The lifetime must be between 1 hour and 365 days.',
    );
    expect((await settings()).checkout_ttl_seconds).toBe(2_592_000);
    await page.getByLabel('Unit').selectOption('hours');
    await page.getByLabel('Offline activation file lifetime').fill('36');
    await page.getByRole('button', { name: 'Save lifetime' }).click();
    await expectShown(page, lifetime.filter({ hasText: '1.5 days (36 hours)' }));
    expect((await settings()).checkout_ttl_seconds).toBe(129_600);
    await page.getByLabel('Unit').selectOption('days');
    await page.getByLabel('Offline activation file lifetime').fill('30');
    await page.getByRole('button', { name: 'Save lifetime' }).click();
    await expectShown(page, lifetime.filter({ hasText: /^30 days$/ }));
    expect(await settings()).toMatchObject({
      client_keys_license_actions: true,
      checkout_ttl_seconds: 2_592_000,
    });
  }, 60_000);

  it("edits a license's end, seats, features and customer, and shows a refused value at its field", async () => {
    const license = await newLicense();
    const page = await newPage();
    await signIn(page, org.adminKey);
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    await open(page, `licenses/${license.id}`, license.serial);
    await page.getByRole('button', { name: 'Edit', exact: true }).click();
    const form = page.getByRole('form', { name: 'Edit license' });

    // The form's own check: a seat count below 1 never reaches the API.
    await form.getByLabel('Seats').fill('0');
    await form.getByRole('button', { name: 'Save license' }).click();
    await expect(fieldError(form.getByLabel('Seats'))).resolves.toBe(
      'Enter a whole number of seats, 1 or more.',
    );
    // The API's refusal, at the field it names: an end before the start.
    await form.getByLabel('Seats').fill('5');
    await form.getByLabel('Valid until').fill('1999-01-01T00:00');
    await form.getByRole('button', { name: 'Save license' }).click();
    await expect(fieldError(form.getByLabel('Valid until'))).resolves.toBe(
      'valid_until must not be before valid_from',
    );
    expect(await form.getByLabel('Seats').getAttribute('aria-invalid')).toBeNull();
    await checkPage(page, 'license-edit-refused');
    expect((await org.api.get(`/api/v1/licenses/${license.id}`)).body).toMatchObject({ max_seats: 1 });

    await form.getByLabel('Valid until').fill('2031-06-30T12:00');
    await form.getByLabel('Features').fill('pro, export, beta');
    await form.getByLabel('Customer e-mail').fill('edited@example.com');
    await form.getByLabel('Customer ID').fill('CRM-42');
    await form.getByRole('button', { name: 'Save license' }).click();
    await expectShown(
      page,
      page.getByRole('status').filter({ hasText: `Saved the changes to ${license.serial}` }),
    );
    await form.waitFor({ state: 'detached' });
    const until = await page.evaluate(`new Date('2031-06-30T12:00').toISOString()`);
    expect((await org.api.get(`/api/v1/licenses/${license.id}`)).body).toMatchObject({
      valid_until: until,
      max_seats: 5,
      features: ['pro', 'export', 'beta'],
      customer_email: 'edited@example.com',
      customer_id: 'CRM-42',
    });
    await page.locator('.facts', { hasText: 'pro, export, beta' }).waitFor();
    await checkPage(page, 'license-edited');

    // Emptied, the end is none: the license becomes perpetual.
    await page.getByRole('button', { name: 'Edit', exact: true }).click();
    await form.getByLabel('Valid until').fill('');
    await form.getByRole('button', { name: 'Save license' }).click();
    await expectShown(page, page.getByRole('status').filter({ hasText: 'end of validity' }));
    expect((await org.api.get(`/api/v1/licenses/${license.id}`)).body.valid_until).toBeNull();
  }, 60_000);

  /** The message a field's control points to (`aria-describedby`) as its error. */
  async function fieldError(control: Locator): Promise<string | null> {
    await control.and(control.page().locator('[aria-invalid=true]')).waitFor();
    const ids = ((await control.getAttribute('aria-describedby')) ?? '').split(' ');
    const error = control.page().locator(ids.map((id) => `[id="${id}"].field-error`).join(', '));
    return error.textContent();
  }

  it('shows "This key" for the key signed in, never a revoke button; creates a key shown once', async () => {
    const current = (await org.api.get('/api/v1/api-keys/current')).body;
    const page = await newPage();
    await signIn(page, org.adminKey);
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    await open(page, 'api-keys', 'API keys');
    const own = page.locator('tbody tr', { has: page.getByRole('cell', { name: `${current.prefix}…` }) });
    await own.getByText('This key').waitFor();
    expect(await own.getByRole('button').count()).toBe(0);

    await page.getByLabel('Key name').fill('console made');
    await page.getByRole('button', { name: 'Create API key' }).click();
    const shown = page.getByTestId('new-api-key');
    await expectShown(page, shown);
    expect(await shown.textContent()).toMatch(/^lk_/);
    await expect(page.getByLabel('Key name').inputValue()).resolves.toBe('');
    const made = page.locator('tbody tr', { hasText: 'console made' });
    await made.getByRole('button', { name: 'Revoke console made' }).waitFor();
    await expect(page.getByRole('button', { name: /^Revoke / }).allTextContents()).resolves.not.toContain(
      `Revoke ${current.name}`,
    );
    await checkPage(page, 'api-keys-this-key');
    await made.getByRole('button', { name: 'Revoke console made' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Revoke key' }).click();
    await made.waitFor({ state: 'detached' });
  }, 60_000);

  it("creates a webhook, edits it, rotates its secret, shows a delivery's payload and redelivers it", async () => {
    const receiver = await WebhookReceiver.start();
    try {
      const page = await newPage();
      await signIn(page, org.adminKey);
      await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
      await open(page, 'webhooks', 'Webhooks');
      await page.getByLabel('Endpoint URL').fill(receiver.url);
      await page.getByLabel('Description').fill('console receiver');
      await page.getByRole('button', { name: 'Create webhook' }).click();
      const firstSecret = (await page.getByTestId('new-webhook-secret').textContent())!;
      expect(firstSecret).toMatch(/^whsec_/);
      const hook = (await org.api.get('/api/v1/webhooks')).body.webhooks.find(
        (w: { url: string }) => w.url === receiver.url,
      );
      await expectCreated(page, receiver.url, hook.id);
      await expect(page.getByLabel('Endpoint URL').inputValue()).resolves.toBe('');
      await expect(page.getByLabel('Events').inputValue()).resolves.toBe('*');
      await checkPage(page, 'webhook-created');

      // Its settings: events, description, and paused, then resumed.
      await page.getByTestId('created').getByRole('link', { name: receiver.url }).click();
      await page.getByRole('heading', { level: 1, name: receiver.url }).waitFor();
      await page.getByRole('button', { name: 'Edit', exact: true }).click();
      const form = page.getByRole('form', { name: 'Edit webhook' });
      await form.getByLabel('Events').fill('license.*, product.created');
      await form.getByLabel('Description').fill('CRM');
      await form.getByLabel(/^Enabled/).uncheck();
      await form.getByRole('button', { name: 'Save webhook' }).click();
      await expectShown(page, page.getByTestId('webhook-state').filter({ hasText: 'disabled' }));
      expect((await org.api.get(`/api/v1/webhooks/${hook.id}`)).body).toMatchObject({
        events: ['license.*', 'product.created'],
        description: 'CRM',
        enabled: false,
      });
      await page.getByRole('button', { name: 'Edit', exact: true }).click();
      await form.getByLabel('Events').fill('license.nonsense');
      await form.getByRole('button', { name: 'Save webhook' }).click();
      await expect(fieldError(form.getByLabel('Events'))).resolves.toMatch(/.+/);
      await checkPage(page, 'webhook-edit-refused');
      await form.getByLabel('Events').fill('*');
      await form.getByLabel(/^Enabled/).check();
      await form.getByRole('button', { name: 'Save webhook' }).click();
      await expectShown(page, page.getByTestId('webhook-state').filter({ hasText: /^enabled$/ }));
      expect((await org.api.get(`/api/v1/webhooks/${hook.id}`)).body).toMatchObject({
        events: ['*'],
        enabled: true,
      });

      // A new secret, shown once; deliveries are signed with it (and the old one, for a day).
      await page.getByRole('button', { name: 'Rotate secret' }).click();
      await page.getByRole('dialog').getByRole('button', { name: 'Rotate secret' }).click();
      const shown = page.getByTestId('new-webhook-secret');
      await expectShown(page, shown);
      const secret = (await shown.textContent())!;
      expect(secret).toMatch(/^whsec_/);
      expect(secret).not.toBe(firstSecret);
      await checkPage(page, 'webhook-secret-rotated');
      await page.getByRole('button', { name: 'I have copied it' }).click();
      await shown.waitFor({ state: 'detached' });

      // A test event: its delivery, its payload as the receiver got it, and a redelivery. Other
      // events of the organization may reach the receiver too (an expiry of an earlier test's
      // license, say): only the test event's are read.
      await page.getByRole('button', { name: 'Send a test event' }).click();
      const isTest = (hook: (typeof receiver.received)[number]) => hook.body.type === 'webhook.test';
      await waitFor(() => receiver.received.some(isTest), { what: 'the test event' });
      const received = receiver.received.find(isTest);
      expect(validSignatures(received!, secret)).toBe(1);
      const row = page.locator('tbody tr', { hasText: 'webhook.test' });
      await waitFor(
        async () => {
          await page.reload();
          // The log loads after the page: wait for the row before reading its status.
          await row
            .first()
            .waitFor({ timeout: 5_000 })
            .catch(() => undefined);
          return (await row.getByText('delivered').count()) === 1;
        },
        { what: 'the delivery in the log', timeoutMs: 30_000, intervalMs: 250 },
      );
      await row.getByRole('button', { name: /^Show delivery of webhook.test/ }).click();
      const panel = page.getByRole('region', { name: /^Delivery of webhook.test/ });
      await expectShown(page, panel.getByTestId('delivery-payload'));
      expect(JSON.parse((await panel.getByTestId('delivery-payload').textContent())!)).toEqual(
        received!.body,
      );
      await panel.getByText('delivered', { exact: true }).waitFor();
      await checkPage(page, 'webhook-delivery');
      await panel.getByRole('button', { name: 'Redeliver' }).click();
      await expectShown(page, panel.getByRole('status').filter({ hasText: 'Sent again' }));
      await waitFor(() => receiver.received.filter(isTest).length === 2, { what: 'the redelivery' });
      expect(receiver.received.filter(isTest)[1]!.body.id).toBe(received!.body.id);
      const delivery = (await org.api.get(`/api/v1/webhooks/${hook.id}/deliveries`)).body.deliveries.find(
        (one: { event_type: string }) => one.event_type === 'webhook.test',
      );
      await waitFor(
        async () => {
          const one = (await org.api.get(`/api/v1/webhook-deliveries/${delivery.id}`)).body;
          return one.status === 'delivered' && one.attempts === 2;
        },
        { what: 'the redelivery in the log' },
      );
      await org.api.delete(`/api/v1/webhooks/${hook.id}`);
    } finally {
      await receiver.close();
    }
  }, 60_000);

  it('renders no write control for a read key, on any page', async () => {
    const { key } = await apiKeyWithScopes(org.api, ['read'], 'console reader');
    const page = await newPage();
    await signIn(page, key.key);
    await page.getByText('read-only').waitFor();
    for (const name of PAGES) {
      await open(page, name, (await page.locator(`nav a[href="#/${name}"]`).textContent())!);
      const buttons = await page.getByRole('button').allTextContents();
      expect({ page: name, writes: buttons.filter((b) => !READ_ONLY_BUTTONS.has(b.trim())) }).toEqual({
        page: name,
        writes: [],
      });
      expect(await page.locator('form:not([role=search]), details.panel').count()).toBe(0);
      await checkPage(page, `read-only-${name}`);
    }
    await open(page, 'licenses', 'Licenses');
    await page
      .getByRole('link', { name: /^LIC-CONSOLE-EDITOR-/ })
      .first()
      .click();
    await page.getByRole('button', { name: 'Download .lic' }).waitFor();
    const buttons = await page.getByRole('button').allTextContents();
    expect(buttons.filter((b) => !READ_ONLY_BUTTONS.has(b.trim()))).toEqual([]);
    await checkPage(page, 'read-only-license-detail');

    // A license's tokens: listed, without a create form or a revoke button.
    const license = await newLicense();
    const made = await org.api.post(`/api/v1/licenses/${license.id}/tokens`, { name: 'shipped app' });
    await open(page, `licenses/${license.id}`, license.serial);
    const section = page.getByRole('region', { name: 'License tokens' });
    await section.getByRole('cell', { name: `${made.body.prefix}…` }).waitFor();
    expect(await section.getByRole('button').count()).toBe(0);
    expect(await page.locator('form').count()).toBe(0);
    await checkPage(page, 'read-only-license-tokens');

    // A floating license's relay files: listed, without the form that issues one.
    const floating = await newLicense({ license_type: 'floating' });
    const relay = relayRequest('read-only site');
    const file = await org.api.post(`/api/v1/licenses/${floating.id}/relay-files`, {
      site: relay.site,
      public_key: relay.public_key,
    });
    expect(file.status).toBe(201);
    await open(page, `licenses/${floating.id}`, floating.serial);
    const relays = page.getByRole('region', { name: 'Relay files', exact: true });
    await relays
      .locator('tbody tr', { hasText: file.body.id })
      .getByRole('cell', { name: relay.site })
      .waitFor();
    expect(await relays.getByRole('button').count()).toBe(0);
    expect(await page.locator('form, textarea').count()).toBe(0);
    await checkPage(page, 'read-only-relay-files');

    // The settings: read, never a switch.
    await open(page, 'settings', 'Settings');
    await page.getByText('Client keys may act on licenses').waitFor();
    expect(await page.getByRole('switch').count()).toBe(0);
    await expect(page.locator('.facts').textContent()).resolves.toContain('30 days');
  }, 60_000);

  it('ran every page under its CSP with no violation and no script error', () => {
    expect(problems).toEqual([]);
  });

  afterAll(async () => {
    for (const context of contexts) await context.close().catch(() => undefined);
  });
});
