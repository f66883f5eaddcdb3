// The soak's verdict and report: each measure's first, middle and last samples, and its growth over
// the second half of the run (least-squares slope, per 10 minutes) against a stated threshold.
// The first half is warm-up (pools filling, JIT, caches); a leak keeps growing after it.

/** Thresholds of growth per 10 minutes over the second half; `null`: reported, not judged. */
const PROCESS_MEASURES = [
  { key: 'rss_mib', label: 'RSS (MiB)', threshold: 10 },
  { key: 'heap_mib', label: 'heap used (MiB)', threshold: 5 },
  { key: 'fds', label: 'open fds', threshold: 5 },
  { key: 'handles', label: 'active handles', threshold: 10 },
  // A pool opens connections on demand and closes idle ones (PostgreSQL: 1 to 5 per process), so
  // its count wanders within its size; a leaked connection adds to it for good.
  { key: 'pg_sockets', label: 'PostgreSQL connections', threshold: 2 },
  { key: 'redis_sockets', label: 'Redis connections', threshold: 2 },
  { key: 'nats_sockets', label: 'NATS connections', threshold: 2 },
  { key: 'el_p99_ms', label: 'event-loop delay p99 (ms)', threshold: 10 },
  { key: 'el_max_ms', label: 'event-loop delay max (ms)', threshold: null },
  { key: 'cpu_pct', label: 'CPU (% of a core)', threshold: null },
];
const SHARED_MEASURES = [
  { key: 'pg_connections', label: "PostgreSQL connections to the soak's database", threshold: 3 },
  // Every client of the machine's Redis, other work included: too noisy to judge.
  { key: 'redis_clients', label: 'Redis connected_clients (whole server)', threshold: null },
  // Serial-cache entries of the licenses created (1 h TTL) and rate-limit buckets: grow for an hour.
  { key: 'redis_keys', label: "Redis keys of the soak's namespace", threshold: null },
  // A key without expiry stays for ever: any steady growth is a leak.
  { key: 'redis_persistent_keys', label: 'of them without expiry', threshold: 1 },
  // Licenses created, sync reports, audit entries: grows by design.
  { key: 'db_mib', label: 'database size (MiB)', threshold: null },
];
/** The second half must span this long for its growth to be judged. */
const MIN_JUDGED_SECONDS = 300;

/** Least-squares slope of `points` ([t seconds, value]) in units per second; null under 2 points. */
function slope(points) {
  const n = points.length;
  if (n < 2) return null;
  const meanT = points.reduce((sum, [t]) => sum + t, 0) / n;
  const meanV = points.reduce((sum, [, v]) => sum + v, 0) / n;
  let num = 0;
  let den = 0;
  for (const [t, v] of points) {
    num += (t - meanT) * (v - meanV);
    den += (t - meanT) ** 2;
  }
  return den === 0 ? 0 : num / den;
}

const round = (value, digits = 2) => (value === null ? null : Number(value.toFixed(digits)));

/**
 * The growth of each measure: first, middle, last, slope per 10 minutes over the second half, the
 * threshold, and `grows` (true beyond it; null when not judged). `samples` are [{t, processes, …}].
 */
function analyse(samples, { seconds }) {
  const judged = seconds / 2 >= MIN_JUDGED_SECONDS;
  const secondHalf = samples.filter((s) => s.t >= seconds / 2);
  const rows = [];
  const row = (scope, measure, valueOf) => {
    const values = samples.map((s) => [s.t, valueOf(s)]).filter(([, v]) => typeof v === 'number');
    if (values.length === 0) return;
    const half = secondHalf.map((s) => [s.t, valueOf(s)]).filter(([, v]) => typeof v === 'number');
    const perSecond = slope(half);
    const per10min = perSecond === null ? null : round(perSecond * 600);
    rows.push({
      scope,
      measure: measure.key,
      label: measure.label,
      first: values[0][1],
      middle: values[Math.floor(values.length / 2)][1],
      last: values[values.length - 1][1],
      slope_per_10min: per10min,
      threshold: measure.threshold,
      grows: measure.threshold === null || !judged || per10min === null ? null : per10min > measure.threshold,
    });
  };
  const labels = Object.keys(samples[0]?.processes ?? {});
  for (const label of labels)
    for (const measure of PROCESS_MEASURES) row(label, measure, (s) => s.processes[label]?.[measure.key]);
  for (const measure of SHARED_MEASURES) row('shared', measure, (s) => s[measure.key]);
  return { judged, rows, growing: rows.filter((r) => r.grows) };
}

