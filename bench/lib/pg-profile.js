// `npm run bench -- --pg-profile`: where PostgreSQL's CPU goes under each side's load. Linux `perf`
// samples the whole machine during each round; each sample of a `postgres` process is then given
// to the side whose connection it ran in (the platform's services name theirs after their schema:
// `license`, `license-outbox`, `identity`…; the reference's pool is `bench-reference`) and to a
// phase of PostgreSQL's work, read from the functions on its stack. Profiling costs CPU: the
// ratios of a profiled run are not comparable with those of a plain one.
const { execFileSync, spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { withPg } = require('./clients');

/** Samples per second of CPU (the `cpu-clock` event: one sample is 1/HZ s of CPU, on any VM). */
const HZ = 499;

/** The application_names of the reference pipeline's connections and the profiler's own: not the platform's. */
const REFERENCE_APPLICATION = 'bench-reference';
const PROFILER_APPLICATION = 'bench-pg-profile';
const NOT_THE_PLATFORM = new Set([REFERENCE_APPLICATION, PROFILER_APPLICATION]);

/**
 * PostgreSQL's work in phases, most specific first: a sample is in the first phase one of whose
 * functions is anywhere on its stack (a foreign key's check runs a query of its own inside the
 * executor, so it must be found before the executor).
 */
const PHASES = [
  ['commit: WAL flush', ['XLogFlush']],
  ['commit: other', ['CommitTransactionCommand']],
  ['foreign keys, triggers', ['AfterTriggerEndQuery', 'AfterTriggerFireDeferred']],
  ['check constraints', ['ExecConstraints']],
  ['index writes', ['ExecInsertIndexTuples', 'index_insert']],
  ['row writes', ['heap_insert', 'heap_multi_insert', 'heap_update', 'heap_delete']],
  [
    'parse, analyze',
    ['pg_parse_query', 'raw_parser', 'parse_analyze_fixedparams', 'parse_analyze_varparams'],
  ],
  ['plan (and plan cache)', ['pg_plan_queries', 'BuildCachedPlan', 'GetCachedPlan']],
  ['parameters in', ['OidInputFunctionCall']],
  ['executor start', ['standard_ExecutorStart']],
  ['reads, other execution', ['PortalRun', 'standard_ExecutorRun']],
  [
    'client protocol',
    ['pq_getbyte', 'pq_getmessage', 'secure_read', 'secure_write', '__send', '__libc_send'],
  ],
  ['lock waits', ['PGSemaphoreLock', '__futex_abstimed_wait_common']],
].map(([phase, functions]) => [phase, new Set(functions)]);

/** The phase of one sample, from the function names of its stack. */
function phaseOf(frames) {
  for (const [phase, functions] of PHASES) if (frames.some((frame) => functions.has(frame))) return phase;
  return 'other';
}

/**
 * `perf script -F pid,ip,sym` output as samples: a line with the PID, then one line per frame
 * (`<address> <symbol>`, `[unknown]` where the binary has no symbol), then a blank line.
 */
function parseSamples(text) {
  const samples = [];
  let current;
  for (const line of text.split('\n')) {
    if (/^\s*\d+\s*$/.test(line)) {
      current = { pid: Number(line.trim()), frames: [] };
      samples.push(current);
    } else if (current && /^\s+[0-9a-f]+ /.test(line)) {
      current.frames.push(
        line
          .trim()
          .split(/\s+/)[1]
          .replace(/\+0x[0-9a-f]+$/, ''),
      );
    }
  }
  return samples;
}

/**
 * Who a PostgreSQL process works for, from pg_stat_activity: on the platform's side its connections
 * by name, on the reference's its pool; on both, PostgreSQL's own processes by type. Undefined for
 * the other side's connections and other databases'.
 */
function labelOf(backend, database, side) {
  if (!backend) return 'exited or postmaster';
  if (backend.backend_type !== 'client backend') return backend.backend_type;
  if (backend.datname !== database) return undefined;
  if (side === 'reference')
    return backend.application_name === REFERENCE_APPLICATION ? 'reference' : undefined;
  if (NOT_THE_PLATFORM.has(backend.application_name)) return undefined;
  return backend.application_name || 'unnamed connection';
}

/**
 * µs of PostgreSQL CPU per request, by connection and by phase, from the samples of one side's
 * rounds (`platform` or `reference`).
 */
function attribute(samples, backends, database, requests, side = 'platform') {
  const byBackend = {};
  const byPhase = {};
  let total = 0;
  const us = (count) => (count * 1e6) / HZ / requests;
  for (const sample of samples) {
    const label = labelOf(backends.get(sample.pid), database, side);
    if (label === undefined) continue;
    const phase = phaseOf(sample.frames);
    byBackend[label] = (byBackend[label] ?? 0) + 1;
    byPhase[phase] = (byPhase[phase] ?? 0) + 1;
    total += 1;
  }
  const rounded = (counts) =>
    Object.fromEntries(
      Object.entries(counts)
        .sort(([, a], [, b]) => b - a)
        .map(([label, count]) => [label, Math.round(us(count))]),
    );
  return {
    samples: total,
    perRequestUs: Math.round(us(total)),
    byBackend: rounded(byBackend),
    byPhase: rounded(byPhase),
  };
}

/**
 * The profiler of one run: `start()` before a round, `stop(side)` after it, and at the end of a
 * scenario `take(side, requests)` (the requests that side's rounds served) for its attribution.
 */
function pgProfiler({ databaseUrl }) {
  try {
    execFileSync('perf', ['--version'], { stdio: 'ignore' });
  } catch {
    throw new Error('--pg-profile needs Linux perf (Debian: apt-get install linux-perf), run as root');
  }
  const database = new URL(databaseUrl).pathname.slice(1);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pg-profile-'));
  let recording;
  const rounds = { platform: [], reference: [] };
  let count = 0;

  const backendsNow = () =>
    withPg(
      databaseUrl,
      async (pg) =>
        (await pg.query('SELECT pid, datname, application_name, backend_type FROM pg_stat_activity')).rows,
      { applicationName: PROFILER_APPLICATION },
    );

  return {
    async start() {
      const file = path.join(dir, `round-${count++}.data`);
      const perf = spawn(
        'perf',
        ['record', '-e', 'cpu-clock', '-F', String(HZ), '-a', '-g', '-q', '-o', file],
        { stdio: ['ignore', 'ignore', 'pipe'] },
      );
      let stderr = '';
      perf.stderr.on('data', (chunk) => (stderr += chunk));
      const exited = new Promise((resolve) => perf.on('close', resolve));
      recording = { perf, file, exited, backends: await backendsNow() };
      // perf writes its header once it samples.
      for (let waited = 0; !(fs.existsSync(file) && fs.statSync(file).size > 0); waited += 20) {
        if (perf.exitCode !== null || waited > 10_000)
          throw new Error(`perf record did not start: ${stderr.trim()}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },

    async stop(side) {
      const { perf, file, exited, backends } = recording;
      recording = undefined;
      // The backends forked during the round are known only now; those that exited, from before.
      const after = await backendsNow();
      perf.kill('SIGINT');
      await exited;
      rounds[side].push({ file, backends: new Map([...backends, ...after].map((row) => [row.pid, row])) });
    },

    take(side, requests) {
      const samples = [];
      const backends = new Map();
      for (const round of rounds[side].splice(0)) {
        const text = execFileSync(
          'perf',
          ['script', '-i', round.file, '--comm', 'postgres', '-F', 'pid,ip,sym'],
          { encoding: 'utf8', maxBuffer: 1 << 30, stdio: ['ignore', 'pipe', 'ignore'] },
        );
        samples.push(...parseSamples(text));
        for (const [pid, row] of round.backends) backends.set(pid, row);
        fs.rmSync(round.file, { force: true });
      }
      return attribute(samples, backends, database, requests, side);
    },

    close() {
      recording?.perf.kill('SIGINT');
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The profile's lines for the run's output: one per breakdown. */
function formatProfile(side, profile) {
  const line = (counts) =>
    Object.entries(counts)
      .map(([label, us]) => `${label} ${us}`)
      .join(' · ');
  return [
    `PostgreSQL in the ${side}'s rounds (perf, ${profile.samples} samples): ${profile.perRequestUs} µs per request`,
    ...(side === 'platform' ? [`  by connection: ${line(profile.byBackend)}`] : []),
    `  by phase: ${line(profile.byPhase)}`,
  ];
}

module.exports = {
  phaseOf,
  parseSamples,
  attribute,
  pgProfiler,
  formatProfile,
  REFERENCE_APPLICATION,
};
