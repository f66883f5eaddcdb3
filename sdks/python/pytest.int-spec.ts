// The Python SDK's own suite, run from jest so that `npm test` (and CI) covers it: the toolchain
// script installs what Debian's Python lacks (python3-cryptography, python3-pytest, the build
// tools), then pytest runs every conformance vector, the fuzz pass, the README's example and the
// packaging. A failing pytest fails this spec, with pytest's output.
import { spawn } from 'node:child_process';
import path from 'node:path';

const ROOT = __dirname;

function run(
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv = {},
): Promise<{ code: number | null; stdout: string; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: ROOT, env: { ...process.env, ...env } });
    const stdout: Buffer[] = [];
    const both: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => {
      stdout.push(chunk);
      both.push(chunk);
    });
    child.stderr.on('data', (chunk: Buffer) => both.push(chunk));
    child.on('error', reject);
    child.on('close', (code) =>
      resolve({
        code,
        stdout: Buffer.concat(stdout).toString('utf8'),
        out: Buffer.concat(both).toString('utf8'),
      }),
    );
  });
}

describe('the Python SDK (sdks/python)', () => {
  it('passes its pytest suite', async () => {
    const toolchain = await run('bash', [path.join(ROOT, 'scripts/ensure-toolchain.sh')]);
    if (toolchain.code !== 0) throw new Error(`ensure-toolchain.sh failed:\n${toolchain.out}`);
    // The script prints the interpreter on the last line of its standard output.
    const python = toolchain.stdout.trim().split('\n').pop()!;

    const pytest = await run(python, ['-m', 'pytest', '-q', '-p', 'no:cacheprovider', 'tests'], {
      // Nothing written into the source tree, and no skipped packaging test.
      PYTHONDONTWRITEBYTECODE: '1',
      LICENSING_REQUIRE_BUILD: '1',
    });
    if (pytest.code !== 0) throw new Error(`pytest failed (exit ${pytest.code}):\n${pytest.out}`);
    expect(pytest.out).toMatch(/\d+ passed/);
    expect(pytest.out).not.toMatch(/skipped|failed|error/i);
  }, 900_000);
});