/** Columns padded to their widest cell: the first `left` aligned left, the others right. */
function table(header, lines, left = 1) {
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((line) => String(line[i]).length)));
  const format = (cells) =>
    cells
      .map((cell, i) => (i < left ? String(cell).padEnd(widths[i]) : String(cell).padStart(widths[i])))
      .join('  ')
      .trimEnd();
  return [format(header), format(widths.map((w) => '-'.repeat(w))), ...lines.map(format)];
}

const show = (value) => (value === null || value === undefined ? '—' : String(value));
const signed = (value) => (value === null ? '—' : value > 0 ? `+${value}` : String(value));

/** Lines of the printed report. */
function formatReport(result) {
  const lines = [];
  const { growth, requests, settings } = result;
  const n = result.samples.length;
  lines.push(
    `Soak: ${round(result.seconds / 60, 1)} min of load, ${n} samples every ${settings.interval} s ` +
      `(first at ${result.samples[0]?.t ?? 0} s, middle at ${result.samples[Math.floor(n / 2)]?.t ?? 0} s, ` +
      `last at ${result.samples[n - 1]?.t ?? 0} s)`,
  );
  lines.push('');
  lines.push('Requests (whole run):');
  lines.push(
    ...table(
      ['kind', 'requests', 'req/s', '2xx', '4xx', '5xx', 'no answer', 'skipped', 'p50 ms', 'p99 ms'],
      Object.entries(requests).map(([kind, r]) => [
        kind,
        r.requests,
        r.rps,
        r.ok,
        r.http4xx,
        r.http5xx,
        r.failed,
        r.skipped,
        show(r.p50),
        show(r.p99),
      ]),
    ),
  );
  lines.push('');
  lines.push(
    `Growth over the second half (least-squares slope per 10 min)${
      growth.judged ? '' : `: not judged, the run is shorter than ${(2 * MIN_JUDGED_SECONDS) / 60} min`
    }:`,
  );
  lines.push(
    ...table(
      ['process', 'measure', 'first', 'middle', 'last', 'slope/10 min', 'threshold', ''],
      growth.rows.map((r) => [
        r.scope,
        r.label,
        show(r.first),
        show(r.middle),
        show(r.last),
        signed(r.slope_per_10min),
        r.threshold === null ? '—' : `+${r.threshold}`,
        r.grows === true ? 'GROWS' : r.grows === false ? 'ok' : '',
      ]),
      2,
    ),
  );
  const { autovacuum, tables } = result.database_tables ?? { tables: [] };
  const grown = tables
    .map((t) => ({ ...t, growth: t.end.mib - (t.start?.mib ?? 0) }))
    .sort((a, b) => b.growth - a.growth)
    .slice(0, 8);
  if (grown.length > 0) {
    lines.push('');
    lines.push(`The tables that grew most during the load (autovacuum ${autovacuum}):`);
    lines.push(
      ...table(
        ['table', 'rows before', 'rows after', 'dead rows after', 'MiB before', 'MiB after'],
        grown.map((t) => [
          t.name,
          show(t.start?.live),
          t.end.live,
          t.end.dead,
          show(t.start?.mib),
          t.end.mib,
        ]),
      ),
    );
  }
  return lines;
}

module.exports = { analyse, formatReport, slope };
