/**
 * The event-cost benchmark still runs: `npm run bench:events -- --smoke` starts the platform on a
 * database and namespace of its own, makes a license, publishes 500 copies of its event with and
 * without a push stream open, and prints the CPU per event of every process. Asserts only that it
 * ran and printed a row for each process — never a figure: a benchmark is not a timed test.
 */
import path from 'node:path';
import { runNodeScript } from '@licensing/shared/testing';

const root = path.join(__dirname, '..');

describe('npm run bench:events -- --smoke', () => {
  it('measures every process with no push stream open and with one', async () => {
    const printed = await runNodeScript(['bench/events/run.js', '--smoke'], root);

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
