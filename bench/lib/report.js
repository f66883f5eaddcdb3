// The one table: the platform ("ours") beside its ceiling (the reference pipeline), the ratio of
// their throughput and p99 (with each round's ratio), the target, and µs of CPU per request in
// each process. Then the strict ceilings, and the fixed-rate table: latency at half the
// platform's req/s.

const ORDER = [
  'gw',
  'prod',
  'lic',
  'rev',
  'ana',
  'hook',
  'ref-gw',
  'ref-resp',
  'pg',
  'redis',
  'nats',
  'loadgen',
];

function cpuText(cpu) {
  if (!cpu) return '';
  return ORDER.filter((label) => cpu[label] !== undefined && cpu[label] !== null)
    .map((label) => `${label} ${cpu[label]}`)
    .join(' · ');
}

/** Ours against a ceiling (`ref`, or `strict` with its own target): ratios, target, whether met. */
function verdict(row, ceiling = row.ref, goal = row.target) {
  if (!ceiling || !goal) return { ratio: '', p99: '', target: '—', pass: '' };
  const ratio = row.ours.rps / ceiling.rps;
  const p99 = ceiling.p99 > 0 ? row.ours.p99 / ceiling.p99 : Infinity;
  let pass = ratio >= goal.ratio;
  if (goal.p99 !== undefined) pass &&= p99 <= goal.p99;
  const target = `≥ ${goal.ratio}×${goal.p99 !== undefined ? `, p99 ≤ ${goal.p99}×` : ''}`;
  // Each round's own ratio beside the whole run's: how far apart the rounds were.
  const rounds = (row.ours.rounds ?? []).map((rps, i) => rps / ceiling.rounds?.[i]).filter(Number.isFinite);
  const spread = rounds.length > 1 ? ` (${rounds.map((r) => r.toFixed(2)).join(', ')})` : '';
  return {
    ratio: `${ratio.toFixed(2)}×${spread}`,
    p99: `${p99.toFixed(1)}×`,
    target,
    pass: pass ? 'yes' : 'NO',
  };
}

function printTable(report, say) {
  const { settings, machine } = report;
  say(
    `${machine.cpus} × ${machine.model}, ${machine.memory_gb} GB, Node ${machine.node}; ` +
      `${settings.connections} connections, ${settings.rounds ?? 1} × ${settings.duration} s per side ` +
      `(alternating) after ${settings.warmup} s warm-up; ` +
      `${settings.licenses} licenses`,
  );
  say('');
  say(
    '| scenario | ours req/s | p50 | p99 | errors | ceiling req/s | p50 | p99 | errors | ratio | p99 vs ceiling | target | met |',
  );
  say('|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|---|');
  for (const row of report.rows) {
    const v = verdict(row);
    const ref = row.ref ?? {};
    say(
      `| ${row.label} | ${row.ours.rps} | ${row.ours.p50} ms | ${row.ours.p99} ms | ${row.ours.errors} | ` +
        `${ref.rps ?? '—'} | ${ref.p50 !== undefined ? `${ref.p50} ms` : ''} | ${ref.p99 !== undefined ? `${ref.p99} ms` : ''} | ` +
        `${ref.errors ?? ''} | ${v.ratio} | ${v.p99} | ${v.target} | ${v.pass} |`,
    );
  }
  printStrict(report, say);
  say('');
  say('CPU per request (µs), per process:');
  say('');
  say('| scenario | platform | ceiling |');
  say('|---|---|---|');
  for (const row of report.rows)
    say(`| ${row.label} | ${cpuText(row.ours.cpu)} | ${cpuText(row.ref?.cpu)} |`);
  const sync = report.rows.find((row) => row.syncCheck);
  if (sync) {
    const c = sync.syncCheck;
    say('');
    say(
      `sync → analytics: ${c.counted} of ${c.sent} reports answered 2xx counted ${c.seconds} s after the load stopped ` +
        `(${c.resent} in flight at the stop sent again with their report_id) — ${c.ok ? 'ok' : 'FAILED (must be all, within 5 s)'}`,
    );
  }
  printFixedRate(report, say);
}

/**
 * Ours against the strict ceilings: the same reference pipelines reading cache entries of only the
 * bytes the answer needs (reference/minimal-entries.js), not the platform's own entries.
 */
