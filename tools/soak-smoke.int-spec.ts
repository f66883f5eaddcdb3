/**
 * The soak still runs: `npm run soak -- --seconds 8` boots the platform on a database and namespace
 * of its own, holds its mixed load for a few seconds and reports. Asserts only that it ran, sent
 * every kind of request and sampled every process: never a figure (a soak is not a timed test).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { runNodeScript } from '@licensing/shared/testing';

const root = path.join(__dirname, '..');
const services = require('./services') as Array<{ name: string }>;

interface Sample {
  t: number;
  processes: Record<string, { rss_mib: number; fds: number; el_p99_ms: number | null } | null>;
  pg_connections: number;
  redis_clients: number;
}

describe('npm run soak -- --seconds 8', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'soak-smoke-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('holds the mixed load and reports samples of every process', async () => {
    const results = path.join(dir, 'soak.json');
    const printed = await runNodeScript(
      ['bench/soak/run.js', '--seconds', '8', '--interval', '2', '--results', results],
      root,
    );

    const result = JSON.parse(readFileSync(results, 'utf8')) as {
      processes: Array<{ label: string; pid: number }>;
      samples: Sample[];
      requests: Record<string, { requests: number }>;
    };
    const names = services.map((service) => service.name).sort();
    expect(result.processes.map((p) => p.label).sort()).toEqual(names);
    // The idle sample before the load, then one every 2 s.
    expect(result.samples.length).toBeGreaterThanOrEqual(3);
    for (const sample of result.samples) {
      for (const name of names)
        expect({ name, ...sample.processes[name] }).toEqual({
          name,
          ...sample.processes[name],
          rss_mib: expect.any(Number),
          fds: expect.any(Number),
          el_p99_ms: expect.any(Number),
        });
      expect(sample.pg_connections).toBeGreaterThan(0);
      expect(sample.redis_clients).toBeGreaterThan(0);
    }
    for (const [kind, { requests }] of Object.entries(result.requests))
      expect({ kind, sent: requests > 0 }).toEqual({ kind, sent: true });
    expect(printed).toContain('Growth over the second half');
  }, 90_000);
});
