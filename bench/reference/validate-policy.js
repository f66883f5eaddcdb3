// REFERENCE PIPELINE — not part of the product. The ceiling of validate for a license that follows
// a policy: the least the answer needs, as bare SQL through pg. One statement reads the license,
// its entitlements, its policy's check-in interval and matching rule, and the machines holding a
// seat (for OVERAGE); a second reads the machine's activation. Then the verdict.
const DAY_MS = 86_400_000;

module.exports = {
  name: 'validate-policy',
  method: 'POST',
  url: '/licenses/validate-policy',
  async handle({ key, fingerprint, components = {}, entitlements = [] }, { pg, orgId }) {
    const now = new Date();
    const { rows } = await pg.query(
      `SELECT l.id, l.serial, l.product_id, l.customer_id, l.features, l.valid_from, l.valid_until,
              l.status, l.max_seats, l.hardware_binding, l.created_at, l.last_check_in_at,
              ARRAY(SELECT e.code FROM license.license_entitlements le
                      JOIN license.entitlements e ON e.id = le.entitlement_id
                     WHERE le.license_id = l.id) AS entitlements,
              p.check_in_interval_days, p.machine_matching,
              (SELECT count(*)::int FROM license.activations a
                WHERE a.license_id = l.id
                  AND (a.expires_at IS NULL
                       OR a.expires_at + make_interval(secs => p.heartbeat_grace_seconds) > $3)) AS machines
         FROM license.licenses l JOIN license.policies p ON p.id = l.policy_id
        WHERE l.serial = $1 AND l.org_id = $2`,
      [key, orgId, now],
    );
    const license = rows[0];
    if (!license) return { valid: false, code: 'NOT_FOUND', license: null, activation: null };
    const lapsed = license.valid_until !== null && license.valid_until <= now;
    const status = license.status === 'active' && lapsed ? 'expired' : license.status;
    const summary = { ...license, status };
    const answer = (code, activation = null) => ({
      valid: code === 'VALID' || code === 'OVERAGE',
      code,
      license: summary,
      activation,
    });
    if (status !== 'active') return answer(status.toUpperCase());
    const since = (license.last_check_in_at ?? license.created_at).getTime();
    if (license.check_in_interval_days !== null && since + license.check_in_interval_days * DAY_MS < now) {
      return answer('OVERDUE');
    }
    const activation = (
      await pg.query('SELECT * FROM license.activations WHERE license_id = $1 AND fingerprint = $2', [
        license.id,
        fingerprint,
      ])
    ).rows[0];
    if (!activation) return answer('NO_ACTIVATION');
    if (activation.expires_at !== null && activation.expires_at <= now)
      return answer('HEARTBEAT_DEAD', activation);
    const recorded = Object.entries(activation.components ?? {});
    const equal = recorded.filter(([name, value]) => components[name] === value).length;
    if (Object.keys(components).length > 0 && recorded.length > 0 && equal * 2 <= recorded.length) {
      return answer('COMPONENTS_MISMATCH', activation);
    }
    if (entitlements.some((code) => !license.entitlements.includes(code))) {
      return answer('ENTITLEMENTS_MISSING', activation);
    }
    return answer(license.machines > license.max_seats ? 'OVERAGE' : 'VALID', activation);
  },
};
