/**
 * The event-cost benchmark still runs: `npm run bench:events -- --smoke` starts the platform on a
 * database and namespace of its own, makes a license, publishes 500 copies of its event with and
 * without a push stream open, and prints the CPU per event of every process. Asserts only that it
 * ran and printed a row for each process — never a figure: a benchmark is not a timed test.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';

const root = path.join(__dirname, '..');

describe('npm run bench:events -- --smoke', () => {
  it('measures every process with no push stream open and with one', async () => {
    const output: string[] = [];
    const code = await new Promise<number | null>((resolve) => {
      const child = spawn(process.execPath, ['bench/events/run.js', '--smoke'], { cwd: root });
      child.stdout.on('data', (chunk: Buffer) => output.push(chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => output.push(chunk.toString()));
      child.on('exit', resolve);
    });
    const printed = output.join('');
    if (code !== 0) throw new Error(`bench:events --smoke exited ${code}:\n${printed}`);

    for (const process of ['gw', 'prod', 'lic', 'rev', 'ana', 'hook', 'pg', 'redis', 'nats']) {
      expect({
        process,
        printed: new RegExp(`^\\| ${process} \\| \\d+ \\| \\d+ \\|$`, 'm').test(printed),
      }).toEqual({
        process,
        printed: true,
      });
    }
  }, 150_000);
});
