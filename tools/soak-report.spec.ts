/**
 * The soak's verdict (bench/soak/report.js): growth is the least-squares slope over the second half
 * of the run, judged against each measure's threshold only when that half is long enough.
 */
const { analyse, slope } = require('../bench/soak/report') as {
  analyse(
    samples: Array<Record<string, unknown>>,
    options: { seconds: number },
  ): {
    judged: boolean;
    rows: Array<{ scope: string; measure: string; slope_per_10min: number; grows: boolean | null }>;
  };
  slope(points: Array<[number, number]>): number | null;
};

/** Samples every 10 s for `seconds`, the gateway's RSS following `rss(t)`, all else flat. */
function samples(seconds: number, rss: (t: number) => number) {
  return Array.from({ length: seconds / 10 + 1 }, (_, i) => ({
    t: i * 10,
    processes: { gateway: { rss_mib: rss(i * 10), fds: 40, el_p99_ms: i % 2 === 0 ? 1 : 3 } },
    pg_connections: 12,
  }));
}

const row = (result: ReturnType<typeof analyse>, measure: string) =>
  result.rows.find((r) => r.scope !== 'shared' && r.measure === measure)!;

describe('soak report', () => {
  it('measures the slope of a straight line exactly, and of a flat one as zero', () => {
    expect(slope([0, 10, 20, 30].map((t) => [t, 5 + 2 * t] as [number, number]))).toBeCloseTo(2);
    expect(slope([0, 10, 20].map((t) => [t, 7] as [number, number]))).toBe(0);
  });

  it('flags RSS that keeps growing in the second half, not RSS that grew while warming up', () => {
    const leaking = analyse(
      samples(1800, (t) => 100 + (t / 600) * 20),
      { seconds: 1800 },
    );
    expect(row(leaking, 'rss_mib')).toMatchObject({ slope_per_10min: 20, grows: true });
    expect(row(leaking, 'fds')).toMatchObject({ slope_per_10min: 0, grows: false });

    const warming = analyse(
      samples(1800, (t) => (t < 900 ? 100 + t / 10 : 190)),
      { seconds: 1800 },
    );
    expect(row(warming, 'rss_mib')).toMatchObject({ slope_per_10min: 0, grows: false });
  });

  it('does not judge a run whose second half is under five minutes', () => {
    const short = analyse(
      samples(300, (t) => 100 + t),
      { seconds: 300 },
    );
    expect(short.judged).toBe(false);
    expect(row(short, 'rss_mib').grows).toBeNull();
  });
});
