// The lease rules: exact seats, one live lease per machine, lapse, the clock guard, the relay
// file's end and revocation. Every decision and its write are one BEGIN IMMEDIATE transaction, so
// they hold across processes (the CLI importing a revocation list beside the server).
import { randomUUID } from 'node:crypto';
import { RelayError } from '../relay-error';
import type { LeaseRow, RelayFileRow, RelayStore } from '../store/relay-store';

/** How far behind the latest time seen the clock may be before leases are refused. */
export const CLOCK_TOLERANCE_MS = 5 * 60_000;

/** The time, in milliseconds. Tests pass their own; the relay uses Date.now. */
export type Clock = () => number;

export interface Lease {
  id: string;
  fingerprint: string;
  name: string | null;
  leased_at: string;
  last_heartbeat_at: string;
  expires_at: string;
}

export interface RelayStatus {
  site: string;
  relay_file_id: string;
  serial: string;
  product_id: string;
  license_id: string;
  seats: number;
  seats_in_use: number;
  lease_seconds: number;
  file_expires_at: string | null;
  expired: boolean;
  revoked: boolean;
  clock_rewound: boolean;
  relay_file: string;
}

export interface LeaseBookOptions {
  /** The lease lifetime when the relay file's policy sets no heartbeat interval. */
  leaseTtlSeconds: number;
  clock: Clock;
}

export class LeaseBook {
  constructor(
    private readonly store: RelayStore,
    private readonly options: LeaseBookOptions,
  ) {}

  /** A seat for `fingerprint`: its live lease renewed (`created: false`), or a new one. */
  lease(fingerprint: string, name: string | null): { lease: Lease; created: boolean } {
    return this.store.write(() => {
      const { now, file } = this.admit();
      const ttl = this.lifetimeMs(file);
      const existing = this.store.liveLeaseOf(fingerprint);
      if (existing) {
        this.store.renewLease(existing.id, now, now + ttl);
        return { lease: leaseOf(this.store.lease(existing.id)!), created: false };
      }
      const inUse = this.store.countLive();
      if (inUse >= file.max_seats) {
        throw new RelayError('no_seats', `All ${file.max_seats} seats are leased`);
      }
      const id = randomUUID();
      this.store.insertLease({
        id,
        fingerprint,
        name,
        leased_at: now,
        last_heartbeat_at: now,
        expires_at: now + ttl,
        seats_in_use: inUse + 1,
      });
      return { lease: leaseOf(this.store.lease(id)!), created: true };
    });
  }

  heartbeat(id: string): Lease {
    return this.store.write(() => {
      const { now, file } = this.admit();
      const row = this.store.lease(id);
      if (!row || row.ended_at !== null) throw notFound(id);
      this.store.renewLease(id, now, now + this.lifetimeMs(file));
      return leaseOf(this.store.lease(id)!);
    });
  }

  /** Ends a lease. Releasing an ended lease again changes nothing; an unknown one is a 404. */
  release(id: string): void {
    this.store.write(() => {
      const now = this.time();
      this.store.endLapsed(now);
      const row = this.store.lease(id);
      if (!row) throw notFound(id);
      if (row.ended_at === null) this.store.endLease(id, now, 'released');
    });
  }

  /** The live leases, oldest first. */
  list(): Lease[] {
    const now = this.time();
    return this.store
      .liveLeases()
      .filter((row) => row.expires_at > now)
      .map(leaseOf);
  }

  status(): RelayStatus {
    const file = this.file();
    const clock = this.options.clock();
    const now = Math.max(clock, this.store.latestSeen());
    const seatsInUse = this.store.liveLeases().filter((row) => row.expires_at > now).length;
    const identity = this.store.identity();
    return {
      site: identity.site,
      relay_file_id: file.relay_file_id,
      serial: file.serial,
      product_id: file.product_id,
      license_id: file.license_id,
      seats: file.max_seats,
      seats_in_use: seatsInUse,
      lease_seconds: this.lifetimeMs(file) / 1000,
      file_expires_at: file.expires_at === null ? null : new Date(file.expires_at).toISOString(),
      expired: file.expires_at !== null && now >= file.expires_at,
      revoked: this.store.revocation()?.revoked === 1,
      clock_rewound: this.rewound(clock),
      relay_file: file.blob,
    };
  }

  /** Records the current time as seen (the server does it every minute). */
  tick(): void {
    const clock = this.options.clock();
    if (!this.rewound(clock)) this.store.write(() => this.store.see(clock));
  }

  /**
   * The checks before a lease or a heartbeat, inside its transaction: revocation, the clock, the
   * relay file's window. Returns the time to record: the latest seen when the clock is a little
   * behind it, so that no lease is dated before one already recorded and none lapsed comes back.
   */
  private admit(): { now: number; file: RelayFileRow } {
    const file = this.file();
    if (this.store.revocation()?.revoked === 1) {
      throw new RelayError('license_revoked', 'The license has been revoked: the relay leases no seat');
    }
    const clock = this.options.clock();
    if (this.rewound(clock)) {
      throw new RelayError(
        'clock_rewound',
        'The system clock is more than 5 minutes behind the latest time the relay has seen: fix the clock',
      );
    }
    const now = Math.max(clock, this.store.latestSeen());
    if (file.expires_at !== null && now >= file.expires_at) {
      throw new RelayError('relay_file_expired', 'The relay file has expired: load a new one');
    }
    if (now < file.not_before) {
      throw new RelayError('relay_file_expired', 'The license is not valid yet');
    }
    this.store.see(now);
    this.store.endLapsed(now);
    return { now, file };
  }

  private time(): number {
    return Math.max(this.options.clock(), this.store.latestSeen());
  }

  private rewound(clock: number): boolean {
    return clock < this.store.latestSeen() - CLOCK_TOLERANCE_MS;
  }

  private file(): RelayFileRow {
    const file = this.store.relayFile();
    if (!file) throw new Error('no relay file is loaded');
    return file;
  }

  private lifetimeMs(file: RelayFileRow): number {
    return (file.lease_seconds ?? this.options.leaseTtlSeconds) * 1000;
  }
}

const iso = (ms: number): string => new Date(ms).toISOString();

export const leaseOf = (row: LeaseRow): Lease => ({
  id: row.id,
  fingerprint: row.fingerprint,
  name: row.name,
  leased_at: iso(row.leased_at),
  last_heartbeat_at: iso(row.last_heartbeat_at),
  expires_at: iso(row.expires_at),
});

const notFound = (id: string) => new RelayError('not_found', `Lease ${id} does not exist or has lapsed`);
