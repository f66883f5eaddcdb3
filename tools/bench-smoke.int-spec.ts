/**
 * The benchmark harness still runs: `npm run bench -- --smoke` boots the platform on a database and
 * namespace of its own, seeds a small data set and runs every scenario and reference pipeline for
 * about a second each, then the hot paths at a fixed rate. Asserts only that each one ran without a
 * failed request — never a throughput or a latency: a benchmark is not a timed test.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { runNodeScript } from '@licensing/shared/testing';

const root = path.join(__dirname, '..');

interface Side {
  requests: number;
  errors: number;
}
interface Row {
  name: string;
  ours: Side;
  ref?: Side;
  strict?: Side;
  syncCheck?: { sent: number; counted: number };
  fixedRate?: {
    ours: Side & { queuedUs?: Record<string, number> };
    ref: Side & { queuedUs?: Record<string, number> };
    eventLoop?: Record<string, { p99: number | null; max: number | null }>;
  };
}

describe('npm run bench -- --smoke', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'bench-smoke-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('runs every scenario, on the platform and on its reference pipeline, without errors', async () => {
    const results = path.join(dir, 'latest.json');
    await runNodeScript(['bench/run.js', '--smoke', '--results', results], root);

    const { rows } = JSON.parse(readFileSync(results, 'utf8')) as { rows: Row[] };
    expect(rows.map((row) => row.name).sort()).toEqual(
      [
        'activation',
        'check-revocation',
        'get',
        'license-create',
        'sync',
        'sync-token',
        'validate',
        'validate-policy',
        'validate-token',
        'verify',
      ].sort(),
    );
    for (const row of rows) {
      expect({ scenario: row.name, requests: row.ours.requests > 0, errors: row.ours.errors }).toEqual({
        scenario: row.name,
        requests: true,
        errors: 0,
      });
      expect({ scenario: row.name, refErrors: row.ref?.errors }).toEqual({
        scenario: row.name,
        refErrors: 0,
      });
    }
    // The strict ceilings ran too, answering every request.
    const strict = rows.filter((row) => row.strict);
    expect(strict.map((row) => [row.name, row.strict!.requests > 0, row.strict!.errors])).toEqual([
      ['check-revocation', true, 0],
      ['sync', true, 0],
    ]);
    // The hot paths again at a fixed rate, on both sides.
    const fixed = rows.filter((row) => row.fixedRate);
    expect(fixed.map((row) => row.name).sort()).toEqual(['check-revocation', 'sync', 'validate', 'verify']);
    for (const { name, fixedRate } of fixed) {
      const { ours, ref } = fixedRate!;
      expect({
        name,
        ours: ours.requests > 0,
        ref: ref.requests > 0,
        errors: ours.errors + ref.errors,
        // Where the tail waits: each side's processes' time runnable without a core, and the
        // platform's event loops.
        queued: [typeof ours.queuedUs?.gw, typeof ref.queuedUs?.['ref-gw']],
        eventLoop: typeof fixedRate!.eventLoop?.gw?.p99,
      }).toEqual({
        name,
        ours: true,
        ref: true,
        errors: 0,
        queued: ['number', 'number'],
        eventLoop: 'number',
      });
    }
    // Every sync answered 2xx reached analytics (the delay is printed, not asserted).
    const sync = rows.find((row) => row.name === 'sync')!;
    expect(sync.syncCheck!.counted).toBe(sync.syncCheck!.sent);
  }, 240_000);
});