function printStrict(report, say) {
  const rows = report.rows.filter((row) => row.strict);
  if (rows.length === 0) return;
  say('');
  say('Strict ceilings (entries of the fewest bytes the answer needs):');
  say('');
  say(
    '| scenario | strict req/s | p50 | p99 | errors | ratio | p99 vs strict | target | met | strict CPU per request (µs) |',
  );
  say('|---|--:|--:|--:|--:|--:|--:|---|---|---|');
  for (const row of rows) {
    const v = verdict(row, row.strict, row.strictTarget);
    const c = row.strict;
    say(
      `| ${row.label} | ${c.rps} | ${c.p50} ms | ${c.p99} ms | ${c.errors} | ${v.ratio} | ${v.p99} | ` +
        `${v.target} | ${v.pass} | ${cpuText(c.cpu)} |`,
    );
  }
}

const msText = (value) => (value === null || value === undefined ? '' : `${value} ms`);

/** The fixed-rate table: p50, p99 and max at half the platform's req/s, beside the ceiling's. */
function printFixedRate(report, say) {
  const rows = report.rows.filter((row) => row.fixedRate);
  if (rows.length === 0) return;
  say('');
  say(
    `fixed-rate p99: each side at half the platform's closed-loop req/s, open loop, ` +
      `${report.settings.fixedRateRounds} × ${report.settings.duration} s per side (alternating); ` +
      "latency from each request's due time (lib/fixed-rate.js):",
  );
  say('');
  say(
    '| scenario | rate req/s | ours p50 | p99 | max | errors | ceiling p50 | p99 | max | errors | p99 vs ceiling | target | met |',
  );
  say('|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|---|');
  for (const row of rows) {
    const { rate, target, ours, ref } = row.fixedRate;
    const spread = ours.rounds.length > 1 ? ` (${ours.rounds.join(', ')})` : '';
    const ratio = ref.p99 > 0 ? `${(ours.p99 / ref.p99).toFixed(1)}×` : '';
    const met = ours.p99 !== null && ours.p99 <= target.p99 ? 'yes' : 'NO';
    say(
      `| ${row.label} | ${rate} | ${msText(ours.p50)} | ${msText(ours.p99)}${spread} | ${msText(ours.max)} | ${ours.errors} | ` +
        `${msText(ref.p50)} | ${msText(ref.p99)} | ${msText(ref.max)} | ${ref.errors} | ${ratio} | ` +
        `p99 ≤ ${target.p99} ms | ${met} |`,
    );
  }
  // How late the harness itself sent requests: a share of every figure above, on both sides.
  const lag = (side) => Math.max(...rows.map((row) => row.fixedRate[side].lagP99 ?? 0));
  say('');
  say(`harness send lag, p99 (worst scenario): ours ${lag('ours')} ms, ceiling ${lag('ref')} ms`);
  // Where a request waited: each process's threads runnable but without a core.
  const queued = (waits) =>
    Object.entries(waits ?? {})
      .map(([label, us]) => `${label} ${us}`)
      .join(' · ');
  say('');
  say(
    'waited for a core while runnable during the fixed-rate rounds, µs per request (/proc/<pid>/task/*/schedstat):',
  );
  say('');
  say('| scenario | platform | total | ceiling | total |');
  say('|---|---|--:|---|--:|');
  const total = (waits) => Object.values(waits ?? {}).reduce((sum, us) => sum + us, 0);
  for (const row of rows) {
    const { ours, ref } = row.fixedRate;
    say(
      `| ${row.label} | ${queued(ours.queuedUs)} | ${total(ours.queuedUs)} | ${queued(ref.queuedUs)} | ${total(ref.queuedUs)} |`,
    );
  }
  // Which of the platform's processes a request waited on: each one's event loop held up.
  const loops = rows.filter((row) => Object.keys(row.fixedRate.eventLoop ?? {}).length > 0);
  if (loops.length === 0) return;
  say('');
  say("event-loop delay of the platform's processes during its fixed-rate rounds, p99 / max (worst round):");
  for (const row of loops) {
    const cells = Object.entries(row.fixedRate.eventLoop).map(
      ([label, { p99, max }]) => `${label} ${p99 ?? '–'} / ${max ?? '–'} ms`,
    );
    say(`- ${row.label}: ${cells.join(' · ')}`);
  }
}

module.exports = { printTable, printFixedRate, verdict };
