/**
 * Checks a history of operations recorded by a load test (what each client sent, when, and what it
 * was answered) against what the platform promises: no seat beyond a license's limit, no
 * activation refused while a seat was certainly free, no revoked license answered as anything but
 * revoked once its revoke was acknowledged, every acknowledged sync counted exactly once. Pure: the
 * test records, this module judges. Times are `Date.now()` values of the client.
 */

/** When a request was sent and when its answer (or its failure) came back, and from which gateway. */
interface Timed {
  sent: number;
  received: number;
  gateway: string;
}

/**
 * An activation: `taken` (answered 201, `activation` is its id), `full` (refused with
 * `seat_limit_reached`), `failed` (refused otherwise: no seat taken) or `unknown` (a 503, a timeout:
 * the seat may or may not have been taken).
 */
export interface ActivationOp extends Timed {
  license: string;
  outcome: 'taken' | 'full' | 'failed' | 'unknown';
  activation?: string;
}

/** A deactivation: `freed` (200, or 404 after an earlier attempt went through) or `unknown`. */
export interface DeactivationOp extends Timed {
  activation: string;
  outcome: 'freed' | 'unknown';
}

interface RevokeOp extends Timed {
  serial: string;
  /** Answered 200. */
  acknowledged: boolean;
}

/** A check-revocation answered 200, with the status it gave each serial. */
export interface CheckOp extends Timed {
  results: Array<{ serial: string; status: string }>;
}

export interface History {
  /** Each license used for activations, with its seats. */
  licenses: Array<{ id: string; maxSeats: number }>;
  activations: ActivationOp[];
  deactivations: DeactivationOp[];
  revokes: RevokeOp[];
  checks: CheckOp[];
}

type Violation =
  | { rule: 'seats-over-limit'; license: string; at: number; held: number; maxSeats: number }
  | { rule: 'refused-with-free-seat'; license: string; at: number; possiblyHeld: number; maxSeats: number }
  | { rule: 'revoked-answered-stale'; serial: string; gateway: string; at: number; status: string }
  | { rule: 'database-over-limit'; license: string; rows: number; maxSeats: number }
  | { rule: 'acknowledged-seat-lost'; activation: string }
  | { rule: 'freed-seat-still-held'; activation: string }
  | { rule: 'sync-not-counted-once'; reportId: string; copies: number };

/** The first attempt to free each activation (when its seat was last certainly held). */
function firstRelease(deactivations: DeactivationOp[]): Map<string, number> {
  const first = new Map<string, number>();
  for (const op of deactivations)
    first.set(op.activation, Math.min(op.sent, first.get(op.activation) ?? Infinity));
  return first;
}

/** When each activation's seat was certainly free again (a deactivation acknowledged). */
function freedAt(deactivations: DeactivationOp[]): Map<string, number> {
  const freed = new Map<string, number>();
  for (const op of deactivations)
    if (op.outcome === 'freed')
      freed.set(op.activation, Math.min(op.received, freed.get(op.activation) ?? Infinity));
  return freed;
}

/**
 * A seat is certainly held from the answer of its activation until the first attempt to free it
 * was sent: at no moment may more of these overlap than the license has seats.
 */
export function seatsOverLimit(history: History): Violation[] {
  const release = firstRelease(history.deactivations);
  const violations: Violation[] = [];
  for (const { id, maxSeats } of history.licenses) {
    const edges: Array<[number, number]> = [];
    for (const op of history.activations) {
      if (op.license !== id || op.outcome !== 'taken') continue;
      const until = release.get(op.activation!) ?? Infinity;
      if (until <= op.received) continue;
      edges.push([op.received, 1], [until, -1]);
    }
    // At one instant, a release counts before a take: the intervals are open at their end.
    edges.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
    let held = 0;
    for (const [at, delta] of edges) {
      held += delta;
      if (held > maxSeats) {
        violations.push({ rule: 'seats-over-limit', license: id, at, held, maxSeats });
        break;
      }
    }
  }
  return violations;
}

