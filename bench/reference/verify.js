// REFERENCE PIPELINE — not part of the product. verify-by-product_id's ceiling: decode the JWS and
// check its Ed25519 signature with the product's public key, parsed once and cached, plus the
// claims' time window; no database, no cache.
const { createPublicKey, verify } = require('node:crypto');

module.exports = {
  name: 'verify',
  method: 'POST',
  url: '/licenses/verify',
  setup: ({ publicKeys }) =>
    new Map(Object.entries(publicKeys).map(([productId, pem]) => [productId, createPublicKey(pem)])),
  async handle({ license_blob, product_id }, _deps, keys) {
    const [header, payload, signature] = Buffer.from(license_blob, 'base64').toString().split('.');
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString());
    const errors = [];
    const key = keys.get(product_id);
    if (!key || !verify(null, Buffer.from(`${header}.${payload}`), key, Buffer.from(signature, 'base64url')))
      errors.push({ code: 'signature_invalid' });
    if (claims.product_id !== product_id) errors.push({ code: 'product_mismatch' });
    const now = Date.now() / 1000;
    if (claims.nbf > now) errors.push({ code: 'not_yet_valid' });
    if (claims.exp !== undefined && claims.exp <= now) errors.push({ code: 'expired' });
    return {
      valid: errors.length === 0,
      license: {
        serial: claims.sub,
        product_id: claims.product_id,
        customer_id: claims.customer_id,
        features: claims.features,
        valid_from: claims.valid_from,
        valid_until: claims.valid_until,
        is_expired: errors.some((e) => e.code === 'expired'),
      },
      errors,
    };
  },
};
