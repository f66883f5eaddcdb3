import {
  ActivationOp,
  DeactivationOp,
  History,
  checkHistory,
  databaseSeats,
  refusedWithFreeSeat,
  seatsOverLimit,
  staleRevocations,
  syncsCountedOnce,
} from './support/history-checker';

const g = 'gateway-1';
const take = (activation: string, sent: number, received: number, license = 'L'): ActivationOp => ({
  license,
  outcome: 'taken',
  activation,
  sent,
  received,
  gateway: g,
});
const free = (
  activation: string,
  sent: number,
  received: number,
  outcome: DeactivationOp['outcome'] = 'freed',
) => ({
  activation,
  outcome,
  sent,
  received,
  gateway: g,
});
const history = (over: Partial<History> = {}): History => ({
  licenses: [{ id: 'L', maxSeats: 2 }],
  activations: [],
  deactivations: [],
  revokes: [],
  checks: [],
  ...over,
});

describe('history checker', () => {
  describe('seats', () => {
    it('finds three seats certainly held at once on a license of two', () => {
      const h = history({ activations: [take('a', 0, 10), take('b', 5, 20), take('c', 15, 30)] });
      expect(seatsOverLimit(h)).toEqual([
        { rule: 'seats-over-limit', license: 'L', at: 30, held: 3, maxSeats: 2 },
      ]);
    });

    it('accepts a seat taken again once the release of another was sent', () => {
      const h = history({
        activations: [take('a', 0, 10), take('b', 5, 20), take('c', 35, 40)],
        deactivations: [free('a', 30, 50)],
      });
      expect(seatsOverLimit(h)).toEqual([]);
    });

    it('counts a seat whose release was never answered as held only until the release was sent', () => {
      const h = history({
        activations: [take('a', 0, 10), take('b', 5, 20), take('c', 35, 40)],
        deactivations: [free('a', 30, 9_000, 'unknown')],
      });
      expect(seatsOverLimit(h)).toEqual([]);
    });

    it('finds a refusal while a seat was certainly free, and accepts one while an unknown activation may hold it', () => {
      const full: ActivationOp = { license: 'L', outcome: 'full', sent: 100, received: 110, gateway: g };
      const wrong = history({ activations: [take('a', 0, 10), full] });
      expect(refusedWithFreeSeat(wrong)).toEqual([
        { rule: 'refused-with-free-seat', license: 'L', at: 100, possiblyHeld: 1, maxSeats: 2 },
      ]);
      const unknown: ActivationOp = { license: 'L', outcome: 'unknown', sent: 50, received: 60, gateway: g };
      expect(refusedWithFreeSeat(history({ activations: [take('a', 0, 10), unknown, full] }))).toEqual([]);
    });

    it('finds a refusal once the releases of both seats were acknowledged', () => {
      const full: ActivationOp = { license: 'L', outcome: 'full', sent: 100, received: 110, gateway: g };
      const h = history({
        activations: [take('a', 0, 10), take('b', 0, 10), full],
        deactivations: [free('a', 20, 30), free('b', 20, 30)],
      });
      expect(refusedWithFreeSeat(h).map((v) => v.rule)).toEqual(['refused-with-free-seat']);
    });

    it('compares the database at the end with what was acknowledged', () => {
      const h = history({
        activations: [take('a', 0, 10), take('b', 0, 10), take('c', 0, 10)],
        deactivations: [free('b', 20, 30), free('c', 20, 30, 'unknown')],
      });
      expect(databaseSeats(h, [{ id: 'c', license: 'L' }])).toEqual([
        { rule: 'acknowledged-seat-lost', activation: 'a' },
      ]);
      expect(
        databaseSeats(h, [
          { id: 'a', license: 'L' },
          { id: 'b', license: 'L' },
          { id: 'x', license: 'L' },
        ]),
      ).toEqual([
        { rule: 'database-over-limit', license: 'L', rows: 3, maxSeats: 2 },
        { rule: 'freed-seat-still-held', activation: 'b' },
      ]);
    });
  });

  describe('revocations', () => {
    const revoke = { serial: 'S', sent: 0, received: 10, gateway: 'gateway-2', acknowledged: true };

    it('finds a check sent after the revoke was acknowledged that answers the serial as ok', () => {
      const h = history({
        revokes: [revoke],
        checks: [{ sent: 20, received: 25, gateway: g, results: [{ serial: 'S', status: 'ok' }] }],
      });
      expect(staleRevocations(h)).toEqual([
        { rule: 'revoked-answered-stale', serial: 'S', gateway: g, at: 20, status: 'ok' },
      ]);
    });

    it('accepts either answer for a check sent while the revoke was in flight, or a revoke never acknowledged', () => {
      const h = history({
        revokes: [revoke, { ...revoke, serial: 'T', acknowledged: false }],
        checks: [
          { sent: 5, received: 25, gateway: g, results: [{ serial: 'S', status: 'ok' }] },
          { sent: 30, received: 35, gateway: g, results: [{ serial: 'T', status: 'ok' }] },
        ],
      });
      expect(staleRevocations(h)).toEqual([]);
    });
  });

  it('finds a sync acknowledged but not counted, or counted twice', () => {
    expect(
      syncsCountedOnce(
        ['a', 'b', 'c'],
        new Map([
          ['a', 1],
          ['b', 2],
        ]),
      ),
    ).toEqual([
      { rule: 'sync-not-counted-once', reportId: 'b', copies: 2 },
      { rule: 'sync-not-counted-once', reportId: 'c', copies: 0 },
    ]);
  });

  it('passes a history that keeps every rule', () => {
    const h = history({
      activations: [take('a', 0, 10), take('b', 0, 10)],
      deactivations: [free('a', 20, 30)],
      revokes: [{ serial: 'S', sent: 0, received: 10, gateway: g, acknowledged: true }],
      checks: [{ sent: 20, received: 25, gateway: g, results: [{ serial: 'S', status: 'revoked' }] }],
    });
    expect(
      checkHistory(h, {
        activations: [{ id: 'b', license: 'L' }],
        syncs: ['r'],
        syncCopies: new Map([['r', 1]]),
      }),
    ).toEqual([]);
  });
});
