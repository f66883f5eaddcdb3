import { PoolClient } from 'pg';
import { DataSource, EntityManager, EntityMetadata, ValueTransformer } from 'typeorm';
import { preparedStatement } from '@licensing/shared/database';
import { OutboxEventEntity } from '@licensing/shared/events';
import { CatalogProductEntity } from '../catalog/catalog-product.entity';
import { LicenseEntity } from '../licenses/license.entity';
import { PolicyEntity } from '../policies/policy.entity';
import { ActivationGrantEntity } from './activation-grant.entity';
import { ActivationEntity } from './activation.entity';

/**
 * The statements of the seat paths, each sent by name, so that a connection parses and plans it
 * once. TypeORM's find builders made about ten round trips of a new seat and five of a heartbeat,
 * and cost more CPU than PostgreSQL did running them (bench/README.md, "What each change bought").
 */

/** What an activation needs to know of the license and the machine's row, read without a lock. */
export interface HeldSeatRow {
  licenseId: string;
  licenseStatus: LicenseEntity['status'];
  licenseValidUntil: Date | null;
  licenseType: LicenseEntity['licenseType'];
  hardwareBinding: LicenseEntity['hardwareBinding'];
  /** The machine's activation, when it has a row. */
  activation: ActivationEntity | null;
}

/** A heartbeat's outcome: the activation after it, and what was found, to say why when nothing moved. */
export interface HeartbeatRow {
  /** Set when the heartbeat moved the deadline: the activation as it is now. */
  activation: ActivationEntity | null;
  licenseId: string;
  licenseStatus: LicenseEntity['status'];
  licenseValidUntil: Date | null;
  machineKey: string | null;
  expiresAt: Date | null;
  graceSeconds: number;
}

/** Everything a seat is decided from, read under the license's row lock. */
export interface LockedSeat {
  license: LicenseEntity;
  product: CatalogProductEntity;
  policy: PolicyEntity | null;
  /** The machine's own row, locked too. */
  existing: ActivationEntity | null;
  /** Seats other machines hold: live, or lapsed within the policy's grace. */
  seatsTaken: number;
  /** Grants in the activation cap's window, and the oldest of them. */
  granted: number;
  oldestGrant: Date | null;
}

/** A new seat's rows, written together by `SeatStatements.insertSeat`. */
export interface NewSeat {
  activation: ActivationEntity;
  grantId: string;
  /** The `activation.created` event, then the audit entry (absent when no API key asked). */
  outbox: { id: string; subject: string; payload: string }[];
  traceContext: string | null;
  /** Null: commit silently, the caller wakes its own relay after the commit. */
  notifyChannel: string | null;
}

export interface SeatStatements {
  /** The license by serial or id, of the organization, and the machine's row: no lock, no transaction. */
  heldSeat(orgId: string, by: LicenseRef, fingerprint: string): Promise<HeldSeatRow | undefined>;
  /**
   * Activation `id` of the organization (of license `licenseId` when not null): its deadline moved
   * from `now` by its terms, if it still holds its place, is online and its license is active.
   */
  heartbeat(
    id: string,
    orgId: string,
    licenseId: string | null,
    now: Date,
  ): Promise<HeartbeatRow | undefined>;
  /**
   * In the caller's transaction, two statements: the license locked FOR UPDATE (only `reachable`
   * when not null); then its product and policy, the machine's row locked, the seats taken and the
   * grants in the window. Undefined when no such license is reachable.
   */
  lockSeat(
    manager: EntityManager,
    orgId: string,
    by: LicenseRef,
    reachable: string | null,
    fingerprint: string,
    now: Date,
    grantsSince: Date,
  ): Promise<LockedSeat | undefined>;
  /** In the caller's transaction: the activation, its grant and its outbox rows, one statement. */
  insertSeat(manager: EntityManager, seat: NewSeat): Promise<void>;
}

/** How a request names its license. */
export type LicenseRef = { id: string } | { serial: string };

