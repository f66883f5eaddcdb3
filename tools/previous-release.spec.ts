/**
 * The previous release that the rolling-upgrade test and the migration rules compare with
 * (tools/upgrade/previous-release.json), and the check that its dependencies are this checkout's.
 */
import { assertCommitPresent, lockfileDifferences, previousRelease } from './support/previous-release';

describe('the previous release', () => {
  it('names a full commit of this repository, with a description', () => {
    const release = previousRelease();
    expect(release.commit).toMatch(/^[0-9a-f]{40}$/);
    expect(release.description.length).toBeGreaterThan(0);
    expect(() => assertCommitPresent(release.commit)).not.toThrow();
  });

  it('refuses an unknown commit with a message that says what to do', () => {
    expect(() => assertCommitPresent('0'.repeat(40))).toThrow(/not in this clone's history.*unshallow/s);
  });
});

describe('lockfileDifferences', () => {
  const lock = (packages: Record<string, { version: string; integrity?: string; dev?: boolean }>) =>
    JSON.stringify({ lockfileVersion: 3, packages: { '': { name: 'licensing-platform' }, ...packages } });
  const base = {
    'node_modules/pg': { version: '8.23.1', integrity: 'sha512-a' },
    'node_modules/typescript': { version: '5.9.3', integrity: 'sha512-b', dev: true },
    'node_modules/@types/node': { version: '20.1.0', integrity: 'sha512-c', dev: true },
    'node_modules/eslint': { version: '9.39.5', integrity: 'sha512-d', dev: true },
  };

  it('finds a package the release runs that the current lock changed or removed', () => {
    const { 'node_modules/pg': _pg, ...withoutPg } = base;
    expect(
      lockfileDifferences(
        lock({ ...base, 'node_modules/uuid': { version: '11.1.0', integrity: 'sha512-u' } }),
        lock({ ...withoutPg, 'node_modules/uuid': { version: '11.1.1', integrity: 'sha512-v' } }),
      ),
    ).toEqual(['node_modules/pg: 8.23.1 -> absent', 'node_modules/uuid: 11.1.0 -> 11.1.1']);
  });

  it('ignores a package only the current lock has: the release never loads it', () => {
    expect(
      lockfileDifferences(
        lock(base),
        lock({ ...base, 'node_modules/better-sqlite3': { version: '12.4.1', integrity: 'sha512-g' } }),
      ),
    ).toEqual([]);
  });

  it('ignores the tools that neither run nor build a release: linters, compilers, types', () => {
    const { 'node_modules/eslint': _eslint, ...withoutEslint } = base;
    expect(lockfileDifferences(lock(base), lock(withoutEslint))).toEqual([]);
    expect(
      lockfileDifferences(
        lock(base),
        lock({
          ...base,
          'node_modules/eslint': { version: '9.40.0', integrity: 'sha512-h', dev: true },
          'node_modules/typescript': { version: '5.9.4', integrity: 'sha512-f', dev: true },
        }),
      ),
    ).toEqual([]);
  });
});
