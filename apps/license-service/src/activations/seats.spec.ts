import { DomainError } from '@licensing/shared/errors';
import { heartbeatDeadline, holdsPlace, isLapsed } from './activation.mapper';
import { ensureFreeSeat, seatLimit } from './seats';

const NOW = new Date('2026-06-01T12:00:00Z');

describe('seat arithmetic', () => {
  describe('seatLimit', () => {
    it.each([
      { maxSeats: 5, maxConcurrentActivations: null, limit: 5 },
      { maxSeats: 5, maxConcurrentActivations: 3, limit: 3 },
      { maxSeats: 2, maxConcurrentActivations: 10, limit: 2 },
      { maxSeats: 4, maxConcurrentActivations: 4, limit: 4 },
      { maxSeats: 1, maxConcurrentActivations: null, limit: 1 },
    ])(
      'is min(max_seats $maxSeats, product max_concurrent_activations $maxConcurrentActivations) = $limit',
      ({ maxSeats, maxConcurrentActivations, limit }) => {
        expect(seatLimit({ maxSeats }, { maxConcurrentActivations })).toBe(limit);
      },
    );
  });

  describe('seatLimit with a policy overage', () => {
    it.each([
      { maxSeats: 4, overage: 'none', cap: null, limit: 4 },
      { maxSeats: 4, overage: '1.25x', cap: null, limit: 5 },
      { maxSeats: 3, overage: '1.25x', cap: null, limit: 3 },
      { maxSeats: 5, overage: '1.5x', cap: null, limit: 7 },
      { maxSeats: 5, overage: '2x', cap: null, limit: 10 },
      { maxSeats: 5, overage: 'always', cap: null, limit: Infinity },
      { maxSeats: 5, overage: 'always', cap: 8, limit: 8 },
      { maxSeats: 5, overage: '2x', cap: 6, limit: 6 },
    ] as const)(
      'is floor(max_seats $maxSeats × $overage), capped by the product ($cap): $limit',
      ({ maxSeats, overage, cap, limit }) => {
        expect(seatLimit({ maxSeats }, { maxConcurrentActivations: cap }, overage)).toBe(limit);
      },
    );
  });

  describe('holdsPlace', () => {
    it('holds the place until the deadline plus the grace, then not', () => {
      const deadline = new Date(NOW.getTime() - 5_000);
      expect(holdsPlace({ expiresAt: deadline }, 0, NOW)).toBe(false);
      expect(holdsPlace({ expiresAt: deadline }, 10, NOW)).toBe(true);
      expect(holdsPlace({ expiresAt: deadline }, 5, NOW)).toBe(false);
      expect(holdsPlace({ expiresAt: null }, 0, NOW)).toBe(true);
    });
  });

  describe('ensureFreeSeat', () => {
    it('lets an activation in while a seat is free', () => {
      expect(() => ensureFreeSeat('lic-1', 0, 1)).not.toThrow();
      expect(() => ensureFreeSeat('lic-1', 2, 3)).not.toThrow();
    });

    it('refuses with seat_limit_reached (409) once every seat is held, naming the limit', () => {
      for (const [inUse, limit] of [
        [3, 3],
        [4, 3],
      ] as const) {
        let refused: unknown;
        try {
          ensureFreeSeat('lic-1', inUse, limit);
        } catch (error) {
          refused = error;
        }
        expect(refused).toBeInstanceOf(DomainError);
        expect(refused).toMatchObject({
          code: 'seat_limit_reached',
          status: 409,
          message: 'License lic-1 has all 3 seats in use',
        });
      }
    });
  });

  describe('a lapsed activation holds no seat', () => {
    it('holds its seat until its heartbeat deadline, and none from that instant', () => {
      expect(isLapsed({ expiresAt: new Date(NOW.getTime() + 1) }, NOW)).toBe(false);
      expect(isLapsed({ expiresAt: NOW }, NOW)).toBe(true);
      expect(isLapsed({ expiresAt: new Date(NOW.getTime() - 1) }, NOW)).toBe(true);
    });

    it('never lapses without a deadline (a product with no heartbeat interval)', () => {
      expect(isLapsed({ expiresAt: null }, new Date('2999-01-01T00:00:00Z'))).toBe(false);
    });
  });

  describe('heartbeatDeadline', () => {
    it("is the product's interval after the activation or heartbeat", () => {
      expect(heartbeatDeadline(60, NOW)).toEqual(new Date('2026-06-01T12:01:00Z'));
    });

    it('is none when the product asks for no heartbeat', () => {
      expect(heartbeatDeadline(null, NOW)).toBeNull();
    });
  });
});
