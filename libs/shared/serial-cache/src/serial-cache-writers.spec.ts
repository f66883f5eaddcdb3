/**
 * One writer of the serial-status cache (docs/architecture.md, "Revocation visibility"): the
 * revocation service alone writes serial entries; every other service reads them through
 * SerialStatusReader and sends what it wants cached to the revocation service. A second writer
 * would be a second place to keep the version rule, the generation and the entry format right,
 * so this fails the moment one appears in the sources.
 */
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';

const root = path.join(__dirname, '../../../..');
const LIBRARY = 'libs/shared/serial-cache/src/';
const OWNER = 'apps/revocation-service/src/';
const TEST_FILE = /\.(spec|int-spec|e2e-spec)\.ts$/;

/** Production sources of every app and library, relative to the repository's root. */
function sources(dir: string): string[] {
  return readdirSync(path.join(root, dir), { withFileTypes: true }).flatMap((entry) => {
    const relative = `${dir}/${entry.name}`;
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : sources(relative);
    return entry.name.endsWith('.ts') && !TEST_FILE.test(entry.name) ? [relative] : [];
  });
}

const files = ['apps', 'libs'].flatMap(sources);
const mentioning = (pattern: RegExp) =>
  files.filter((file) => pattern.test(readFileSync(path.join(root, file), 'utf8')));

describe('the serial-status cache has one writer', () => {
  it('finds the sources it checks', () => {
    expect(files).toContain(`${OWNER}app.module.ts`);
    expect(files).toContain('apps/license-service/src/licenses/license-verifier.service.ts');
  });

  it('only the revocation service opens the cache for writing', () => {
    expect(mentioning(/SerialCacheModule\.forWriter\(/)).toEqual([`${OWNER}app.module.ts`]);
  });

  it('only the revocation service names the writer, SerialStatusCache', () => {
    const outside = mentioning(/\bSerialStatusCache\b/).filter(
      (file) => !file.startsWith(OWNER) && !file.startsWith(LIBRARY),
    );
    expect(outside).toEqual([]);
  });

  it('no code outside the library runs the write script or encodes an entry', () => {
    const outside = mentioning(
      /\bputSerialStatus\b|\bPUT_SERIAL_STATUS\b|\bencodeEntry\b|serial-entry/,
    ).filter((file) => !file.startsWith(LIBRARY));
    expect(outside).toEqual([]);
  });

  it('keeps the entry format in one file, used by the cache alone', () => {
    const users = mentioning(/from '\.\/serial-entry'/);
    expect(users).toEqual([`${LIBRARY}serial-status.cache.ts`]);
  });
});
