import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { buildClaims, generateKeyPair, parsePrivateKey, signJws } from '@licensing/license-format';

const run = promisify(execFile);
const LIB = join(__dirname, '..');

interface PackResult {
  filename: string;
  size: number;
  unpackedSize: number;
  files: { path: string }[];
}

/**
 * What an application developer gets: `npm pack` builds the package (prepack), the tarball holds
 * the ESM and CommonJS builds with their declarations and nothing else, and once installed in an
 * empty project it verifies a license in five lines, imported and required.
 */
describe('the packed @licensing/license-verifier', () => {
  const dir = mkdtempSync(join(tmpdir(), 'license-verifier-pack-'));
  let pack: PackResult;

  beforeAll(async () => {
    const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', dir], { cwd: LIB });
    [pack] = JSON.parse(stdout) as PackResult[];
  }, 60_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('holds the two builds, their declarations and the README, and declares no dependencies', () => {
    const files = pack.files.map((f) => f.path).sort();
    for (const expected of [
      'README.md',
      'package.json',
      'dist/esm/index.js',
      'dist/esm/index.d.ts',
      'dist/esm/package.json',
      'dist/cjs/index.js',
      'dist/cjs/index.d.ts',
      'dist/cjs/package.json',
    ]) {
      expect(files).toContain(expected);
    }
    expect(files.filter((f) => /\.spec\.|^src\/|tsconfig|build\.js|project\.json|jest/.test(f))).toEqual([]);
    const manifest = JSON.parse(readFileSync(join(LIB, 'package.json'), 'utf8')) as Record<string, unknown>;
    for (const field of ['dependencies', 'peerDependencies', 'optionalDependencies']) {
      expect(manifest[field]).toBeUndefined();
    }
  });

  it('imports nothing from node: or any package in the ESM build', () => {
    const esm = join(LIB, 'dist/esm');
    for (const file of readdirSync(esm).filter((f) => f.endsWith('.js'))) {
      const specifiers = [
        ...readFileSync(join(esm, file), 'utf8').matchAll(/\bfrom\s+['"]([^'"]+)['"]/g),
      ].map((m) => m[1]!);
      expect({ file, outside: specifiers.filter((s) => !/^\.\/[a-z-]+\.js$/.test(s)) }).toEqual({
        file,
        outside: [],
      });
    }
  });

  it('installs into an empty project and verifies a license in five lines, as ESM and as CommonJS', async () => {
    const app = join(dir, 'app');
    await run('mkdir', ['-p', app]);
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'app', private: true }));
    await run(
      'npm',
      ['install', '--offline', '--no-audit', '--no-fund', '--ignore-scripts', join(dir, pack.filename)],
      { cwd: app },
    );
    const pair = await generateKeyPair('ed25519');
    const now = new Date();
    const jws = signJws(
      buildClaims({
        licenseId: '4b0c5d0e-8a43-4a8b-9d0b-2f8f3c1e6a11',
        serial: 'LIC-PHOTO-EDITOR-7K3F9QX2M4W8T1ZC',
        orgId: '0d8f2c64-3f55-4b7e-a0d4-6d7b8a9c0e12',
        productId: '9a1b2c3d-4e5f-4a6b-8c7d-0e1f2a3b4c5d',
        productCode: 'photo-editor',
        licenseType: 'subscription',
        customerId: null,
        customerEmail: null,
        features: ['pro'],
        maxSeats: 1,
        hardwareBinding: null,
        validFrom: new Date(now.getTime() - 60_000),
        validUntil: new Date(now.getTime() + 86_400_000),
        issuedAt: now,
      }),
      { kid: 'k1', privateKey: parsePrivateKey(pair.privateKeyPem) },
    );
    writeFileSync(join(app, 'license.lic'), jws);
    writeFileSync(join(app, 'product.pem'), pair.publicKeyPem);
    writeFileSync(
      join(app, 'verify.mjs'),
      `import { readFile } from 'node:fs/promises';
import { verifyLicense } from '@licensing/license-verifier';
const result = await verifyLicense(await readFile('license.lic'), await readFile('product.pem', 'utf8'));
if (!result.valid) throw new Error(result.errors.map((e) => e.message).join('; '));
process.stdout.write(result.license.features.join(',') + '\\n');
`,
    );
    writeFileSync(
      join(app, 'verify.cjs'),
      `const { readFileSync } = require('node:fs');
const { verifyLicense } = require('@licensing/license-verifier');
verifyLicense(readFileSync('license.lic', 'utf8'), readFileSync('product.pem', 'utf8'), { productId: 'other' })
  .then((r) => process.stdout.write(r.valid + ' ' + r.errors.map((e) => e.code).join(',') + '\\n'));
`,
    );
    expect((await run(process.execPath, ['verify.mjs'], { cwd: app })).stdout).toBe('pro\n');
    expect((await run(process.execPath, ['verify.cjs'], { cwd: app })).stdout).toBe(
      'false product_mismatch\n',
    );
    expect(
      readFileSync(join(app, 'node_modules/@licensing/license-verifier/dist/esm/index.d.ts'), 'utf8'),
    ).toContain('verifyLicense');
  }, 60_000);

  // The packed tarball (ESM, CommonJS and types): ~46 kB with revocation lists, signed answers, push,
  // air-gapped activation and the relay client. A jump past this means a dependency or a bundling
  // mistake crept in.
  it('is small', () => {
    expect(pack.size).toBeLessThan(50_000);
  });
});
