// The PostgreSQL profile of `npm run bench -- --pg-profile` (bench/lib/pg-profile.js): how perf's
// samples are read, given a phase and given to the platform's connections. Recording needs perf and
// root, so only the reading is tested here; the numbers it printed are in bench/README.md.

type Sample = { pid: number; frames: string[] };
type Backend = { pid: number; datname: string | null; application_name: string; backend_type: string };
type Attribution = {
  samples: number;
  perRequestUs: number;
  byBackend: Record<string, number>;
  byPhase: Record<string, number>;
};

const { attribute, parseSamples, phaseOf } = require('../bench/lib/pg-profile') as {
  parseSamples(text: string): Sample[];
  phaseOf(frames: string[]): string;
  attribute(
    samples: Sample[],
    backends: Map<number, Backend>,
    database: string,
    requests: number,
    side?: 'platform' | 'reference',
  ): Attribution;
};

// `perf script -F pid,ip,sym` as perf prints it: user and kernel frames, leaf first.
const PERF_SCRIPT = [
  ' 4101 ',
  '\t          304e31 ExecConstraints',
  '\t          47f35d [unknown]',
  '\t          4803ef PortalRun',
  '\t          47dabf PostgresMain',
  '',
  ' 4102 ',
  '\tffffffff9a2b1c40 blk_mq_submit_bio',
  '\t          2724a0 fdatasync',
  '\t          59d88e XLogFlush+0x1be',
  '\t          59d000 CommitTransactionCommand',
  '',
  ' 4103 ',
  '\t          59ca06 [unknown]',
  '',
].join('\n');

describe('bench --pg-profile', () => {
  it('reads each sample of perf script: its process and its frames, leaf first', () => {
    expect(parseSamples(PERF_SCRIPT)).toEqual([
      { pid: 4101, frames: ['ExecConstraints', '[unknown]', 'PortalRun', 'PostgresMain'] },
      { pid: 4102, frames: ['blk_mq_submit_bio', 'fdatasync', 'XLogFlush', 'CommitTransactionCommand'] },
      { pid: 4103, frames: ['[unknown]'] },
    ]);
  });

  it('gives a sample the most specific phase on its stack', () => {
    expect(phaseOf(['ExecConstraints', 'PortalRun', 'PostgresMain'])).toBe('check constraints');
    expect(phaseOf(['fdatasync', 'XLogFlush', 'CommitTransactionCommand'])).toBe('commit: WAL flush');
    // A foreign key's check is a query run inside the executor of the insert that needs it.
    expect(phaseOf(['_bt_first', 'standard_ExecutorRun', 'AfterTriggerEndQuery', 'PortalRun'])).toBe(
      'foreign keys, triggers',
    );
    expect(phaseOf(['_bt_doinsert', 'btinsert', 'ExecInsertIndexTuples', 'PortalRun'])).toBe('index writes');
    expect(phaseOf(['base_yyparse', 'raw_parser', 'pg_parse_query'])).toBe('parse, analyze');
    expect(phaseOf(['[unknown]', 'PostgresMain'])).toBe('other');
  });

  it("counts only the platform's connections, by name, and PostgreSQL's own processes", () => {
    const backend = (pid: number, application_name: string, datname: string | null = 'bench') => ({
      pid,
      datname,
      application_name,
      backend_type: datname ? 'client backend' : 'walwriter',
    });
    const backends = new Map(
      [
        backend(1, 'license'),
        backend(2, 'identity'),
        backend(3, 'bench-reference'),
        backend(4, 'bench-pg-profile'),
        backend(5, 'license', 'another_database'),
        backend(6, '', null),
      ].map((b) => [b.pid, b]),
    );
    const samples = [1, 1, 1, 2, 3, 4, 5, 6, 7].map((pid) => ({ pid, frames: ['XLogFlush'] }));
    // A sample is 1/499 s of CPU: three over 1,000 requests are 6 µs per request.
    const result = attribute(samples.slice(0, 3), backends, 'bench', 1000);
    expect(result).toEqual({
      samples: 3,
      perRequestUs: 6,
      byBackend: { license: 6 },
      byPhase: { 'commit: WAL flush': 6 },
    });
    const all = attribute(samples, backends, 'bench', 1);
    expect(all.samples).toBe(6); // not the reference's, the profiler's or another database's
    expect(Object.keys(all.byBackend)).toEqual(['license', 'identity', 'walwriter', 'exited or postmaster']);
    expect(all.perRequestUs).toBe(Math.round((6 * 1e6) / 499));
    // The reference's rounds: its pool and PostgreSQL's own processes, nothing of the platform's.
    const reference = attribute(samples, backends, 'bench', 1, 'reference');
    expect(Object.keys(reference.byBackend)).toEqual(['reference', 'walwriter', 'exited or postmaster']);
    expect(reference.samples).toBe(3);
  });
});
