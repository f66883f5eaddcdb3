import { expiredPartitions } from './partitions.service';

describe('expiredPartitions', () => {
  const now = new Date('2026-11-23T14:00:00.000Z');
  const retention = { rawDays: 30, rollupDays: 730 };
  const names = (parent: string, ...suffixes: string[]) =>
    suffixes.map((suffix) => ({ parent, name: `${parent}_p${suffix}` }));

  it('keeps today and the retention days before it, and drops older days whole', () => {
    expect(
      expiredPartitions(
        [
          ...names('sync_reports', '20261022', '20261023', '20261024', '20261123', '20261125'),
          ...names('active_licenses_daily', '20261022'),
        ],
        now,
        retention,
      ),
    ).toEqual(['sync_reports_p20261022', 'sync_reports_p20261023', 'active_licenses_daily_p20261022']);
  });

  it('drops a rollup month only once all of it is older than the rollup retention', () => {
    expect(
      expiredPartitions(names('usage_hourly', '202410', '202411', '202412', '202611'), now, retention),
    ).toEqual(['usage_hourly_p202410']);
  });

  it('drops a month of report ids only once a day past its end is older than raw retention', () => {
    expect(
      expiredPartitions(names('sync_report_ids', '202609', '202610', '202611', '202612'), now, retention),
    ).toEqual(['sync_report_ids_p202609']);
    // On 1 December raw retention starts on 1 November, whose reports may have their ids in
    // October; the next day both leave.
    const october = names('sync_report_ids', '202610');
    expect(expiredPartitions(october, new Date('2026-12-01T01:00:00.000Z'), retention)).toEqual([]);
    expect(expiredPartitions(october, new Date('2026-12-02T01:00:00.000Z'), retention)).toEqual([
      'sync_report_ids_p202610',
    ]);
  });

  it('leaves alone tables and names it does not manage', () => {
    expect(
      expiredPartitions(
        [
          { parent: 'sync_reports', name: 'sync_reports_old' },
          { parent: 'other', name: 'other_p20000101' },
        ],
        now,
        retention,
      ),
    ).toEqual([]);
  });
});
