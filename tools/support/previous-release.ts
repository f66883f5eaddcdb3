/**
 * The previous release (tools/upgrade/previous-release.json): its commit, read from this
 * repository's own history, and its tree written out and built beside this checkout, for the tests
 * that compare with it (the rolling upgrade, the migration rules).
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { MIGRATION_FILE, MigrationFiles } from './migration-rules';

const { root } = require('../build-if-checkout') as { root: string };

export { root };

interface Release {
  /** The full commit hash of the release. */
  commit: string;
  description: string;
}

export function previousRelease(): Release {
  return JSON.parse(readFileSync(join(root, 'tools/upgrade/previous-release.json'), 'utf8')) as Release;
}

/** `git <args>` in this checkout; returns its standard output. */
function git(args: string[]): string {
  return execFileSync('git', ['-C', root, ...args], {
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** Throws a clear error when `commit` is not in this clone's history (a shallow clone, say). */
export function assertCommitPresent(commit: string): void {
  try {
    git(['cat-file', '-e', `${commit}^{commit}`]);
  } catch {
    throw new Error(
      `The previous release ${commit} (tools/upgrade/previous-release.json) is not in this clone's ` +
        'history: clone with full history, or run `git fetch --unshallow`.',
    );
  }
}

/**
 * The packages the previous release runs (not `dev` in its package-lock.json) that the current
 * package-lock.json changes or removes: that release would run on packages it did not ship with.
 * One line per difference. A package only the current lock has does not matter: the release never
 * loads it. Neither do the compiler and its type definitions: the release is compiled without a
 * type check (buildTree).
 */
export function lockfileDifferences(previousLock: string, currentLock: string): string[] {
  type Entry = { version?: string; integrity?: string; dev?: boolean };
  const packagesOf = (lock: string) =>
    (JSON.parse(lock) as { packages?: Record<string, Entry> }).packages ?? {};
  const previous = packagesOf(previousLock);
  const current = packagesOf(currentLock);
  const differences: string[] = [];
  for (const path of Object.keys(previous).sort()) {
    const before = previous[path]!;
    const after = current[path];
    if (path === '' || before.dev) continue;
    if (before.version !== after?.version || before.integrity !== after?.integrity) {
      differences.push(`${path}: ${before.version ?? 'absent'} -> ${after?.version ?? 'absent'}`);
    }
  }
  return differences;
}

/**
 * Writes the tree of `commit` into `dir` (`git archive`, so it works in any clone that has the
 * commit) and links this checkout's node_modules into it. Throws when the two package-lock.json
 * files differ in a way that matters: that release would then run on packages it was not built for.
 */
export function writeReleaseTree(commit: string, dir: string): void {
  assertCommitPresent(commit);
  mkdirSync(dir, { recursive: true });
  const archive = join(dir, '.release.tar');
  execFileSync('git', ['-C', root, 'archive', '--format=tar', '-o', archive, commit]);
  try {
    execFileSync('tar', ['-x', '-f', archive, '-C', dir]);
  } finally {
    rmSync(archive, { force: true });
  }
  const differences = lockfileDifferences(
    readFileSync(join(dir, 'package-lock.json'), 'utf8'),
    readFileSync(join(root, 'package-lock.json'), 'utf8'),
  );
  if (differences.length > 0) {
    throw new Error(
      `package-lock.json changed since the previous release ${commit}, in packages that it runs or ` +
        `builds with:\n  ${differences.join('\n  ')}\nThis test reuses this checkout's node_modules, ` +
        "so it cannot run that release as it shipped. Move the previous release forward (docs/operations.md, 'Upgrading').",
    );
  }
  symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'), 'dir');
}

/**
 * Compiles `tree` into its dist/ with this checkout's compiler (tools/compile.js: SWC, the files its
 * tsconfig.build.json names), without blocking the test's event loop. The release's own build
 * script may differ; its sources and its tsconfig.build.json are what it shipped.
 */
export function buildTree(tree: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(root, 'tools', 'compile.js'), tree], {
      cwd: tree,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('error', reject);
    child.once('exit', (code) =>
      code === 0 ? resolve() : reject(new Error(`compiling ${tree} failed (${code}):\n${output}`)),
    );
  });
}

/** Whether `commit` is `release` or one of its ancestors (false for a commit this clone lacks). */
function isReleasedBy(commit: string, release: string): boolean {
  try {
    git(['merge-base', '--is-ancestor', commit, release]);
    return true;
  } catch {
    return false;
  }
}

/** The migration files of `commit`, and those of this checkout's work tree, for the migration rules. */
export function migrationFiles(commit: string): MigrationFiles {
  assertCommitPresent(commit);
  const previous = new Map<string, Buffer>();
  for (const file of git(['ls-tree', '-r', '--name-only', commit, '--', 'apps']).split('\n')) {
    if (MIGRATION_FILE.test(file)) {
      previous.set(
        file,
        execFileSync('git', ['-C', root, 'show', `${commit}:${file}`], { maxBuffer: 16 * 1024 * 1024 }),
      );
    }
  }
  const current = new Map<string, Buffer>();
  for (const app of readdirSync(join(root, 'apps'))) {
    const folder = `apps/${app}/src/migrations`;
    if (!existsSync(join(root, folder))) continue;
    for (const file of readdirSync(join(root, folder))) {
      if (file.endsWith('.ts')) current.set(`${folder}/${file}`, readFileSync(join(root, folder, file)));
    }
  }
  return { previous, current, releasedBy: (since) => isReleasedBy(since, commit) };
}
