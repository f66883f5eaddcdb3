// Runs the Python SDK's tools from jest: the toolchain script, then pytest, in sdks/python.
import { spawn } from 'node:child_process';
import path from 'node:path';

export const PYTHON_ROOT = __dirname;

export interface Run {
  code: number | null;
  /** Standard output alone. */
  stdout: string;
  /** Standard output and error, as they came. */
  out: string;
}

/** Runs a command in sdks/python, with the environment of jest and `env` over it. */
export function run(command: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: PYTHON_ROOT, env: { ...process.env, ...env } });
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

/**
 * The interpreter to test with: scripts/ensure-toolchain.sh installs what Debian's Python lacks
 * (python3-cryptography, python3-pytest, the build tools), then prints it on its last line.
 */
export async function ensurePython(): Promise<string> {
  const toolchain = await run('bash', [path.join(PYTHON_ROOT, 'scripts/ensure-toolchain.sh')]);
  if (toolchain.code !== 0) throw new Error(`ensure-toolchain.sh failed:\n${toolchain.out}`);
  return toolchain.stdout.trim().split('\n').pop()!;
}

/** pytest with the arguments given; nothing written into the source tree. */
export async function pytest(python: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<Run> {
  const done = await run(python, ['-m', 'pytest', '-q', '-p', 'no:cacheprovider', ...args], {
    PYTHONDONTWRITEBYTECODE: '1',
    ...env,
  });
  if (done.code !== 0) throw new Error(`pytest failed (exit ${done.code}):\n${done.out}`);
  return done;
}
