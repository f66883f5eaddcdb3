import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** Where Debian's `chromium` package puts the browser (CHROMIUM_PATH points elsewhere). */
const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/**
 * The path of a Chromium to drive with playwright-core. A machine without one (a fresh CI
 * runner) gets Debian's package installed; when that is impossible the test fails with the reason,
 * never passes without a browser.
 */
export async function ensureChromium(): Promise<string> {
  if (existsSync(CHROMIUM_PATH)) return CHROMIUM_PATH;
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  // Wait for another apt run (a provisioning script) rather than failing on its lock.
  const lock = ['-o', 'DPkg::Lock::Timeout=300'];
  try {
    await run('apt-get', [...lock, 'update'], { env, maxBuffer: 64 * 1024 * 1024 });
    await run('apt-get', [...lock, 'install', '-y', '--no-install-recommends', 'chromium'], {
      env,
      maxBuffer: 64 * 1024 * 1024,
    });
  } catch (error) {
    const { stderr, message } = error as { stderr?: string; message: string };
    throw new Error(
      `Chromium is not at ${CHROMIUM_PATH} and "apt-get install -y chromium" failed: ${(stderr || message).trim().split('\n').slice(-3).join(' | ')}`,
    );
  }
  if (!existsSync(CHROMIUM_PATH)) {
    throw new Error(`"apt-get install -y chromium" succeeded but ${CHROMIUM_PATH} does not exist`);
  }
  return CHROMIUM_PATH;
}
