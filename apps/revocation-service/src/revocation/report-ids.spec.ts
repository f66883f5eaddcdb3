import { randomUUID } from 'node:crypto';
import { isUUID } from 'class-validator';
import { v7 as timeOrderedUuid } from 'uuid';
import { scopedReportId } from './report-ids';

describe('scopedReportId', () => {
  const orgA = randomUUID();
  const orgB = randomUUID();

  it('gives two organizations different ids for the same report_id, the nil UUID included', () => {
    for (const id of [randomUUID(), '00000000-0000-0000-0000-000000000000', timeOrderedUuid()]) {
      expect(scopedReportId(orgA, id)).not.toBe(scopedReportId(orgB, id));
    }
  });

  it('gives one organization the same id for the same report_id, whatever its letter case (a retry is counted once)', () => {
    const id = randomUUID();
    expect(scopedReportId(orgA, id)).toBe(scopedReportId(orgA, id.toUpperCase()));
    expect(scopedReportId(orgA, id)).not.toBe(scopedReportId(orgA, randomUUID()));
  });

  it("answers a UUID that keeps a time-ordered id's 48 bits of milliseconds, so ids still grow with time", () => {
    const id = timeOrderedUuid();
    const scoped = scopedReportId(orgA, id);
    expect(isUUID(scoped, 'all')).toBe(true);
    expect(scoped.slice(0, 13)).toBe(id.slice(0, 13));
    expect(scoped[14]).toBe('8');
  });
});
