// REFERENCE PIPELINE — not part of the product. validate-by-key-with-fingerprint's ceiling: the
// license service's two reads, as bare SQL through pg — the license by serial in the caller's
// organization, then the machine's activation — and the verdict.
module.exports = {
  name: 'validate',
  method: 'POST',
  url: '/licenses/validate',
  async handle({ key, fingerprint }, { pg, orgId }) {
    const { rows } = await pg.query(
      `SELECT id, serial, product_id, customer_id, features, valid_from, valid_until, status, max_seats,
              hardware_binding
         FROM license.licenses WHERE serial = $1 AND org_id = $2`,
      [key, orgId],
    );
    const license = rows[0];
    if (!license) return { valid: false, code: 'NOT_FOUND', license: null, activation: null };
    const lapsed = license.valid_until !== null && license.valid_until <= new Date();
    const status = license.status === 'active' && lapsed ? 'expired' : license.status;
    const summary = { ...license, status };
    if (status !== 'active')
      return { valid: false, code: status.toUpperCase(), license: summary, activation: null };
    const activation = (
      await pg.query('SELECT * FROM license.activations WHERE license_id = $1 AND fingerprint = $2', [
        license.id,
        fingerprint,
      ])
    ).rows[0];
    const live = activation && (activation.expires_at === null || activation.expires_at > new Date());
    const code = !activation ? 'NO_ACTIVATION' : live ? 'VALID' : 'HEARTBEAT_DEAD';
    return { valid: code === 'VALID', code, license: summary, activation: activation ?? null };
  },
};
