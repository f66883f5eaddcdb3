// docs/sdks.md shows one first example per SDK. Each must be the example of that SDK's own page,
// character for character, because those are the ones the SDKs' tests run (the JavaScript page's
// blocks by verify-offline-docs.e2e-spec.ts, Python's by its pytest suite, C's by c-sdk.int-spec.ts).
// The Go example is run here: built against the checkout's module, with a vector's license file.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { readVectorFiles } from './conformance/src/generate';

interface LicenseVectors {
  keys: Record<string, { pem?: string }>;
  vectors: Array<{
    id: string;
    key: string;
    input: { text?: string };
    expected: { license: { serial: string } };
  }>;
}

const run = promisify(execFile);
const root = join(__dirname, '..');
const read = (path: string) => readFileSync(join(root, path), 'utf8');
const blocks = (text: string, language: string) =>
  [...text.matchAll(new RegExp('```' + language + '\\n([^`]*)```', 'g'))].map((match) => match[1]!);

describe('docs/sdks.md', () => {
  const page = read('docs/sdks.md');

  it.each([
    ['js', 'docs/verify-offline.md'],
    ['python', 'sdks/python/README.md'],
    ['go', 'sdks/go/README.md'],
    ['c', 'sdks/c/README.md'],
  ])('shows the %s example of %s as it is', (language, source) => {
    const shown = blocks(page, language);
    expect(shown).toHaveLength(1);
    expect(blocks(read(source), language)).toContain(shown[0]);
  });

  it('its Go example builds and verifies a license file', async () => {
    await run(join(__dirname, 'go/scripts/ensure-toolchain.sh'), []);
    const app = mkdtempSync(join(tmpdir(), 'sdks-docs-go-'));
    try {
      const licenses = JSON.parse(readVectorFiles()['licenses.json']!) as LicenseVectors;
      const vector = licenses.vectors.find((v) => v.id === 'ed25519/valid-pem')!;
      writeFileSync(join(app, 'public-key.pem'), licenses.keys[vector.key]!.pem!);
      writeFileSync(join(app, 'license.lic'), vector.input.text!);
      writeFileSync(join(app, 'main.go'), blocks(page, 'go')[0]!);
      const module = 'github.com/licensing-platform/licensing/sdks/go';
      writeFileSync(
        join(app, 'go.mod'),
        `module example\n\ngo 1.19\n\nrequire ${module} v0.0.0\n\nreplace ${module} => ${join(__dirname, 'go')}\n`,
      );
      const env = {
        ...process.env,
        GOCACHE: join(tmpdir(), 'licensing-go-sdk', 'cache'),
        GOPATH: join(tmpdir(), 'licensing-go-sdk', 'path'),
        GOFLAGS: '-mod=mod',
        GOPROXY: 'off',
        GOTOOLCHAIN: 'local',
        GOTELEMETRY: 'off',
        CGO_ENABLED: '0',
      };
      // Checked at the current time, the vector's license is not valid yet, valid, or expired.
      const outcome = await run('go', ['run', '.'], { cwd: app, env }).then(
        ({ stdout }) => stdout,
        (error: { stderr: string }) => error.stderr,
      );
      expect(outcome).toMatch(
        new RegExp(
          `^licensed: ${vector.expected.license.serial} |license refused: .*(not_yet_valid|expired)`,
        ),
      );
    } finally {
      rmSync(app, { recursive: true, force: true });
    }
  }, 180_000);
});
