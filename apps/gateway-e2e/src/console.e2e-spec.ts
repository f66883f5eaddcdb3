import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { chromium, type Browser, type BrowserContext, type Locator, type Page } from 'playwright-core';
import { apiKeyWithScopes } from '@licensing/shared/testing';
import { ensureChromium } from './support/chromium';
import { TestOrganization, TestStack, startStack } from './support/stack';

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
        stack = await startStack();
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
    // A control that never appears fails its step with the locator's name, well before jest's timeout.
    context.setDefaultTimeout(10_000);
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

    await open(page, 'products', 'Products');
    await page.getByText('Create a product').click();
    await page.getByLabel('Name').fill('Console Editor');
    await page.getByLabel('Code').fill('console-editor');
    await page.getByLabel('Default features').fill('pro, export');
    await page.getByRole('button', { name: 'Create product' }).click();
    await expectShown(page, page.getByRole('heading', { level: 2, name: 'Console Editor' }));

    await open(page, 'policies', 'Policies');
    await page.getByText('Create a policy').click();
    await page.getByLabel('Policy name').fill('Console team');
    await page.getByLabel('Machines').fill('3');
    await page.getByLabel('Processes per machine').fill('2');
    await page.getByLabel('Overage').selectOption('1.5x');
    await page.getByRole('button', { name: 'Create policy' }).click();
    await expectShown(page, page.getByRole('heading', { level: 2, name: 'Console team' }));
    const policies = await org.api.get('/api/v1/policies');
    expect(policies.body.policies.find((p: { name: string }) => p.name === 'Console team')).toMatchObject({
      max_machines: 3,
      max_processes: 2,
      overage: '1.5x',
      heartbeat_interval_seconds: null,
    });

    await open(page, 'licenses', 'Licenses');
    await page.getByText('Create a license').click();
    await page.getByLabel('Customer e-mail').first().fill(email);
    await page.getByRole('button', { name: 'Create license' }).click();
    const created = page.getByRole('status').filter({ hasText: 'Created LIC-CONSOLE-EDITOR-' });
    await expectShown(page, created);
    const serial = (await created.getByRole('link').textContent())!;

    // Find it by e-mail (the search form's field, not the create form's).
    await page.reload();
    await page.getByRole('search').getByLabel('Customer e-mail').fill(email.toUpperCase());
    await page.getByRole('search').getByRole('button', { name: 'Search' }).click();
    const rows = page.locator('tbody tr');
    await expect(rows.count()).resolves.toBeGreaterThan(0);
    await page.getByRole('link', { name: serial }).waitFor();
    expect(await rows.count()).toBe(1);
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
    await page.getByRole('cell', { name: '7.1.0' }).waitFor();
    await page.getByRole('cell', { name: 'pro', exact: true }).waitFor();
    await expect(page.getByTestId('count-revoked').textContent()).resolves.toBe('1');
    await expect(page.getByTestId('active-machines').textContent()).resolves.toBe('1');
    await checkPage(page, 'overview-with-sync');

    const phone = await newPage({ width: 390, height: 844 });
    await signIn(phone, org.adminKey);
    for (const name of ['overview', 'licenses'] as const) {
      await open(phone, name, name === 'overview' ? 'Overview' : 'Licenses');
      await checkPage(phone, `phone-${name}`);
    }
  }, 60_000);

  /** A new license of the product the admin test made, through the API. */
  async function newLicense(): Promise<{ id: string; serial: string }> {
    const created = await org.api.post('/api/v1/licenses', {
      product_id: (await org.api.get('/api/v1/products')).body.products[0].id,
      customer_email: email,
    });
    expect(created.status).toBe(201);
    return created.body;
  }

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
