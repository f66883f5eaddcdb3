// REFERENCE PIPELINE — not part of the product. license create's ceiling: sign the claims with an
// Ed25519 key held in memory and INSERT one row into a scratch table of the reference's own
// (`bench_reference.licenses`, emptied at start); no catalog lock, no outbox, no audit.
const { generateKeyPairSync, randomBytes, randomUUID, sign } = require('node:crypto');

const b64url = (value) =>
  Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');

module.exports = {
  name: 'license-create',
  method: 'POST',
  url: '/licenses',
  status: 201,
  async setup({ pg }) {
    await pg.query('CREATE SCHEMA IF NOT EXISTS bench_reference');
    await pg.query(
      `CREATE TABLE IF NOT EXISTS bench_reference.licenses (
         id uuid PRIMARY KEY, org_id uuid NOT NULL, product_id uuid NOT NULL, serial varchar(160) NOT NULL UNIQUE,
         customer_email varchar(320), status varchar(20) NOT NULL, valid_from timestamptz NOT NULL,
         valid_until timestamptz, license_blob text NOT NULL)`,
    );
    await pg.query('TRUNCATE bench_reference.licenses');
    const { privateKey } = generateKeyPairSync('ed25519');
    return { privateKey, kid: randomUUID() };
  },
  async handle(request, { pg, orgId }, { privateKey, kid }) {
    const now = new Date();
    const id = randomUUID();
    const serial = `LIC-REF-${randomBytes(10).toString('hex').toUpperCase()}`;
    const validUntil = new Date(now.getTime() + (request.valid_days ?? 365) * 86_400_000);
    const claims = {
      v: 1,
      jti: id,
      sub: serial,
      iss: orgId,
      iat: Math.floor(now / 1000),
      nbf: Math.floor(now / 1000),
      exp: Math.floor(validUntil / 1000),
      product_id: request.product_id,
      customer_email: request.customer_email ?? null,
      features: request.features ?? [],
      max_seats: request.max_seats ?? 1,
      valid_from: now.toISOString(),
      valid_until: validUntil.toISOString(),
    };
    const signingInput = `${b64url({ alg: 'EdDSA', typ: 'license+jwt', kid })}.${b64url(claims)}`;
    const jws = `${signingInput}.${sign(null, Buffer.from(signingInput), privateKey).toString('base64url')}`;
    const blob = Buffer.from(jws).toString('base64');
    await pg.query(
      `INSERT INTO bench_reference.licenses
         (id, org_id, product_id, serial, customer_email, status, valid_from, valid_until, license_blob)
       VALUES ($1, $2, $3, $4, $5, 'active', $6, $7, $8)`,
      [id, orgId, request.product_id, serial, claims.customer_email, now, validUntil, blob],
    );
    return { id, serial, status: 'active', ...claims, license_blob: blob };
  },
};