export function seatStatements(dataSource: DataSource): SeatStatements {
  const table = (entity: new () => object) => dataSource.getMetadata(entity).tablePath;
  const licenses = table(LicenseEntity);
  const activations = table(ActivationEntity);
  const products = table(CatalogProductEntity);
  const policies = table(PolicyEntity);
  const grants = table(ActivationGrantEntity);
  const activation = entityRows<ActivationEntity>(dataSource.getMetadata(ActivationEntity), 'a_');
  const license = entityRows<LicenseEntity>(dataSource.getMetadata(LicenseEntity), 'l_');
  const product = entityRows<CatalogProductEntity>(dataSource.getMetadata(CatalogProductEntity), 'p_');
  const policy = entityRows<PolicyEntity>(dataSource.getMetadata(PolicyEntity), 'pol_');
  const whereLicense = (by: LicenseRef) => ('id' in by ? 'l.id = $1::uuid' : 'l.serial = $1');

  const heldSeatText = (by: LicenseRef) =>
    `SELECT l.id AS "licenseId", l.status AS "licenseStatus", l.valid_until AS "licenseValidUntil",
            l.license_type AS "licenseType", l.hardware_binding AS "hardwareBinding",
            ${activation.select('a')}
       FROM ${licenses} l
       LEFT JOIN ${activations} a ON a.license_id = l.id AND a.fingerprint = $3
      WHERE ${whereLicense(by)} AND l.org_id = $2::uuid`;
  const heldSeat = {
    id: preparedStatement(dataSource, 'activation-held-by-id', heldSeatText({ id: '' })),
    serial: preparedStatement(dataSource, 'activation-held-by-serial', heldSeatText({ serial: '' })),
  };

  // The terms as termsOf reads them: a policy's interval and grace, else the product's interval and
  // no grace. The license is active as effectiveStatus says: 'active' and not past valid_until. The
  // UPDATE checks the row's deadline again once it holds its lock, so a row that lapsed meanwhile
  // (and whose seat another machine may have taken) is never revived.
  const heartbeat = preparedStatement(
    dataSource,
    'activation-heartbeat',
    `WITH target AS (
       SELECT a.id, a.machine_key, a.expires_at, l.id AS license_id, l.status, l.valid_until,
              coalesce(pol.heartbeat_grace_seconds, 0) AS grace_seconds,
              CASE WHEN l.policy_id IS NULL THEN p.activation_heartbeat_interval
                   ELSE pol.heartbeat_interval_seconds END AS interval_seconds
         FROM ${activations} a
         JOIN ${licenses} l ON l.id = a.license_id
         JOIN ${products} p ON p.id = l.product_id
         LEFT JOIN ${policies} pol ON pol.id = l.policy_id
        WHERE a.id = $1::uuid AND a.org_id = $2::uuid AND ($3::uuid IS NULL OR a.license_id = $3::uuid)
     ), beat AS (
       UPDATE ${activations} a
          SET last_heartbeat_at = $4::timestamptz,
              expires_at = $4::timestamptz + make_interval(secs => t.interval_seconds)
         FROM target t
        WHERE a.id = t.id AND a.machine_key IS NULL
          AND (a.expires_at IS NULL OR a.expires_at + make_interval(secs => t.grace_seconds) > $4::timestamptz)
          AND t.status = 'active' AND (t.valid_until IS NULL OR t.valid_until > $4::timestamptz)
       RETURNING a.*
     )
     SELECT t.license_id AS "licenseId", t.status AS "licenseStatus", t.valid_until AS "licenseValidUntil",
            t.machine_key AS "machineKey", t.expires_at AS "expiresAt", t.grace_seconds AS "graceSeconds",
            ${activation.select('b')}
       FROM target t LEFT JOIN beat b ON b.id = t.id`,
  );

  // The license's row lock is taken by a statement of its own, before anything is counted: in READ
  // COMMITTED a statement sees the rows committed when it started, so a count in the statement that
  // waited for the lock would miss the seat that the transaction it waited for had just taken (and
  // the machine's own row, had that transaction seated this very machine).
  const lockLicenseText = (by: LicenseRef) =>
    `SELECT l.id FROM ${licenses} l
      WHERE ${whereLicense(by)} AND l.org_id = $2::uuid AND ($3::uuid IS NULL OR l.id = $3::uuid)
        FOR UPDATE`;
  // Then, under that lock, everything the seat is decided from, the machine's row locked too.
  // Seats are counted as holdsPlace says: a row holds one until its deadline plus its policy's grace.
  const seatText = `WITH machine AS (
       SELECT a.* FROM ${activations} a WHERE a.license_id = $1::uuid AND a.fingerprint = $2 FOR UPDATE
     )
     SELECT ${license.select('l')}, ${product.select('p')}, ${policy.select('pol')}, ${activation.select('m')},
            (SELECT count(*)::int FROM ${activations} a
              WHERE a.license_id = l.id AND a.fingerprint <> $2
                AND (a.expires_at IS NULL
                     OR a.expires_at + make_interval(secs => coalesce(pol.heartbeat_grace_seconds, 0)) > $3::timestamptz)
            ) AS "seatsTaken",
            g.granted AS "granted", g.oldest AS "oldestGrant"
       FROM ${licenses} l
       JOIN ${products} p ON p.id = l.product_id
       LEFT JOIN ${policies} pol ON pol.id = l.policy_id
       LEFT JOIN machine m ON true
       CROSS JOIN LATERAL (
         SELECT count(*)::int AS granted, min(created_at) AS oldest FROM ${grants}
          WHERE license_id = l.id AND created_at > $4::timestamptz
       ) g
      WHERE l.id = $1::uuid`;

  // The outbox rows are written in their order (the event first), as the license create writes them.
  const insertSeatText = `WITH activation AS (
       INSERT INTO ${activations}
              (id, org_id, license_id, fingerprint, hostname, platform, components, created_at,
               last_heartbeat_at, expires_at, machine_key, token_hash)
       VALUES ($1::uuid, $2::uuid, $3::uuid, $4::varchar, $5::varchar, $6::varchar, $7::jsonb, $8::timestamptz,
               $8::timestamptz, $9::timestamptz, $10::varchar, NULL)
     ), seat_grant AS (
       INSERT INTO ${grants} (id, license_id, created_at) VALUES ($11::uuid, $3::uuid, $8::timestamptz)
     ), outbox AS (
       INSERT INTO ${table(OutboxEventEntity)} (id, subject, payload, trace_context, created_at)
       SELECT row.id, row.subject, row.payload, $18::text, now()
         FROM (VALUES (1, $12::uuid, $13::varchar, $14::text), (2, $15::uuid, $16::varchar, $17::text))
                AS row(n, id, subject, payload)
        WHERE row.id IS NOT NULL
        ORDER BY row.n
     )
     SELECT CASE WHEN $19::boolean THEN pg_notify($20, '') END`;

  return {
    async heldSeat(orgId, by, fingerprint) {
      const query = 'id' in by ? heldSeat.id : heldSeat.serial;
      const [row] = await query(['id' in by ? by.id : by.serial, orgId, fingerprint]);
      return row && { ...(row as Omit<HeldSeatRow, 'activation'>), activation: activation.from(row) };
    },

    async heartbeat(id, orgId, licenseId, now) {
      const [row] = await heartbeat([id, orgId, licenseId, now]);
      return row && { ...(row as Omit<HeartbeatRow, 'activation'>), activation: activation.from(row) };
    },

    async lockSeat(manager, orgId, by, reachable, fingerprint, now, grantsSince) {
      const [locked] = await inTransaction(
        manager,
        'id' in by ? 'activation-lock-by-id' : 'activation-lock-by-serial',
        lockLicenseText(by),
        ['id' in by ? by.id : by.serial, orgId, reachable],
      );
      if (!locked) return undefined;
      const [row] = await inTransaction(manager, 'activation-seat', seatText, [
        locked['id'],
        fingerprint,
        now,
        grantsSince,
      ]);
      return {
        license: license.from(row!)!,
        product: product.from(row!)!,
        policy: policy.from(row!),
        existing: activation.from(row!),
        seatsTaken: row!['seatsTaken'] as number,
        granted: row!['granted'] as number,
        oldestGrant: row!['oldestGrant'] as Date | null,
      };
    },

    async insertSeat(manager, { activation: a, grantId, outbox, traceContext, notifyChannel }) {
      const [event, audit] = outbox;
      await inTransaction(manager, 'activation-create', insertSeatText, [
        a.id,
        a.orgId,
        a.licenseId,
        a.fingerprint,
        a.hostname,
        a.platform,
        JSON.stringify(a.components),
        a.createdAt,
        a.expiresAt,
        a.machineKey,
        grantId,
        event!.id,
        event!.subject,
        event!.payload,
        audit?.id ?? null,
        audit?.subject ?? null,
        audit?.payload ?? null,
        traceContext,
        notifyChannel !== null,
        notifyChannel,
      ]);
    },
  };
}

