/**
 * The analytics benchmark still runs: `npm run bench:analytics -- --smoke` generates 20,000 reports
 * into a database of its own, queries them through the service's bus handlers (the service in a
 * process of its own), ingests 2,000 more through the real consumer while they are published and
 * 2,000 as a backlog, and measures disk. Asserts only that every step ran and printed its
 * table — never a latency or a rate: a benchmark is not a timed test.
 */
import path from 'node:path';
import { runNodeScript } from '@licensing/shared/testing';

const root = path.join(__dirname, '..');

describe('npm run bench:analytics -- --smoke', () => {
  it('generates, queries every route for 1, 7 and 30 days, ingests through the consumer and measures disk', async () => {
    const printed = await runNodeScript(['bench/analytics/run.js', '--smoke'], root);

    const measured = (query: string, days: string) =>
      new RegExp(`^\\| ${query.replace(/[()]/g, '\\$&')} \\| ${days} \\| [\\d.]+ ms \\| [\\d.]+ ms \\|`, 'm');
    const queries = ['usage (day)', 'usage (hour)', 'usage, product', 'usage (day), unaligned'];
    for (const days of ['1', '7', '30']) {
      for (const query of [...queries, 'features', 'versions', 'active']) {
        expect({ query, days, printed: measured(query, days).test(printed) }).toEqual({
          query,
          days,
          printed: true,
        });
      }
    }
    expect(printed).toMatch(measured('license usage', '—'));
    // Every report published was counted, once, in both phases (the run also exits 1 if not).
    expect(printed.match(/^\| counted by analytics \| 2,000 \|$/gm)).toHaveLength(2);
    expect(printed).toMatch(/^\| ingest rate through the consumer \| [\d,]+ reports\/s \|$/m);
    expect(printed).toMatch(
      /^\| a backlog of 2,000 reports drained by the consumer alone \| [\d,]+ reports\/s \|$/m,
    );
    expect(printed).toMatch(
      /^\| disk per million reports \| raw \d+ MiB · report ids \d+ MiB · active rows/m,
    );
  }, 150_000);
});
