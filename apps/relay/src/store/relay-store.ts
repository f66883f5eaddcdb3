// The relay's one SQLite file (DIR/relay.db): its identity and key pair, the relay file in force,
// the leases, the latest time seen and the last revocation list. Every write is durable when it
// returns (WAL, synchronous = FULL), and the seat limit is also a trigger, the last line of defence.
import { chmodSync, existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';

export const DATABASE_FILE = 'relay.db';

/** How long a writer waits for another process's transaction (the CLI beside the server). */
const BUSY_TIMEOUT_MS = 10_000;

// One step per schema version (PRAGMA user_version). Never edit a released step: add one.
const MIGRATIONS: string[] = [
  `CREATE TABLE identity (
     id INTEGER PRIMARY KEY CHECK (id = 1),
     site TEXT NOT NULL,
     public_key_pem TEXT NOT NULL,
     private_key_pem TEXT NOT NULL,
     created_at INTEGER NOT NULL
   );
   CREATE TABLE relay_file (
     id INTEGER PRIMARY KEY CHECK (id = 1),
     relay_file_id TEXT NOT NULL,
     blob TEXT NOT NULL,
     license_id TEXT NOT NULL,
     serial TEXT NOT NULL,
     product_id TEXT NOT NULL,
     max_seats INTEGER NOT NULL CHECK (max_seats >= 0),
     lease_seconds INTEGER CHECK (lease_seconds IS NULL OR lease_seconds > 0),
     issued_at INTEGER NOT NULL,
     not_before INTEGER NOT NULL,
     expires_at INTEGER,
     loaded_at INTEGER NOT NULL
   );
   CREATE TABLE clock (
     id INTEGER PRIMARY KEY CHECK (id = 1),
     latest_seen INTEGER NOT NULL
   );
   CREATE TABLE revocation (
     id INTEGER PRIMARY KEY CHECK (id = 1),
     list TEXT NOT NULL,
     version INTEGER NOT NULL,
     revoked INTEGER NOT NULL CHECK (revoked IN (0, 1)),
     revoked_at INTEGER,
     imported_at INTEGER NOT NULL
   );
   CREATE TABLE leases (
     seq INTEGER PRIMARY KEY AUTOINCREMENT,
     id TEXT NOT NULL UNIQUE,
     fingerprint TEXT NOT NULL,
     name TEXT,
     leased_at INTEGER NOT NULL,
     last_heartbeat_at INTEGER NOT NULL,
     expires_at INTEGER NOT NULL,
     ended_at INTEGER,
     end_reason TEXT CHECK (end_reason IN ('released', 'lapsed', 'revoked')),
     seats_in_use INTEGER NOT NULL CHECK (seats_in_use >= 1),
     CHECK ((ended_at IS NULL) = (end_reason IS NULL))
   );
   -- One live lease per machine.
   CREATE UNIQUE INDEX leases_live_fingerprint ON leases (fingerprint) WHERE ended_at IS NULL;
   CREATE INDEX leases_leased_at ON leases (leased_at, seq);
   -- Never more live leases than the relay file's seats, whatever the code above does.
   CREATE TRIGGER leases_seat_limit BEFORE INSERT ON leases
   WHEN (SELECT count(*) FROM leases WHERE ended_at IS NULL)
        >= coalesce((SELECT max_seats FROM relay_file WHERE id = 1), 0)
   BEGIN SELECT RAISE(ABORT, 'no_seats'); END;`,
];

export interface Identity {
  site: string;
  public_key_pem: string;
  private_key_pem: string;
  created_at: number;
}

/** The relay file in force, as loaded (times in milliseconds). */
export interface RelayFileRow {
  relay_file_id: string;
  blob: string;
  license_id: string;
  serial: string;
  product_id: string;
  max_seats: number;
  /** The policy's heartbeat interval: the lease lifetime, when the file sets one. */
  lease_seconds: number | null;
  issued_at: number;
  not_before: number;
  expires_at: number | null;
  loaded_at: number;
}

export interface RevocationRow {
  list: string;
  version: number;
  revoked: number;
  revoked_at: number | null;
  imported_at: number;
}

export interface LeaseRow {
  seq: number;
  id: string;
  fingerprint: string;
  name: string | null;
  leased_at: number;
  last_heartbeat_at: number;
  expires_at: number;
  ended_at: number | null;
  end_reason: 'released' | 'lapsed' | 'revoked' | null;
  seats_in_use: number;
}

export class StoreError extends Error {
  override readonly name = 'StoreError';
}

/** The relay's database. One per data directory; the server and the CLI may open it at once. */
export class RelayStore {
  private readonly statements = new Map<string, Database.Statement>();

  private constructor(readonly db: Database.Database) {}

  /** Each statement is prepared once: most requests run the same handful. */
  private statement(sql: string): Database.Statement {
    let statement = this.statements.get(sql);
    if (!statement) {
      statement = this.db.prepare(sql);
      this.statements.set(sql, statement);
    }
    return statement;
  }

  /** Opens DIR/relay.db. With `create`, the directory and file are made (mode 0700 / 0600). */
  static open(dataDir: string, { create = false } = {}): RelayStore {
    const file = path.join(dataDir, DATABASE_FILE);
    const exists = existsSync(file);
    if (create && exists) throw new StoreError(`${file} already exists: this relay is initialized`);
    if (!create && !exists) throw new StoreError(`${file} does not exist: run licensing-relay init first`);
    if (create) mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    const db = new Database(file, { fileMustExist: !create });
    // The private key lives here: readable by the relay's user only. WAL and SHM files take the
    // database file's mode.
    if (create) chmodSync(file, 0o600);
    db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    db.pragma('foreign_keys = ON');
    const store = new RelayStore(db);
    store.migrate();
    return store;
  }

  close(): void {
    if (this.db.open) this.db.close();
  }

  /**
   * Runs `work` in one `BEGIN IMMEDIATE` transaction: it holds the write lock from its first
   * statement, so a read-then-write (count the seats, then lease one) cannot interleave with another
   * process's. Throws what `work` throws, after rolling back.
   */
  write<T>(work: () => T): T {
    return this.db.transaction(work).immediate();
  }

  private migrate(): void {
    const version = this.db.pragma('user_version', { simple: true }) as number;
    if (version > MIGRATIONS.length) {
      throw new StoreError(`relay.db is of a newer version (${version}) than this relay knows`);
    }
    for (let step = version; step < MIGRATIONS.length; step++) {
      this.write(() => {
        this.db.exec(MIGRATIONS[step]!);
        this.db.pragma(`user_version = ${step + 1}`);
      });
    }
  }

  identity(): Identity {
    const row = withoutId(this.statement('SELECT * FROM identity WHERE id = 1').get() as Row<Identity>);
    if (!row) throw new StoreError('relay.db holds no identity: run licensing-relay init');
    return row;
  }

  setIdentity(identity: Identity): void {
    this.statement(
      `INSERT INTO identity (id, site, public_key_pem, private_key_pem, created_at)
         VALUES (1, @site, @public_key_pem, @private_key_pem, @created_at)`,
    ).run(identity);
  }

  relayFile(): RelayFileRow | undefined {
    return withoutId(this.statement('SELECT * FROM relay_file WHERE id = 1').get() as Row<RelayFileRow>);
  }

  setRelayFile(row: RelayFileRow): void {
    this.statement(
      `INSERT INTO relay_file (id, relay_file_id, blob, license_id, serial, product_id, max_seats,
           lease_seconds, issued_at, not_before, expires_at, loaded_at)
         VALUES (1, @relay_file_id, @blob, @license_id, @serial, @product_id, @max_seats,
           @lease_seconds, @issued_at, @not_before, @expires_at, @loaded_at)
         ON CONFLICT (id) DO UPDATE SET relay_file_id = excluded.relay_file_id, blob = excluded.blob,
           license_id = excluded.license_id, serial = excluded.serial,
           product_id = excluded.product_id, max_seats = excluded.max_seats,
           lease_seconds = excluded.lease_seconds, issued_at = excluded.issued_at,
           not_before = excluded.not_before, expires_at = excluded.expires_at,
           loaded_at = excluded.loaded_at`,
    ).run(row);
  }

  /** The latest time the relay has seen (ms), 0 before the first. */
  latestSeen(): number {
    const row = this.statement('SELECT latest_seen FROM clock WHERE id = 1').get() as
      { latest_seen: number } | undefined;
    return row?.latest_seen ?? 0;
  }

  /** Moves the latest time seen forward to `now`; never back. */
  see(now: number): void {
    this.statement(
      `INSERT INTO clock (id, latest_seen) VALUES (1, @now)
         ON CONFLICT (id) DO UPDATE SET latest_seen = max(latest_seen, excluded.latest_seen)`,
    ).run({ now });
  }

  revocation(): RevocationRow | undefined {
    return withoutId(this.statement('SELECT * FROM revocation WHERE id = 1').get() as Row<RevocationRow>);
  }

  setRevocation(row: RevocationRow): void {
    this.statement(
      `INSERT INTO revocation (id, list, version, revoked, revoked_at, imported_at)
         VALUES (1, @list, @version, @revoked, @revoked_at, @imported_at)
         ON CONFLICT (id) DO UPDATE SET list = excluded.list, version = excluded.version,
           revoked = excluded.revoked, revoked_at = excluded.revoked_at,
           imported_at = excluded.imported_at`,
    ).run(row);
  }

  /** Ends the leases whose lifetime passed before `now`, at their `expires_at`. */
  endLapsed(now: number): void {
    this.statement(
      `UPDATE leases SET ended_at = expires_at, end_reason = 'lapsed'
          WHERE ended_at IS NULL AND expires_at <= ?`,
    ).run(now);
  }

  /** Ends every live lease at `now` (a revocation). */
  endAll(now: number, reason: 'revoked'): number {
    return this.statement('UPDATE leases SET ended_at = ?, end_reason = ? WHERE ended_at IS NULL').run(
      now,
      reason,
    ).changes;
  }

  liveLeases(): LeaseRow[] {
    return this.statement('SELECT * FROM leases WHERE ended_at IS NULL ORDER BY seq').all() as LeaseRow[];
  }

  countLive(): number {
    return (this.statement('SELECT count(*) AS n FROM leases WHERE ended_at IS NULL').get() as { n: number })
      .n;
  }

  liveLeaseOf(fingerprint: string): LeaseRow | undefined {
    return this.statement('SELECT * FROM leases WHERE fingerprint = ? AND ended_at IS NULL').get(
      fingerprint,
    ) as LeaseRow | undefined;
  }

  lease(id: string): LeaseRow | undefined {
    return this.statement('SELECT * FROM leases WHERE id = ?').get(id) as LeaseRow | undefined;
  }

  insertLease(row: Omit<LeaseRow, 'seq' | 'ended_at' | 'end_reason'>): void {
    this.statement(
      `INSERT INTO leases (id, fingerprint, name, leased_at, last_heartbeat_at, expires_at, seats_in_use)
         VALUES (@id, @fingerprint, @name, @leased_at, @last_heartbeat_at, @expires_at, @seats_in_use)`,
    ).run(row);
  }

  renewLease(id: string, now: number, expiresAt: number): void {
    this.statement('UPDATE leases SET last_heartbeat_at = ?, expires_at = ? WHERE id = ?').run(
      now,
      expiresAt,
      id,
    );
  }

  endLease(id: string, now: number, reason: 'released'): void {
    this.statement('UPDATE leases SET ended_at = ?, end_reason = ? WHERE id = ? AND ended_at IS NULL').run(
      now,
      reason,
      id,
    );
  }

  /** Leases started at or after `since` (ms), oldest first, at most `limit`. */
  leasesSince(since: number, limit: number): LeaseRow[] {
    return this.statement('SELECT * FROM leases WHERE leased_at >= ? ORDER BY leased_at, seq LIMIT ?').all(
      since,
      limit,
    ) as LeaseRow[];
  }
}

/** A single-row table's row: its `id` (always 1) is not part of what it holds. */
type Row<T> = (T & { id: number }) | undefined;

function withoutId<T>(row: Row<T>): T | undefined {
  if (!row) return undefined;
  const { id: _id, ...rest } = row;
  return rest as T;
}