/**
 * A named statement on the connection of the caller's TypeORM transaction, past TypeORM's query
 * path: it runs inside that transaction, and the connection keeps it parsed and planned.
 */
async function inTransaction(
  manager: EntityManager,
  name: string,
  text: string,
  values: unknown[],
): Promise<Record<string, unknown>[]> {
  if (!manager.queryRunner?.isTransactionActive) throw new Error(`${name} runs only inside a transaction`);
  const client = (await manager.queryRunner.connect()) as PoolClient;
  return (await client.query<Record<string, unknown>>({ name, text, values })).rows;
}

/**
 * An entity's columns in a row that holds several entities: each selected under its property
 * name with a prefix, and read back into an entity (null when the row has none: its id is null),
 * through the column's transformer where it has one, as TypeORM hydrates it.
 */
function entityRows<T>(metadata: EntityMetadata, prefix: string) {
  const columns = metadata.columns;
  return {
    select: (alias: string) =>
      columns.map((c) => `${alias}."${c.databaseName}" AS "${prefix}${c.propertyName}"`).join(', '),
    from(row: Record<string, unknown>): T | null {
      if (row[`${prefix}id`] === null || row[`${prefix}id`] === undefined) return null;
      const entity = metadata.create() as Record<string, unknown>;
      for (const { propertyName, transformer } of columns) {
        const value = row[`${prefix}${propertyName}`];
        entity[propertyName] = transformed(transformer, value);
      }
      return entity as T;
    },
  };
}

/** A value read from PostgreSQL as TypeORM gives it: through the column's transformers, the last first. */
function transformed(
  transformer: ValueTransformer | ValueTransformer[] | undefined,
  value: unknown,
): unknown {
  if (!transformer) return value;
  const chain = Array.isArray(transformer) ? transformer : [transformer];
  return chain.reduceRight((current, t) => t.from(current) as unknown, value);
}
