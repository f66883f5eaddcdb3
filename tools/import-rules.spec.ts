import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '..');
const DEPCRUISE = path.join(ROOT, 'node_modules/.bin/depcruise');

/** The violations the project's import rules find in a tree of the given files, as "rule: from → to". */
function violations(files: Record<string, string>): string[] {
  const dir = mkdtempSync(path.join(tmpdir(), 'import-rules-'));
  try {
    writeFileSync(path.join(dir, 'tsconfig.base.json'), '{ "compilerOptions": {} }');
    for (const [file, source] of Object.entries(files)) {
      mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
      writeFileSync(path.join(dir, file), source);
    }
    const config = path.join(ROOT, '.dependency-cruiser.js');
    const output = execFileSync(
      DEPCRUISE,
      ['--config', config, '--output-type', 'json', '--no-progress', 'apps'],
      { cwd: dir, encoding: 'utf8' },
    );
    const result = JSON.parse(output) as {
      summary: { violations: { rule: { name: string }; from: string; to: string }[] };
    };
    return result.summary.violations.map(({ rule, from, to }) => `${rule.name}: ${from} → ${to}`).sort();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const src = (file: string) => `apps/gateway/src/${file}`;
const importing = (from: string) => `import { x } from '${from}';\nexport const y = x;\n`;
const EXPORT = 'export const x = 1;\n';

describe('the import rules (.dependency-cruiser.js)', () => {
  it('lets a layer import its own layer and the ones below it', () => {
    expect(
      violations({
        [src('config.ts')]: EXPORT,
        [src('http/problem.ts')]: importing('../config'),
        [src('identity/keys.ts')]: importing('../http/problem'),
        [src('push/hub.ts')]: importing('../identity/keys'),
        [src('routes/a.controller.ts')]: importing('../push/hub'),
        [src('routes/b.controller.ts')]: importing('./a.controller'),
        [src('edge/app.ts')]: importing('../routes/b.controller'),
        [src('main.ts')]: importing('./edge/app'),
      }),
    ).toEqual([]);
  });

  it('refuses an import that runs up a layer, or from one feature into another', () => {
    expect(
      violations({
        [src('edge/problem.filter.ts')]: EXPORT,
        [src('http/problem.ts')]: importing('../edge/problem.filter'),
        [src('idempotency/service.ts')]: EXPORT,
        [src('push/hub.ts')]: importing('../idempotency/service'),
        [src('routes/a.controller.ts')]: EXPORT,
        [src('identity/module.ts')]: importing('../routes/a.controller'),
      }),
    ).toEqual([
      `gateway-layers: http: ${src('http/problem.ts')} → ${src('edge/problem.filter.ts')}`,
      `gateway-layers: identity: ${src('identity/module.ts')} → ${src('routes/a.controller.ts')}`,
      `gateway-layers: push/ stands alone: ${src('push/hub.ts')} → ${src('idempotency/service.ts')}`,
    ]);
  });

  it('lets a test import any layer: an integration spec boots the whole gateway', () => {
    expect(
      violations({
        [src('edge/app.ts')]: EXPORT,
        [src('idempotency/idempotency.int-spec.ts')]: importing('../edge/app'),
      }),
    ).toEqual([]);
  });

  it('refuses an import circle anywhere in the tree', () => {
    const found = violations({
      'apps/other/src/a.ts': `import { b } from './b';\nexport const a = () => b;\n`,
      'apps/other/src/b.ts': `import { a } from './a';\nexport const b = () => a;\n`,
    });
    // One report per circle, from the first file of it.
    expect(found).toEqual(['no-circular: apps/other/src/a.ts → apps/other/src/b.ts']);
  });
});
