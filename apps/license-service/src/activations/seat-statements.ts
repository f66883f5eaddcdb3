import { DataSource } from 'typeorm';
import { preparedStatement } from '@licensing/shared/database';
import { CatalogProductEntity } from '../catalog/catalog-product.entity';
import { LicenseEntity } from '../licenses/license.entity';
import { PolicyEntity } from '../policies/policy.entity';
import { ActivationEntity } from './activation.entity';

/**
 * The prepared statements of the two hot seat paths: an activation that finds its machine already
 * seated, and a heartbeat. Each is one round trip, planned once per connection. TypeORM's find
 * builders made four to six round trips of these and cost more CPU than PostgreSQL did running
 * them (bench/README.md, "What each change bought").
 */

/** What an activation needs to know of the license and the machine's row, read without a lock. */
export interface HeldSeatRow {
  licenseId: string;
  licenseStatus: LicenseEntity['status'];
  licenseValidUntil: Date | null;
  licenseType: LicenseEntity['licenseType'];
  hardwareBinding: LicenseEntity['hardwareBinding'];
  /** The machine's activation, when it has a row; its columns are null otherwise. */
  activation: ActivationEntity | null;
}

/** A heartbeat's outcome: the activation after it, or what was found instead (null: nothing reachable). */
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

export interface SeatStatements {
  /** The license by serial ($1) or by id ($1), of organization $2, and the row of machine $3. */
  heldSeatBySerial: (values: [string, string, string]) => Promise<HeldSeatRow | undefined>;
  heldSeatById: (values: [string, string, string]) => Promise<HeldSeatRow | undefined>;
  /**
   * Activation $1 of organization $2 (of license $3 when not null): its deadline moved from now
   * ($4) by its terms, if it still holds its place, is online and its license is active.
   */
  heartbeat: (values: [string, string, string | null, Date]) => Promise<HeartbeatRow | undefined>;
}

const ACTIVATION_PREFIX = 'a_';

export function seatStatements(dataSource: DataSource): SeatStatements {
  const table = (entity: new () => object) => dataSource.getMetadata(entity).tablePath;
  const licenses = table(LicenseEntity);
  const activations = table(ActivationEntity);
  const columns = dataSource.getMetadata(ActivationEntity).columns;
  // Every column of the activation under a prefixed property name, so that the license's own
  // columns in the same row cannot collide with them.
  const activationColumns = (alias: string) =>
    columns.map((c) => `${alias}."${c.databaseName}" AS "${ACTIVATION_PREFIX}${c.propertyName}"`).join(', ');
  const activationOf = (row: Record<string, unknown>): ActivationEntity | null => {
    if (row[`${ACTIVATION_PREFIX}id`] === null) return null;
    const activation = new ActivationEntity();
    for (const { propertyName } of columns) {
      (activation as unknown as Record<string, unknown>)[propertyName] =
        row[`${ACTIVATION_PREFIX}${propertyName}`];
    }
    return activation;
  };

  const heldSeat = (name: string, where: string) => {
    const query = preparedStatement<Record<string, unknown>>(
      dataSource,
      name,
      `SELECT l.id AS "licenseId", l.status AS "licenseStatus", l.valid_until AS "licenseValidUntil",
              l.license_type AS "licenseType", l.hardware_binding AS "hardwareBinding",
              ${activationColumns('a')}
         FROM ${licenses} l
         LEFT JOIN ${activations} a ON a.license_id = l.id AND a.fingerprint = $3
        WHERE ${where} AND l.org_id = $2`,
    );
    return async (values: unknown[]): Promise<HeldSeatRow | undefined> => {
      const [row] = await query(values);
      return row && ({ ...row, activation: activationOf(row) } as unknown as HeldSeatRow);
    };
  };

  // The terms as termsOf reads them: a policy's interval and grace, else the product's interval and
  // no grace. The license is active as effectiveStatus says: 'active' and not past valid_until. The
  // UPDATE checks the row's deadline again once it holds its lock, so a row that lapsed meanwhile
  // (and whose seat another machine may have taken) is never revived.
  const heartbeat = preparedStatement<Record<string, unknown>>(
    dataSource,
    'activation-heartbeat',
    `WITH target AS (
       SELECT a.id, a.machine_key, a.expires_at, l.id AS license_id, l.status, l.valid_until,
              coalesce(pol.heartbeat_grace_seconds, 0) AS grace_seconds,
              CASE WHEN l.policy_id IS NULL THEN p.activation_heartbeat_interval
                   ELSE pol.heartbeat_interval_seconds END AS interval_seconds
         FROM ${activations} a
         JOIN ${licenses} l ON l.id = a.license_id
         JOIN ${table(CatalogProductEntity)} p ON p.id = l.product_id
         LEFT JOIN ${table(PolicyEntity)} pol ON pol.id = l.policy_id
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
            ${activationColumns('b')}
       FROM target t LEFT JOIN beat b ON b.id = t.id`,
  );

  return {
    heldSeatBySerial: heldSeat('activation-held-by-serial', 'l.serial = $1'),
    heldSeatById: heldSeat('activation-held-by-id', 'l.id = $1::uuid'),
    heartbeat: async (values) => {
      const [row] = await heartbeat(values);
      return row && ({ ...row, activation: activationOf(row) } as unknown as HeartbeatRow);
    },
  };
}
