import { DomainError } from '@licensing/shared/errors';
import { rangeOf } from './analytics.service';

describe('rangeOf', () => {
  it('accepts a range up to the limit, from inclusive and to exclusive', () => {
    expect(rangeOf({ from: '2026-01-01T00:00:00Z', to: '2026-02-01T00:00:00Z' }, 31)).toEqual({
      from: new Date('2026-01-01T00:00:00Z'),
      to: new Date('2026-02-01T00:00:00Z'),
    });
  });

  it.each([
    ['to equal to from', '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z'],
    ['to before from', '2026-01-02T00:00:00Z', '2026-01-01T00:00:00Z'],
    ['a range one millisecond too long', '2026-01-01T00:00:00Z', '2026-02-01T00:00:00.001Z'],
  ])('refuses %s with a field error on to', (_what, from, to) => {
    expect(() => rangeOf({ from, to }, 31)).toThrow(DomainError);
    try {
      rangeOf({ from, to }, 31);
    } catch (error) {
      expect((error as DomainError).toJSON()).toMatchObject({
        code: 'validation_failed',
        errors: [expect.objectContaining({ field: 'to' })],
      });
    }
  });
});
