import { lastEventIdOf, pushedView, serialsOf, sseFrame } from './sse';

describe('the license event stream rules', () => {
  it('writes an event as id, event and one data line', () => {
    expect(sseFrame('license.revoked', 42, { serial: 'A\nB' })).toBe(
      'id: 42\nevent: license.revoked\ndata: {"serial":"A\\nB"}\n\n',
    );
  });

  it('reads Last-Event-ID: none, a sequence, or NaN for anything else (answered with a reset)', () => {
    expect(lastEventIdOf(undefined)).toBeUndefined();
    expect(lastEventIdOf(' ')).toBeUndefined();
    expect(lastEventIdOf('17')).toBe(17);
    expect(lastEventIdOf('-1')).toBeNaN();
    expect(lastEventIdOf('1e3')).toBeNaN();
    expect(lastEventIdOf('9'.repeat(16))).toBeNaN();
  });

  it('pushes revocations, suspensions, reinstatements and expiries only', () => {
    const data = { serial: 'S', status: 'revoked' as const, revoked_at: 'r', valid_until: null };
    expect(pushedView('license.revoked', 'at', data)).toEqual({
      type: 'license.revoked',
      serial: 'S',
      status: 'revoked',
      occurred_at: 'at',
      revoked_at: 'r',
      valid_until: null,
    });
    expect(pushedView('license.updated', 'at', data)).toBeUndefined();
    expect(pushedView('license.created', 'at', data)).toBeUndefined();
  });

  it('follows each serial once', () => {
    expect(serialsOf('A,B,A')).toEqual(['A', 'B']);
  });
});