/**
 * An activation refused with `seat_limit_reached` needs every seat possibly taken while it was
 * served: counting each activation sent before its answer that may hold a seat (taken or unknown)
 * and was not certainly freed before it was sent, there must be at least as many as the seats.
 */
export function refusedWithFreeSeat(history: History): Violation[] {
  const freed = freedAt(history.deactivations);
  const seats = new Map(history.licenses.map((l) => [l.id, l.maxSeats]));
  const violations: Violation[] = [];
  for (const refusal of history.activations) {
    if (refusal.outcome !== 'full') continue;
    const maxSeats = seats.get(refusal.license);
    if (maxSeats === undefined) continue;
    const possiblyHeld = history.activations.filter(
      (op) =>
        op !== refusal &&
        op.license === refusal.license &&
        (op.outcome === 'taken' || op.outcome === 'unknown') &&
        op.sent < refusal.received &&
        !(op.activation !== undefined && (freed.get(op.activation) ?? Infinity) < refusal.sent),
    ).length;
    if (possiblyHeld < maxSeats)
      violations.push({
        rule: 'refused-with-free-seat',
        license: refusal.license,
        at: refusal.sent,
        possiblyHeld,
        maxSeats,
      });
  }
  return violations;
}

/**
 * Once a revoke is acknowledged, every check-revocation sent afterwards, to any gateway, answers
 * the serial `revoked`.
 */
export function staleRevocations(history: History): Violation[] {
  const revokedAt = new Map<string, number>();
  for (const op of history.revokes)
    if (op.acknowledged)
      revokedAt.set(op.serial, Math.min(op.received, revokedAt.get(op.serial) ?? Infinity));
  const violations: Violation[] = [];
  for (const check of history.checks)
    for (const { serial, status } of check.results) {
      const at = revokedAt.get(serial);
      if (at !== undefined && at < check.sent && status !== 'revoked')
        violations.push({
          rule: 'revoked-answered-stale',
          serial,
          gateway: check.gateway,
          at: check.sent,
          status,
        });
    }
  return violations;
}

/**
 * The activations the database holds at the end, once nothing is in flight: no license beyond its
 * seats, every seat acknowledged and never released still there, every seat freed gone.
 */
export function databaseSeats(history: History, rows: Array<{ id: string; license: string }>): Violation[] {
  const violations: Violation[] = [];
  const present = new Set(rows.map((row) => row.id));
  for (const { id, maxSeats } of history.licenses) {
    const count = rows.filter((row) => row.license === id).length;
    if (count > maxSeats)
      violations.push({ rule: 'database-over-limit', license: id, rows: count, maxSeats });
  }
  const release = firstRelease(history.deactivations);
  const freed = freedAt(history.deactivations);
  for (const op of history.activations) {
    if (op.outcome !== 'taken') continue;
    const activation = op.activation!;
    if (!release.has(activation) && !present.has(activation))
      violations.push({ rule: 'acknowledged-seat-lost', activation });
    if (freed.has(activation) && present.has(activation))
      violations.push({ rule: 'freed-seat-still-held', activation });
  }
  return violations;
}

/** Every sync acknowledged with 200 is stored exactly once: `copies` as analytics counted them. */
export function syncsCountedOnce(acknowledged: string[], copies: Map<string, number>): Violation[] {
  return [...new Set(acknowledged)]
    .map((reportId) => ({ reportId, copies: copies.get(reportId) ?? 0 }))
    .filter(({ copies: n }) => n !== 1)
    .map(({ reportId, copies: n }) => ({ rule: 'sync-not-counted-once' as const, reportId, copies: n }));
}

/** Every rule over one history, with the database's activations and analytics' counts at the end. */
export function checkHistory(
  history: History,
  end: {
    activations: Array<{ id: string; license: string }>;
    syncs: string[];
    syncCopies: Map<string, number>;
  },
): Violation[] {
  return [
    ...seatsOverLimit(history),
    ...refusedWithFreeSeat(history),
    ...staleRevocations(history),
    ...databaseSeats(history, end.activations),
    ...syncsCountedOnce(end.syncs, end.syncCopies),
  ];
}
