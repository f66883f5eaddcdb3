// REFERENCE PIPELINE — not part of the product. The ceiling of activation + heartbeat, as bare SQL
// through pg. The machines live in a scratch table of the reference's own
// (`bench_reference.activations`, emptied at start), never in the license service's.
//
// An activation is one transaction. One statement locks the license row (by serial and
// organization) with FOR UPDATE. It also reads the product's seat cap and heartbeat interval,
// counts the seats other machines hold, and reads this machine's row. A machine with a live seat
// gets it back. Otherwise one INSERT takes the seat. It replaces a lapsed row of the same machine.
// A heartbeat is one UPDATE of the row by id.
//
// Left out, as promises of the platform alone: the 24 h activation cap, the outbox event and the
// audit entry. Also left out: policies (the scenario's licenses follow none) and binding a
// node-locked license on its first activation.
const { randomUUID } = require('node:crypto');

const LICENSE = `
  SELECT l.id, l.status, l.valid_until, l.max_seats, l.hardware_binding,
         p.max_concurrent_activations, p.activation_heartbeat_interval,
         (SELECT count(*)::int FROM bench_reference.activations a
           WHERE a.license_id = l.id AND a.fingerprint <> $3
             AND (a.expires_at IS NULL OR a.expires_at > $4)) AS taken,
         to_jsonb(m) AS held
    FROM license.licenses l
    JOIN license.catalog_products p ON p.id = l.product_id
    LEFT JOIN bench_reference.activations m ON m.license_id = l.id AND m.fingerprint = $3
   WHERE l.serial = $1 AND l.org_id = $2
     FOR UPDATE OF l`;

const INSERT = `
  INSERT INTO bench_reference.activations
         (id, org_id, license_id, fingerprint, hostname, platform, components,
          created_at, last_heartbeat_at, expires_at, heartbeat_interval)
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8, $9, $10)
  ON CONFLICT (license_id, fingerprint) DO UPDATE
     SET id = excluded.id, hostname = excluded.hostname, platform = excluded.platform,
         components = excluded.components, created_at = excluded.created_at,
         last_heartbeat_at = excluded.last_heartbeat_at, expires_at = excluded.expires_at,
         heartbeat_interval = excluded.heartbeat_interval
  RETURNING *`;

const HEARTBEAT = `
  UPDATE bench_reference.activations
     SET last_heartbeat_at = $3::timestamptz,
         expires_at = $3::timestamptz + heartbeat_interval * interval '1 second'
   WHERE id = $1 AND org_id = $2
  RETURNING *`;

/** The activation's answer, inside the transaction: its row, or a refusal (thrown). */
async function activate(client, { license_key, fingerprint, hostname, platform, components }, orgId) {
  const now = new Date();
  const { rows } = await client.query(LICENSE, [license_key, orgId, fingerprint, now]);
  const license = rows[0];
  if (!license) throw new Error('license not found');
  const lapsed = license.valid_until !== null && license.valid_until <= now;
  if (license.status !== 'active' || lapsed) throw new Error('license not active');
  const bound = license.hardware_binding?.fingerprint;
  if (bound !== undefined && bound !== fingerprint) throw new Error('fingerprint mismatch');
  const { held } = license;
  if (held && (held.expires_at === null || Date.parse(held.expires_at) > now.getTime())) return held;
  const limit = Math.min(license.max_seats, license.max_concurrent_activations ?? Infinity);
  if (license.taken >= limit) throw new Error('seat limit reached');
  const interval = license.activation_heartbeat_interval;
  const expiresAt = interval === null ? null : new Date(now.getTime() + interval * 1000);
  const inserted = await client.query(INSERT, [
    randomUUID(),
    orgId,
    license.id,
    fingerprint,
    hostname ?? null,
    platform ?? null,
    components ?? {},
    now,
    expiresAt,
    interval,
  ]);
  return inserted.rows[0];
}

module.exports = [
  {
    name: 'activation',
    method: 'POST',
    url: '/activations',
    status: 201,
    async setup({ pg }) {
      await pg.query('CREATE SCHEMA IF NOT EXISTS bench_reference');
      await pg.query(
        `CREATE TABLE IF NOT EXISTS bench_reference.activations (
           id uuid PRIMARY KEY, org_id uuid NOT NULL, license_id uuid NOT NULL,
           fingerprint varchar(512) NOT NULL, hostname varchar(255), platform varchar(100),
           components jsonb NOT NULL, created_at timestamptz NOT NULL,
           last_heartbeat_at timestamptz NOT NULL, expires_at timestamptz, heartbeat_interval integer,
           UNIQUE (license_id, fingerprint))`,
      );
      await pg.query('TRUNCATE bench_reference.activations');
    },
    async handle(request, { pg, orgId }) {
      const client = await pg.connect();
      try {
        await client.query('BEGIN');
        const activation = await activate(client, request, orgId);
        await client.query('COMMIT');
        return activation;
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw error;
      } finally {
        client.release();
      }
    },
  },
  {
    name: 'heartbeat',
    method: 'POST',
    url: '/activations/:id/heartbeat',
    async handle({ id }, { pg, orgId }) {
      const { rows } = await pg.query(HEARTBEAT, [id, orgId, new Date()]);
      if (!rows[0]) throw new Error('activation not found');
      return rows[0];
    },
  },
];
